"""The AST of prosfi's formula language: the first-order fragment of Lean 4 syntax.

Every backend renders from these nodes, never from model text (a project rule).
Nodes are frozen and hashable so they can key caches and be shared between steps.

Terms:    Var (bound by a quantifier), Const (a constant of the problem's signature),
          Fn (a function symbol applied to terms).
Formulas: Pred (predicate applied to terms; nullary when args == ()), Eq, Top, Bottom,
          Not, And, Or, Implies, Iff, Xor, Forall, Exists.
`a ≠ b` parses to Not(Eq(a, b)); `Not A` to Not(A); `Xor' A B` to Xor(A, B).
"""

from __future__ import annotations

from dataclasses import dataclass, fields
from operator import attrgetter
from typing import Union


# ---------------------------------------------------------------- terms
@dataclass(frozen=True, slots=True)
class Var:
    """A variable bound by an enclosing ∀/∃."""

    name: str


@dataclass(frozen=True, slots=True)
class Const:
    """An unbound identifier in term position: a constant of the problem's signature."""

    name: str


@dataclass(frozen=True, slots=True)
class Fn:
    """A function symbol applied to one or more terms, e.g. `f a` in `P (f a)`."""

    name: str
    args: tuple["Term", ...]


Term = Union[Var, Const, Fn]


# ---------------------------------------------------------------- formulas
@dataclass(frozen=True, slots=True)
class Pred:
    """A predicate applied to terms by juxtaposition; `args == ()` for a propositional atom."""

    name: str
    args: tuple[Term, ...] = ()


@dataclass(frozen=True, slots=True)
class Eq:
    left: Term
    right: Term


@dataclass(frozen=True, slots=True)
class Top:
    """`True`."""


@dataclass(frozen=True, slots=True)
class Bottom:
    """`False`."""


@dataclass(frozen=True, slots=True)
class Not:
    body: "Formula"


@dataclass(frozen=True, slots=True)
class And:
    left: "Formula"
    right: "Formula"


@dataclass(frozen=True, slots=True)
class Or:
    left: "Formula"
    right: "Formula"


@dataclass(frozen=True, slots=True)
class Implies:
    left: "Formula"
    right: "Formula"


@dataclass(frozen=True, slots=True)
class Iff:
    left: "Formula"
    right: "Formula"


@dataclass(frozen=True, slots=True)
class Xor:
    """`Xor' A B`: exactly one of A, B holds."""

    left: "Formula"
    right: "Formula"


@dataclass(frozen=True, slots=True)
class Forall:
    """`∀ var, body`. `sort` keeps a binder type annotation (`∀ (x : T), …`) for rendering;
    semantically every binder ranges over the one non-empty domain."""

    var: str
    body: "Formula"
    sort: str | None = None


@dataclass(frozen=True, slots=True)
class Exists:
    var: str
    body: "Formula"
    sort: str | None = None


Formula = Union[Pred, Eq, Top, Bottom, Not, And, Or, Implies, Iff, Xor, Forall, Exists]
BINARY = (And, Or, Implies, Iff, Xor)


def _fast_pickle(cls: type) -> None:
    """Pickle a node as `(cls, field values)`: the verifier sends parsed checks to its workers, and the
    dataclass default (a Python `__getstate__`/`__setstate__` per node, reading `fields()` each time)
    cost about as much as parsing the text again."""
    names = tuple(f.name for f in fields(cls))
    if not names:
        cls.__reduce__ = lambda self: (cls, ())
    elif len(names) == 1:
        get = attrgetter(names[0])
        cls.__reduce__ = lambda self: (cls, (get(self),))
    else:
        get = attrgetter(*names)
        cls.__reduce__ = lambda self: (cls, get(self))


for _cls in (Var, Const, Fn, Pred, Eq, Top, Bottom, Not, And, Or, Implies, Iff, Xor, Forall, Exists):
    _fast_pickle(_cls)
del _cls
QUANTIFIERS = (Forall, Exists)

__all__ = [
    "Var", "Const", "Fn", "Term", "Pred", "Eq", "Top", "Bottom", "Not", "And", "Or", "Implies",
    "Iff", "Xor", "Forall", "Exists", "Formula", "BINARY", "QUANTIFIERS",
]
