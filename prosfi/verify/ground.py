"""Exact truth tables, decided in the calling process in microseconds, before any prover.

Every check is evaluated over one small finite domain: its constants, taken as distinct
elements (one anonymous element if it has none), with quantifiers ranging over them. The
atoms (`Knight zoey`, `Kind x` at each element) get every combination of truth values at
once: atom i is the integer whose bit r is bit i of r, and connectives become bitwise
operations on those integers. A row that makes every premise true and the conclusion false is
a genuine countermodel (a first-order structure over that domain), so `invalid` is sound.

`valid` is only claimed for ground checks without equality (every Knights & Knaves step):
there distinct ground atoms are independent in first-order logic, so the truth table is
complete. Anything else with no countermodel on this domain (and anything with function
symbols, or too many atoms) is left to the provers.
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Sequence

from prosfi.logic.ast import (
    And,
    Bottom,
    Eq,
    Exists,
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
from prosfi.verify.verdict import Status, Verdict

if TYPE_CHECKING:  # pragma: no cover
    from prosfi.logic.signature import Signature

NAME = "truthtable"
_BINARY = (And, Or, Implies, Iff, Xor)


def _shape(formulas: Sequence[Formula]) -> tuple[bool, bool]:
    """(has a quantifier, has equality)."""
    quantified = equality = False
    stack = list(formulas)
    push = stack.append
    while stack:
        node = stack.pop()
        kind = type(node)
        if kind is Not:
            push(node.body)
        elif kind in _BINARY:
            push(node.right)
            push(node.left)
        elif kind is Forall or kind is Exists:
            quantified = True
            push(node.body)
        elif kind is Eq:
            equality = True
    return quantified, equality


def _columns(n: int) -> tuple[list[int], int]:
    """Bit columns of the 2^n-row table: atom i is true in row r iff bit i of r is set."""
    rows = 1 << n
    full = (1 << rows) - 1
    cols = []
    for i in range(n):
        half = 1 << i
        block = ((1 << half) - 1) << half  # `half` zeros then `half` ones
        cols.append(block * (full // ((1 << (half << 1)) - 1)))  # that block repeated over all rows
    return cols, full


class _Table:
    def __init__(self, constants: list[str], n_atoms: int):
        self.constants = {c: k for k, c in enumerate(constants)}
        self.size = max(1, len(constants))
        self.cols, self.full = _columns(n_atoms)
        self.atoms: dict[tuple, int] = {}  # (predicate, element indices) -> column index

    def element(self, t, env: dict) -> int:
        return env[t.name] if type(t) is Var else self.constants[t.name]

    def eval(self, f: Formula, env: dict) -> int:
        kind = type(f)
        if kind is Pred:
            consts = self.constants
            key = (f.name, tuple([env[a.name] if type(a) is Var else consts[a.name] for a in f.args]))
            i = self.atoms.get(key)
            if i is None:
                i = self.atoms[key] = len(self.atoms)
            return self.cols[i]
        if kind is Not:
            return self.full ^ self.eval(f.body, env)
        if kind in _BINARY:
            a, b = self.eval(f.left, env), self.eval(f.right, env)
            if kind is And:
                return a & b
            if kind is Or:
                return a | b
            if kind is Implies:
                return (self.full ^ a) | b
            if kind is Iff:
                return self.full ^ (a ^ b)
            return a ^ b
        if kind is Forall or kind is Exists:
            acc = self.full if kind is Forall else 0
            saved = env.get(f.var, _UNBOUND)
            for d in range(self.size):
                env[f.var] = d
                v = self.eval(f.body, env)
                acc = acc & v if kind is Forall else acc | v
            if saved is _UNBOUND:
                del env[f.var]
            else:
                env[f.var] = saved
            return acc
        if kind is Eq:
            return self.full if self.element(f.left, env) == self.element(f.right, env) else 0
        if kind is Top:
            return self.full
        if kind is Bottom:
            return 0
        raise TypeError(f"not a formula node: {f!r}")

    def describe(self, row: int, limit: int = 300) -> str:
        names = list(self.constants) or ["e0"]
        parts = []
        for (pred, args), i in self.atoms.items():
            atom = " ".join([pred, *(names[a] for a in args)])
            parts.append(atom if row >> i & 1 else "¬" + atom)
        text = f"domain {{{', '.join(names)}}}: " + (", ".join(parts) or "(no atoms)")
        return text if len(text) <= limit else text[: limit - 1] + "…"


_UNBOUND = object()


def decide(premises: Sequence[Formula], conclusion: Formula, signature: "Signature",
           max_atoms: int = 16) -> Verdict | None:
    """`invalid` with a countermodel, `valid` for a ground equality-free check whose table has
    none, or None (leave it to the provers)."""
    start = time.perf_counter()
    symbols = signature.key  # sorted Symbol tuples: cheaper than the Mapping interface
    if any(s.role == "func" for s in symbols):  # function symbols: no finite Herbrand domain
        return None
    constants = [s.name for s in symbols if s.role == "const"]
    size = max(1, len(constants))
    n_atoms = sum(size ** s.arity for s in symbols if s.role == "pred")
    if n_atoms > max_atoms:
        return None
    quantified, equality = _shape([*premises, conclusion])
    table = _Table(constants, n_atoms)
    try:
        rows = table.full
        for p in premises:
            rows &= table.eval(p, {})
            if not rows:
                break
        bad = rows & (table.full ^ table.eval(conclusion, {})) if rows else 0
    except RecursionError:  # pathological nesting: let a prover try
        return None
    ms = (time.perf_counter() - start) * 1000.0
    if bad:
        row = (bad & -bad).bit_length() - 1
        return Verdict(Status.INVALID, NAME, ms, "countermodel: " + table.describe(row))
    if not quantified and not equality:
        return Verdict(Status.VALID, NAME, ms, "every row of the truth table satisfying the premises "
                       "satisfies the conclusion")
    return None


__all__ = ["decide", "NAME"]
