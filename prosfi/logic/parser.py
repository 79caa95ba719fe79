"""Lean 4 formula text → AST.

Two passes. First a raw tree: the hand-written fast path (fastparse.py) builds it, or, whenever
that declines, Lark's LALR parser on formula.lark (an explicit stack, no recursion) does, through
inline callbacks; applications are still just `name args`. A second pass walks that tree
top-down with the binders in scope and decides what every identifier is: a bound `Var`, a
`Const`, a `Fn`, a `Pred` or one of Lean's connective functions (`Not`, `Xor'`, `True`, …).
Depth is measured bottom-up, so the second pass (recursive, one frame per level) only runs on
trees it can finish; anything deeper is a FormulaError, never a RecursionError.
"""

from __future__ import annotations

import functools
from importlib import resources
from itertools import repeat

from lark import Lark, Token, Transformer
from lark.exceptions import LarkError, UnexpectedCharacters, UnexpectedEOF, UnexpectedToken

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
from prosfi.logic.errors import FormulaError
from prosfi.logic.fastparse import Fallback, parse_ast, parse_raw
from prosfi.logic.keywords import CONNECTIVES, LEAN_KEYWORDS, LOOKALIKES

DEFAULT_MAX_CHARS = 10_000
# ≥ 300 nested negations must work. The recursive passes over an AST (resolution, renderers) take
# one interpreter recursion unit per level, the AST's own == three: see RECURSION_FLOOR in
# prosfi/logic/__init__.py.
DEFAULT_MAX_DEPTH = 350
PARSE_CACHE_SIZE = 1 << 14

# Raw tree nodes are tuples (kind, depth, ...):
#   ("app", depth, name, args, column)   ("not", depth, body)
#   (kind, depth, left, right) for and_/or_/implies/iff/eq/ne
#   ("forall" | "exists", depth, ((var, sort), ...), body)
_BINARY = {"and_": And, "or_": Or, "implies": Implies, "iff": Iff}
_QUANTIFIER = {"forall": Forall, "exists": Exists}
_CONNECTIVE_BINARY = {"Xor'": Xor, "And": And, "Or": Or, "Iff": Iff}


def _identifier(token: Token) -> str:
    name = str(token)
    if name in LEAN_KEYWORDS:
        raise FormulaError(f"`{name}` (column {token.column}) is a Lean keyword, not an identifier")
    if name in LOOKALIKES:
        raise FormulaError(f"`{name}` (column {token.column}) is not a Lean 4 connective; "
                           f"write `{LOOKALIKES[name]}`")
    return name


def _binder_name(token: Token) -> str:
    name = _identifier(token)
    if name in CONNECTIVES:
        raise FormulaError(f"`{name}` (column {token.column}) has a fixed meaning and cannot be bound")
    return name


def _binary(kind: str):
    def callback(self, children):
        left, right = children
        return (kind, 1 + max(left[1], right[1]), left, right)
    return callback


class _Builder(Transformer):
    """LALR callbacks: build raw tuples, refuse keywords, measure depth."""

    def name(self, children):
        (token,) = children
        return ("app", 1, _identifier(token), (), token.column)

    def apply(self, children):
        token, *args = children
        return ("app", 1 + max(a[1] for a in args), _identifier(token), tuple(args), token.column)

    def not_(self, children):
        (body,) = children
        return ("not", body[1] + 1, body)

    and_ = _binary("and_")
    or_ = _binary("or_")
    implies = _binary("implies")
    iff = _binary("iff")
    eq = _binary("eq")
    ne = _binary("ne")

    def sort(self, children):
        (token,) = children
        return ("sort", _binder_name(token))

    def binder_name(self, children):
        (token,) = children
        return ((_binder_name(token), None),)

    def binder_group(self, children):
        sort = children[-1][1] if isinstance(children[-1], tuple) else None
        tokens = children[:-1] if sort is not None else children
        return tuple((_binder_name(t), sort) for t in tokens)

    def binders(self, children):
        if isinstance(children[-1], tuple) and children[-1][:1] == ("sort",):
            sort = children[-1][1]
            out = []
            for group in children[:-1]:
                for var, own in group:
                    if own is not None:
                        raise FormulaError(f"binder `{var}` is given two types")
                    out.append((var, sort))
            return tuple(out)
        return tuple(b for group in children for b in group)

    def forall_(self, children):
        binders, body = children
        return ("forall", body[1] + len(binders), binders, body)

    def exists_(self, children):
        binders, body = children
        return ("exists", body[1] + len(binders), binders, body)


@functools.lru_cache(maxsize=1)
def _lark() -> Lark:
    grammar = resources.files("prosfi.logic").joinpath("formula.lark").read_text(encoding="utf-8")
    return Lark(grammar, parser="lalr", lexer="contextual", transformer=_Builder(),
                lexer_callbacks={"IDENT": _keyword_check})


def _keyword_check(token: Token) -> Token:
    """Refuse keywords as soon as they are lexed, so the message names them (not a later token)."""
    _identifier(token)
    return token


# ---------------------------------------------------------------- resolution (top-down)
def _formula(node: tuple, bound: frozenset) -> Formula:
    kind = node[0]
    if kind == "app":
        name = node[2]
        if name in bound or name in CONNECTIVES:
            return _atom(node, bound)
        return Pred(name, tuple(map(_term, node[3], repeat(bound))))
    if kind == "not":
        return Not(_formula(node[2], bound))
    if kind in _BINARY:
        return _BINARY[kind](_formula(node[2], bound), _formula(node[3], bound))
    if kind == "eq":
        return Eq(_term(node[2], bound), _term(node[3], bound))
    if kind == "ne":
        return Not(Eq(_term(node[2], bound), _term(node[3], bound)))
    binders = node[2]
    body = _formula(node[3], bound | {var for var, _ in binders})
    make = _QUANTIFIER[kind]
    for var, sort in reversed(binders):
        body = make(var, body, sort)
    return body


