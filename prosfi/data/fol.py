"""ProverQA's first-order notation -> prosfi's Lean 4 syntax.

ProverQA writes `pred(a, b)`, `¬`, `∧`, `∨`, `⊕`, `→`, `↔`, `∀x (…)`, `∃x (…)`. We parse it into a
small tree and print Lean text: `pred a b`, `Xor' A B`, `∀ x, …`. A quantifier followed by a
bracket scopes over that bracket (ProverQA's habit); otherwise its body extends to the right.
Precedence, tightest first: ¬/quantifier, ∧, ∨, ⊕, →, ↔ (∧ ∨ → ↔ right-associative).
"""

from __future__ import annotations

import re

from prosfi.logic.keywords import RESERVED

LEAN_RESERVED = RESERVED  # words our parser will not take as symbols

_TOKEN = re.compile(r"\s*(?:(<->|↔|⟷|<=>)|(->|→|⟶)|(⊕)|(∧|&|/\\)|(∨|\||\\/)|(¬|~|!)|(∀|∃)"
                    r"|([A-Za-z_][A-Za-z0-9_'\-]*)|(\()|(\))|(,))")
_KINDS = ("iff", "imp", "xor", "and", "or", "not", "quant", "ident", "(", ")", ",")


class FOLSyntaxError(ValueError):
    """A ProverQA formula we cannot read."""


def lean_identifier(name: str) -> str:
    """A Lean-valid identifier for a ProverQA name: odd characters become `_`, keywords get a `_`."""
    ident = re.sub(r"[^A-Za-z0-9_']", "_", name)
    if not ident or ident[0].isdigit() or ident[0] == "'":
        ident = "c_" + ident
    if ident in LEAN_RESERVED:
        ident += "_"
    return ident


def _tokens(text: str) -> list[tuple[str, str]]:
    out, pos = [], 0
    text = text.strip()
    while pos < len(text):
        m = _TOKEN.match(text, pos)
        if not m or m.end() == pos:
            raise FOLSyntaxError(f"unexpected {text[pos:pos + 10]!r} at column {pos} in {text!r}")
        pos = m.end()
        kind = _KINDS[m.lastindex - 1]
        out.append((kind, m.group(m.lastindex)))
        pos = len(text) - len(text[pos:].lstrip()) if text[pos:].strip() else len(text)
    return out


class _Parser:
    def __init__(self, text: str):
        self.text = text
        self.toks = _tokens(text)
        self.i = 0

    def peek(self, k: int = 0) -> tuple[str, str] | None:
        return self.toks[self.i + k] if self.i + k < len(self.toks) else None

    def take(self, kind: str) -> str:
        tok = self.peek()
        if tok is None or tok[0] != kind:
            found = tok[1] if tok else "the end"
            raise FOLSyntaxError(f"expected {kind!r} but found {found!r} in {self.text!r}")
        self.i += 1
        return tok[1]

    def parse(self):
        f = self.iff(frozenset())
        if self.peek() is not None:
            raise FOLSyntaxError(f"unexpected {self.peek()[1]!r} after a complete formula in {self.text!r}")
        return f

    def _right(self, kind: str, sub, bound):
        left = sub(bound)
        if self.peek() and self.peek()[0] == kind:
            self.i += 1
            return (kind, left, self._right(kind, sub, bound))
        return left

    def iff(self, bound):
        return self._right("iff", self.imp, bound)

    def imp(self, bound):
        return self._right("imp", self.xor, bound)

    def xor(self, bound):
        left = self.or_(bound)
        while self.peek() and self.peek()[0] == "xor":
            self.i += 1
            left = ("xor", left, self.or_(bound))
        return left

    def or_(self, bound):
        return self._right("or", self.and_, bound)

    def and_(self, bound):
        return self._right("and", self.unary, bound)

    def unary(self, bound):
        tok = self.peek()
        if tok is None:
            raise FOLSyntaxError(f"formula ends too early: {self.text!r}")
        if tok[0] == "not":
            self.i += 1
            return ("not", self.unary(bound))
        if tok[0] == "quant":
            self.i += 1
            var = self.take("ident")
            inner = bound | {var}
            nxt = self.peek()
            if nxt and nxt[0] in ("(", "quant", "not"):
                body = self.unary(inner)
            else:
                body = self.iff(inner)
            return ("all" if tok[1] == "∀" else "ex", var, body)
        if tok[0] == "(":
            self.i += 1
            f = self.iff(bound)
            self.take(")")
            return f
        if tok[0] == "ident":
            self.i += 1
            name = tok[1]
            args = []
            if self.peek() and self.peek()[0] == "(":
                self.i += 1
                args.append(self.term(bound))
                while self.peek() and self.peek()[0] == ",":
                    self.i += 1
                    args.append(self.term(bound))
                self.take(")")
            return ("pred", name, tuple(args))
        raise FOLSyntaxError(f"unexpected {tok[1]!r} in {self.text!r}")

    def term(self, bound):
        name = self.take("ident")
        return ("var", name) if name in bound else ("const", name)


def parse_fol(text: str):
    """ProverQA formula text -> nested tuples (raises FOLSyntaxError)."""
    if not isinstance(text, str) or not text.strip():
        raise FOLSyntaxError("empty formula")
    return _Parser(text).parse()


_ATOMIC = ("pred",)


def to_lean(tree, ctx: str = "top") -> str:
    """Lean text for a tree from `parse_fol`; compound operands are bracketed."""
    kind = tree[0]
    if kind == "pred":
        name, args = lean_identifier(tree[1]), tree[2]
        return " ".join([name] + [lean_identifier(a[1]) if a[0] == "const" else a[1] for a in args])
    if kind == "not":
        inner = tree[1]
        body = to_lean(inner, "not")
        return f"¬ {body}" if inner[0] in ("pred", "not", "xor", "all", "ex") else f"¬ ({body})"
    if kind in ("all", "ex"):
        text = f"{'∀' if kind == 'all' else '∃'} {tree[1]}, {to_lean(tree[2], 'top')}"
        return text if ctx == "top" else f"({text})"
    if kind == "xor":
        return f"Xor' ({to_lean(tree[1], 'top')}) ({to_lean(tree[2], 'top')})"
    sym = {"and": "∧", "or": "∨", "imp": "→", "iff": "↔"}[kind]
    left = to_lean(tree[1], "bin")
    if tree[1][0] not in ("pred", "not", "xor"):
        left = f"({left})" if not left.startswith("(") or tree[1][0] not in ("all", "ex") else left
    right_tree = tree[2]
    chain = right_tree[0] == kind and kind != "iff"  # ∧ ∨ → associate to the right in Lean; ↔ does not
    right = to_lean(right_tree, "top" if chain else "bin")
    if not chain and right_tree[0] not in ("pred", "not", "xor", "all", "ex"):
        right = f"({right})"
    return f"{left} {sym} {right}"


def fol_to_lean(text: str) -> str:
    """ProverQA formula text -> Lean text (raises FOLSyntaxError)."""
    return to_lean(parse_fol(text))
