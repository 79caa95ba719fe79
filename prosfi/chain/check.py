"""Check a step chain against its problem: is every step a verified, honest inference, and does
the chain establish the answer it claims?

Each step is checked as `cited formulas ⊢ conclusion` (cited ids are replaced by the problem's
premises or earlier conclusions, so a step cannot misquote a premise). Guards (`ChainConfig`) stop
cheap ways to look verified: over-citation, unused citations, bundling many facts into one step,
fresh symbols, tautologies, restating a citation, repeating a conclusion, padding past
`max_steps`, and an Uncertain claim without the relevant derivation (`prosfi.chain.uncertain`).
Checks are collected for a whole batch of chains and sent to the verifier in two rounds
(`ChainBatch`): round 1 the steps (and the countermodel checks of an Uncertain claim), round 2
tautology, unused-citation and equivalence checks for steps round 1 proved.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import NamedTuple

from prosfi.chain.config import ChainConfig
from prosfi.chain.facts import facts, is_fact, is_literal, literals, quantified, small_countermodel
from prosfi.chain.result import REJECTED, ChainResult, StepResult
from prosfi.chain.uncertain import GoalScope, goal_scope
from prosfi.data.problem import Problem
from prosfi.logic import FormulaError, canonical, parse
from prosfi.logic.signature import symbols_of
from prosfi.trace.answer import ParsedAnswer
from prosfi.trace.schema import Step
from prosfi.verdict import Entailment, Status, Verdict


class Parsed(NamedTuple):
    canonical: str | None  # None when the text does not parse
    symbols: frozenset[str]  # predicate, function and constant names
    error: str  # why it does not parse, else ""
    literal: bool  # an atom or a negated atom (never a tautology, see `facts.is_literal`)
    facts: int = 0  # clauses of its CNF (`facts.facts`)
    literals: frozenset[str] = frozenset()  # canonical forms of its literal conjuncts
    predicates: frozenset[str] = frozenset()
    constants: frozenset[str] = frozenset()
    fact: bool = False  # a literal or a conjunction of literals (not a rule)
    formula: object = None  # the parsed formula


class Formulas:
    """Parsed formulas of one batch, by text: parse and canonicalise each text once; premises'
    canonical forms once per problem (the samples of a GRPO group share them)."""

    def __init__(self) -> None:
        self._memo: dict[str, Parsed] = {}
        self._premises: dict[int, tuple[Problem, dict[str, str]]] = {}
        self._symbols: dict[int, tuple[Problem, frozenset[str]]] = {}
        self._countermodels: dict[tuple, tuple[str, ...]] = {}
        self.shapes: dict[tuple, tuple] = {}  # ChainCheck._shape results (a group repeats its steps)

    def get(self, text: str) -> Parsed:
        hit = self._memo.get(text)
        if hit is None:
            try:
                f = parse(text)
                syms = set(symbols_of(f))
                canon, literal = canonical(f), is_literal(f)
                hit = Parsed(canon, frozenset(s.name for s in syms), "", literal, 1 if literal else facts(f),
                             frozenset((canon,)) if literal else frozenset(canonical(g) for g in literals(f)),
                             frozenset(s.name for s in syms if s.role == "pred"),
                             frozenset(s.name for s in syms if s.role == "const"), literal or is_fact(f), f)
            except FormulaError as exc:
                hit = Parsed(None, frozenset(), f"does not parse: {exc}", False)
            except RecursionError:
                hit = Parsed(None, frozenset(), "does not parse: nested too deeply", False)
            self._memo[text] = hit
        return hit

    def canonical(self, text: str) -> str | None:
        return self.get(text).canonical

    def premise_canonicals(self, problem: Problem) -> dict[str, str]:
        """Premise id -> canonical form (premises that do not parse are left out)."""
        hit = self._premises.get(id(problem))
        if hit is None or hit[0] is not problem:
            forms = {pid: self.canonical(text) for pid, text in problem.premise_map.items()}
            hit = (problem, {pid: c for pid, c in forms.items() if c is not None})
            self._premises[id(problem)] = hit
        return hit[1]

    def unused_candidates(self, cited: tuple[tuple[str, str], ...], conclusion: str) -> tuple[str, ...]:
        """Citations (id, text) whose removal must go to the verifier: those where the rest has no
        one-element countermodel (`facts.small_countermodel`). Memoised: a group repeats its steps."""
        key = (cited, conclusion)
        hit = self._countermodels.get(key)
        if hit is None:
            forms = {t: self.get(t).formula for _, t in cited}
            goal = self.get(conclusion).formula
            hit = tuple(d for d, _ in cited
                        if None in forms.values() or goal is None
                        or not small_countermodel([forms[t] for k, t in cited if k != d], goal))
            self._countermodels[key] = hit
        return hit

    def problem_symbols(self, problem: Problem) -> frozenset[str]:
        """Every symbol name of the problem's premises, goal and atoms (what a conclusion may name)."""
        hit = self._symbols.get(id(problem))
        if hit is None or hit[0] is not problem:
            texts = [*problem.premise_map.values(), problem.goal or "", *problem.atoms]
            names = frozenset().union(*(self.get(t).symbols for t in texts if t))
            hit = (problem, names)
            self._symbols[id(problem)] = hit
        return hit[1]


