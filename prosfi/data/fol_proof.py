"""Atomic derivations for True/False/Uncertain problems that carry no stored proof (public ProverQA).

Forward chaining over ground instances: every premise whose quantifiers are a ∀-prefix is
instantiated with the problem's constants; an instance forces a literal when, together with
literals already known about its atoms, every assignment of its atoms that satisfies it agrees on
that literal (a truth table over a handful of atoms). The step cites the premise and at most three
known literals, the fewest that suffice. Ground instances of a premise follow from it, so each
step is a first-order entailment the verifier proves. Premises with ∃ or nested quantifiers are
not instantiated (never cited).
"""

from __future__ import annotations

import itertools
from typing import Any

from prosfi.data.kk_proof import SEARCH_SECONDS, SearchBudget, Worlds, deadline_checker
from prosfi.data.problem import Problem
from prosfi.logic import ast
from prosfi.logic.relevance import goal_constants, nothing_bears, relevant_premises
from prosfi.logic.syntax import constants, rename_free, substitute, variable_free

MAX_INSTANCES = 20_000
MAX_ATOMS = 10
MAX_GOAL_LITERALS = 4  # literals one step may combine into a compound goal (max_dependencies)


def _atoms(f, out: list[str]) -> list[str]:
    if isinstance(f, ast.Pred):
        key = _key(f)
        if key not in out:
            out.append(key)
    elif isinstance(f, ast.Not):
        _atoms(f.body, out)
    elif isinstance(f, ast.BINARY):
        _atoms(f.left, out)
        _atoms(f.right, out)
    return out


def _key(p: ast.Pred) -> str:
    return " ".join([p.name] + [a.name for a in p.args])


def _instances(f, consts: list[str]):
    """Ground instances of a ∀-prefixed quantifier-free formula (nothing for other shapes)."""
    names = []
    while isinstance(f, ast.Forall):
        names.append(f.var)
        f = f.body
    if len(consts) ** len(names) > MAX_INSTANCES:
        return
    for combo in itertools.product(consts, repeat=len(names)):
        g = f
        for var, c in zip(names, combo):
            g = substitute(g, var, c)
        if variable_free(g):
            yield g


def _conjuncts(f) -> list:
    """The conjuncts of `f` under a prefix of ∃ (`∃ x, A x ∧ B c` -> [A x, B c])."""
    while isinstance(f, ast.Exists):
        f = f.body
    out, stack = [], [f]
    while stack:
        g = stack.pop()
        if isinstance(g, ast.And):
            stack.extend((g.right, g.left))
        else:
            out.append(g)
    return out


def _exists_step(problem: Problem, goal) -> list[dict[str, Any]] | None:
    """A True `∃ x, φ x` whose conjuncts all occur in one premise `∃ y, … ∧ φ y ∧ …`: one step."""
    from prosfi.logic import parse, pretty

    if problem.answer_label != "True" or not isinstance(goal, ast.Exists) or isinstance(goal.body, ast.Exists):
        return None
    for p in problem.premises:
        f = parse(p.formal)
        if not isinstance(f, ast.Exists) or isinstance(f.body, ast.Exists):
            continue
        have = {pretty(c) for c in _conjuncts(f)}
        want = [pretty(rename_free(c, goal.var, f.var)) for c in _conjuncts(goal)]
        if all(w in have for w in want) and pretty(f) != pretty(goal):
            return [{"id": "s1", "dependencies": [p.id], "conclusion": problem.goal, "rule": "exists_weakening"}]
    return None