def _atom(node: tuple, bound: frozenset) -> Formula:
    _, _, name, args, column = node
    where = f"`{name}` (column {column})"
    if name in bound:
        raise FormulaError(f"{where} is a bound variable used as a "
                           f"{'predicate' if args else 'proposition'}: that is second-order")
    arity = CONNECTIVES.get(name)
    if arity is None:
        return Pred(name, tuple(map(_term, args, repeat(bound))))
    if len(args) != arity:
        raise FormulaError(f"{where} takes {arity} argument{'s' if arity != 1 else ''}, got {len(args)}")
    if name == "True":
        return Top()
    if name == "False":
        return Bottom()
    if name == "Not":
        return Not(_formula(args[0], bound))
    if name == "Eq":
        return Eq(_term(args[0], bound), _term(args[1], bound))
    if name == "Ne":
        return Not(Eq(_term(args[0], bound), _term(args[1], bound)))
    return _CONNECTIVE_BINARY[name](_formula(args[0], bound), _formula(args[1], bound))


def _term(node: tuple, bound: frozenset) -> Term:
    if node[0] != "app":
        raise FormulaError(f"a formula ({_describe(node)}) stands where a term is expected")
    _, _, name, args, column = node
    where = f"`{name}` (column {column})"
    if name in CONNECTIVES:
        raise FormulaError(f"{where} is a proposition, not a term")
    if name in bound:
        if args:
            raise FormulaError(f"{where} is a bound variable applied to arguments: that is second-order")
        return Var(name)
    if args:
        return Fn(name, tuple(map(_term, args, repeat(bound))))
    return Const(name)


def _describe(node: tuple) -> str:
    return {"not": "a negation", "and_": "a conjunction", "or_": "a disjunction", "implies": "an implication",
            "iff": "a biconditional", "eq": "an equation", "ne": "an inequation", "forall": "a ∀",
            "exists": "an ∃"}[node[0]]


# ---------------------------------------------------------------- entry point
def parse(text: str, *, max_chars: int = DEFAULT_MAX_CHARS, max_depth: int = DEFAULT_MAX_DEPTH) -> Formula:
    """Parse one Lean 4 formula; any problem with the text is a FormulaError saying what and where."""
    if not isinstance(text, str):
        raise FormulaError(f"a formula must be a string, not {type(text).__name__}")
    if len(text) > max_chars:
        raise FormulaError(f"formula is {len(text)} characters long; the limit is {max_chars}")
    try:
        return _parse_cached(text, max_chars, max_depth)
    except FormulaError:
        raise
    except Exception as e:  # a bug of ours must not crash a trainer; the message makes it visible
        raise FormulaError(f"cannot parse formula (internal error: {type(e).__name__}: {e})") from e


@functools.lru_cache(maxsize=PARSE_CACHE_SIZE)
def _parse_cached(text: str, max_chars: int, max_depth: int) -> Formula:
    if not text.strip():
        raise FormulaError("empty formula")
    try:
        return parse_ast(text, max_depth)  # the fast path straight to the AST (fastparse)
    except Fallback:
        pass
    except RecursionError:  # pragma: no cover - bounded by MAX_NESTING; the two-step path decides
        pass
    try:
        raw = parse_raw(text)
    except Exception:  # noqa: BLE001 - Fallback, or anything else: the reference parser decides
        raw = _parse_with_lark(text)
    if raw[1] > max_depth:
        raise FormulaError(f"formula is nested {raw[1]} deep; the limit is {max_depth}")
    try:
        return _formula(raw, frozenset())
    except RecursionError:  # only if the caller's stack is already deep, or max_depth was raised
        raise FormulaError(f"formula is nested too deeply ({raw[1]} levels) for this stack") from None


def _parse_with_lark(text: str) -> tuple:
    """The reference parser: decides whatever the fast path declines, and words the errors."""
    try:
        return _lark().parse(text)
    except FormulaError:
        raise
    except UnexpectedCharacters as e:
        raise FormulaError(f"unexpected character {text[e.pos_in_stream]!r} at column {e.column}") from None
    except UnexpectedEOF:
        raise FormulaError("formula ends too early (unbalanced parenthesis or missing operand?)") from None
    except UnexpectedToken as e:
        if e.token.type == "$END":
            raise FormulaError("formula ends too early (unbalanced parenthesis or missing operand?)") from None
        raise FormulaError(f"unexpected {str(e.token)!r} at column {e.column}"
                           f"{_hint(e)}") from None
    except (LarkError, RecursionError) as e:  # a callback or the lexer failed some other way
        raise FormulaError(f"cannot parse formula: {type(e).__name__}") from None


def _hint(e: UnexpectedToken) -> str:
    if e.token.type in ("IFF", "_IFF"):
        return " (↔ is not associative in Lean: add parentheses)"
    if e.token.type in ("_EQ", "_NE"):
        return " (= and ≠ are not associative in Lean: add parentheses)"
    return ""


__all__ = ["DEFAULT_MAX_CHARS", "DEFAULT_MAX_DEPTH", "parse"]
