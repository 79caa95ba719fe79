"""Atomic derivations for Knights & Knaves answers, found offline by propositional search.

A formula over the puzzle's ground atoms is a bitmask of the worlds (assignments) where it holds,
so "cited formulas entail the conclusion" is one AND and one compare. Propositional entailment
between ground formulas implies first-order entailment (every first-order model induces a world),
so each step found here is one the verifier can prove.

Strategy (the way people solve these puzzles): to show literal L, assume its opposite A and
propagate lemmas `A → m`, each from one premise plus at most three earlier lemmas or facts, until
two lemmas contradict (`A → m`, `A → ¬ m` give L). Literals that follow directly from premises
and facts are taken first. Every conclusion is new (no repeats, up to equivalence), not a
tautology and not a restatement of what it cites.

The search runs under a wall-clock budget (`SEARCH_SECONDS` per problem, shared with
`fol_proof`): a problem that exhausts it gets no gold trace (like one the search cannot solve),
so a hostile or huge input never hangs `prosfi data gold` or a training run's data preparation.
"""

from __future__ import annotations

import itertools
import time
from dataclasses import dataclass
from typing import Sequence

from prosfi.logic import ast

SEARCH_SECONDS = 10.0


class SearchBudget(Exception):
    """The gold-trace search ran past its budget: no trace for this problem."""


def deadline_checker(seconds: float):
    """A callable that raises SearchBudget once `seconds` have passed since it was made."""
    end = time.monotonic() + seconds

    def check() -> None:
        if time.monotonic() > end:
            raise SearchBudget
    return check


@dataclass(frozen=True)
class ProofStep:
    id: str
    dependencies: tuple[str, ...]
    conclusion: str
    rule: str


class Worlds:
    """Bitmask semantics for ground formulas over a fixed atom list (at most ~12 atoms)."""

    def __init__(self, atoms: Sequence[str]):
        self.atoms = list(atoms)
        n = len(self.atoms)
        if n > 12:
            raise ValueError(f"{n} atoms is too many for truth-table search")
        self.full = (1 << (1 << n)) - 1
        self.atom_mask = {}
        for i, a in enumerate(self.atoms):
            m = 0
            for w in range(1 << n):
                if (w >> i) & 1:
                    m |= 1 << w
            self.atom_mask[a] = m

    def mask(self, f) -> int:
        if isinstance(f, ast.Pred):
            key = " ".join([f.name] + [_term(t) for t in f.args])
            if key not in self.atom_mask:
                raise ValueError(f"atom {key!r} is not one of the puzzle's atoms")
            return self.atom_mask[key]
        if isinstance(f, ast.Top):
            return self.full
        if isinstance(f, ast.Bottom):
            return 0
        if isinstance(f, ast.Not):
            return self.full ^ self.mask(f.body)
        if isinstance(f, (ast.And, ast.Or, ast.Implies, ast.Iff, ast.Xor)):
            a, b = self.mask(f.left), self.mask(f.right)
            if isinstance(f, ast.And):
                return a & b
            if isinstance(f, ast.Or):
                return a | b
            if isinstance(f, ast.Implies):
                return (self.full ^ a) | b
            if isinstance(f, ast.Iff):
                return self.full ^ (a ^ b)
            return a ^ b
        raise ValueError(f"not a ground propositional formula: {f!r}")


def _term(t) -> str:
    if isinstance(t, ast.Const):
        return t.name
    raise ValueError(f"not a ground term: {t!r}")


def literal_text(atom: str, value: bool) -> str:
    return atom if value else f"¬ {atom}"


