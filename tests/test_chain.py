"""The logic chain check (`prosfi.chain`): one file for what four files tested by the pass that wrote them.

- the chain check against problems (Z3 first, Prover9 as fallback) (was tests/test_chain.py)
- The atomicity, usage, vocabulary and Uncertain guards: honest atomic steps pass, each guard rejects what it
  is for with a reason that names it, and turning it off lets the step through. (was
  tests/test_chain_guards.py)
- Reward hacking: generated completions that try to earn the top reward without an honest chain. (was
  tests/test_chain_adversarial.py)
- Issue 21, rewards: ex falso in step_fraction, laundered rules and max_rules, and the honest Uncertain chain
  when no premise bears on the goal. (was tests/test_chain_hardening.py)
"""

from __future__ import annotations

import json
import random

import pytest

from prosfi.chain import ChainBatch, ChainCheck, ChainConfig, Formulas
from prosfi.chain.facts import TOO_MANY, facts, is_fact
from prosfi.data import kk, pqa_gen
from prosfi.data.gold import answer_text, gold_completion, gold_steps
from prosfi.data.problem import Problem
from prosfi.data.proverqa import load_proverqa
from prosfi.logic import parse
from prosfi.rewards import RewardConfig, score_batch
from prosfi.trace.answer import parse_answer
from prosfi.trace.schema import Step
from prosfi.verdict import Status
from prosfi.verify.config import VerifierConfig
from prosfi.verify.verifier import Verifier

# ====================================================================================================
# from tests/test_chain.py
# Chain verification against a problem with the real verifier (Z3 first, Prover9 as fallback).
# ====================================================================================================


OPTIONS = {"A": "True", "B": "False", "C": "Uncertain"}


def tfu(pid, premises, goal, answer):
    return Problem.from_dict({"id": pid, "kind": "true_false_uncertain", "goal": goal, "options": OPTIONS,
                              "answer": answer, "premises": [{"id": f"h{i + 1}", "formal": f}
                                                              for i, f in enumerate(premises)]})


ANIMALS = tfu("animals", ["∀ x, Cat x → Mammal x", "∀ x, Mammal x → Animal x", "Cat tom",
                          "∀ x, Animal x → Alive x", "Dog rex"], "Alive tom", "A")
GOOD = [("s1", ["h1", "h3"], "Mammal tom"), ("s2", ["h2", "s1"], "Animal tom"), ("s3", ["h4", "s2"], "Alive tom")]
# Zoey: "Oliver is a knave."  Oliver: "Zoey and I are both knights."  -> Zoey knight, Oliver knave.
KK = Problem.from_dict({"id": "kk", "kind": "assignment", "premises": [
    {"id": "h1", "formal": "Knight zoey ↔ ¬ Knight oliver"},
    {"id": "h2", "formal": "Knight oliver ↔ (Knight zoey ∧ Knight oliver)"}],
    "atoms": ["Knight zoey", "Knight oliver"], "assignment": {"Knight zoey": True, "Knight oliver": False}})


@pytest.fixture(scope="module")
def verifier():
    with Verifier(VerifierConfig(workers=1, timeout_ms=2000)) as v:
        yield v


def steps_of(spec):
    return [Step(i, tuple(d), c, "r") for i, d, c in spec]


def check(verifier, problem, spec, answer, config=None):
    claim = parse_answer(problem, answer)
    batch = ChainBatch([ChainCheck(problem, steps_of(spec), claim, config or ChainConfig(), Formulas())])
    return batch.check(verifier)[0]


def verdicts(result):
    return {s.id: s.verdict for s in result.steps}


def reason_of(result, sid):
    return next(s.reason for s in result.steps if s.id == sid)


def test_good_chain_is_valid(verifier):
    r = check(verifier, ANIMALS, GOOD, "A")
    assert verdicts(r) == {"s1": "valid", "s2": "valid", "s3": "valid"}
    assert r.chain_valid and r.reason == "" and r.verified_fraction == 1.0


def test_wrong_intermediate_step_is_invalid(verifier):
    spec = [GOOD[0], ("s2", ["h2", "s1"], "Animal tom ∧ Dog tom"), GOOD[2]]
    r = check(verifier, ANIMALS, spec, "A")
    # s3 follows from s2, but s2 is false: a step built on an unverified step is not verified (issue 21)
    assert verdicts(r) == {"s1": "valid", "s2": "invalid", "s3": "rejected"}
    assert "builds on s2" in reason_of(r, "s3")
    assert not r.chain_valid and not r.established and "s2" in r.reason


@pytest.mark.parametrize("deps, why", [(["h9"], "unknown id 'h9'"), (["s3"], "forward reference"),
                                       (["s2"], "cites itself")])
def test_bad_references_make_the_step_invalid(verifier, deps, why):
    spec = [GOOD[0], ("s2", ["h2", *deps], "Animal tom"), GOOD[2]]
    r = check(verifier, ANIMALS, spec, "A")
    assert verdicts(r)["s2"] == "invalid" and why in reason_of(r, "s2")
    assert verdicts(r)["s3"] == "rejected"  # checked, valid on its own, but built on s2
    assert "builds on s2" in reason_of(r, "s3") and "itself is valid" in reason_of(r, "s3")
    assert not r.chain_valid


def test_over_citation_is_rejected_and_configurable(verifier):
    jump = [("s1", ["h1", "h2", "h3", "h4", "h5"], "Alive tom")]
    r = check(verifier, ANIMALS, jump, "A")
    assert verdicts(r) == {"s1": "rejected"} and "max_dependencies" in reason_of(r, "s1")
    assert not r.chain_valid
    r = check(verifier, ANIMALS, jump, "A", ChainConfig(max_dependencies=5))
    assert not r.chain_valid  # the other atomicity guards still hold (tests/test_chain_guards.py)
    r = check(verifier, ANIMALS, jump, "A", ChainConfig(max_dependencies=5, max_rules=0, max_weight=0,
                                                        reject_unused=False))
    assert r.chain_valid
    r = check(verifier, ANIMALS, GOOD, "A", ChainConfig(max_dependencies=1))
    assert set(verdicts(r).values()) == {"rejected"}


@pytest.mark.parametrize("step", [("t", [], "Cat tom ∨ ¬ Cat tom"), ("t", ["h3"], "Mammal tom → Mammal tom"),
                                  ("t", ["h1"], "∀ y, Dog y → Dog y")])
def test_tautology_is_rejected_and_configurable(verifier, step):
    r = check(verifier, ANIMALS, GOOD + [step], "A")
    assert verdicts(r)["t"] == "rejected" and "tautology" in reason_of(r, "t")
    assert r.established and not r.chain_valid
    r = check(verifier, ANIMALS, GOOD + [step], "A", ChainConfig(reject_tautology=False))
    assert r.chain_valid