def _exists_intro(problem: Problem, ch: _Chainer, goal, max_steps: int) -> list[dict[str, Any]] | None:
    """A True `∃ x, φ x` (φ a conjunction of literals) with a witness: a constant whose instance of
    every conjunct is known (premise or derived); one step from those literals concludes the goal."""
    if problem.answer_label != "True" or isinstance(goal.body, ast.Exists):
        return None
    parts = _conjuncts(goal)
    if not 0 < len(parts) <= MAX_GOAL_LITERALS:
        return None
    ch.run(stop_atom=None)
    for c in ch.constants:
        refs = []
        for part in parts:
            lit = substitute(part, goal.var, c)
            neg = isinstance(lit, ast.Not)
            atom = lit.body if neg else lit
            if not (isinstance(atom, ast.Pred) and variable_free(atom)) or ch.known.get(_key(atom), (None,))[0] != (not neg):
                break
            refs.append(ch.known[_key(atom)][1])
        else:
            last = {"id": "_last", "dependencies": list(dict.fromkeys(refs)), "conclusion": problem.goal,
                    "rule": "exists_intro"}
            steps = _closure(ch.steps + [last], ["_last"])
            return steps if len(steps) <= max_steps else None
    return None


def _literal(atom: str, value: bool) -> str:
    return atom if value else f"¬ {atom}"


class _Chainer:
    def __init__(self, problem: Problem, only: frozenset[str] | None = None):
        from prosfi.logic import parse

        self.premises = [(p.id, parse(p.formal)) for p in problem.premises if only is None or p.id in only]
        self.goal = parse(problem.goal)
        self.constants = constants([f for _, f in self.premises] + [self.goal])
        self.known: dict[str, tuple[bool, str]] = {}  # atom -> (value, premise or step id)
        self.steps: list[dict[str, Any]] = []
        self.instances = []  # (premise id, atoms, Worlds, mask)
        self.instance_formula: dict[int, Any] = {}  # instance index -> its ground formula
        self.tick = deadline_checker(SEARCH_SECONDS)
        for pid, f in self.premises:
            if isinstance(f, ast.Pred) and variable_free(f):
                self.known.setdefault(_key(f), (True, pid))
                continue
            if isinstance(f, ast.Not) and isinstance(f.body, ast.Pred) and variable_free(f.body):
                self.known.setdefault(_key(f.body), (False, pid))
                continue
            if isinstance(f, ast.Exists):  # `∃ x, A x ∧ G c`: its ground literal conjuncts are known
                for lit in _conjuncts(f):
                    neg = isinstance(lit, ast.Not)
                    atom = lit.body if neg else lit
                    if isinstance(atom, ast.Pred) and variable_free(atom):
                        self.known.setdefault(_key(atom), (not neg, pid))
                continue
            for g in _instances(f, self.constants):
                self.tick()
                atoms = _atoms(g, [])
                if 0 < len(atoms) <= MAX_ATOMS:
                    w = Worlds(atoms)
                    self.instances.append((pid, atoms, w, w.mask(g)))
                    self.instance_formula[len(self.instances) - 1] = g

    def _force(self, pid, atoms, w: Worlds, mask: int, index: int | None = None) -> bool:
        cited = [(a, self.known[a]) for a in atoms if a in self.known]
        base = mask
        for a, (v, _) in cited:
            base &= w.atom_mask[a] if v else w.full ^ w.atom_mask[a]
        if base == 0:
            return False  # inconsistent with what we know; leave it
        for atom in atoms:
            if atom in self.known:
                continue
            for value in (True, False):
                lit = w.atom_mask[atom] if value else w.full ^ w.atom_mask[atom]
                if base & ~lit & w.full:
                    continue
                for k in range(0, min(3, len(cited)) + 1):
                    for combo in itertools.combinations(cited, k):
                        m = mask
                        for a, (v, _) in combo:
                            m &= w.atom_mask[a] if v else w.full ^ w.atom_mask[a]
                        if m & ~lit & w.full == 0:
                            sid = f"s{len(self.steps) + 1}"
                            deps = [pid] + [ref for _, (_, ref) in combo]
                            self.steps.append({"id": sid, "dependencies": deps,
                                               "conclusion": _literal(atom, value), "rule": "instantiation"})
                            self.known[atom] = (value, sid)
                            return True
                if index is not None and len(cited) > 3:  # forced, but only with more than three literals
                    return self._fold(pid, index, w, mask, cited, atom, value)
        return False

    def _fold(self, pid, index: int, w: Worlds, mask: int, cited, atom: str, value: bool) -> bool:
        """Force `atom` from an instance that needs more than three known literals: fold three at a time
        into the instance (each fold a step concluding what is left of it), then conclude the literal."""
        from prosfi.logic import pretty

        lit = w.atom_mask[atom] if value else w.full ^ w.atom_mask[atom]

        def forced(items) -> bool:
            m = mask
            for a, (v, _) in items:
                m &= w.atom_mask[a] if v else w.full ^ w.atom_mask[a]
            return m & ~lit & w.full == 0

        need = list(cited)
        for item in list(need):  # the fewest literals that still force it
            rest = [x for x in need if x is not item]
            if forced(rest):
                need = rest
        if len(need) <= 3:
            return False
        ref, formula = pid, self.instance_formula[index]
        while len(need) > 3:
            chunk, need = need[:3], need[3:]
            formula = _simplify(formula, dict(chunk))
            sid = f"s{len(self.steps) + 1}"
            self.steps.append({"id": sid, "dependencies": [ref] + [r for _, (_, r) in chunk],
                               "conclusion": pretty(formula), "rule": "instantiation"})
            ref = sid
        sid = f"s{len(self.steps) + 1}"
        self.steps.append({"id": sid, "dependencies": [ref] + [r for _, (_, r) in need],
                           "conclusion": _literal(atom, value), "rule": "instantiation"})
        self.known[atom] = (value, sid)
        return True

    def run(self, stop_atom: str | None) -> None:
        progress = True
        while progress and len(self.steps) < 400:
            progress = False
            for index, inst in enumerate(self.instances):
                self.tick()
                if self._force(*inst, index=index):
                    progress = True
                    if stop_atom is not None and stop_atom in self.known:
                        return


