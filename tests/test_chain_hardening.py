"""Issue 21, rewards: ex falso in step_fraction, laundered rules and max_rules, and the honest
Uncertain chain when no premise bears on the goal."""

from __future__ import annotations

import json

import pytest

from prosfi.chain import ChainConfig
from prosfi.data.gold import gold_completion, gold_steps
from prosfi.data.problem import Problem
from prosfi.rewards import RewardConfig, score_batch
from prosfi.verify.config import VerifierConfig
from prosfi.verify.verifier import Verifier


@pytest.fixture(scope="module")
def verifier():
    with Verifier(VerifierConfig(backends=("z3",), workers=1, timeout_ms=3000)) as v:
        yield v


def _problem(pid, premises, goal, label):
    letter = {"True": "A", "False": "B", "Uncertain": "C"}[label]
    return Problem.from_dict({"id": pid, "kind": "true_false_uncertain", "goal": goal, "answer": letter,
                              "options": {"A": "True", "B": "False", "C": "Uncertain"},
                              "premises": [{"id": f"h{i + 1}", "formal": f} for i, f in enumerate(premises)]})


def _text(steps, answer):
    body = ",\n".join(json.dumps(s, ensure_ascii=False) for s in steps)
    return f"<think>\nx\n</think>\n<steps>\n[{body}]\n</steps>\n<answer>{answer}</answer>"


def _step(sid, deps, conclusion):
    return {"id": sid, "dependencies": deps, "conclusion": conclusion, "rule": "r"}


# -- item 3: a step built on an unverified step never counts as verified -----------------------------

def _ex_falso(n=20):
    rules = [f"∀ x, P{i} x → P{i + 1} x" for i in range(n)]
    problem = _problem("exfalso", rules + ["P0 b"], f"P{n} a", "True")
    fact = f"h{n + 1}"
    steps = [_step("s1", [fact], "P0 a")]  # false: P0 b does not give P0 a
    steps += [_step(f"s{i + 2}", [f"h{i + 1}", f"s{i + 1}"], f"P{i + 1} a") for i in range(n)]
    return problem, steps


@pytest.mark.parametrize("mode", ["prosfi", "step_fraction"])
def test_steps_built_on_an_unverified_step_are_not_verified(verifier, mode):
    problem, steps = _ex_falso()
    [r] = score_batch([problem], [_text(steps, "A")], verifier, RewardConfig(mode=mode))
    assert r.answer_correct and not r.chain_valid
    assert r.steps[0].verdict == "invalid"
    assert not any(s.verified for s in r.steps), [s.verdict for s in r.steps]
    assert all("builds on" in s.reason for s in r.steps[1:])
    if mode == "step_fraction":
        assert r.reward == pytest.approx(RewardConfig().right_unverified)


def test_the_honest_chain_of_the_ex_falso_problem_still_scores_one(verifier):
    problem, steps = _ex_falso(5)
    honest = [_step(f"s{i + 1}", [f"h{i + 1}", f"s{i}" if i else "h6"], f"P{i + 1} b") for i in range(5)]
    p = _problem("honest", [problem.premise_map[f"h{i + 1}"] for i in range(6)], "P5 b", "True")
    [r] = score_batch([p], [_text(honest, "A")], verifier, RewardConfig(mode="step_fraction"))
    assert r.reward == 1.0 and r.chain_valid, r.reason


# -- item 4: a restated rule counts as the rule it restates -------------------------------------------

LAUNDER = ["∀ x, P x → Q x", "P a", "P b", "Q a ∧ Q b → G", "G → H"]