def negation(text: str) -> str:
    return f"¬ ({text})"


class ChainCheck:
    """One chain against one problem and one claimed answer; see the module docstring for rounds."""

    def __init__(self, problem: Problem, steps: Sequence[Step], claim: ParsedAnswer,
                 config: ChainConfig, formulas: Formulas, establish: bool = True) -> None:
        """`establish=False` verifies the steps only (a claim already known to be wrong earns nothing
        more from being established, so its goal and countermodel checks are skipped)."""
        self.problem, self.steps, self.claim, self.config, self.formulas = problem, steps, claim, config, formulas
        self.establish = establish
        self.premises = problem.premise_map
        self._conclusions = {s.id: s.conclusion for s in steps}
        self._pre: dict[int, StepResult] = {}  # step index -> rejected/error before proving
        self._step_checks: dict[int, Entailment] = {}
        self._uncertain: list[Entailment] = []
        self._targets: list[str] = self._claim_targets()
        self._canon: dict[str, str] = {}  # premise or step id -> canonical conclusion (filled in round 1)
        self._round1: dict[int, Verdict] = {}
        self._uncertain_verdicts: list[Verdict] = []
        self._taut: dict[int, Entailment] = {}
        self._unused: dict[tuple[int, str], Entailment] = {}  # (step, dropped citation) -> check
        self._equiv: dict[tuple[int, int], tuple[Entailment, Entailment]] = {}
        self._scope: GoalScope | None = None  # set when an Uncertain claim is to be verified
        self._carried: dict[str, list[str]] = {}  # step id -> premise rules its conclusion carries on

    def key(self) -> tuple:
        """Identical keys give identical results (the check is a function of these and the verdicts)."""
        claim = self.claim
        return (id(self.problem), id(self.config), id(self.formulas), self.establish, tuple(self.steps),
                claim.label, tuple(sorted(claim.literals.items())), claim.reason)

    def _claim_targets(self) -> list[str]:
        if not self.claim.ok or not self.establish:
            return []
        if self.problem.kind == "assignment":
            return self.claim.formulas()
        goal = self.problem.goal or ""
        return {"True": [goal], "False": [negation(goal)]}.get(self.claim.label or "", [])

    @property
    def _claims_uncertain(self) -> bool:
        return (self.establish and self.problem.kind != "assignment" and self.claim.ok
                and self.claim.label == "Uncertain")

    # ------------------------------------------------------------------ round 1
    def round1(self) -> list[Entailment]:
        formulas = self.formulas
        step_index = {s.id: i for i, s in enumerate(self.steps)}
        self._canon = dict(formulas.premise_canonicals(self.problem))  # id -> canonical, steps added below
        seen: dict[str, str] = {}  # canonical -> "premise h1" / "s2's conclusion"
        if self.config.reject_premise_repeat:
            for pid, c in self._canon.items():
                seen.setdefault(c, f"premise {pid}")
        verify_uncertain = self._claims_uncertain and self.config.uncertain == "verify" and self.problem.goal
        if verify_uncertain:
            self._scope = goal_scope(self.problem)
        for i, step in enumerate(self.steps):
            c, _, err, _, *_ = formulas.get(step.conclusion)
            pre = self._guard(i, step, step_index, seen, c, err)
            if c is not None and pre is None:  # a guarded step derived nothing a later step repeats
                seen.setdefault(c, f"{step.id}'s conclusion")
                self._canon.setdefault(step.id, c)
            if pre is not None:
                self._pre[i] = pre
                continue
            deps = dict.fromkeys(step.dependencies)
            cited = {d: self._formula_of(d) for d in deps}
            self._step_checks[i] = Entailment(cited, step.conclusion, id=step.id)
        if self._scope is not None and not self._scope.error:
            self._reject_irrelevant(step_index)
        if verify_uncertain:
            goal = self.problem.goal
            self._uncertain = [Entailment(self.premises, goal, id="uncertain+"),
                               Entailment(self.premises, negation(goal), id="uncertain-")]
        return list(self._step_checks.values()) + self._uncertain

    def _formula_of(self, ref: str) -> str:
        if ref in self.premises:
            return self.premises[ref]
        return self._conclusions[ref]

    def _guard(self, i: int, step: Step, step_index: dict[str, int], seen: dict[str, str], c: str | None,
               err: str) -> StepResult | None:
        cfg = self.config
        if i >= cfg.max_steps:
            return StepResult(step.id, REJECTED, f"beyond max_steps ({cfg.max_steps})")
        for d in step.dependencies:
            if d in self.premises:
                continue
            j = step_index.get(d)
            if j is None:
                return StepResult(step.id, Status.INVALID.value, f"cites unknown id {d!r}")
            if j == i:
                return StepResult(step.id, Status.INVALID.value, "cites itself")
            if j > i:
                return StepResult(step.id, Status.INVALID.value, f"forward reference to {d!r}")
        deps = list(dict.fromkeys(step.dependencies))
        n = len(deps)
        if n > cfg.max_dependencies:
            return StepResult(step.id, REJECTED, f"cites {n} ids (max_dependencies {cfg.max_dependencies})")
        if c is None:
            return StepResult(step.id, Status.ERROR.value, f"conclusion {err}")
        refs = tuple((d, d in self.premises, self._formula_of(d), tuple(self._carried.get(d, ()))) for d in deps)
        key = (id(self.problem), id(cfg), step.conclusion, refs)
        hit = self.formulas.shapes.get(key)
        if hit is None or hit[0] is not self.problem:
            hit = self.formulas.shapes[key] = (self.problem, *self._shape(step.conclusion, refs))
        _, why, self._carried[step.id] = hit
        if why:
            return StepResult(step.id, REJECTED, why)
        if cfg.reject_restatement:
            for d in step.dependencies:
                if self._canon.get(d) == c:
                    return StepResult(step.id, REJECTED, f"restates its citation {d!r}")
        if cfg.reject_repeat and c in seen:
            return StepResult(step.id, REJECTED, f"repeats {seen[c]}")
        return None

    def _shape(self, conclusion: str, refs: tuple) -> tuple[str, list[str]]:
        """The guards on what one step may pack: (why it is rejected or "", the premise rules its
        conclusion carries on). A pure function of the problem, the conclusion and the citations."""
        cfg = self.config
        shape = self.formulas.get(conclusion)
        cited = [self.formulas.get(text) for _, _, text, _ in refs]
        direct = [d for (d, premise, _, _), p in zip(refs, cited) if premise and not p.fact]
        brought = [r for (_, premise, _, carried) in refs if not premise for r in carried]
        rules = direct + brought
        # a conclusion that is not a plain result passes the premise rules it cites on to the steps
        # citing it: a rule with more than one fact (a bundle of a premise rule with something else),
        # or a quantified rule (a premise rule restated: its contrapositive, its clause form; or rules
        # composed), which counts as the rules it restates wherever it is applied; a ground instance
        # (`P a → Q a`) is a result of its own
        rule_out = not shape.fact and shape.formula is not None and quantified(shape.formula)
        carried = rules if not shape.fact and (shape.facts >= 2 or rule_out) else []
        # a step that concludes a quantified rule applies nothing yet: it composes, citing at most
        # max_rules premise rules itself (what it carries is counted where the result is applied)
        applied = direct if rule_out else rules
        if cfg.reject_fresh_symbols:
            fresh = sorted(shape.symbols.difference(self.formulas.problem_symbols(self.problem),
                                                    *(p.symbols for p in cited)))
            if fresh:
                return (f"fresh symbol {', '.join(fresh)} (reject_fresh_symbols): named nowhere in the problem "
                        "or the citations"), carried
        if cfg.max_rules and len(applied) > cfg.max_rules:
            via = [r for r in applied if r not in direct]
            return (f"applies {len(applied)} premise rules {', '.join(applied)} (max_rules {cfg.max_rules}): one "
                    "step, one premise rule" + (f" ({', '.join(via)} carried by a cited step: a bundle or a "
                                                "restated rule counts as the rules it holds)" if via else "")), carried
        # the problem's own goal (or its negation) may state as many facts as it does: a True answer to
        # `P a ∧ Q a ∧ R a` needs a step that concludes all three, and the problem, not the policy, chose it
        goal_facts = shape.facts if shape.canonical is not None and shape.canonical in self._goal_forms() else 0
        if cfg.max_weight:
            weight = sum(1 if premise else p.facts for (_, premise, _, _), p in zip(refs, cited))
            if weight > max(cfg.max_weight, goal_facts):
                return (f"weight {weight} (max_weight {cfg.max_weight}): its citations carry too many facts "
                        "for one small inference"), carried
        if cfg.max_conjuncts:
            bound = max([cfg.max_conjuncts, goal_facts] + [p.facts for p in cited])
            if shape.facts > bound:
                return (f"concludes {min(shape.facts, 999)} facts (max_conjuncts {cfg.max_conjuncts}, or as many "
                        "as one citation states): a bundle, not one inference"), carried
        return "", carried

    def _goal_forms(self) -> frozenset[str]:
        """Canonical forms of the goal and of its negation (empty for Knights & Knaves: literals)."""
        goal = self.problem.goal
        if not goal or self.problem.kind == "assignment":
            return frozenset()
        return frozenset(c for c in (self.formulas.canonical(goal), self.formulas.canonical(negation(goal)))
                         if c is not None)

    def _reject_irrelevant(self, step_index: dict[str, int]) -> None:
        """Uncertain claims (`uncertain: verify`): every step must bear on the goal (module docstring
        of `prosfi.chain.uncertain`); others are rejected before any prover call."""
        scope = self._scope
        grounded: dict[int, str] = {}  # step index -> why its citations/vocabulary are off the goal
        for i, step in enumerate(self.steps):
            bad = [d for d in step.dependencies if d in self.premises and d not in scope.premises]
            bad_steps = [d for d in step.dependencies if d in step_index and step_index[d] in grounded]
            preds = self.formulas.get(step.conclusion).predicates - scope.predicates
            if bad:
                grounded[i] = f"cites {', '.join(bad)}, which do(es) not bear on the goal"
            elif bad_steps:
                grounded[i] = f"builds on {', '.join(bad_steps)}, which do(es) not bear on the goal"
            elif preds:
                grounded[i] = f"names {', '.join(sorted(preds))}, which no premise bearing on the goal names"
        used_by_relevant: set[int] = set()
        for i in range(len(self.steps) - 1, -1, -1):
            step = self.steps[i]
            if i in grounded:
                continue
            about = not scope.constants or bool(self.formulas.get(step.conclusion).constants & scope.constants)
            if not about and i not in used_by_relevant:
                grounded[i] = (f"says nothing about {', '.join(sorted(scope.constants))} and no step that does "
                               "builds on it")
                continue
            used_by_relevant.update(step_index[d] for d in step.dependencies if d in step_index)
        for i, why in grounded.items():
            if i not in self._pre:
                self._pre[i] = StepResult(self.steps[i].id, REJECTED, f"not relevant to the goal (uncertain: "
                                          f"verify): {why}")
                self._step_checks.pop(i, None)

    # ------------------------------------------------------------------ round 2
    def round2(self, verdicts: Sequence[Verdict]) -> list[Entailment]:
        n = len(self._step_checks)
        self._round1 = dict(zip(self._step_checks, verdicts[:n]))
        self._uncertain_verdicts = list(verdicts[n:])
        proved = [i for i, v in self._round1.items() if v.valid]
        if self.config.reject_tautology:
            for i in proved:
                if not self.formulas.get(self.steps[i].conclusion).literal:
                    self._taut[i] = Entailment({}, self.steps[i].conclusion, id=f"{self.steps[i].id}:tautology")
        if self.config.reject_unused:
            for i in proved:
                cited = self._step_checks[i].premises
                if len(cited) < 2:  # one citation: dropping it is the tautology check
                    continue
                for d in self.formulas.unused_candidates(tuple(cited.items()), self.steps[i].conclusion):
                    rest = {k: v for k, v in cited.items() if k != d}
                    self._unused[(i, d)] = Entailment(rest, self.steps[i].conclusion, id=f"{self.steps[i].id}-{d}")
        if self.config.goal_by_equivalence:
            proved_canon = {self.formulas.canonical(self.steps[i].conclusion) for i in proved}
            for t, target in enumerate(self._targets):
                tp = self.formulas.get(target)
                if tp.canonical is None or tp.canonical in proved_canon:
                    continue
                for i in proved:
                    text = self.steps[i].conclusion
                    if self.formulas.get(text).symbols == tp.symbols:  # same vocabulary: worth a prover call
                        self._equiv[(t, i)] = (Entailment({"step": text}, target), Entailment({"goal": target}, text))
        return (list(self._taut.values()) + list(self._unused.values())
                + [e for pair in self._equiv.values() for e in pair])

    # ------------------------------------------------------------------ result
    def finish(self, verdicts: Sequence[Verdict]) -> ChainResult:
        it = iter(verdicts)
        taut = {i: next(it) for i in self._taut}
        unused = {key: next(it) for key in self._unused}
        spares: dict[int, str] = {}  # step index -> a citation it does not need
        for (j, d), u in unused.items():
            if u.valid:
                spares.setdefault(j, d)
        equiv = {key: (next(it), next(it)) for key in self._equiv}
        results: list[StepResult] = []
        for i, step in enumerate(self.steps):
            if i in self._pre:
                results.append(self._pre[i])
                continue
            v = self._round1[i]
            spare = spares.get(i) if v.valid else None
            if v.valid and i in taut and taut[i].valid:
                results.append(StepResult(step.id, REJECTED, "tautology: provable from no premises", v.backend, v.ms))
            elif spare is not None:
                results.append(StepResult(step.id, REJECTED, f"unused dependency {spare} (reject_unused): the "
                                          "conclusion follows from the other citations", v.backend, v.ms))
            else:
                results.append(StepResult(step.id, v.status.value, "" if v.valid else (v.detail or v.status.value),
                                          v.backend, v.ms))
        self._taint(results)
        verified = {i for i, r in enumerate(results) if r.verified}
        # no premise bears on the goal of an Uncertain claim: the honest chain is empty (nothing to derive)
        min_steps = 0 if self._scope is not None and self._scope.empty else self.config.min_steps
        all_verified = len(verified) == len(results) >= min_steps
        established, why = self._established(verified, equiv)
        reason = ""
        if len(results) < min_steps:
            reason = why if not established else f"{len(results)} step(s) given; min_steps is {min_steps}"
        elif not all_verified:
            bad = next(r for r in results if not r.verified)
            reason = f"step {bad.id} {bad.verdict}" + (f": {bad.reason}" if bad.reason else "")
        elif not established:
            reason = why
        return ChainResult(tuple(results), all_verified, established, reason)

    def _taint(self, results: list[StepResult]) -> None:
        """A step that cites a step which is not verified is not verified either (transitively): a
        valid inference from a false or unchecked step proves nothing (no ex falso in any mode)."""
        index = {s.id: i for i, s in enumerate(self.steps)}
        for i, step in enumerate(self.steps):
            if not results[i].verified:
                continue
            bad = [d for d in dict.fromkeys(step.dependencies)
                   if d not in self.premises and d in index and index[d] < i and not results[index[d]].verified]
            if bad:
                r = results[i]
                results[i] = StepResult(step.id, REJECTED, (f"builds on {', '.join(bad)}, which is not verified (the "
                                        "inference itself is valid)"),
                                        r.backend, r.ms)

    def _established(self, verified: set[int], equiv: dict) -> tuple[bool, str]:
        if not self.claim.ok:
            return False, "no readable answer to establish"
        if not self.establish:
            return False, "answer not checked against the chain (known to be wrong)"
        if self._claims_uncertain:
            if not self.problem.goal:
                return False, "problem has no goal"
            if self.config.uncertain != "verify":
                return False, (f"Uncertain capped (uncertain: {self.config.uncertain}): a right Uncertain answer "
                               "earns at most the unverified level")
            scope = self._scope
            if scope is not None and scope.error:
                return False, f"Uncertain not earned (uncertain: verify): {scope.error}"
            pos, neg = self._uncertain_verdicts
            if pos.status is Status.VALID:
                return False, "Uncertain claimed, but the premises entail the goal"
            if neg.status is Status.VALID:
                return False, "Uncertain claimed, but the premises entail the goal's negation"
            if pos.status is not Status.INVALID or neg.status is not Status.INVALID:
                return False, (f"Uncertain not shown: no countermodel both ways (goal: {pos.status.value}, "
                               f"negation: {neg.status.value})")
            if scope is not None:
                shown = set().union(*(self.formulas.get(self.steps[i].conclusion).literals for i in verified))
                for text in scope.required:
                    if self.formulas.canonical(text) not in shown:
                        return False, (f"Uncertain not earned (uncertain: verify): no verified step derives {text}, "
                                       "which the premises bearing on the goal force")
            return True, ""
        if not self._targets:
            return False, "answer claims nothing the chain can establish"
        for t, target in enumerate(self._targets):
            tc = self.formulas.canonical(target)
            if tc is not None and any(self.formulas.canonical(self.steps[i].conclusion) == tc for i in verified):
                continue
            if any(i in verified and a.valid and b.valid for (tt, i), (a, b) in equiv.items() if tt == t):
                continue
            return False, f"no verified step concludes {target}"
        return True, ""


__all__ = ["ChainCheck", "ChainConfig", "Formulas", "Parsed", "negation"]