def test_restatement_is_rejected_and_configurable(verifier):
    alpha = ("s0", ["h1"], "∀ y, Cat y → Mammal y")
    r = check(verifier, ANIMALS, [alpha] + GOOD, "A")
    assert verdicts(r)["s0"] == "rejected" and "restates" in reason_of(r, "s0")
    off = ChainConfig(reject_restatement=False, reject_repeat=False)
    assert check(verifier, ANIMALS, [alpha] + GOOD, "A", off).chain_valid
    # restating an uncited premise is a repeat
    r = check(verifier, ANIMALS, GOOD + [("s4", ["s1", "h1"], "∀ x, Mammal x → Animal x")], "A",
              ChainConfig(reject_restatement=False))
    assert verdicts(r)["s4"] in ("rejected", "invalid")


def test_repeat_is_rejected_and_configurable(verifier):
    spec = GOOD + [("s4", ["h3", "h1"], "Mammal tom")]
    r = check(verifier, ANIMALS, spec, "A")
    assert verdicts(r)["s4"] == "rejected" and "repeats s1" in reason_of(r, "s4")
    assert check(verifier, ANIMALS, spec, "A", ChainConfig(reject_repeat=False)).chain_valid
    # re-deriving a premise is honest by default (the guard is about earlier conclusions);
    # the step is then judged on its own: here `Cat tom` does not follow from s1 alone
    r = check(verifier, ANIMALS, GOOD + [("s4", ["s1"], "Cat tom")], "A")
    assert verdicts(r)["s4"] == "invalid"
    # opt-in: a premise "derived" without citing it is a repeat (rejected before any prover runs)
    r = check(verifier, ANIMALS, GOOD + [("s4", ["s1"], "Cat tom")], "A", ChainConfig(reject_premise_repeat=True))
    assert verdicts(r)["s4"] == "rejected" and "repeats premise h3" in reason_of(r, "s4")


def test_padding_past_max_steps_is_rejected(verifier):
    r = check(verifier, ANIMALS, GOOD, "A", ChainConfig(max_steps=2))
    assert verdicts(r)["s3"] == "rejected" and "max_steps" in reason_of(r, "s3")
    assert not r.chain_valid


def test_unparseable_conclusion_is_an_error(verifier):
    r = check(verifier, ANIMALS, GOOD + [("s4", ["s3"], "Alive tom ∧")], "A")
    assert verdicts(r)["s4"] == "error" and "parse" in reason_of(r, "s4")


def test_goal_reached_by_an_equivalent_step(verifier):
    spec = GOOD[:2] + [("s3", ["h4", "s2"], "¬ ¬ Alive tom")]
    r = check(verifier, ANIMALS, spec, "A")
    assert r.chain_valid
    r = check(verifier, ANIMALS, spec, "A", ChainConfig(goal_by_equivalence=False))
    assert r.all_verified and not r.established and "no verified step concludes" in r.reason


def test_a_stronger_conclusion_does_not_count_as_the_goal(verifier):
    spec = GOOD[:2] + [("s3", ["h4", "s2"], "Alive tom ∧ Animal tom")]
    r = check(verifier, ANIMALS, spec, "A")
    assert r.all_verified and not r.established


def test_goal_must_be_concluded(verifier):
    r = check(verifier, ANIMALS, GOOD[:2], "A")
    assert r.all_verified and not r.chain_valid
    assert not check(verifier, ANIMALS, [], "A").chain_valid


def test_false_needs_the_negated_goal():
    problem = tfu("neg", ["∀ x, Cat x → ¬ Alive x", "Cat tom"], "Alive tom", "B")
    with Verifier(VerifierConfig(workers=0)) as v:  # in-process: a second pool is not needed here
        r = check(v, problem, [("s1", ["h1", "h2"], "¬ Alive tom")], "B")
        assert r.chain_valid
        r = check(v, problem, [("s1", ["h1", "h2"], "¬ Alive tom")], "A")
        assert not r.established


def test_uncertain_needs_countermodels_both_ways(verifier):
    problem = tfu("unc", ["∀ x, Cat x → Mammal x", "Cat tom", "∀ x, Dog x → Mammal x"], "Dog tom", "C")
    empty = check(verifier, problem, [], "C")  # shown by countermodels, but no reasoning at all
    assert not empty.established and not empty.chain_valid and "Mammal tom" in empty.reason
    assert not check(verifier, problem, [], "C", ChainConfig(min_steps=0)).chain_valid
    relaxed = ChainConfig(min_steps=0, uncertain="verify")
    assert check(verifier, tfu("u2", ["∀ x, Cat x → Dog x"], "Dog tom", "C"), [], "C", relaxed).chain_valid
    assert check(verifier, problem, [("s1", ["h1", "h2"], "Mammal tom")], "C").chain_valid
    r = check(verifier, problem, [("s1", ["h1", "h2"], "Mammal tom"), ("s2", ["h1", "h2"], "Dog tom")], "C")
    assert r.established and not r.chain_valid  # all steps given must be verified


def test_uncertain_claimed_where_the_goal_is_provable(verifier):
    mislabeled = tfu("bad-label", ANIMALS.premise_map.values(), "Alive tom", "C")
    r = check(verifier, mislabeled, [], "C")
    assert not r.chain_valid and "entail the goal" in r.reason
    r = check(verifier, mislabeled, GOOD, "C")
    assert not r.chain_valid


def test_assignment_literals_must_each_be_concluded(verifier):
    good = [("s1", ["h2"], "Knight oliver → Knight zoey"), ("s2", ["h1", "s1"], "¬ Knight oliver"),
            ("s3", ["h1", "s2"], "Knight zoey")]
    answer = "(1) Zoey is a knight (2) Oliver is a knave"
    assert check(verifier, KK, good, answer).chain_valid
    r = check(verifier, KK, good[:2], answer)
    assert r.all_verified and not r.established and "Knight zoey" in r.reason
    equivalent = good[:2] + [("s3", ["h1", "s2"], "¬ ¬ Knight zoey")]
    assert check(verifier, KK, equivalent, answer).chain_valid
    assert not check(verifier, KK, good, "Zoey is a knave, Oliver is a knight").established


class Recording:
    """A real verifier that records what it was asked."""

    def __init__(self, inner, fail=False):
        self.inner, self.fail, self.calls = inner, fail, []

    def check_many(self, entailments):
        self.calls.append(list(entailments))
        if self.fail:
            raise RuntimeError("pool on fire")
        return self.inner.check_many(entailments)


