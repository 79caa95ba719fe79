"""A hand-written fast path for formula.lark: same raw tree, about ten times faster.

Lark's LALR parser costs ~200 µs for a typical step formula (one Python-level reduction per
precedence level per atom); the verifier parses in its main process and needs tens of µs. This
precedence-climbing parser implements the grammar's levels and builds the same raw tuples as
the Lark callbacks. It only ever answers for input it fully understands: on anything unusual
(an unknown character, a keyword, a syntax error, deep nesting) it gives up with `Fallback`,
and the Lark parser, which stays the reference, decides and writes the error message.
tests/test_logic_fastparse.py checks both agree on random token sequences.
"""

from __future__ import annotations

import re

from prosfi.logic.keywords import CONNECTIVES, LEAN_KEYWORDS, LOOKALIKES

# IDENT of formula.lark without its λ/Π/Σ look-aheads (subscripts are \w already); text with
# those letters anywhere goes to Lark. A third group catches any other character.
_TOKEN = re.compile(r"([^\W\d][\w'!?]*)|(<->|->|/\\|\\/|[∀∃¬∧∨→↔=≠(),:])|(\S)")
_ASCII = {"<->": "↔", "->": "→", "/\\": "∧", "\\/": "∨"}
_WORD_TOKENS = {"forall": "∀", "exists": "∃"}
_BAD_NAMES = LEAN_KEYWORDS | LOOKALIKES.keys()
_BAD_BINDERS = _BAD_NAMES | CONNECTIVES.keys()
# binary connective -> (its precedence, its right operand's minimum precedence, raw node kind):
# ∧ ∨ → are right-associative, ↔ is not (a second ↔ at the same level is refused below)
_BINARY = {"∧": (35, 35, "and_"), "∨": (30, 30, "or_"), "→": (25, 25, "implies"), "↔": (20, 21, "iff")}
MAX_NESTING = 100  # recursion guard (parentheses, binders, chained operators); deeper goes to Lark
_END = ("$", "", 0)


class Fallback(Exception):
    """The fast path does not answer; ask the Lark parser."""


def tokenize(text: str) -> list[tuple[str, str, int]]:
    """(kind, text, column) triples; kind is "id" or the Unicode spelling of a symbol."""
    if "λ" in text or "Π" in text or "Σ" in text:
        raise Fallback
    multiline = "\n" in text
    out = []
    for m in _TOKEN.finditer(text):
        ident, symbol, other = m.groups()
        if other is not None:
            raise Fallback
        start = m.start()
        column = start - text.rfind("\n", 0, start) if multiline else start + 1
        if ident is not None:
            kind = _WORD_TOKENS.get(ident, "id")
            if kind == "id" and ident in _BAD_NAMES:
                raise Fallback
            out.append((kind, ident, column))
        else:
            out.append((_ASCII.get(symbol, symbol), symbol, column))
    out.append(_END)
    return out


class _Parser:
    """Precedence climbing over formula.lark's levels; builds the grammar callbacks' tuples."""

    __slots__ = ("depth", "i", "tokens")

    def __init__(self, tokens):
        self.tokens = tokens
        self.i = 0
        self.depth = 0

    def take(self, kind: str):
        token = self.tokens[self.i]
        if token[0] != kind:
            raise Fallback
        self.i += 1
        return token

    def formula(self, minimum: int = 0):
        self.depth += 1
        if self.depth > MAX_NESTING:
            raise Fallback
        left = self.negation()
        tokens = self.tokens
        while True:
            op = tokens[self.i][0]
            info = _BINARY.get(op)
            if info is None or info[0] < minimum:
                break
            self.i += 1
            right = self.formula(info[1])
            left = (info[2], 1 + max(left[1], right[1]), left, right)
            if op == "↔" and tokens[self.i][0] == "↔":  # ↔ is not associative
                raise Fallback
        self.depth -= 1
        return left

    def negation(self):
        tokens = self.tokens
        count = 0
        while tokens[self.i][0] == "¬":
            self.i += 1
            count += 1
        node = self.primary()
        for _ in range(count):
            node = ("not", node[1] + 1, node)
        return node

    def primary(self):
        kind = self.tokens[self.i][0]
        if kind == "∀" or kind == "∃":
            self.i += 1
            binders = self.binders()
            self.take(",")
            body = self.formula()
            return ("forall" if kind == "∀" else "exists", body[1] + len(binders), binders, body)
        left = self.application()
        kind = self.tokens[self.i][0]
        if kind == "=" or kind == "≠":
            self.i += 1
            right = self.application()
            return ("eq" if kind == "=" else "ne", 1 + max(left[1], right[1]), left, right)
        return left

    def application(self):
        tokens = self.tokens
        kind, text, column = tokens[self.i]
        if kind == "(":
            return self.parenthesised()
        if kind != "id":
            raise Fallback
        self.i += 1
        args = []
        while True:
            token = tokens[self.i]
            if token[0] == "id":
                self.i += 1
                args.append(("app", 1, token[1], (), token[2]))
            elif token[0] == "(":
                args.append(self.parenthesised())
            else:
                break
        if not args:
            return ("app", 1, text, (), column)
        return ("app", 1 + max(a[1] for a in args), text, tuple(args), column)

    def parenthesised(self):
        self.i += 1
        node = self.formula()
        self.take(")")
        return node

    def binders(self):
        out = []
        typed_group = False
        while True:
            kind = self.tokens[self.i][0]
            if kind == "id":
                out.append((self._binder_name(), None))
            elif kind == "(":
                self.i += 1
                names = [self._binder_name()]
                while self.tokens[self.i][0] == "id":
                    names.append(self._binder_name())
                sort = None
                if self.tokens[self.i][0] == ":":
                    self.i += 1
                    sort = self._binder_name()
                    typed_group = True
                self.take(")")
                out.extend((name, sort) for name in names)
            else:
                break
        if not out:
            raise Fallback
        if self.tokens[self.i][0] == ":":
            self.i += 1
            if typed_group:  # a binder with two types: Lark words the error
                raise Fallback
            sort = self._binder_name()
            out = [(name, sort) for name, _ in out]
        return tuple(out)

    def _binder_name(self) -> str:
        _, text, _ = self.take("id")
        if text in _BAD_BINDERS:
            raise Fallback
        return text