class _Search:
    def __init__(self, premises: dict[str, str], atoms: Sequence[str], assignment: dict[str, bool],
                 max_deps: int):
        from prosfi.logic import parse

        self.w = Worlds(atoms)
        self.atoms = list(atoms)
        self.gold = assignment
        self.max_deps = max_deps
        self.premises = []  # (id, mask, atoms mentioned)
        for pid, text in premises.items():
            f = parse(text)
            self.premises.append((pid, self.w.mask(f), self._mentions(f)))
        self.facts: dict[str, tuple[str, int]] = {}  # atom -> (step id, mask)
        self.steps: list[ProofStep] = []
        self._keys = 0
        self.tick = deadline_checker(SEARCH_SECONDS)
        self.seen = {self.key(t) for t in premises.values()}  # conclusions must be new (as text)

    def _mentions(self, f) -> frozenset[str]:
        out, stack = set(), [f]
        while stack:
            n = stack.pop()
            if isinstance(n, ast.Pred):
                out.add(" ".join([n.name] + [_term(t) for t in n.args]))
            elif isinstance(n, ast.Not):
                stack.append(n.body)
            elif isinstance(n, (ast.And, ast.Or, ast.Implies, ast.Iff, ast.Xor)):
                stack.extend((n.left, n.right))
        return frozenset(out)

    def lit_mask(self, atom: str, value: bool) -> int:
        m = self.w.atom_mask[atom]
        return m if value else self.w.full ^ m

    @staticmethod
    def key(text: str) -> str:
        from prosfi.logic import canonical, parse

        return canonical(parse(text))

    def _add(self, deps: Sequence[str], text: str, rule: str) -> str:
        sid = f"s{len(self.steps) + 1}"
        self.steps.append(ProofStep(sid, tuple(deps), text, rule))
        self.seen.add(self.key(text))
        return sid

    def _cite(self, goal: int, required: Sequence[tuple[str, int]], optional: Sequence[tuple[str, int]]):
        """The smallest citation (all of `required` plus some of `optional`) entailing `goal`."""
        room = self.max_deps - len(required)
        base = self.w.full
        for _, m in required:
            base &= m
        for k in range(0, max(room, -1) + 1):
            for combo in itertools.combinations(optional, k):
                m = base
                for _, cm in combo:
                    m &= cm
                if m & ~goal & self.w.full == 0:
                    return self._minimal(goal, list(required) + list(combo))
        return None

    def _minimal(self, goal: int, chosen: list[tuple[str, int]]) -> list[str]:
        """Drop citations the others make redundant, so every citation is used."""
        i = 0
        while i < len(chosen):
            rest = chosen[:i] + chosen[i + 1:]
            m = self.w.full
            for _, cm in rest:
                m &= cm
            if rest and m & ~goal & self.w.full == 0:
                chosen, i = rest, 0
            else:
                i += 1
        return [ref for ref, _ in chosen]

    def _support(self, atom: str | None, lemmas: dict[str, tuple[str, int]]):
        """Citation sets to try for a conclusion about `atom`: a premise mentioning it (any premise
        when `atom` is None) plus facts/lemmas about the premise's atoms."""
        for pid, pmask, mentions in self.premises:
            if atom is not None and atom not in mentions:
                continue
            optional = []
            for a in sorted(mentions, key=self.atoms.index):
                if a in self.facts:
                    optional.append(self.facts[a])
                if a in lemmas:
                    optional.append(lemmas[a])
            yield [(pid, pmask)], optional

    def direct(self) -> bool:
        """Derive any undetermined gold literal straight from a premise and facts."""
        for atom in self.atoms:
            if atom in self.facts:
                continue
            goal = self.lit_mask(atom, self.gold[atom])
            text = literal_text(atom, self.gold[atom])
            if self.key(text) in self.seen:
                continue
            for required, optional in self._support(atom, {}):
                deps = self._cite(goal, required, optional)
                if deps is not None:
                    sid = self._add(deps, text, "iff_elimination")
                    self.facts[atom] = (sid, goal)
                    return True
        return False

    def _conj_mask(self, ctx: Sequence[tuple[str, bool]]) -> int:
        m = self.w.full
        for a, v in ctx:
            m &= self.lit_mask(a, v)
        return m

    @staticmethod
    def _conditional(ctx: Sequence[tuple[str, bool]], atom: str, value: bool) -> str:
        """`ctx → literal` as text (just the literal when `ctx` is empty)."""
        lit = literal_text(atom, value)
        if not ctx:
            return lit
        return " ∧ ".join(literal_text(a, v) for a, v in ctx) + f" → {lit}"

    def prove(self, ctx: tuple, atom: str, value: bool, lemmas: dict, seen: set,
              splits: int) -> list[tuple] | None:
        """Plan steps ending in `ctx → (atom = value)`: assume the opposite, propagate lemmas
        `ctx ∧ ¬goal → m` until they contradict; when propagation stalls and `splits` allows,
        split on another atom and refute both branches. Returns (key, deps, text, mask) items."""
        self.tick()
        inner = ctx + ((atom, not value),)
        cmask = self._conj_mask(inner)
        lemmas = dict(lemmas)
        implied = {a: v for a, v in inner}
        target = (self.w.full ^ self._conj_mask(ctx)) | self.lit_mask(atom, value)
        target_text = self._conditional(ctx, atom, value)
        if self.key(target_text) in seen:
            return None
        plan: list[tuple] = []
        for _ in range(2 * len(self.atoms) + 2):
            for required, optional in self._support(None, lemmas):
                deps = self._cite(target, required, optional)
                if deps is not None:
                    plan.append((self._new_key(), deps, target_text, target))
                    return plan
            progressed = False
            for other in self.atoms:
                if other in implied:
                    continue
                # for a settled atom only its opposite is worth deriving: it contradicts the fact
                values = (not self.gold[other],) if other in self.facts else (True, False)
                for v in values:
                    m = (self.w.full ^ cmask) | self.lit_mask(other, v)
                    text = self._conditional(inner, other, v)
                    if m == self.w.full or self.key(text) in seen:
                        continue
                    found = None
                    for required, optional in self._support(other, lemmas):
                        found = self._cite(m, required, optional)
                        if found is not None:
                            break
                    if found is None:
                        continue
                    key = self._new_key()
                    plan.append((key, found, text, m))
                    lemmas[other] = (key, m)
                    implied[other] = v
                    seen.add(self.key(text))
                    progressed = True
                    break
                if progressed:
                    break
            if progressed:
                continue
            if splits <= 0:
                return None
            for other in self.atoms:
                if other in implied or other in self.facts:
                    continue
                seen_a = set(seen)
                pos = self.prove(inner, other, True, lemmas, seen_a, splits - 1)
                if pos is None:
                    continue
                seen_b = set(seen_a)
                neg = self.prove(inner, other, False, lemmas, seen_b, splits - 1)
                if neg is None:
                    continue
                seen |= seen_b
                plan += pos + neg
                plan.append((self._new_key(), [pos[-1][0], neg[-1][0]], target_text, target))
                return plan
            return None
        return None

    def _new_key(self) -> str:
        self._keys += 1
        return f"k{self._keys}"

    def commit(self, plan: list[tuple]) -> None:
        ids: dict[str, str] = {}
        last = plan[-1][0]
        for key, deps, text, _ in plan:
            real = [ids.get(d, d) for d in deps]
            rule = "case_analysis" if key == last or " ∧ " in text.split(" → ")[0] else "iff_elimination"
            ids[key] = self._add(real, text, rule)
        atom = plan[-1][2][2:] if plan[-1][2].startswith("¬ ") else plan[-1][2]
        self.facts[atom] = (ids[last], plan[-1][3])

    def run(self) -> list[ProofStep] | None:
        while len(self.facts) < len(self.atoms):
            self.tick()
            if self.direct():
                continue
            for splits in range(3):
                plans = []
                for atom in self.atoms:
                    if atom not in self.facts:
                        p = self.prove((), atom, self.gold[atom], {}, set(self.seen), splits)
                        if p is not None:
                            plans.append((len(p), self.atoms.index(atom), p))
                if plans:
                    break
            if not plans:
                return None
            plans.sort(key=lambda t: (t[0], t[1]))
            self.commit(plans[0][2])
        if len(self.steps) > 64:
            return None
        return self.steps


def derive_assignment(premises: dict[str, str], atoms: Sequence[str], assignment: dict[str, bool],
                      max_deps: int = 4) -> list[ProofStep] | None:
    """Steps concluding every gold literal (`Knight x` / `¬ Knight x`), or None if none found."""
    try:
        return _Search(premises, atoms, assignment, max_deps).run()
    except SearchBudget:
        return None
