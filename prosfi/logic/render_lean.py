"""AST → Lean 4 source, for the Lean backend to wrap into theorems.

Names pass through `lean_name`: a valid Lean identifier that is not a keyword stays as it is,
anything else (a keyword, `café`, which Lean's identifier rules refuse) is escaped with
guillemets, `«café»`. Core Lean has no `Xor'` (it is Mathlib's), so by default `Xor' A B` is
written `¬(A ↔ B)`. Bound variables that would capture a symbol's Lean name are renamed.
"""

from __future__ import annotations

from collections.abc import Mapping
from itertools import repeat

from prosfi.logic.ast import (
    And,
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
    Var,
    Xor,
)
from prosfi.logic.keywords import LEAN_KEYWORDS
from prosfi.logic.printer import LeanPrinter
from prosfi.logic.signature import symbols_of


def _letter_like(c: int) -> bool:
    return ((0x3B1 <= c <= 0x3C9 and c != 0x3BB)                 # lower Greek but λ
            or (0x391 <= c <= 0x3A9 and c not in (0x3A0, 0x3A3))  # upper Greek but Π Σ
            or 0x3CA <= c <= 0x3FB                                # Coptic
            or 0x1F00 <= c <= 0x1FFE                              # polytonic Greek
            or 0x2100 <= c <= 0x214F                              # letterlike symbols
            or 0x1D49C <= c <= 0x1D59F)                           # script, double-struck, fraktur


def _subscript(c: int) -> bool:
    return 0x2080 <= c <= 0x2089 or 0x2090 <= c <= 0x209C or 0x1D62 <= c <= 0x1D6A


def _id_first(ch: str) -> bool:
    return (ch.isascii() and ch.isalpha()) or ch == "_" or _letter_like(ord(ch))


def _id_rest(ch: str) -> bool:
    return _id_first(ch) or (ch.isascii() and ch.isdigit()) or ch in "'!?" or _subscript(ord(ch))


def is_lean_identifier(name: str) -> bool:
    """Lean 4's own identifier rule (Lean.isIdFirst / isIdRest), minus keywords."""
    return (bool(name) and name != "_" and name not in LEAN_KEYWORDS and _id_first(name[0])
            and all(_id_rest(c) for c in name[1:]))


def lean_name(name: str) -> str:
    """`name` as Lean source: itself when Lean reads it as that identifier, else `«name»`."""
    if is_lean_identifier(name):
        return name
    if not name or any(c in "«»" or not c.isprintable() for c in name):
        raise ValueError(f"{name!r} cannot be written as a Lean identifier")
    return f"«{name}»"


def to_lean(f: Formula, names: Mapping[str, str] | None = None, *, domain: str | None = None,
            mathlib_xor: bool = False) -> str:
    """Lean 4 source for `f`.

    names: symbol name → Lean name (default: the name itself), passed through `lean_name`;
    domain: type written on every binder (`∀ (x : U), …`); None keeps the formula's own binder
    types, if any; mathlib_xor: write `Xor' A B` (needs Mathlib) instead of `¬(A ↔ B)`.
    """
    names = names or {}

    def symbol(name: str) -> str:
        return lean_name(names.get(name, name))

    taken = {symbol(s.name) for s in symbols_of(f)}
    f = _avoid_capture(f, taken, {}, _bound_names(f) | taken)
    sort = (lambda s: lean_name(domain)) if domain is not None else (lambda s: None if s is None else lean_name(s))
    return LeanPrinter(symbol=symbol, variable=lean_name, sort=sort, xor_as_iff=not mathlib_xor)(f)


def _bound_names(f: Formula) -> set[str]:
    out: set[str] = set()
    stack = [f]
    while stack:
        node = stack.pop()
        kind = type(node)
        if kind is Forall or kind is Exists:
            out.add(lean_name(node.var))
            stack.append(node.body)
        elif kind is Not:
            stack.append(node.body)
        elif kind in (And, Or, Implies, Iff, Xor):
            stack.extend((node.left, node.right))
    return out


def _avoid_capture(f: Formula, taken: set[str], env: dict[str, str], used: set[str]) -> Formula:
    """Rename bound variables whose Lean name equals a symbol's Lean name (`used` grows)."""
    kind = type(f)
    if kind is Forall or kind is Exists:
        var = f.var
        if lean_name(var) in taken:
            n = 1
            while lean_name(f"{var}_{n}") in used:
                n += 1
            var = f"{var}_{n}"
            used.add(lean_name(var))
        inner = dict(env)
        inner[f.var] = var
        return kind(var, _avoid_capture(f.body, taken, inner, used), f.sort)
    if not env and kind in (Pred, Eq):  # connectives may still hold binders below
        return f
    if kind is Pred:
        return Pred(f.name, tuple(map(_rename_term, f.args, repeat(env))))
    if kind is Eq:
        return Eq(_rename_term(f.left, env), _rename_term(f.right, env))
    if kind is Not:
        return Not(_avoid_capture(f.body, taken, env, used))
    if kind in (And, Or, Implies, Iff, Xor):
        return kind(_avoid_capture(f.left, taken, env, used), _avoid_capture(f.right, taken, env, used))
    return f


def _rename_term(t: Term, env: dict[str, str]) -> Term:
    kind = type(t)
    if kind is Var:
        return Var(env.get(t.name, t.name))
    if kind is Fn:
        return Fn(t.name, tuple(map(_rename_term, t.args, repeat(env))))
    return t


__all__ = ["is_lean_identifier", "lean_name", "to_lean"]