def parse_raw(text: str) -> tuple:
    """The raw tree formula.lark's callbacks would build, or Fallback."""
    tokens = tokenize(text)
    parser = _Parser(tokens)
    node = parser.formula()
    if parser.tokens[parser.i][0] != "$":
        raise Fallback
    return node


# ---------------------------------------------------------------- straight to the AST
# The verifier's hot path: the same grammar, no columns, no raw tree, the AST built as the text is read,
# bound variables resolved on the way down. It answers only where the two-step path (parse_raw, then
# parser._formula) would build the same AST without an error; anything else (a connective name such as
# `True` or `Xor'`, a bound variable misused, a formula in term position, more tokens than max_depth) is
# Fallback, and the two-step path decides and words the error. tests/test_logic_fastparse.py checks
# that both agree on random token sequences.


def _tokens(text: str) -> list[tuple[str, str]]:
    if "λ" in text or "Π" in text or "Σ" in text:
        raise Fallback
    out = []
    append = out.append
    for ident, symbol, other in _TOKEN.findall(text):
        if other:
            raise Fallback
        if ident:
            kind = _WORD_TOKENS.get(ident, "id")
            if kind == "id" and ident in _BAD_NAMES:
                raise Fallback
            append((kind, ident))
        else:
            append((_ASCII.get(symbol, symbol), symbol))
    append(("$", ""))
    return out


