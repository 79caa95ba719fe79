"""AST → text: `pretty` (Lean 4 source our parser reads back), `canonical` (cache keys).

`pretty` puts the fewest parentheses Lean 4's precedences allow: ¬ takes its argument at 40,
∧ 35 (right), ∨ 30 (right), → 25 (right), ↔ 20 (non-associative), = ≠ 50, and a binder's
body runs to the right, so a binder that ends a left operand must be parenthesised.
"""

from __future__ import annotations

from collections.abc import Callable
from itertools import repeat

from prosfi.logic.ast import (
    And,
    Bottom,
    Const,
    Eq,
    Exists,
    Fn,
    Forall,
    Formula,
    Iff,
    Implies,
    Not,
    Or,
    Pred,
    Term,
    Top,
    Var,
    Xor,
)

MAX_PREC = 1024  # atoms, parentheses, applications' arguments
LEAD_PREC = 1023  # applications and binders
# (symbol, precedence, left operand's minimum, right operand's minimum)
_INFIX = {
    And: (" ∧ ", 35, 36, 35),
    Or: (" ∨ ", 30, 31, 30),
    Implies: (" → ", 25, 26, 25),
    Iff: (" ↔ ", 20, 21, 21),
}
_NOT_ARG = 40
_EQ_PREC = 50


class LeanPrinter:
    """Prints formulas as Lean 4 source; names and the spelling of Xor are pluggable.

    symbol: text for a constant/function/predicate name; variable: text for a bound variable;
    sort: text for a binder's type (None: leave the binder untyped); xor_as_iff: write `Xor' A B`
    as `¬(A ↔ B)` (core Lean has no `Xor'`; it comes from Mathlib).
    """

    def __init__(self, symbol: Callable[[str], str] = str, variable: Callable[[str], str] = str,
                 sort: Callable[[str | None], str | None] = lambda s: s, xor_as_iff: bool = False):
        self.symbol = symbol
        self.variable = variable
        self.sort = sort
        self.xor_as_iff = xor_as_iff

    def __call__(self, f: Formula) -> str:
        return self._show(f)[0]

    # Each _show returns (text, precedence, open_right): open_right means the text ends in a
    # binder whose body would swallow whatever followed it. Recursion goes _show → _show only
    # (one frame per level), so every formula the parser accepts can be printed.
    def _show(self, f: Formula) -> tuple[str, int, bool]:
        kind = type(f)
        if kind is Pred:
            if not f.args:
                return self.symbol(f.name), MAX_PREC, False
            return self.symbol(f.name) + " " + " ".join(map(self._arg, f.args)), LEAD_PREC, False
        if kind is Not:
            if type(f.body) is Eq:
                return self._term(f.body.left) + " ≠ " + self._term(f.body.right), _EQ_PREC, False
            text, open_right = _fit(self._show(f.body), _NOT_ARG, rightmost=True)
            return "¬" + text, MAX_PREC, open_right
        if kind in _INFIX:
            op, prec, left_min, right_min = _INFIX[kind]
            left, _ = _fit(self._show(f.left), left_min, rightmost=False)
            right, open_right = _fit(self._show(f.right), right_min, rightmost=True)
            return left + op + right, prec, open_right
        if kind is Eq:
            return self._term(f.left) + " = " + self._term(f.right), _EQ_PREC, False
        if kind is Forall or kind is Exists:
            head, body = self._binder_head(f)
            return head + self._show(body)[0], LEAD_PREC, True
        if kind is Top:
            return "True", MAX_PREC, False
        if kind is Bottom:
            return "False", MAX_PREC, False
        if kind is Xor:
            if self.xor_as_iff:
                left, _ = _fit(self._show(f.left), 21, rightmost=False)
                right, _ = _fit(self._show(f.right), 21, rightmost=True)
                return f"¬({left} ↔ {right})", MAX_PREC, False
            left = _as_argument(f.left, self._show(f.left)[0])
            right = _as_argument(f.right, self._show(f.right)[0])
            return f"Xor' {left} {right}", LEAD_PREC, False
        raise TypeError(f"not a formula node: {f!r}")

    def _binder_head(self, f: Forall | Exists) -> tuple[str, Formula]:
        """`∀ x y, ` (or `∀ (x y : T), `) for a run of like binders, and the body after them."""
        kind, sort = type(f), f.sort
        names = [self.variable(f.var)]
        body = f.body
        while type(body) is kind and body.sort == sort:
            names.append(self.variable(body.var))
            body = body.body
        shown_sort = self.sort(sort)
        head = " ".join(names) if shown_sort is None else f"({' '.join(names)} : {shown_sort})"
        return f"{'∀' if kind is Forall else '∃'} {head}, ", body

    def _term(self, t: Term) -> str:
        if type(t) is Fn:
            return self.symbol(t.name) + " " + " ".join(map(self._arg, t.args))
        return self._arg(t)

    def _arg(self, t: Term) -> str:
        """A term as an argument: applications parenthesised (one frame per nesting level)."""
        kind = type(t)
        if kind is Var:
            return self.variable(t.name)
        if kind is Const:
            return self.symbol(t.name)
        if kind is Fn:
            return "(" + self.symbol(t.name) + " " + " ".join(map(self._arg, t.args)) + ")"
        raise TypeError(f"not a term: {t!r}")