def test_a_batch_asks_each_question_once_in_at_most_two_rounds(verifier):
    claims = [parse_answer(ANIMALS, "A")] * 8
    checks = [ChainCheck(ANIMALS, steps_of(GOOD), c, ChainConfig(), Formulas()) for c in claims]
    rec = Recording(verifier)
    results = ChainBatch(checks).check(rec)
    assert len(results) == 8 and all(r.chain_valid for r in results)
    assert len(rec.calls) <= 2
    asked = [(tuple(e.premises.values()), e.conclusion) for call in rec.calls for e in call]
    assert len(asked) == len(set(asked))
    assert len(rec.calls[0]) == 3  # three distinct steps, not 24


def test_verifier_failure_scores_unknown_without_raising(verifier):
    checks = [ChainCheck(ANIMALS, steps_of(GOOD), parse_answer(ANIMALS, "A"), ChainConfig(), Formulas())]
    (r,) = ChainBatch(checks).check(Recording(verifier, fail=True))
    assert set(verdicts(r).values()) == {Status.UNKNOWN.value}
    assert not r.chain_valid and "pool on fire" in reason_of(r, "s1")


def test_an_exception_in_one_chain_fails_only_that_chain(verifier, monkeypatch):
    ok = ChainCheck(ANIMALS, steps_of(GOOD), parse_answer(ANIMALS, "A"), ChainConfig(), Formulas())
    broken = ChainCheck(ANIMALS, steps_of(GOOD), parse_answer(ANIMALS, "A"), ChainConfig(), Formulas())

    def boom(_verdicts):
        raise KeyError("bug")

    monkeypatch.setattr(broken, "round2", boom)
    good, bad = ChainBatch([ok, broken]).check(verifier)
    assert good.chain_valid
    assert bad.failed and not bad.chain_valid and "internal error" in bad.reason


def test_chain_config_rejects_nonsense():
    with pytest.raises(ValueError, match="max_dependencies"):
        ChainConfig(max_dependencies=0)
    with pytest.raises(ValueError, match="max_steps"):
        ChainConfig(max_steps=0)


@pytest.mark.parametrize("text, literal", [("Cat tom", True), ("¬ Cat tom", True), ("a = b", True),
                                           ("a = a", False), ("True", False), ("¬ ¬ Cat tom", False),
                                           ("Cat tom ∨ ¬ Cat tom", False), ("∀ x, Cat x", False)])
def test_literal_detection(text, literal):
    assert Formulas().get(text).literal is literal


def test_tautology_checks_only_for_non_literal_steps(verifier):
    spec = GOOD + [("s4", ["h1", "h2"], "∀ x, Cat x → Animal x")]
    rec = Recording(verifier)
    check = ChainCheck(ANIMALS, steps_of(spec), parse_answer(ANIMALS, "A"), ChainConfig(max_rules=0), Formulas())
    (r,) = ChainBatch([check]).check(rec)
    assert r.chain_valid
    tautology_checks = [e for e in rec.calls[1] if not e.premises]
    assert len(rec.calls) == 2 and [e.conclusion for e in tautology_checks] == ["∀ x, Cat x → Animal x"]


def test_establish_false_skips_goal_and_countermodel_checks(verifier):
    rec = Recording(verifier)
    check = ChainCheck(ANIMALS, steps_of(GOOD), parse_answer(ANIMALS, "C"), ChainConfig(), Formulas(),
                       establish=False)
    (r,) = ChainBatch([check]).check(rec)
    assert r.all_verified and not r.established and "not checked" in r.reason
    assert [e.conclusion for e in rec.calls[0]] == [c for _, _, c in GOOD]
    later = [e.conclusion for call in rec.calls[1:] for e in call]  # only unused-citation checks
    assert set(later) <= {c for _, _, c in GOOD}


def test_a_guarded_step_derives_nothing_a_later_step_repeats(verifier):
    # s0 cites an unknown id, so it derives nothing; s1 derives the same conclusion honestly
    spec = [("s0", ["h9"], "Mammal tom")] + GOOD
    r = check(verifier, ANIMALS, spec, "A")
    assert verdicts(r)["s0"] == "invalid" and verdicts(r)["s1"] == "valid"


# ====================================================================================================
# from tests/test_chain_guards.py
# The atomicity, usage, vocabulary and Uncertain guards: honest atomic steps pass, each guard
# rejects what it is for with a reason that names it, and turning it off lets the step through.
# ====================================================================================================


@pytest.fixture(scope="module")
def verifier_z3_2s():
    with Verifier(VerifierConfig(backends=("z3",), workers=1, timeout_ms=2000)) as v:
        yield v


def guard_tfu(premises, goal, answer="A"):
    return Problem.from_dict({"id": "p", "kind": "true_false_uncertain", "goal": goal, "answer": answer,
                              "options": {"A": "True", "B": "False", "C": "Uncertain"},
                              "premises": [{"id": f"h{i + 1}", "formal": f} for i, f in enumerate(premises)]})


def run(verifier_z3_2s, problem, spec, answer="A", config=None):
    steps = [Step(i, tuple(d), c, "r") for i, d, c in spec]
    check = ChainCheck(problem, steps, parse_answer(problem, answer), config or ChainConfig(), Formulas())
    return ChainBatch([check]).check(verifier_z3_2s)[0]


HONEST = {
    "modus ponens with ∀-instantiation": (["∀ x, P x → Q x", "P a"], [("s1", ["h1", "h2"], "Q a")]),
    "∧-introduction of two facts": (["P a", "Q a"], [("s1", ["h1", "h2"], "P a ∧ Q a")]),
    "∧-elimination": (["P a ∧ Q a"], [("s1", ["h1"], "Q a")]),
    "disjunctive syllogism": (["P a ∨ Q a", "¬ P a"], [("s1", ["h1", "h2"], "Q a")]),
    "⊕-elimination": (["Xor' (P a) (Q a)", "P a"], [("s1", ["h1", "h2"], "¬ Q a")]),
    "contraposition": (["∀ x, P x → Q x"], [("s1", ["h1"], "∀ x, ¬ Q x → ¬ P x")]),
    "modus tollens": (["∀ x, P x → Q x", "¬ Q a"], [("s1", ["h1", "h2"], "¬ P a")]),
    "modus ponens with a universal fact": (["∀ x, P x → Q x", "∀ x, P x"], [("s1", ["h1", "h2"], "Q a")]),
    "rule with a conjunctive antecedent": (["∀ x, (P x ∧ R x) → Q x", "P a", "R a"],
                                           [("s1", ["h1", "h2", "h3"], "Q a")]),
    "instantiating a three-fact rule": (["∀ x, P x ↔ (Q x ∧ R x)"], [("s1", ["h1"], "P a ↔ (Q a ∧ R a)")]),
    "K&K case step from one statement and an assumption": (
        ["Knight a ↔ ¬ Knight b", "Knight b ↔ (Knight a ∧ Knight b)"],
        [("s1", ["h1"], "¬ Knight a → Knight b"), ("s2", ["h2"], "¬ Knight a → ¬ Knight b"),
         ("s3", ["s1", "s2"], "Knight a")]),
    "two rules, one per step": (["∀ x, P x → Q x", "∀ x, Q x → R x", "P a"],
                                [("s1", ["h1", "h3"], "Q a"), ("s2", ["h2", "s1"], "R a")]),
    "two rules through a derived instance": (["∀ x, P x → Q x", "∀ x, Q x → R x"],
                                             [("s1", ["h1"], "P a → Q a"), ("s2", ["s1", "h2"], "P a → R a")]),
}


