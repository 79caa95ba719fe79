"""The signature of one check: every symbol with one role and one arity.

Lean would reject `Kind bob` next to `Kind bob alice` (or `bob` as both a person and a
proposition); an untyped prover would silently treat them as different symbols and could prove
or refute nonsense. So a clash is a SignatureError naming the symbol, before any prover runs.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from typing import Literal, NamedTuple

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
    Top,
    Var,
    Xor,
)
from prosfi.logic.errors import SignatureError

Role = Literal["pred", "func", "const"]
_ROLE_WORDS = {"pred": "a predicate", "func": "a function", "const": "a constant"}


class Symbol(NamedTuple):
    name: str
    role: Role
    arity: int

    def describe(self) -> str:
        if self.role == "const":
            return "a constant"
        if self.role == "pred" and self.arity == 0:
            return "a proposition"
        return f"{_ROLE_WORDS[self.role]} of arity {self.arity}"


class Signature(Mapping[str, Symbol]):
    """An immutable name → Symbol mapping; hashable, with a sorted-tuple `.key` for caches."""

    __slots__ = ("_hash", "_key", "_symbols")

    def __init__(self, symbols: Iterable[Symbol] = ()):
        table: dict[str, Symbol] = {}
        for symbol in symbols:
            _add(table, symbol)
        self._symbols = table
        self._key = tuple(sorted(table.values()))
        self._hash = hash(self._key)

    @property
    def key(self) -> tuple[Symbol, ...]:
        return self._key

    def __getitem__(self, name: str) -> Symbol:
        return self._symbols[name]

    def __iter__(self) -> Iterator[str]:
        return iter(self._symbols)

    def __len__(self) -> int:
        return len(self._symbols)

    def __hash__(self) -> int:
        return self._hash

    def __eq__(self, other: object) -> bool:
        if isinstance(other, Signature):
            return self._key == other._key
        return NotImplemented

    def __repr__(self) -> str:
        inner = ", ".join(f"{s.name}:{s.role}/{s.arity}" for s in self._key)
        return f"Signature({inner})"

    def of_role(self, role: Role) -> list[Symbol]:
        """Symbols of one role, sorted by name (a stable order for renderers)."""
        return [s for s in self._key if s.role == role]

    def merge(self, formulas: Iterable[Formula]) -> Signature:
        return check_signature(formulas, self)


def _add(table: dict[str, Symbol], symbol: Symbol) -> None:
    seen = table.get(symbol.name)
    if seen is None:
        table[symbol.name] = symbol
    elif seen != symbol:
        raise SignatureError(f"symbol `{symbol.name}` is used as {seen.describe()} and as {symbol.describe()}",
                             symbol.name)


def symbols_of(f: Formula) -> Iterator[Symbol]:
    """Every symbol occurrence in `f` (iteratively: depth is no concern here)."""
    stack: list = [f]
    pop, push = stack.pop, stack.append
    while stack:
        node = pop()
        kind = type(node)
        if kind is Pred:
            yield Symbol(node.name, "pred", len(node.args))
            stack.extend(node.args)
        elif kind is Const:
            yield Symbol(node.name, "const", 0)
        elif kind is Fn:
            yield Symbol(node.name, "func", len(node.args))
            stack.extend(node.args)
        elif kind is Var or kind is Top or kind is Bottom:
            continue
        elif kind is Not or kind is Forall or kind is Exists:
            push(node.body)
        elif kind in (And, Or, Implies, Iff, Xor, Eq):
            push(node.right)
            push(node.left)
        else:
            raise TypeError(f"not a formula node: {node!r}")


def check_signature(formulas: Iterable[Formula], base: Signature | None = None) -> Signature:
    """The joint signature of `formulas` (and `base`); SignatureError names the first clash."""
    table: dict[str, Symbol] = dict(base._symbols) if base is not None else {}
    for f in formulas:
        for symbol in symbols_of(f):
            _add(table, symbol)
    if base is not None and len(table) == len(base):
        return base
    return _from_table(table)


def union(signatures: Iterable[Signature]) -> Signature:
    """`Signature(chain of each one's key)` without re-checking symbols one call at a time: the joint
    signature of one check's formulas; SignatureError names the first clash in that same order."""
    table: dict[str, Symbol] = {}
    get = table.get
    for sig in signatures:
        for symbol in sig._key:
            seen = get(symbol[0])
            if seen is None:
                table[symbol[0]] = symbol
            elif seen != symbol:
                _add(table, symbol)  # raises, naming the symbol
    return _from_table(table)


def from_symbols(symbols: dict[str, Symbol]) -> Signature:
    """The Signature of {name: Symbol} as the fast parser collects it (already free of clashes; the
    Signature keeps the dict)."""
    return _from_table(symbols)


def _from_table(table: dict[str, Symbol]) -> Signature:
    """A Signature of a table `_add` has already checked (no second pass over the symbols)."""
    sig = Signature.__new__(Signature)
    sig._symbols = table
    sig._key = tuple(sorted(table.values()))
    sig._hash = hash(sig._key)
    return sig


__all__ = ["Role", "Signature", "Symbol", "check_signature", "from_symbols", "symbols_of", "union"]