def _closure(steps: list[dict], finals: list[str]) -> list[dict]:
    by_id = {s["id"]: s for s in steps}
    need, stack = set(), list(finals)
    while stack:
        sid = stack.pop()
        if sid in by_id and sid not in need:
            need.add(sid)
            stack.extend(by_id[sid]["dependencies"])
    kept = [s for s in steps if s["id"] in need]
    rename = {s["id"]: f"s{i + 1}" for i, s in enumerate(kept)}
    return [{**s, "id": rename[s["id"]], "dependencies": [rename.get(d, d) for d in s["dependencies"]]}
            for s in kept]


def derive_label(problem: Problem, max_steps: int = 64) -> list[dict[str, Any]] | None:
    """Steps establishing the problem's label (goal, ¬ goal, or for Uncertain the relevant
    derivation, `derive_uncertain`), or None when no derivation is found: a True/False goal that is
    not a ground literal, forward chaining disagrees with the label, or the search runs past its
    budget (`kk_proof.SEARCH_SECONDS`)."""
    try:
        return _derive_label(problem, max_steps)
    except SearchBudget:
        return None


def _derive_label(problem: Problem, max_steps: int) -> list[dict[str, Any]] | None:
    if problem.answer_label == "Uncertain":
        return derive_uncertain(problem, max_steps)
    ch = _Chainer(problem)
    goal = ch.goal
    negated = isinstance(goal, ast.Not)
    atom_f = goal.body if negated else goal
    if isinstance(goal, ast.Exists):
        return _exists_step(problem, goal) or _exists_intro(problem, ch, goal, max_steps)
    if not (isinstance(atom_f, ast.Pred) and variable_free(atom_f)):
        return _derive_compound(problem, ch, max_steps)
    atom = _key(atom_f)
    if atom in ch.known and ch.known[atom][1] in problem.premise_map:
        return None  # the goal is a premise: nothing to derive
    ch.run(stop_atom=atom)
    label = problem.answer_label
    if atom in ch.known:
        value = ch.known[atom][0] != negated  # truth of the goal itself
        if label != ("True" if value else "False"):
            return None
        ref = ch.known[atom][1]
        steps = _closure(ch.steps, [ref])
        if negated:  # the goal is `¬ p`: True needs `¬ p` (done), False needs `¬ ¬ p`
            if not value:
                steps.append({"id": f"s{len(steps) + 1}", "dependencies": [steps[-1]["id"]],
                              "conclusion": f"¬ {problem.goal}", "rule": "double_negation"})
        return steps if len(steps) <= max_steps else None
    return None