@pytest.mark.parametrize("name", sorted(HONEST))
def test_honest_atomic_steps_pass(verifier_z3_2s, name):
    premises, spec = HONEST[name]
    r = run(verifier_z3_2s, guard_tfu(premises, spec[-1][2]), spec)
    assert r.chain_valid, (name, r.reason)


def test_re_deriving_the_goal_literal_for_a_false_answer(verifier_z3_2s):
    problem = guard_tfu(["∀ x, P x → Q x", "P a"], "¬ Q a", "B")
    r = run(verifier_z3_2s, problem, [("s1", ["h1", "h2"], "Q a"), ("s2", ["s1"], "¬ (¬ Q a)")], "B")
    assert r.chain_valid, r.reason


@pytest.mark.parametrize("spec, guard, off", [
    ([("s1", ["h1", "h2", "h3"], "Q a")], "unused dependency h3 (reject_unused)", {"reject_unused": False}),
    ([("s1", ["h2"], "P a ∨ Zed a"), ("s2", ["h1", "h2"], "Q a")], "fresh symbol Zed (reject_fresh_symbols)",
     {"reject_fresh_symbols": False}),
    ([("s1", ["h2"], "P a ∨ Q zed"), ("s2", ["h1", "h2"], "Q a")], "fresh symbol zed",
     {"reject_fresh_symbols": False}),
    ([("s1", ["h2", "h4", "h5"], "P a ∧ R a ∧ S a"), ("s2", ["s1", "h1"], "Q a")], "max_conjuncts 2", {"max_conjuncts": 0}),
    ([("s1", ["h2", "h4", "h5"], "¬ (P a → ¬ (R a ∧ S a))"), ("s2", ["s1", "h1"], "Q a")], "max_conjuncts 2", {"max_conjuncts": 0}),
    ([("s1", ["h1", "h6", "h2"], "T a")], "applies 2 premise rules h1, h6 (max_rules 1)", {"max_rules": 0}),
    ([("b1", ["h1", "h2"], "(∀ x, P x → Q x) ∧ P a"), ("b2", ["h6", "h4"], "(∀ x, Q x → T x) ∧ R a"),
      ("s1", ["b1", "b2"], "T a")], "applies 2 premise rules h1, h6 (max_rules 1)", {"max_rules": 0}),
    ([("b1", ["h2", "h4"], "P a ∧ R a"), ("b2", ["h5", "h7"], "S a ∧ U a"),
      ("s1", ["b1", "b2", "h1"], "Q a")], "weight 5 (max_weight 4)", {"max_weight": 0, "reject_unused": False}),
])
def test_each_guard_names_itself_and_can_be_turned_off(verifier_z3_2s, spec, guard, off):
    problem = guard_tfu(["∀ x, P x → Q x", "P a", "R b", "R a", "S a", "∀ x, Q x → T x", "U a"], spec[-1][2])
    r = run(verifier_z3_2s, problem, spec)
    assert not r.chain_valid and guard in r.reason, r.reason
    assert run(verifier_z3_2s, problem, spec, config=ChainConfig(**off)).chain_valid


def test_unused_checks_share_the_batch_and_the_cache(verifier_z3_2s):
    problem = guard_tfu(["∀ x, P x → Q x", "P a"], "Q a")
    spec = [("s1", ["h1", "h2"], "Q a")]
    before = verifier_z3_2s.stats()["checks"] if hasattr(verifier_z3_2s, "stats") else None
    checks = [ChainCheck(problem, [Step(i, tuple(d), c, "r") for i, d, c in spec],
                         parse_answer(problem, "A"), ChainConfig(), Formulas()) for _ in range(8)]
    results = ChainBatch(checks).check(verifier_z3_2s)
    assert all(r.chain_valid for r in results)
    if before is not None:  # 8 identical chains: one step check and two unused checks, sent once
        assert verifier_z3_2s.stats()["checks"] - before <= 3


# ---------------------------------------------------------------- Uncertain
UNC = guard_tfu(["∀ x, Cat x → Mammal x", "Cat tom", "∀ x, Mammal x → Pet x", "∀ x, Dog x → Pet x",
           "Cat rex", "∀ x, Blue x → Green x", "Blue tom"], "Dog tom", "C")
UNC_GOLD = [("s1", ["h1", "h2"], "Mammal tom"), ("s2", ["h3", "s1"], "Pet tom")]


def test_earned_uncertain_is_the_relevant_derivation(verifier_z3_2s):
    assert run(verifier_z3_2s, UNC, UNC_GOLD, "C").chain_valid


@pytest.mark.parametrize("spec, why", [
    (UNC_GOLD[:1], "no verified step derives Pet tom"),
    ([("s1", ["h6", "h7"], "Green tom")], "not relevant to the goal (uncertain: verify): cites h6, h7"),
    (UNC_GOLD + [("s3", ["h1", "h5"], "Mammal rex")], "says nothing about tom"),
    ([("s1", ["h2"], "Cat tom ∨ Blue tom")] + UNC_GOLD, "names Blue"),
])
def test_unearned_uncertain_stays_below_the_top(verifier_z3_2s, spec, why):
    r = run(verifier_z3_2s, UNC, spec, "C")
    assert not r.chain_valid and why in r.reason, r.reason


def test_a_step_about_another_constant_counts_when_a_relevant_step_builds_on_it(verifier_z3_2s):
    problem = guard_tfu(["∀ x, Cat x → Mammal x", "Cat rex", "∀ x, Mammal x → Likes tom x", "∀ x, Dog x → Likes tom x"],
                  "Dog tom", "C")
    spec = [("s1", ["h1", "h2"], "Mammal rex"), ("s2", ["h3", "s1"], "Likes tom rex")]
    assert run(verifier_z3_2s, problem, spec, "C").chain_valid


