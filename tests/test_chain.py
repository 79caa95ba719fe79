"""Chain verification against a problem with the real verifier (Z3 first, Prover9 as fallback)."""

from __future__ import annotations

import pytest

from prosfi.chain import ChainBatch, ChainCheck, ChainConfig, Formulas
from prosfi.data.problem import Problem
from prosfi.trace.answer import parse_answer
from prosfi.trace.schema import Step
from prosfi.verify.config import VerifierConfig
from prosfi.verdict import Status
from prosfi.verify.verifier import Verifier

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
