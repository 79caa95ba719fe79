"""Exact truth tables, decided in the calling process in microseconds, before any prover.

Every check is evaluated over one small finite domain: its constants, taken as distinct
elements (one anonymous element if it has none), with quantifiers ranging over them. The
atoms (`Knight zoey`, `Kind x` at each element) get every combination of truth values at
once: atom i is the integer whose bit r is bit i of r, and connectives become bitwise
operations on those integers. A row that makes every premise (all of them, whatever their
shape) true and the conclusion false is a genuine countermodel (a first-order structure over
that domain), so `invalid` is sound.

`valid` is claimed on two paths, both only with no equality in the conclusion or in any
premise used, and no function symbols anywhere:

1. A ground check (every Knights & Knaves step): distinct ground atoms are independent in
   first-order logic, so the truth table is complete.
2. A ground conclusion (`Nice candy`) with universally quantified premises (`∀ x, Kind x →
   Nice x`, ProverQA-style): every premise that is a prenex block of ∀ over a quantifier-free,
   equality-free body (or is ground and equality-free) is *used*; every other premise (one with
   ∃, a quantifier under a connective, equality) is *dropped*. The table of the used premises
   over the check's constants is exactly the propositional table of all their ground
   instances (∀ evaluates to the conjunction over the constants). If no row makes the used
   premises true and the conclusion false, the check is `valid`. Sound because
   (a) universal instantiation is: `∀ x̄, B` entails `B[c̄/x̄]` for every tuple of constants;
   (b) a set of ground equality-free formulas entails a ground equality-free formula whenever
       it does so propositionally (atoms as variables): every first-order structure gives its
       ground atoms some truth values, i.e. picks a row, and agrees with that row on every
       ground quantifier-free formula;
   (c) dropping premises only weakens them: what a subset entails, the whole set entails.
   A check with no constants is instantiated at one anonymous element e: every domain is
   non-empty (the Z3 sort, Lean's `[Nonempty U]`, Prover9), so any model of the premises
   extends to one interpreting a fresh constant e, and e occurs in no premise or conclusion.
   A row found here that falsifies only the used premises is *not* a countermodel (dropped
   premises may exclude it): this path only ever answers `valid` or nothing.

Anything else with no countermodel on this domain (and anything with function symbols, or too
many atoms, or more than `MAX_INSTANCES` ground instances) is left to the provers.

**Budget.** Evaluation is exponential in the nesting of quantifiers (`∀ x0 … x39, P x0` over two
constants is 2^40 evaluations of its body), so it runs under a budget: at most `max_nodes`
formula nodes evaluated and `max_ms` of wall clock (checked every 1,024 nodes). A check that
runs out answers nothing here and goes to the provers, whose process-level timeouts bound it.
"""

from __future__ import annotations

import functools
import time
from typing import TYPE_CHECKING, Sequence