@pytest.mark.parametrize("mode", ["cap", "exclude"])
def test_uncertain_cap_and_exclude(verifier_z3_2s, mode):
    r = run(verifier_z3_2s, UNC, UNC_GOLD, "C", ChainConfig(uncertain=mode))
    assert r.all_verified and not r.established and f"uncertain: {mode}" in r.reason


def test_no_premise_bearing_on_the_goal_cannot_earn_uncertain(verifier_z3_2s):
    r = run(verifier_z3_2s, guard_tfu(["Cat tom", "∀ x, Cat x → Mammal x"], "Dog tom", "C"),
            [("s1", ["h2", "h1"], "Mammal tom")], "C")
    assert not r.chain_valid and "not relevant to the goal" in r.reason
    # nothing bears on the goal: the honest chain is the empty one (issue 21)
    r = run(verifier_z3_2s, guard_tfu(["Cat tom", "∀ x, Cat x → Mammal x"], "Dog tom", "C"), [], "C")
    assert r.chain_valid, r.reason


# ---------------------------------------------------------------- shape
@pytest.mark.parametrize("text, n", [
    ("P a", 1), ("¬ P a", 1), ("P a ∧ Q a", 2), ("¬ (P a → ¬ Q a)", 2), ("¬ (¬ P a ∨ ¬ Q a)", 2),
    ("(P a ∧ Q a) ∨ (P a ∧ Q a)", 2), ("∀ x, P x ∧ Q x", 2), ("(P a ∧ Q a) → R a", 1), ("P a ↔ Q a", 2),
    ("Xor' (P a) (Q a)", 2), ("P a ↔ (¬ Q a ∧ R a)", 3), ("(P a ∧ Q a) ↔ (P a ∧ Q a)", 0),
    ("(P a ∧ Q a ∧ R a) ∨ False", 3), ("∀ x, (P x ∧ Q x) → R x ∨ S x", 1), ("(P a ∨ Q a) → R a", 2),
])
def test_facts_counts_cnf_clauses(text, n):
    assert facts(parse(text)) == n


def test_facts_stops_counting_on_a_blowup():
    text = "Xor' A (Xor' B (Xor' C (Xor' D (Xor' E (Xor' F (Xor' G (Xor' H I)))))))"
    assert facts(parse(text)) == TOO_MANY


@pytest.mark.parametrize("text, fact", [("P a", True), ("P a ∧ ¬ Q b", True), ("P a ∨ Q a", False),
                                        ("∀ x, P x", True), ("∀ x, P x ∧ ¬ Q x", True), ("P a → Q a", False),
                                        ("∀ x, P x → Q x", False), ("∀ x, P x ∨ Q x", False)])
def test_is_fact(text, fact):
    assert is_fact(parse(text)) is fact


def test_uncertain_about_a_constant_nothing_is_known_of(verifier_z3_2s):
    """Nothing is forced about `zed`: the relevant derivation is one relevant rule's instance at
    zed (the gold trace), while a step about `tom` alone is not relevant."""
    from prosfi.data.gold import gold_steps

    problem = guard_tfu(["∀ x, Cat x → Dog x", "Cat tom"], "Dog zed", "C")
    gold = [(s["id"], s["dependencies"], s["conclusion"]) for s in gold_steps(problem)]
    assert gold == [("s1", ["h1"], "Cat zed → Dog zed")]
    assert run(verifier_z3_2s, problem, gold, "C").chain_valid
    r = run(verifier_z3_2s, problem, [("s1", ["h1", "h2"], "Dog tom")], "C")
    assert not r.chain_valid and "says nothing about zed" in r.reason


def test_uncertain_exclude_leaves_uncertain_problems_out_of_training_sets():
    from types import SimpleNamespace

    from prosfi.train.problems import from_script_args

    script = SimpleNamespace(dataset="proverqa_gen", dataset_size=12, dataset_seed=0, dataset_difficulty="easy",
                             dataset_path=None, dataset_exclude_uncertain=False, chain_uncertain="verify")
    assert any(p.answer_label == "Uncertain" for p in from_script_args(script))
    script.chain_uncertain = "exclude"
    problems = from_script_args(script)
    assert len(problems) == 12 and all(p.answer_label != "Uncertain" for p in problems)


# ---------------------------------------------------------------- properties of the fact-counting helpers (chain.facts)
def _formulas():
    from hypothesis import strategies as st

    atom = st.sampled_from(["P a", "Q a", "R a"])
    return st.recursive(atom, lambda sub: st.one_of(
        sub.map(lambda f: f"¬ ({f})"),
        st.tuples(sub, sub, st.sampled_from(["∧", "∨", "→", "↔"])).map(lambda t: f"({t[0]}) {t[2]} ({t[1]})"),
        st.tuples(sub, sub).map(lambda t: f"Xor' ({t[0]}) ({t[1]})")), max_leaves=7)


def _mask(text):
    from prosfi.data.kk_proof import Worlds

    return Worlds(["P a", "Q a", "R a"]).mask(parse(text)), (1 << 8) - 1


def test_facts_is_zero_exactly_for_tautologies_and_countermodels_are_real():
    from hypothesis import given, settings
    from hypothesis import strategies as st

    from prosfi.chain.facts import small_countermodel

    @settings(max_examples=300, deadline=None)
    @given(_formulas(), st.lists(_formulas(), max_size=3))
    def check(conclusion, premises):
        m, full = _mask(conclusion)
        n = facts(parse(conclusion))
        assert (n == 0) == (m == full)  # a CNF is valid iff each clause is
        if small_countermodel([parse(p) for p in premises], parse(conclusion)):
            both = full
            for p in premises:
                both &= _mask(p)[0]
            assert both & ~m & full  # a world where the premises hold and the conclusion fails

    check()


# ====================================================================================================
# from tests/test_chain_adversarial.py
# Reward hacking: generated completions that try to earn the top reward without an honest chain.
#
# Each family is built from seeded K&K (2-8 people) and ProverQA-style (easy-extra) problems. A
# bundle or over-citation hack is a real hack: with the new guards turned off it earns 1.0 (so the
# test cannot pass by the hack being malformed); with the defaults it earns less, and the reason
# names the guard that stopped it. Every gold trace prosfi generates still earns 1.0.
# ====================================================================================================


# the guards this issue adds, all off: what a policy could earn before them
UNGUARDED = ChainConfig(max_conjuncts=0, max_weight=0, max_rules=0, reject_unused=False,
                        reject_fresh_symbols=False)
GUARDS = ("max_conjuncts", "max_weight", "max_rules", "reject_unused", "reject_fresh_symbols",
          "uncertain: verify", "max_dependencies", "tautology", "restates", "repeats")