def _fit(shown: tuple[str, int, bool], minimum: int, rightmost: bool) -> tuple[str, bool]:
    """Parenthesise an operand that binds too loosely, or ends in a binder and is not rightmost."""
    text, prec, open_right = shown
    if prec < minimum or (open_right and not rightmost):
        return f"({text})", False
    return text, open_right


def _as_argument(f: Formula, text: str) -> str:
    """An application's argument must be a name or parenthesised."""
    bare = type(f) in (Top, Bottom) or (type(f) is Pred and not f.args)
    return text if bare else f"({text})"


_PRETTY = LeanPrinter()


def pretty(f: Formula) -> str:
    """Lean 4 source for `f` that `parse` reads back to the same AST (minimal parentheses).

    Holds for every AST `parse` can produce; a hand-built one must be alike: names that are
    identifiers and not keywords, each Var under a binder of its name, no Const named like an
    enclosing binder's variable (it would read back as that variable).
    """
    return _PRETTY(f)


def canonical(f: Formula) -> str:
    """Alpha-normalised prefix text: bound variables become `#<binding depth>`, sorts vanish.

    Two formulas get the same string exactly when they are equal up to renaming bound variables
    (and binder type annotations), so it is a sound cache key.
    """
    return _canon(f, {}, 0)


def _canon(f: Formula, env: dict[str, int], depth: int) -> str:
    kind = type(f)
    if kind is Pred:
        if not f.args:
            return f.name
        return "(" + f.name + " " + " ".join(map(_canon_term, f.args, repeat(env))) + ")"
    if kind is Not:
        return "(¬ " + _canon(f.body, env, depth) + ")"
    if kind is Forall or kind is Exists:
        inner = dict(env)
        inner[f.var] = depth
        return ("(∀ " if kind is Forall else "(∃ ") + _canon(f.body, inner, depth + 1) + ")"
    if kind is Eq:
        return "(= " + _canon_term(f.left, env) + " " + _canon_term(f.right, env) + ")"
    if kind is Top:
        return "⊤"
    if kind is Bottom:
        return "⊥"
    op = _CANON_OP[kind]
    return "(" + op + " " + _canon(f.left, env, depth) + " " + _canon(f.right, env, depth) + ")"


_CANON_OP = {And: "∧", Or: "∨", Implies: "→", Iff: "↔", Xor: "⊕"}


def _canon_term(t: Term, env: dict[str, int]) -> str:
    kind = type(t)
    if kind is Var:
        level = env.get(t.name)
        # a Var outside every binder (only in hand-built ASTs) keeps its name, marked as free
        return f"#{level}" if level is not None else f"?{t.name}"
    if kind is Const:
        return t.name
    return "(" + t.name + " " + " ".join(map(_canon_term, t.args, repeat(env))) + ")"


__all__ = ["LeanPrinter", "canonical", "pretty"]