def _derive_compound(problem: Problem, ch: _Chainer, max_steps: int) -> list[dict[str, Any]] | None:
    """A ground compound goal (`P a ∧ ¬ Q a`, `A → B`, `Xor' A B`): forward chaining to a fixpoint,
    then one step from the fewest known literals (at most `MAX_GOAL_LITERALS`) that decide it the way
    the label says, concluding the goal (True) or `¬ (goal)` (False)."""
    goal = ch.goal
    if not variable_free(goal) or problem.answer_label not in ("True", "False"):
        return None
    atoms = _atoms(goal, [])
    if not 0 < len(atoms) <= MAX_ATOMS:
        return None
    ch.run(stop_atom=None)
    w = Worlds(atoms)
    want = w.mask(goal) if problem.answer_label == "True" else w.full ^ w.mask(goal)
    known = [(a, ch.known[a]) for a in atoms if a in ch.known]
    for k in range(1, min(MAX_GOAL_LITERALS, len(known)) + 1):
        for combo in itertools.combinations(known, k):
            m = w.full
            for a, (v, _) in combo:
                m &= w.atom_mask[a] if v else w.full ^ w.atom_mask[a]
            if m and m & ~want & w.full == 0:
                text = problem.goal if problem.answer_label == "True" else f"¬ ({problem.goal})"
                last = {"id": "_last", "dependencies": [ref for _, (_, ref) in combo], "conclusion": text,
                        "rule": "truth_table"}
                steps = _closure(ch.steps + [last], ["_last"])
                return steps if len(steps) <= max_steps else None
    return None

def _premises(problem: Problem) -> list[tuple[str, str]]:
    return [(p.id, p.formal) for p in problem.premises]


def _mentions(text: str, consts: frozenset[str]) -> bool:
    """Whether a literal's text (`¬ p a b`) names one of `consts` (all literals when `consts` is empty)."""
    return not consts or bool(consts & set(text.replace("¬ ", "").split()[1:]))


def relevant_derivation(problem: Problem) -> tuple[list[dict[str, Any]], list[str]]:
    """What an Uncertain answer must show: forward chaining over the premises bearing on the goal
    (`relevant_premises`) to a fixpoint. Returns (every derivation step, the derived literals about
    the goal's constants, in derivation order)."""
    ids, _ = relevant_premises(problem.goal, _premises(problem))
    ch = _Chainer(problem, only=ids)
    ch.run(stop_atom=None)
    consts = goal_constants(problem.goal)
    required = [s["conclusion"] for s in ch.steps if _mentions(s["conclusion"], consts)]
    return ch.steps, required


def derive_uncertain(problem: Problem, max_steps: int = 64) -> list[dict[str, Any]] | None:
    """The relevant derivation as gold steps: every literal about the goal's constants that the
    premises bearing on the goal force, with the steps they need; when none is forced, one step
    folding known literals into a relevant premise's instance about the goal's constants. When no
    premise bears on the goal's subject (`nothing_bears`), the empty chain (`prosfi.chain.uncertain`)."""
    if nothing_bears(problem.goal, _premises(problem)):
        return []
    ids, _ = relevant_premises(problem.goal, _premises(problem))
    steps, required = relevant_derivation(problem)
    goal = problem.goal.strip()
    if goal in required or f"¬ {goal}" in required or (goal.startswith("¬ ") and goal[2:] in required):
        return None  # the premises decide the goal: the label is not Uncertain
    if required:
        wanted = [s["id"] for s in steps if s["conclusion"] in required]
        kept = _closure(steps, wanted)
        return kept if len(kept) <= max_steps else None
    ch = _Chainer(problem, only=ids)
    ch.run(stop_atom=None)
    consts = goal_constants(problem.goal)
    step = _residual_step(ch, consts) or _instance_step(ch, consts) or _clause_step(ch, consts)
    if step is None:
        return None
    # the literals it folds in may be derived: their derivation comes first (ids renumbered)
    step = {**step, "id": "_last"}
    kept = _closure(ch.steps + [step], ["_last"])
    return kept if len(kept) <= max_steps else None