@pytest.fixture(scope="module")
def verifier_z3():
    with Verifier(VerifierConfig(backends=("z3",), workers=1, timeout_ms=3000)) as v:
        yield v


def _kk(seed: int = 3):
    return [p for n in range(2, 9) for p in kk.generate(kk.KKConfig(people=n), 1, seed + n)]


def _pqa(label: str | None = None, seed: int = 5, per: int = 3):
    out = []
    for d in ("easy", "medium", "hard", "extra"):
        out += [p for p in pqa_gen.generate(pqa_gen.FOLGenConfig(difficulty=d), 3 * per, seed)
                if label is None or p.answer_label == label]
    return out


def _targets(problem) -> list[str]:
    """What the chain must conclude for the gold answer."""
    if problem.kind == "assignment":
        return [a if problem.assignment[a] else f"¬ {a}" for a in problem.atoms]
    return [problem.goal if problem.answer_label == "True" else f"¬ ({problem.goal})"]


def _step(sid, deps, conclusion):
    return {"id": sid, "dependencies": list(deps), "conclusion": conclusion, "rule": "hack"}


def _bundle(problem, ids, join, group=4):
    """Bundle premise ids into conjunction steps (groups of `group`, bundles of bundles until at
    most 4 remain), then conclude every target from the top bundles."""
    text = dict(problem.premise_map)
    steps, items = [], list(ids)
    while len(items) > 4 or (items and all(i in text for i in items) and len(items) > 1 and not steps):
        nxt = []
        for k in range(0, len(items), group):
            chunk = items[k:k + group]
            if len(chunk) == 1:
                nxt.append(chunk[0])
                continue
            sid = f"b{len(steps) + 1}"
            steps.append(_step(sid, chunk, join([text[c] for c in chunk])))
            text[sid] = steps[-1]["conclusion"]
            nxt.append(sid)
        if len(nxt) == len(items):
            break
        items = nxt
    for t, target in enumerate(_targets(problem)):
        steps.append(_step(f"g{t + 1}", items, target))
    return steps


def _and(parts):
    return " ∧ ".join(f"({p})" for p in parts)


def _not_implies(parts):  # A ∧ B written as ¬ (A → ¬ B), nested for more parts
    out = f"({parts[-1]})"
    for p in reversed(parts[:-1]):
        out = f"¬ (({p}) → ¬ {out})"
    return out


def _or_twice(parts):
    return f"({_and(parts)}) ∨ ({_and(parts)})"


def _gold_premises(problem):
    steps = gold_steps(problem) or []
    return list(dict.fromkeys(d for s in steps for d in s["dependencies"] if d in problem.premise_map))


def _hacks_true_false_and_kk():
    """(family, problem, steps) for bundling and cite-everything, over K&K and True/False ProverQA."""
    problems = _kk() + [p for p in _pqa(per=2) if p.answer_label != "Uncertain"]
    out = []
    for p in problems:
        all_ids = list(p.premise_map)
        needed = _gold_premises(p)
        out.append(("bundle", p, _bundle(p, all_ids, _and)))
        out.append(("bundle-pairs-nested", p, _bundle(p, all_ids, _and, group=2)))
        out.append(("bundle-partial", p, _bundle(p, needed, _and)))
        out.append(("bundle-disguised-not-implies", p, _bundle(p, needed, _not_implies, group=2)))
        out.append(("bundle-disguised-or", p, _bundle(p, needed, _or_twice, group=2)))
        if len(needed) <= 4:
            out.append(("cite-everything", p, [_step(f"s{t + 1}", needed, target)
                                               for t, target in enumerate(_targets(p))]))
        if len(all_ids) <= 4:
            out.append(("cite-all-premises", p, [_step(f"s{t + 1}", all_ids, target)
                                                 for t, target in enumerate(_targets(p))]))
        padded, rng = [], random.Random(p.id)
        for s in gold_steps(p) or []:
            spare = [i for i in all_ids if i not in s["dependencies"]]
            deps = list(s["dependencies"]) + ([rng.choice(spare)] if spare and len(s["dependencies"]) < 4 else [])
            padded.append({**s, "dependencies": deps})
        out.append(("padded-citations", p, padded))
    return out


def _render(problem, steps) -> str:
    body = ",\n".join(json.dumps(s, ensure_ascii=False) for s in steps)
    return f"<think>\nhack\n</think>\n<steps>\n[{body}]\n</steps>\n<answer>{answer_text(problem)}</answer>"


def _score(verifier_z3, cases, config):
    problems = [p for _, p, _ in cases]
    texts = [_render(p, steps) for _, p, steps in cases]
    return score_batch(problems, texts, verifier_z3, chain_config=config)


def test_bundling_and_over_citation_hacks_stay_below_the_top(verifier_z3):
    cases = _hacks_true_false_and_kk()
    before = _score(verifier_z3, cases, UNGUARDED)
    real = [(c, b) for c, b in zip(cases, before) if b.reward == 1.0]
    families = {c[0] for c, _ in real}
    # every family is a real hack somewhere (earned 1.0 without these guards)
    assert families >= {"bundle", "bundle-pairs-nested", "bundle-partial", "bundle-disguised-not-implies",
                        "bundle-disguised-or", "cite-everything", "padded-citations"}, families
    after = _score(verifier_z3, [c for c, _ in real], ChainConfig())
    for (family, p, _), r in zip([c for c, _ in real], after):
        assert r.reward < 1.0 and not r.chain_valid, (family, p.id, r.reason)
        assert any(g in r.reason for g in GUARDS), (family, p.id, r.reason)


def _uncertain_hacks():
    out = []
    for p in _pqa("Uncertain", per=3):
        subject = min(a.name for a in parse(p.goal).args if hasattr(a, "name"))
        gold = gold_steps(p)
        assert gold, p.id
        h = next(iter(p.premise_map))
        out.append(("fresh-disjunct", p, [_step("s1", [h], f"({p.premise_map[h]}) ∨ Zzz {subject}")]))
        out.append(("fresh-constant", p, [_step("s1", [h], f"({p.premise_map[h]}) ∨ {p.goal.split()[0]} zed")]))
        out.append(("first-step-only", p, gold[:1]))
        if len(gold) > 1:
            out.append(("partial-derivation", p, gold[:-1]))
        from prosfi.logic.relevance import relevant_premises

        relevant, _ = relevant_premises(p.goal, list(p.premise_map.items()))
        for pid, text in p.premise_map.items():
            if pid not in relevant and text.startswith("∀ x,"):  # a rule that does not bear on the goal
                inst = text[len("∀ x, "):].replace(" x", f" {subject}")
                out.append(("irrelevant-instantiation", p, [_step("s1", [pid], inst)]))
                out.append(("gold-plus-irrelevant", p, gold + [_step("sx", [pid], inst)]))
                break
        for pid, text in p.premise_map.items():  # a fact about someone else, pushed through a rule
            parts = text.replace("¬ ", "").split()
            if len(parts) == 2 and parts[1] != subject:
                rule = next((r for r, t in p.premise_map.items() if t.startswith(f"∀ x, {text.replace(parts[1], 'x')} → ")), None)
                if rule:
                    head = p.premise_map[rule].split(" → ", 1)[1].replace(" x", f" {parts[1]}")
                    out.append(("other-constant", p, [_step("s1", [rule, pid], head)]))
                    out.append(("gold-plus-other-constant", p, gold + [_step("sx", [rule, pid], head)]))
                    break
    return out