from prosfi.logic.ast import (
    And,
    Bottom,
    Const,
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
from prosfi.verdict import Status, Verdict

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


@functools.lru_cache(maxsize=32)
def truth_columns(n: int) -> tuple[tuple[int, ...], int]:
    """Bit columns of the 2^n-row table: atom i is true in row r iff bit i of r is set.

    Cached per n (at most 21 distinct tables); each column is built by doubling its block, which
    stays cheap at 16 atoms where a big-integer division would take milliseconds per check."""
    rows = 1 << n
    full = (1 << rows) - 1
    cols = []
    for i in range(n):
        half = 1 << i
        col = ((1 << half) - 1) << half  # `half` zeros then `half` ones
        width = half << 1
        while width < rows:  # repeat the block over all rows
            col |= col << width
            width <<= 1
        cols.append(col)
    return tuple(cols), full


class OverBudget(Exception):
    """The table ran out of nodes or time: the check goes to the provers."""


# Defaults of `decide`'s budget (VerifierConfig.truth_table_max_nodes / truth_table_max_ms).
MAX_NODES = 100_000
MAX_MS = 250.0


class _Table:
    """`constants` maps each constant to its element (0 .. size-1; several may share one); `names`
    names the elements in countermodels (default: the constants, or `e0`)."""

    def __init__(self, constants: list[str] | dict[str, int], n_atoms: int, max_nodes: int = MAX_NODES,
                 max_ms: float = MAX_MS, size: int | None = None, names: list[str] | None = None):
        self.left = max(1, max_nodes)
        self.deadline = time.perf_counter() + max_ms / 1000.0
        if isinstance(constants, dict):
            self.constants = constants
        else:
            self.constants = {c: k for k, c in enumerate(constants)}
        self.size = size if size is not None else max(1, len(constants))
        self.names = names if names is not None else (list(self.constants) or ["e0"])
        self.cols, self.full = truth_columns(n_atoms)
        self.atoms: dict[tuple, int] = {}  # (predicate, element indices) -> column index

    def element(self, t, env: dict) -> int:
        return env[t.name] if type(t) is Var else self.constants[t.name]

    def eval(self, f: Formula, env: dict) -> int:
        self.left -= 1
        if not self.left & 1023 and (self.left <= 0 or time.perf_counter() > self.deadline):
            raise OverBudget
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
        names = self.names
        parts = []
        for (pred, args), i in self.atoms.items():
            atom = " ".join([pred, *(names[a] for a in args)])
            parts.append(atom if row >> i & 1 else "¬" + atom)
        text = f"domain {{{', '.join(names)}}}: " + (", ".join(parts) or "(no atoms)")
        return text if len(text) <= limit else text[: limit - 1] + "…"


_UNBOUND = object()

# Most ground instances (the check's constants ^ the ∀ block's length, summed over the premises
# used) the universal-instance path evaluates; past it, the provers decide.
MAX_INSTANCES = 4096


def _universal_block(f: Formula) -> int | None:
    """The length of `f`'s prenex ∀ block (0 for a ground formula) when `f` is ∀ x̄, B with B
    free of quantifiers and equality and every variable of B bound by the block; else None."""
    bound = set()
    n = 0
    while type(f) is Forall:
        bound.add(f.var)
        n += 1
        f = f.body
    stack = [f]
    push = stack.append
    while stack:
        node = stack.pop()
        kind = type(node)
        if kind is Pred:
            for a in node.args:
                if type(a) is Var:
                    if a.name not in bound:
                        return None
                elif type(a) is not Const:  # a function term (excluded earlier anyway)
                    return None
        elif kind is Not:
            push(node.body)
        elif kind in _BINARY:
            push(node.right)
            push(node.left)
        elif kind is Top or kind is Bottom:
            continue
        else:  # Forall / Exists below the block, Eq, anything unexpected
            return None
    return n


def decide(premises: Sequence[Formula], conclusion: Formula, signature: "Signature",
           max_atoms: int = 16, max_nodes: int = MAX_NODES, max_ms: float = MAX_MS) -> Verdict | None:
    """`invalid` with a countermodel (over all premises); `valid` for a ground equality-free
    check whose table has none, or for a ground equality-free conclusion that the ground
    instances of the universal premises entail propositionally (module docstring); else None
    (leave it to the provers), also when the budget (`max_nodes` evaluated nodes, `max_ms`)
    runs out."""
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
    table = _Table(constants, n_atoms, max_nodes, max_ms)
    values: list[int] = []  # the premises' columns, as far as the countermodel search got
    try:
        rows = table.full
        for p in premises:
            v = table.eval(p, {})
            values.append(v)
            rows &= v
            if not rows:
                break
        falsified = table.full ^ table.eval(conclusion, {})
        bad = rows & falsified
    except (RecursionError, OverBudget):  # pathological nesting or size: let a prover try
        return None
    if bad:
        ms = (time.perf_counter() - start) * 1000.0
        row = (bad & -bad).bit_length() - 1
        return Verdict(Status.INVALID, NAME, ms, "countermodel: " + table.describe(row))
    if not quantified and not equality:
        ms = (time.perf_counter() - start) * 1000.0
        return Verdict(Status.VALID, NAME, ms, "every row of the truth table satisfying the premises "
                       "satisfies the conclusion")
    # -- the universal-instance path: only `valid` or None from here on (module docstring, 2.)
    if _universal_block(conclusion) != 0:  # the conclusion must be ground, without equality
        return None
    used: list[int] = []
    instances = 0
    for i, p in enumerate(premises):
        k = _universal_block(p)
        if k is None:  # ∃, a nested quantifier, equality: dropped (sound for `valid`)
            continue
        instances += size ** k
        if instances > MAX_INSTANCES:
            return None
        used.append(i)
    try:
        rows = table.full
        for i in used:
            rows &= values[i] if i < len(values) else table.eval(premises[i], {})
            if not rows & falsified:
                break
    except (RecursionError, OverBudget):  # only premises the search above did not reach
        return None
    if rows & falsified:
        return None  # NOT a countermodel: dropped premises may exclude every such row
    ms = (time.perf_counter() - start) * 1000.0
    dropped = len(premises) - len(used)
    return Verdict(Status.VALID, NAME, ms,
                   f"the {instances} ground instance(s) of {len(used)} universal or ground premise(s) "
                   f"over {{{', '.join(constants) or 'e0'}}} entail the conclusion by truth table"
                   + (f" ({dropped} premise(s) of another shape not used)" if dropped else ""))


# ---------------------------------------------------------------- wider domains, countermodels only
EXTRA_ELEMENTS = 2  # most anonymous elements added to the constants' domain


def _merged(constants: list[str], premises: Sequence[Formula]) -> dict[str, str]:
    """Union-find over the premises' top-level conjuncts `c = d` between constants: constant -> its
    class's first constant. Only a choice of which structures to try; any structure found is checked."""
    parent = {c: c for c in constants}

    def find(c: str) -> str:
        while parent[c] != c:
            c = parent[c]
        return c

    stack = list(premises)
    while stack:
        f = stack.pop()
        if type(f) is And:
            stack += [f.left, f.right]
        elif type(f) is Eq and type(f.left) is Const and type(f.right) is Const:
            a, b = find(f.left.name), find(f.right.name)
            if a != b:
                parent[max(a, b)] = min(a, b)
    return {c: find(c) for c in constants}


def _domains(constants: list[str], premises: Sequence[Formula], extra: int):
    """(constant -> element, size, element names) of the small structures to search beyond `decide`'s
    (constants distinct, no other element): every constant on one element, the constants merged as
    the premises' equalities say, then each with up to `extra` anonymous elements."""
    classes = _merged(constants, premises)
    bases = []
    if constants:
        reps = sorted(set(classes.values()), key=constants.index)
        if len(reps) < len(constants):
            bases.append({c: reps.index(classes[c]) for c in constants})
    identity = {c: k for k, c in enumerate(constants)}
    bases.append(identity)
    seen = {(tuple(sorted(identity.items())), max(1, len(constants)))}  # decide's own domain
    out = []
    if len(constants) > 1:
        out.append(({c: 0 for c in constants}, 1))
    for k in range(extra + 1):
        for base in bases:
            size = len(set(base.values())) + k
            key = (tuple(sorted(base.items())), size)
            if size == 0:
                continue
            if key not in seen:
                seen.add(key)
                out.append((base, size))
    for base, size in out:
        names = ["=".join(c for c in constants if base[c] == e) or f"e{e}" for e in range(size)]
        yield base, size, names


def countermodel(premises: Sequence[Formula], conclusion: Formula, signature: "Signature",
                 max_atoms: int = 16, max_nodes: int = MAX_NODES, max_ms: float = MAX_MS,
                 extra: int = EXTRA_ELEMENTS) -> Verdict | None:
    """`invalid` with a countermodel found over a small domain other than `decide`'s: constants
    identified (all on one element, or as the premises' equalities `c = d` say) and up to `extra`
    anonymous elements. Each candidate is a genuine first-order structure (every predicate any
    relation on the domain, each constant an element, `=` identity) evaluated on all premises and the
    conclusion, so a row making every premise true and the conclusion false refutes the step. Never
    `valid`; None when nothing is found within the atoms and the shared budget."""
    start = time.perf_counter()
    symbols = signature.key
    if any(s.role == "func" for s in symbols):
        return None
    constants = [s.name for s in symbols if s.role == "const"]
    arities = [s.arity for s in symbols if s.role == "pred"]
    deadline = start + max_ms / 1000.0
    left = max_nodes
    for mapping, size, names in sorted(_domains(constants, premises, extra),
                                       key=lambda d: sum(d[1] ** a for a in arities)):
        n_atoms = sum(size ** a for a in arities)
        if n_atoms > max_atoms:
            break  # sorted by atoms: every later domain is larger
        ms_left = (deadline - time.perf_counter()) * 1000.0
        if ms_left <= 0 or left <= 0:
            return None
        table = _Table(mapping, n_atoms, left, ms_left, size=size, names=names)
        try:
            rows = table.full
            for p in premises:
                rows &= table.eval(p, {})
                if not rows:
                    break
            bad = rows & (table.full ^ table.eval(conclusion, {})) if rows else 0
        except (RecursionError, OverBudget):
            return None
        left = table.left
        if bad:
            ms = (time.perf_counter() - start) * 1000.0
            row = (bad & -bad).bit_length() - 1
            return Verdict(Status.INVALID, NAME, ms, "countermodel: " + table.describe(row))
    return None


__all__ = ["countermodel", "decide", "MAX_INSTANCES", "MAX_MS", "MAX_NODES", "NAME", "OverBudget"]