def _instance_step(ch: _Chainer, consts: frozenset[str]) -> dict[str, Any] | None:
    """When nothing is known to fold in: a relevant rule instantiated at the goal's constants."""
    from prosfi.logic import pretty

    premises = dict(ch.premises)
    for i, (pid, atoms, _, _) in enumerate(ch.instances):
        if isinstance(premises[pid], ast.Forall) and any(_mentions(a, consts) for a in atoms):
            return {"id": "s1", "dependencies": [pid], "conclusion": pretty(ch.instance_formula[i]),
                    "rule": "instantiation"}
    return None


def _clause_step(ch: _Chainer, consts: frozenset[str]) -> dict[str, Any] | None:
    """When no relevant rule is quantified and nothing is known: the shortest clause a relevant ground
    premise about the goal's constants implies (`Xor' (P a) (Q a)` gives `P a ∨ Q a`)."""
    from prosfi.logic import parse, pretty

    for pid, atoms, w, mask in ch.instances:
        if len(atoms) > 4 or not any(_mentions(a, consts) for a in atoms):
            continue
        for k in range(2, len(atoms) + 1):
            for subset in itertools.combinations(atoms, k):
                for signs in itertools.product((True, False), repeat=k):
                    clause = 0
                    for a, v in zip(subset, signs):
                        clause |= w.atom_mask[a] if v else w.full ^ w.atom_mask[a]
                    if mask & ~clause & w.full == 0 and clause != w.full:
                        text = " ∨ ".join(_literal(a, v) for a, v in zip(subset, signs))
                        if pretty(parse(text)) != pretty(dict(ch.premises)[pid]):
                            return {"id": "s1", "dependencies": [pid], "conclusion": text, "rule": "weakening"}
    return None


def _simplify(f, known: dict[str, tuple[bool, str]]):
    """`f` with known atoms replaced by their values and the constants folded away."""
    T, F = ast.Top(), ast.Bottom()
    if isinstance(f, ast.Pred):
        k = known.get(_key(f))
        return f if k is None else (T if k[0] else F)
    if isinstance(f, ast.Not):
        b = _simplify(f.body, known)
        return F if b == T else T if b == F else ast.Not(b)
    if not isinstance(f, ast.BINARY):
        return f
    a, b = _simplify(f.left, known), _simplify(f.right, known)
    if isinstance(f, ast.And):
        return F if F in (a, b) else b if a == T else a if b == T else ast.And(a, b)
    if isinstance(f, ast.Or):
        return T if T in (a, b) else b if a == F else a if b == F else ast.Or(a, b)
    if isinstance(f, ast.Implies):
        return T if a == F or b == T else b if a == T else ast.Not(a) if b == F else ast.Implies(a, b)
    if isinstance(f, ast.Iff):
        if a in (T, F):
            return b if a == T else _simplify(ast.Not(b), {})
        if b in (T, F):
            return a if b == T else _simplify(ast.Not(a), {})
        return ast.Iff(a, b)
    if a in (T, F):  # Xor
        return _simplify(ast.Not(b), {}) if a == T else b
    if b in (T, F):
        return _simplify(ast.Not(a), {}) if b == T else a
    return ast.Xor(a, b)


def _residual_step(ch: _Chainer, consts: frozenset[str] = frozenset()) -> dict[str, Any] | None:
    """One sensible step when no literal follows: an instance about `consts` with known literals
    folded in (`tall tom → p tom ∨ q tom` and `tall tom` give `p tom ∨ q tom`)."""
    from prosfi.logic import pretty

    for i, (pid, atoms, _, _) in enumerate(ch.instances):
        used = [a for a in atoms if a in ch.known]
        if not used or len(used) > 3 or not any(_mentions(a, consts) for a in atoms):
            continue
        residual = _simplify(ch.instance_formula[i], ch.known)
        if isinstance(residual, (ast.Top, ast.Bottom)):
            continue
        return {"id": "s1", "dependencies": [pid] + [ch.known[a][1] for a in used],
                "conclusion": pretty(residual), "rule": "instantiation"}
    return None