def test_uncertain_for_free_stays_below_the_top(verifier_z3):
    cases = _uncertain_hacks()
    families = {f for f, _, _ in cases}
    assert families >= {"fresh-disjunct", "first-step-only", "partial-derivation", "irrelevant-instantiation",
                        "gold-plus-irrelevant", "other-constant"}, families
    # the steps themselves are valid inferences (what made them earn 1.0 before)
    loose = _score(verifier_z3, cases, ChainConfig(uncertain="cap", reject_fresh_symbols=False))
    valid = {f for (f, _, _), r in zip(cases, loose) if all(s.verdict == "valid" for s in r.steps)}
    assert valid == families
    for (family, p, _), r in zip(cases, _score(verifier_z3, cases, ChainConfig())):
        assert r.answer_correct and r.reward < 1.0, (family, p.id, r.reason)
        assert any(g in r.reason for g in GUARDS), (family, p.id, r.reason)


def test_uncertain_cap_and_exclude_never_reach_the_top(verifier_z3):
    problems = _pqa("Uncertain", per=1)
    texts = [gold_completion(p) for p in problems]
    for mode in ("cap", "exclude"):
        results = score_batch(problems, texts, verifier_z3, chain_config=ChainConfig(uncertain=mode))
        assert all(r.answer_correct and r.reward == 0.3 and f"uncertain: {mode}" in r.reason for r in results)
    assert all(r.reward == 1.0 for r in score_batch(problems, texts, verifier_z3))


@pytest.mark.parametrize("seed", range(4))
def test_every_generated_gold_trace_scores_one(verifier_z3, seed):
    """Property: gold traces for K&K 2-8 and ProverQA-style easy-extra (all labels) earn 1.0."""
    problems = [p for n in range(2, 9) for p in kk.generate(kk.KKConfig(people=n), 2, 1000 * seed + n)]
    problems += [p for d in ("easy", "medium", "hard", "extra")
                 for p in pqa_gen.generate(pqa_gen.FOLGenConfig(difficulty=d), 6, 31 * seed + 1)]
    if seed == 0:  # the public-format fixture records too
        from pathlib import Path

        fixtures = Path(__file__).parent / "fixtures"
        problems += load_proverqa("hard", path=str(fixtures / "proverqa_dev.json"))
        problems += [kk.problem_from_kk_record(json.loads(line), f"kk-rec-{i}")
                     for i, line in enumerate((fixtures / "kk_records.jsonl").read_text().splitlines()) if line.strip()]
    texts = [gold_completion(p) for p in problems]
    assert all(t is not None for t in texts)
    results = score_batch(problems, texts, verifier_z3)
    bad = [(p.id, r.reason) for p, r in zip(problems, results) if r.reward != 1.0]
    assert not bad


def _compound(problem, goal: str, n: int):
    d = problem.to_dict()
    d.update(id=f"{problem.id}-c{n}", goal=goal)
    d.pop("proof", None)
    return type(problem).from_dict(d)


def test_uncertain_compound_goals_get_a_gold_trace_that_scores_one(verifier_z3):
    """Uncertain problems whose goal is compound (→, ⊕, ∧, ∨ over ground atoms) get the relevant
    derivation as their gold trace, and it earns 1.0; one step short of it does not."""
    from prosfi.data.fol_proof import relevant_derivation

    problems = []
    for p in _pqa("Uncertain", per=2):
        _, required = relevant_derivation(p)
        lit = required[0]
        goals = [f"({p.goal}) ∧ ({lit})", f"({lit}) → ({p.goal})", f"Xor' ({p.goal}) ({lit})",
                 f"({p.goal}) ∨ ¬ ({lit})"]
        problems += [_compound(p, g, n) for n, g in enumerate(goals)]
    texts = [gold_completion(p) for p in problems]
    assert all(t is not None for t in texts)
    results = score_batch(problems, texts, verifier_z3)
    assert [(p.id, r.reason) for p, r in zip(problems, results) if r.reward != 1.0] == []
    short = [(p, (gold_steps(p) or [])[:-1]) for p in problems]
    results = _score(verifier_z3, [("short", p, s) for p, s in short if s], ChainConfig())
    assert all(r.reward < 1.0 and "uncertain: verify" in r.reason for r in results)


# ====================================================================================================
# from tests/test_chain_hardening.py
# Issue 21, rewards: ex falso in step_fraction, laundered rules and max_rules, and the honest
# Uncertain chain when no premise bears on the goal.
# ====================================================================================================


def _problem(pid, premises, goal, label):
    letter = {"True": "A", "False": "B", "Uncertain": "C"}[label]
    return Problem.from_dict({"id": pid, "kind": "true_false_uncertain", "goal": goal, "answer": letter,
                              "options": {"A": "True", "B": "False", "C": "Uncertain"},
                              "premises": [{"id": f"h{i + 1}", "formal": f} for i, f in enumerate(premises)]})


def _text(steps, answer):
    body = ",\n".join(json.dumps(s, ensure_ascii=False) for s in steps)
    return f"<think>\nx\n</think>\n<steps>\n[{body}]\n</steps>\n<answer>{answer}</answer>"


def _hardening_step(sid, deps, conclusion):
    return {"id": sid, "dependencies": deps, "conclusion": conclusion, "rule": "r"}


# -- item 3: a step built on an unverified step never counts as verified -----------------------------

def _ex_falso(n=20):
    rules = [f"∀ x, P{i} x → P{i + 1} x" for i in range(n)]
    problem = _problem("exfalso", rules + ["P0 b"], f"P{n} a", "True")
    fact = f"h{n + 1}"
    steps = [_hardening_step("s1", [fact], "P0 a")]  # false: P0 b does not give P0 a
    steps += [_hardening_step(f"s{i + 2}", [f"h{i + 1}", f"s{i + 1}"], f"P{i + 1} a") for i in range(n)]
    return problem, steps


