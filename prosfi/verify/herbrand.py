"""Ground (Herbrand) instances: proofs in this process for checks the truth tables leave to Z3.

The truth tables (`truth_table`) decide a check over the finite domain of its constants; what has an
existential premise, a universal conclusion or equality between constants (`∃ x, R a x`,
`∀ y, ∃ x, R x y`, `a = b`) goes on to a prover. Most such steps are proved by a handful of ground
instances, which this module finds in about a tenth of what a Z3 round trip costs, and answers only
`valid` (a proof) or nothing.

The method (Herbrand's theorem, used only in its sound direction):

1. premises ∧ ¬conclusion, each in negation normal form (connectives pushed down to the atoms);
2. Skolemised on the fly: an `∃ y` under the universal variables x̄ of its scope stands for the term
   `sk_i(x̄)` of a fresh function symbol (one per occurrence); satisfiable before ⇒ satisfiable after;
3. every `∀ x` replaced by the conjunction of its instances over a finite set T of ground terms (the
   check's constants, or one fresh constant when it has none, then the Skolem terms that the previous
   round produced): each instance is entailed by the ∀ it comes from (in negation normal form every
   ∀ stands in positive position);
4. with equality, ground instances of its axioms are added over the atoms present (`s = t` is kept
   oriented, so symmetry is built in; congruence for every predicate argument, transitivity); all are
   true in every first-order structure;
5. the resulting ground formulas are evaluated by exact truth tables, every ground atom (equality
   atoms too) an independent propositional variable. If no row satisfies them all, no first-order
   structure (with equality) satisfies premises ∧ ¬conclusion: any such structure, with its Skolem
   functions, gives the atoms truth values that satisfy every formula of steps 3 and 4. So `valid`.

A satisfiable table here proves nothing (T is finite, and instances were chosen, not exhausted), so
this path never answers `invalid`; countermodels come from `truth_table.countermodel` (finite structures,
evaluated directly). Function symbols of the check itself make it decline (its Herbrand universe is
infinite from the start). Bounded like the truth tables: at most `max_atoms` ground atoms, `max_nodes`
grounded nodes, `max_ms` of wall clock, `MAX_ROUNDS` rounds over at most `MAX_TERMS` ground terms.
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
from prosfi.verify.truth_table import MAX_MS, MAX_NODES, OverBudget, truth_columns
from prosfi.verdict import Status, Verdict

if TYPE_CHECKING:  # pragma: no cover
    from prosfi.logic.signature import Signature

NAME = "herbrand"
MAX_ROUNDS = 3  # term sets: the constants, + the Skolem terms of round 1, + those of round 2
MAX_TERMS = 8  # most ground terms a ∀ ranges over
_ANON = "\x00e"  # the fresh constant of a check without constants (no identifier contains \x00)

# Negation normal form, as tuples: ("P", name, args, positive), ("E", left, right, positive),
# ("A", [children]) and, ("O", [children]) or, ("F", var, body) ∀, ("X", var, body, skolem id) ∃,
# ("T",) true, ("B",) false.
_TRUE, _FALSE = ("T",), ("B",)


def _nnf(f: Formula, positive: bool, ids: list[int]):
    """`f` (positive) or `¬f` (not positive) in negation normal form; every ∃ gets its own id
    (`ids[0]` counts them). `ids[1]` is the node budget left: ↔ and ⊕ copy both sides, so nested
    ones grow exponentially; past it, OverBudget."""
    ids[1] -= 1
    if ids[1] < 0:
        raise OverBudget
    kind = type(f)
    if kind is Pred:
        return ("P", f.name, f.args, positive)
    if kind is Eq:
        return ("E", f.left, f.right, positive)
    if kind is Not:
        return _nnf(f.body, not positive, ids)
    if kind is And or kind is Or:
        join = "A" if (kind is And) == positive else "O"
        return (join, [_nnf(f.left, positive, ids), _nnf(f.right, positive, ids)])
    if kind is Implies:  # a → b is ¬a ∨ b
        if positive:
            return ("O", [_nnf(f.left, False, ids), _nnf(f.right, True, ids)])
        return ("A", [_nnf(f.left, True, ids), _nnf(f.right, False, ids)])
    if kind is Iff or kind is Xor:
        same = (kind is Iff) == positive  # (a ↔ b) or ¬(a ⊕ b): (¬a ∨ b) ∧ (a ∨ ¬b)
        if same:
            return ("A", [("O", [_nnf(f.left, False, ids), _nnf(f.right, True, ids)]),
                          ("O", [_nnf(f.left, True, ids), _nnf(f.right, False, ids)])])
        return ("O", [("A", [_nnf(f.left, True, ids), _nnf(f.right, False, ids)]),
                      ("A", [_nnf(f.left, False, ids), _nnf(f.right, True, ids)])])
    if kind is Forall or kind is Exists:
        body = _nnf(f.body, positive, ids)
        if (kind is Forall) == positive:
            return ("F", f.var, body)
        ids[0] += 1
        return ("X", f.var, body, ids[0])
    if kind is Top:
        return _TRUE if positive else _FALSE
    if kind is Bottom:
        return _FALSE if positive else _TRUE
    raise TypeError(f"not a formula node: {f!r}")


class _Grounder:
    """Step 3 and 4 of the module docstring: ground formulas over atom numbers.

    A ground formula is True, False, an int literal (atom i is i + 1, its negation -(i + 1)), or
    ("&" | "|", [ground formulas])."""

    def __init__(self, terms: list[str], max_nodes: int, deadline: float, max_atoms: int = 1 << 30):
        self.terms = terms
        self.max_atoms = max_atoms
        self.left = max(1, max_nodes)
        self.deadline = deadline
        self.atoms: dict[tuple, int] = {}
        self.made: set[str] = set()  # Skolem terms produced (the next round's new terms)

    def atom(self, key: tuple) -> int:
        i = self.atoms.get(key)
        if i is None:
            i = len(self.atoms)
            if i >= self.max_atoms:  # past the table's reach: stop grounding at once
                raise OverBudget
            self.atoms[key] = i
        return i + 1

    def term(self, t, env: dict) -> str:
        if type(t) is Var:
            return env[t.name]
        return t.name  # a Const (function symbols were refused before)

    def ground(self, node, env: dict, universal: list[str]):
        self.left -= 1
        if not self.left & 1023 and (self.left <= 0 or time.perf_counter() > self.deadline):
            raise OverBudget
        kind = node[0]
        if kind == "P":
            key = (node[1], tuple([env[a.name] if type(a) is Var else a.name for a in node[2]]))
            i = self.atom(key)
            return i if node[3] else -i
        if kind == "A" or kind == "O":
            conj = kind == "A"
            parts = []
            for child in node[1]:
                g = self.ground(child, env, universal)
                if g is True or g is False:
                    if g is conj:  # a true conjunct, a false disjunct: drop it
                        continue
                    return g  # a false conjunct, a true disjunct decide the whole
                parts.append(g)
            if not parts:
                return conj
            return parts[0] if len(parts) == 1 else ("&" if conj else "|", parts)
        if kind == "F":
            var, body = node[1], node[2]
            saved = env.get(var)
            parts = []
            for t in self.terms:
                env[var] = t
                universal.append(t)
                g = self.ground(body, env, universal)
                universal.pop()
                if g is False:
                    parts = None
                    break
                if g is not True:
                    parts.append(g)
            _restore(env, var, saved)
            if parts is None:
                return False
            if not parts:
                return True
            return parts[0] if len(parts) == 1 else ("&", parts)
        if kind == "X":  # the Skolem term of this occurrence at the enclosing universals' values
            var, body = node[1], node[2]
            witness = f"\x00{node[3]}(" + ",".join(universal) + ")"
            self.made.add(witness)
            saved = env.get(var)
            env[var] = witness
            g = self.ground(body, env, universal)
            _restore(env, var, saved)
            return g
        if kind == "E":
            s, t = self.term(node[1], env), self.term(node[2], env)
            if s == t:
                return node[3]
            i = self.atom(("=", s, t) if s < t else ("=", t, s))
            return i if node[3] else -i
        return kind == "T"

    def equality_axioms(self, max_atoms: int) -> list:
        """Ground instances of congruence (each predicate argument) and transitivity (symmetry is
        built in: equality atoms are oriented) over the atoms present, repeated while they make new
        atoms (at most `max_atoms`): `¬ s=t ∨ ¬ P(..s..) ∨ P(..t..)`, `¬ s=t ∨ ¬ t=u ∨ s=u`."""
        out: list = []
        done: set = set()
        while True:
            before = len(self.atoms)
            keys = list(self.atoms)
            eqs = [key for key in keys if key[0] == "="]
            if not eqs:
                return out
            for key in keys:
                for e_key in eqs:
                    if (key, e_key) in done or key is e_key:
                        continue
                    done.add((key, e_key))
                    _, s, t = e_key
                    e = self.atom(e_key)
                    if key[0] != "=":  # congruence: rewrite one argument s -> t (or t -> s)
                        name, args = key
                        for k, a in enumerate(args):
                            if a == s or a == t:
                                moved = (name, args[:k] + (t if a == s else s,) + args[k + 1:])
                                out.append(("|", [-e, -self.atom(key), self.atom(moved)]))
                        continue
                    shared = {s, t} & {key[1], key[2]}  # transitivity through the shared term
                    if len(shared) != 1:
                        continue
                    (x,) = shared
                    y, z = (t if s == x else s), (key[2] if key[1] == x else key[1])
                    third = ("=", y, z) if y < z else ("=", z, y)
                    out.append(("|", [-e, -self.atom(key), self.atom(third)]))
                if len(self.atoms) > max_atoms:
                    return out  # the caller declines: too many atoms
            if len(self.atoms) == before:
                return out


def _restore(env: dict, var: str, saved) -> None:
    if saved is None:
        env.pop(var, None)
    else:
        env[var] = saved


def _evaluate(g, cols: tuple[int, ...], full: int) -> int:
    if g is True:
        return full
    if g is False:
        return 0
    if type(g) is int:
        return cols[g - 1] if g > 0 else full ^ cols[-g - 1]
    if g[0] == "&":
        acc = full
        for child in g[1]:
            acc &= _evaluate(child, cols, full)
            if not acc:
                break
        return acc
    acc = 0
    for child in g[1]:
        acc |= _evaluate(child, cols, full)
        if acc == full:
            break
    return acc


def prove(premises: Sequence[Formula], conclusion: Formula, signature: "Signature", max_atoms: int = 16,
          max_nodes: int = MAX_NODES, max_ms: float = MAX_MS) -> Verdict | None:
    """`valid` when ground instances of the Skolemised premises ∧ ¬conclusion (and of the equality
    axioms) have no satisfying row (module docstring); None otherwise, also past the budget."""
    start = time.perf_counter()
    symbols = signature.key
    if any(s.role == "func" for s in symbols):
        return None
    ids = [0, max_nodes]
    try:
        forms = [_nnf(p, True, ids) for p in premises] + [_nnf(conclusion, False, ids)]
    except (RecursionError, OverBudget):
        return None
    terms = [s.name for s in symbols if s.role == "const"] or [_ANON]
    deadline = start + max_ms / 1000.0
    nodes = ids[1]
    for _ in range(MAX_ROUNDS):
        grounder = _Grounder(terms, nodes, deadline, max_atoms)
        try:
            grounded = []
            for f in forms:
                g = grounder.ground(f, {}, [])
                if g is False:  # one formula false outright: nothing satisfies them all
                    grounded = [False]
                    break
                if g is not True:
                    grounded.append(g)
            grounded += grounder.equality_axioms(max_atoms)
        except (RecursionError, OverBudget):
            return None
        nodes = grounder.left
        n = len(grounder.atoms)
        if n > max_atoms:
            return None
        if False in grounded:
            unsat = True
        else:
            cols, full = truth_columns(n)
            rows = full
            try:
                for g in grounded:
                    rows &= _evaluate(g, cols, full)
                    if not rows:
                        break
            except RecursionError:
                return None
            unsat = not rows
        if unsat:
            ms = (time.perf_counter() - start) * 1000.0
            return Verdict(Status.VALID, NAME, ms,
                           f"{len(grounded)} ground instance(s) of the Skolemised premises and negated "
                           f"conclusion over {len(terms)} term(s) have no model (Herbrand)")
        new = sorted(grounder.made.difference(terms))
        if not new or len(terms) >= MAX_TERMS:
            return None
        terms = terms + new[:MAX_TERMS - len(terms)]
    return None


__all__ = ["MAX_ROUNDS", "MAX_TERMS", "NAME", "prove"]