def test_laundered_rule_counts_against_max_rules(verifier):
    """The rule h1 is needed twice: every honest chain takes 4 steps; restating h1 once in clause form
    (or as its contrapositive) and reusing that 'one-fact result' took 3 and earned the top reward."""
    p = _problem("launder", LAUNDER, "H", "True")
    honest = [_step("s1", ["h1", "h2"], "Q a"), _step("s2", ["h1", "h3"], "Q b"),
              _step("s3", ["h4", "s1", "s2"], "G"), _step("s4", ["h5", "s3"], "H")]
    laundered = [[_step("s1", ["h1"], restated), _step("s2", ["s1", "h2", "h3", "h4"], "G"),
                  _step("s3", ["h5", "s2"], "H")]
                 for restated in ("∀ x, ¬ P x ∨ Q x", "∀ x, ¬ Q x → ¬ P x")]
    texts = [_text(honest, "A")] + [_text(s, "A") for s in laundered]
    loose = score_batch([p] * 3, texts, verifier, chain_config=ChainConfig(max_rules=0))
    assert [r.reward for r in loose] == [1.0, 1.0, 1.0]  # a real shortcut without the guard
    results = score_batch([p] * 3, texts, verifier)
    assert results[0].reward == 1.0, results[0].reason
    for r in results[1:]:
        assert r.reward < 1.0 and "max_rules" in r.reason, r.reason


def test_a_ground_instance_is_still_the_way_to_combine_two_rules(verifier):
    p = _problem("instance", ["∀ x, P x → Q x", "∀ x, Q x → R x", "P a"], "R a", "True")
    steps = [_step("s1", ["h1"], "P a → Q a"), _step("s2", ["s1", "h2", "h3"], "R a")]
    [r] = score_batch([p], [_text(steps, "A")], verifier)
    assert r.reward == 1.0, r.reason


# -- item 1: Uncertain where no premise bears on the goal ---------------------------------------------

OFF_GOAL = ["∀ x, Kind x → Nice x", "Kind bob", "∀ x, Nice x → Calm x", "¬ Loud bob"]


def test_uncertain_with_no_relevant_premise_is_earned_by_the_empty_chain(verifier):
    p = _problem("nothing-bears", OFF_GOAL, "Brave alice", "Uncertain")
    steps = gold_steps(p)
    assert steps == []
    text = gold_completion(p, verifier)
    assert text is not None and "<steps>\n[]\n</steps>" in text
    [r] = score_batch([p], [text], verifier)
    assert r.reward == 1.0 and r.chain_valid, r.reason


def test_empty_chain_stays_closed_where_premises_bear_on_the_goal(verifier):
    # Nice bob is forced, the goal is about bob: an empty chain derives nothing
    bears = _problem("bears", OFF_GOAL + ["∀ x, Calm x ∧ Rich x → Brave x"], "Brave bob", "Uncertain")
    # premises bear on the goal but force nothing about alice: still no Uncertain for free
    bears_nothing_forced = _problem("bears2", OFF_GOAL + ["∀ x, Rich x → Brave x"], "Brave alice", "Uncertain")
    # no premise names the goal's predicate, but the goal is a tautology: it is entailed
    tautology = _problem("taut", OFF_GOAL, "Brave alice ∨ ¬ Brave alice", "Uncertain")
    problems = [bears, bears_nothing_forced, tautology]
    results = score_batch(problems, [_text([], "C")] * 3, verifier)
    for p, r in zip(problems, results):
        assert r.answer_correct and r.reward < 1.0 and not r.chain_valid, (p.id, r.reason)
    assert "entail" in results[2].reason
    # irrelevant steps do not buy it either
    [r] = score_batch([_problem("nothing-bears", OFF_GOAL, "Brave alice", "Uncertain")],
                      [_text([_step("s1", ["h1", "h2"], "Nice bob")], "C")], verifier)
    assert r.reward < 1.0 and "not relevant" in r.reason


def test_premises_that_name_the_predicate_but_not_the_subject_leave_the_empty_chain(verifier):
    """`∃ x, Brave x` and `Brave bob` name the goal's predicate but say nothing about alice (no constant
    of hers, no ∀ to instantiate): nothing bears on `Brave alice`, the empty chain earns Uncertain."""
    p = _problem("subject", OFF_GOAL + ["∃ x, Brave x", "Brave bob"], "Brave alice", "Uncertain")
    assert gold_steps(p) == []
    [r] = score_batch([p], [_text([], "C")], verifier)
    assert r.reward == 1.0 and r.chain_valid, r.reason
    # a ground premise about alice bears on her: no longer for free
    q = _problem("subject2", OFF_GOAL + ["∃ x, Brave x", "Brave bob ∨ Calm alice"], "Brave alice", "Uncertain")
    [r] = score_batch([q], [_text([], "C")], verifier)
    assert r.reward < 1.0 and not r.chain_valid