@pytest.mark.parametrize("mode", ["prosfi", "step_fraction"])
def test_steps_built_on_an_unverified_step_are_not_verified(verifier_z3, mode):
    problem, steps = _ex_falso()
    [r] = score_batch([problem], [_text(steps, "A")], verifier_z3, RewardConfig(mode=mode))
    assert r.answer_correct and not r.chain_valid
    assert r.steps[0].verdict == "invalid"
    assert not any(s.verified for s in r.steps), [s.verdict for s in r.steps]
    assert all("builds on" in s.reason for s in r.steps[1:])
    if mode == "step_fraction":
        assert r.reward == pytest.approx(RewardConfig().right_unverified)


def test_the_honest_chain_of_the_ex_falso_problem_still_scores_one(verifier_z3):
    problem, steps = _ex_falso(5)
    honest = [_hardening_step(f"s{i + 1}", [f"h{i + 1}", f"s{i}" if i else "h6"], f"P{i + 1} b") for i in range(5)]
    p = _problem("honest", [problem.premise_map[f"h{i + 1}"] for i in range(6)], "P5 b", "True")
    [r] = score_batch([p], [_text(honest, "A")], verifier_z3, RewardConfig(mode="step_fraction"))
    assert r.reward == 1.0 and r.chain_valid, r.reason


# -- item 4: a restated rule counts as the rule it restates -------------------------------------------

LAUNDER = ["∀ x, P x → Q x", "P a", "P b", "Q a ∧ Q b → G", "G → H"]


def test_laundered_rule_counts_against_max_rules(verifier_z3):
    """The rule h1 is needed twice: every honest chain takes 4 steps; restating h1 once in clause form
    (or as its contrapositive) and reusing that 'one-fact result' took 3 and earned the top reward."""
    p = _problem("launder", LAUNDER, "H", "True")
    honest = [_hardening_step("s1", ["h1", "h2"], "Q a"), _hardening_step("s2", ["h1", "h3"], "Q b"),
              _hardening_step("s3", ["h4", "s1", "s2"], "G"), _hardening_step("s4", ["h5", "s3"], "H")]
    laundered = [[_hardening_step("s1", ["h1"], restated), _hardening_step("s2", ["s1", "h2", "h3", "h4"], "G"),
                  _hardening_step("s3", ["h5", "s2"], "H")]
                 for restated in ("∀ x, ¬ P x ∨ Q x", "∀ x, ¬ Q x → ¬ P x")]
    texts = [_text(honest, "A")] + [_text(s, "A") for s in laundered]
    loose = score_batch([p] * 3, texts, verifier_z3, chain_config=ChainConfig(max_rules=0))
    assert [r.reward for r in loose] == [1.0, 1.0, 1.0]  # a real shortcut without the guard
    results = score_batch([p] * 3, texts, verifier_z3)
    assert results[0].reward == 1.0, results[0].reason
    for r in results[1:]:
        assert r.reward < 1.0 and "max_rules" in r.reason, r.reason


def test_a_ground_instance_is_still_the_way_to_combine_two_rules(verifier_z3):
    p = _problem("instance", ["∀ x, P x → Q x", "∀ x, Q x → R x", "P a"], "R a", "True")
    steps = [_hardening_step("s1", ["h1"], "P a → Q a"), _hardening_step("s2", ["s1", "h2", "h3"], "R a")]
    [r] = score_batch([p], [_text(steps, "A")], verifier_z3)
    assert r.reward == 1.0, r.reason


# -- item 1: Uncertain where no premise bears on the goal ---------------------------------------------

OFF_GOAL = ["∀ x, Kind x → Nice x", "Kind bob", "∀ x, Nice x → Calm x", "¬ Loud bob"]


def test_uncertain_with_no_relevant_premise_is_earned_by_the_empty_chain(verifier_z3):
    p = _problem("nothing-bears", OFF_GOAL, "Brave alice", "Uncertain")
    steps = gold_steps(p)
    assert steps == []
    text = gold_completion(p, verifier_z3)
    assert text is not None and "<steps>\n[]\n</steps>" in text
    [r] = score_batch([p], [text], verifier_z3)
    assert r.reward == 1.0 and r.chain_valid, r.reason


def test_empty_chain_stays_closed_where_premises_bear_on_the_goal(verifier_z3):
    # Nice bob is forced, the goal is about bob: an empty chain derives nothing
    bears = _problem("bears", OFF_GOAL + ["∀ x, Calm x ∧ Rich x → Brave x"], "Brave bob", "Uncertain")
    # premises bear on the goal but force nothing about alice: still no Uncertain for free
    bears_nothing_forced = _problem("bears2", OFF_GOAL + ["∀ x, Rich x → Brave x"], "Brave alice", "Uncertain")
    # no premise names the goal's predicate, but the goal is a tautology: it is entailed
    tautology = _problem("taut", OFF_GOAL, "Brave alice ∨ ¬ Brave alice", "Uncertain")
    problems = [bears, bears_nothing_forced, tautology]
    results = score_batch(problems, [_text([], "C")] * 3, verifier_z3)
    for p, r in zip(problems, results):
        assert r.answer_correct and r.reward < 1.0 and not r.chain_valid, (p.id, r.reason)
    assert "entail" in results[2].reason
    # irrelevant steps do not buy it either
    [r] = score_batch([_problem("nothing-bears", OFF_GOAL, "Brave alice", "Uncertain")],
                      [_text([_hardening_step("s1", ["h1", "h2"], "Nice bob")], "C")], verifier_z3)
    assert r.reward < 1.0 and "not relevant" in r.reason


def test_premises_that_name_the_predicate_but_not_the_subject_leave_the_empty_chain(verifier_z3):
    """`∃ x, Brave x` and `Brave bob` name the goal's predicate but say nothing about alice (no constant
    of hers, no ∀ to instantiate): nothing bears on `Brave alice`, the empty chain earns Uncertain."""
    p = _problem("subject", OFF_GOAL + ["∃ x, Brave x", "Brave bob"], "Brave alice", "Uncertain")
    assert gold_steps(p) == []
    [r] = score_batch([p], [_text([], "C")], verifier_z3)
    assert r.reward == 1.0 and r.chain_valid, r.reason
    # a ground premise about alice bears on her: no longer for free
    q = _problem("subject2", OFF_GOAL + ["∃ x, Brave x", "Brave bob ∨ Calm alice"], "Brave alice", "Uncertain")
    [r] = score_batch([q], [_text([], "C")], verifier_z3)
    assert r.reward < 1.0 and not r.chain_valid