def _build():
    from prosfi.logic.ast import And, Const, Eq, Exists, Fn, Forall, Iff, Implies, Not, Or, Pred, Var
    from prosfi.logic.keywords import CONNECTIVES
    from prosfi.logic.signature import Symbol

    # Leaves are immutable and compared by value: one node per name serves every formula (a batch
    # names the same few constants and variables thousands of times). Bounded: cleared when full.
    leaves: dict[tuple[type, str], object] = {}

    def leaf(kind: type, name: str):
        node = leaves.get((kind, name))
        if node is None:
            if len(leaves) >= 65536:
                leaves.clear()
            node = leaves[(kind, name)] = kind(name)
        return node

    binary = {"∧": (35, 35, And), "∨": (30, 30, Or), "→": (25, 25, Implies), "↔": (20, 21, Iff)}

    class AstParser:
        __slots__ = ("bound", "clash", "depth", "i", "symbols", "tokens")

        def __init__(self, tokens):
            self.tokens, self.i, self.depth = tokens, 0, 0
            self.bound: dict[str, int] = {}  # bound variable -> how many binders bind it here
            # name -> Symbol of every symbol read, so the verifier needs no second walk for the
            # signature; `clash` when one name came with two roles or arities (check_signature then
            # words the error)
            self.symbols: dict[str, Symbol] = {}
            self.clash = False

        def note(self, name: str, role: str, arity: int) -> None:
            seen = self.symbols.get(name)
            if seen is None:
                self.symbols[name] = Symbol(name, role, arity)
            elif seen[1] != role or seen[2] != arity:
                self.clash = True

        def formula(self, minimum: int = 0):
            self.depth += 1
            if self.depth > MAX_NESTING:
                raise Fallback
            tokens = self.tokens
            count = 0
            while tokens[self.i][0] == "¬":
                self.i += 1
                count += 1
            left = self.primary()
            for _ in range(count):
                left = Not(left)
            while True:
                op = tokens[self.i][0]
                info = binary.get(op)
                if info is None or info[0] < minimum:
                    break
                self.i += 1
                right = self.formula(info[1])
                left = info[2](left, right)
                if op == "↔" and tokens[self.i][0] == "↔":
                    raise Fallback
            self.depth -= 1
            return left

        def primary(self):
            tokens = self.tokens
            kind = tokens[self.i][0]
            if kind == "∀" or kind == "∃":
                self.i += 1
                binders = self.binders()
                if tokens[self.i][0] != ",":
                    raise Fallback
                self.i += 1
                bound = self.bound
                for var, _ in binders:
                    bound[var] = bound.get(var, 0) + 1
                body = self.formula()
                for var, _ in binders:
                    n = bound[var] - 1
                    if n:
                        bound[var] = n
                    else:
                        del bound[var]
                make = Forall if kind == "∀" else Exists
                for var, sort in reversed(binders):
                    body = make(var, body, sort)
                return body
            if kind == "(":  # a parenthesised formula, unless `=` follows: then a term (two-step path)
                self.i += 1
                node = self.formula()
                if tokens[self.i][0] != ")":
                    raise Fallback
                self.i += 1
                if tokens[self.i][0] in ("=", "≠"):
                    raise Fallback
                return node
            if kind != "id":
                raise Fallback
            name = tokens[self.i][1]
            self.i += 1
            args = self.arguments()
            kind = tokens[self.i][0]
            if kind == "=" or kind == "≠":
                self.i += 1
                left = self.term_of(name, args)
                right = self.term()
                eq = Eq(left, right)
                return eq if kind == "=" else Not(eq)
            if name in self.bound or name in CONNECTIVES:  # second-order, or a connective: two-step path
                raise Fallback
            self.note(name, "pred", len(args))
            return Pred(name, args)

        def arguments(self) -> tuple:
            tokens = self.tokens
            args = []
            while True:
                kind, text = tokens[self.i]
                if kind == "id":
                    self.i += 1
                    args.append(self.term_of(text, ()))
                elif kind == "(":
                    self.i += 1
                    args.append(self.term())
                    if tokens[self.i][0] != ")":
                        raise Fallback
                    self.i += 1
                else:
                    return tuple(args)

        def term(self):
            """A term where the grammar reads a formula: `f a b` or `(...)` around one, else Fallback."""
            self.depth += 1
            if self.depth > MAX_NESTING:
                raise Fallback
            tokens = self.tokens
            kind, name = tokens[self.i]
            if kind == "(":
                self.i += 1
                node = self.term()
                if tokens[self.i][0] != ")":
                    raise Fallback
                self.i += 1
            elif kind == "id":
                self.i += 1
                node = self.term_of(name, self.arguments())
            else:
                raise Fallback
            self.depth -= 1
            return node

        def term_of(self, name: str, args: tuple):
            if name in CONNECTIVES:
                raise Fallback
            if name in self.bound:
                if args:
                    raise Fallback
                return leaf(Var, name)
            if args:
                self.note(name, "func", len(args))
                return Fn(name, args)
            self.note(name, "const", 0)
            return leaf(Const, name)

        def binders(self):
            out = []
            typed_group = False
            tokens = self.tokens
            while True:
                kind = tokens[self.i][0]
                if kind == "id":
                    out.append((self._binder_name(), None))
                elif kind == "(":
                    self.i += 1
                    names = [self._binder_name()]
                    while tokens[self.i][0] == "id":
                        names.append(self._binder_name())
                    sort = None
                    if tokens[self.i][0] == ":":
                        self.i += 1
                        sort = self._binder_name()
                        typed_group = True
                    if tokens[self.i][0] != ")":
                        raise Fallback
                    self.i += 1
                    out.extend((name, sort) for name in names)
                else:
                    break
            if not out:
                raise Fallback
            if tokens[self.i][0] == ":":
                self.i += 1
                if typed_group:
                    raise Fallback
                sort = self._binder_name()
                out = [(name, sort) for name, _ in out]
            return tuple(out)

        def _binder_name(self) -> str:
            kind, text = self.tokens[self.i]
            if kind != "id" or text in _BAD_BINDERS:
                raise Fallback
            self.i += 1
            return text

    return AstParser


_AST_PARSER = None


def _run(text: str, max_depth: int):
    global _AST_PARSER
    if _AST_PARSER is None:
        _AST_PARSER = _build()
    tokens = _tokens(text)
    if len(tokens) > max_depth:  # the raw tree's depth never exceeds its token count: only then check it
        raise Fallback
    parser = _AST_PARSER(tokens)
    node = parser.formula()
    if tokens[parser.i][0] != "$":
        raise Fallback
    return node, parser


def parse_ast(text: str, max_depth: int):
    """The AST of `text` (what `parser.parse` returns), or Fallback."""
    return _run(text, max_depth)[0]


def parse_ast_symbols(text: str, max_depth: int):
    """(AST, its symbols as {name: Symbol}) in one reading, the symbols None when a name comes with
    two roles or arities (`check_signature` then says which); or Fallback, as `parse_ast`."""
    node, parser = _run(text, max_depth)
    return node, None if parser.clash else parser.symbols


__all__ = ["MAX_NESTING", "Fallback", "parse_ast", "parse_ast_symbols", "parse_raw", "tokenize"]
