"""Quantity chains end to end: step schema, answer reading and matching, the chain rules, and the PRoSFI
reward levels (plus outcome and step_fraction) through `score_batch`, mixed with logic problems."""

from __future__ import annotations

import pytest
from quant_chain_support import (  # tests/quant_chain_support.py
    EGGS,
    EGGS_GOLD,
    ENERGY,
    ENERGY_GOLD,
    SPEED,
    SPEED_GOLD,
    completion,
    step,
)

from prosfi.chain import ChainBatch, ChainConfig
from prosfi.data.problem import Problem
from prosfi.domains import domain_for
from prosfi.domains.quantity import QuantityStep, parse_steps, read_answer
from prosfi.rewards.config import RewardConfig
from prosfi.rewards.score import score_batch

Q = domain_for("quantity")
NO_VERIFIER = object()  # quantity chains never call the verifier


def score(problem, text, mode="prosfi"):
    return score_batch([problem], [text], NO_VERIFIER, RewardConfig(mode=mode))[0]


# ------------------------------------------------------------------ schema
@pytest.mark.parametrize("steps, why", [
    ('{"id": "s1"}', "must be a JSON array"),
    ('[{"id": "s1", "value": 3}]', "exactly one of 'expr'"),
    ('[{"id": "s1", "expr": "g1", "op": "add", "value": 3}]', "exactly one of 'expr'"),
    ('[{"id": "s1", "expr": "", "value": 3}]', "'expr' must be a non-empty string"),
    ('[{"id": "s1", "expr": "g1", "value": "3 m"}]', "put the unit in 'unit'"),
    ('[{"id": "s1", "expr": "g1", "value": true}]', "'value' must be a number"),
    ('[{"id": "s1", "expr": "g1", "value": 3, "unit": 5}]', "'unit' must be a string"),
    ('[{"id": "s1", "op": "add", "args": "g1", "value": 3}]', "'args' must be a list"),
    ('[{"id": "g1", "expr": "g2", "value": 3}]', "shadows a given id"),
    ('[{"id": "s1", "expr": "g2", "value": 3}, {"id": "s1", "expr": "g2", "value": 3}]', "duplicate id"),
    ('[{"id": "s1", "expr": "g2", "value": NaN}]', "not valid JSON"),
    ("[3]", "must be an object"),
])
def test_schema_errors_are_format_failures_with_a_reason(steps, why):
    r = score(EGGS, f"<think>t</think><steps>{steps}</steps><answer>18</answer>")
    assert r.reward == 0.0 and not r.format_ok and why in r.reason


def test_parse_steps_reads_both_forms_and_round_trips():
    steps, errors = parse_steps('[{"id": "s1", "expr": " g1 / g2 ", "value": "80", "unit": "km/h", "name": "v"},'
                                ' {"id": "s2", "op": "kinetic_energy", "args": ["g1", "g2"], "value": 9}]')
    assert not errors
    assert steps[0] == QuantityStep("s1", "g1 / g2", None, (), "80", "km/h", "v")
    assert steps[1].op == "kinetic_energy" and steps[1].args == ("g1", "g2") and steps[1].unit == ""
    assert [Q.as_step(s.to_json()) for s in steps] == list(steps)
    assert Q.step_object(steps[1]) == {"id": "s2", "op": "kinetic_energy", "args": ["g1", "g2"], "value": 9,
                                       "unit": ""}


# ------------------------------------------------------------------ answers
@pytest.mark.parametrize("text", ["18", "$18", "18 dollars", "18 USD", "18.0", "The answer is 18.", "$18.00",
                                  "Answer: 18"])
def test_money_answers_in_any_usual_form_are_right(text):
    assert Q.answer_correct(EGGS, Q.parse_answer(EGGS, text))


@pytest.mark.parametrize("text", ["19", "18 m", "18 or 19", "eighteen dollars", "", "18 kg"])
def test_wrong_or_unreadable_money_answers(text):
    claim = Q.parse_answer(EGGS, text)
    assert not Q.answer_correct(EGGS, claim)


def test_units_compare_by_dimension_with_conversion():
    for text in ("80 km/h", "22.22222 m/s", "80000 m/h"):
        assert Q.answer_correct(SPEED, Q.parse_answer(SPEED, text)), text
    for text in ("80", "80 km", "22 m/s", "80 m/s"):  # a bare number for a physical target is wrong
        assert not Q.answer_correct(SPEED, Q.parse_answer(SPEED, text)), text
    ms = Problem.from_dict({**SPEED.to_dict(), "answer": {"value": "3", "unit": "m/s"}})
    assert Q.answer_correct(ms, Q.parse_answer(ms, "10.8 km/h"))
    assert not Q.answer_correct(ms, Q.parse_answer(ms, "3 m"))


def test_thousands_separators_percent_and_tolerance():
    big = Problem.from_dict({**EGGS.to_dict(), "answer": {"value": "1000", "unit": ""}, "target": {}})
    assert Q.answer_correct(big, Q.parse_answer(big, "1,000"))
    pct = Problem.from_dict({**EGGS.to_dict(), "answer": {"value": "25", "unit": "percent"}, "target": {}})
    assert all(Q.answer_correct(pct, Q.parse_answer(pct, t)) for t in ("25", "25%", "25 percent"))
    assert not Q.answer_correct(pct, Q.parse_answer(pct, "0.25 percent"))
    rounded = Problem.from_dict({**SPEED.to_dict(), "answer": {"value": "81", "unit": "km/h"},
                                 "tolerance": {"rel": 0.02}})
    assert Q.answer_correct(rounded, Q.parse_answer(rounded, "80 km/h"))
    assert not Q.answer_correct(SPEED, Q.parse_answer(SPEED, "80.01 km/h"))
    assert read_answer("18 or 19").reason and not read_answer("18 or 19").ok


# ------------------------------------------------------------------ reward levels
def test_gold_chains_earn_the_top_level():
    for problem, gold, answer in ((EGGS, EGGS_GOLD, "18"), (SPEED, SPEED_GOLD, "80 km/h"),
                                  (ENERGY, ENERGY_GOLD, "9 J")):
        r = score(problem, completion(gold, answer))
        assert r.reward == 1.0 and r.chain_valid and r.answer_correct, (problem.id, r.reason)
        assert all(s.verdict == "valid" for s in r.steps)


def test_reward_levels_format_wrong_unverified_verified():
    levels = {
        "format": score(EGGS, "no blocks at all").reward,
        "wrong": score(EGGS, completion(EGGS_GOLD, "17")).reward,
        "unverified": score(EGGS, completion([EGGS_GOLD[0], {**EGGS_GOLD[1], "value": 19}], "18")).reward,
        "verified": score(EGGS, completion(EGGS_GOLD, "18")).reward,
    }
    assert levels == {"format": 0.0, "wrong": 0.1, "unverified": 0.3, "verified": 1.0}


def test_wrong_step_values_and_dimension_errors_are_invalid_with_reasons():
    r = score(EGGS, completion([EGGS_GOLD[0], {**EGGS_GOLD[1], "value": 19}], "18"))
    assert r.steps[1].verdict == "invalid" and "wrong value" in r.steps[1].reason
    r = score(SPEED, completion([step("s1", "g1 + g2", 80, "km/h")], "80 km/h"))
    assert r.steps[0].verdict == "invalid" and "dimension error" in r.steps[0].reason
    assert r.steps[0].to_json()["guard"] == "dimension"
    r = score(SPEED, completion([step("s1", "g1 / g2", 80, "km")], "80 km/h"))
    assert r.steps[0].verdict == "invalid" and "wrong unit" in r.steps[0].reason
    r = score(SPEED, completion([step("s1", "g1 / g2", 80, "furlongs_per_blorp")], "80 km/h"))
    assert r.steps[0].verdict == "error" and r.reward == 0.3


def test_disallowed_and_unbounded_expressions_never_verify():
    for expr, verdicts in (("__import__('os')", {"error"}), ("g1.real", {"error"}), ("lambda: 1", {"error"}),
                           ("10**10**10", {"unknown", "rejected"}), ("9**9**9**9", {"unknown", "rejected"}),
                           ("(" * 2000 + "g1" + ")" * 2000, {"unknown", "error"}), ("1" * 5000, {"unknown", "error"})):
        r = score(EGGS, completion([step("s1", expr, 18, "USD")], "18"))
        assert r.reward == 0.3 and r.steps[0].verdict in verdicts, (expr[:20], r.steps[0])


def test_citation_errors_like_logic():
    r = score(EGGS, completion([step("s1", "g9 - g2", 9)], "18"))
    assert "cites unknown id 'g9'" in r.steps[0].reason
    r = score(EGGS, completion([step("s1", "s2 - g2", 9), step("s2", "g1 * g4", 32, "USD")], "18"))
    assert "forward reference" in r.steps[0].reason
    r = score(EGGS, completion([step("s1", "s1 - g2", 9)], "18"))
    assert r.steps[0].reason == "cites itself"


def test_outcome_and_step_fraction_modes():
    half = completion([EGGS_GOLD[0], {**EGGS_GOLD[1], "value": 19}], "18")
    assert score(EGGS, half, "outcome").reward == 1.0
    assert score(EGGS, completion(EGGS_GOLD, "17"), "outcome").reward == 0.1
    # a chain that does not compute the answer earns no step credit: its valid steps are not shown to bear on
    # the answer (a guessed answer padded with valid steps would otherwise earn 0.3 + 0.7 n/(n+1))
    assert score(EGGS, half, "step_fraction").reward == 0.3
    assert score(EGGS, completion(EGGS_GOLD, "18"), "step_fraction").reward == 1.0


def test_a_mixed_logic_and_quantity_batch_scores_in_one_pass():
    from prosfi.verify.config import VerifierConfig
    from prosfi.verify.verifier import Verifier

    logic = Problem.from_dict({
        "id": "p1", "kind": "true_false_uncertain", "question": "?", "goal": "Alive tom",
        "premises": [{"id": "h1", "formal": "∀ x, Cat x → Alive x"}, {"id": "h2", "formal": "Cat tom"}],
        "options": {"A": "True", "B": "False", "C": "Uncertain"}, "answer": "A"})
    good_logic = ('<think>t</think><steps>[{"id": "s1", "dependencies": ["h1", "h2"], "conclusion": "Alive tom", '
                  '"rule": "mp"}]</steps><answer>A</answer>')
    with Verifier(VerifierConfig(workers=0)) as v:
        rs = score_batch([logic, EGGS, SPEED, logic], [good_logic, completion(EGGS_GOLD, "18"),
                                                       completion(SPEED_GOLD, "80 km/h"), "junk"], v)
    assert [r.reward for r in rs] == [1.0, 1.0, 1.0, 0.0]


def test_identical_chains_of_a_group_are_checked_once():
    check = Q.chain_check(EGGS, [Q.as_step(s) for s in EGGS_GOLD], Q.parse_answer(EGGS, "18"), ChainConfig(),
                          Q.batch_state())
    assert check.round1() == [] and check.round2([]) == []  # no prover round for quantity chains
    state = Q.batch_state()
    checks = [Q.chain_check(EGGS, [Q.as_step(s) for s in EGGS_GOLD], Q.parse_answer(EGGS, "18"), ChainConfig(),
                            state) for _ in range(8)]
    results = ChainBatch(checks).check(NO_VERIFIER)
    assert all(r.chain_valid for r in results)
    assert sum(1 for k in state.outcomes if k[0] == "chain") == 1  # one distinct chain, worked out once


def test_a_chain_needs_min_steps_and_max_steps_bounds_padding():
    r = score(EGGS, completion([], "18"))
    assert r.reward == 0.3 and not r.chain_valid
    cfg = ChainConfig(max_steps=1)
    res = score_batch([EGGS], [completion(EGGS_GOLD, "18")], NO_VERIFIER, chain_config=cfg)[0]
    assert res.steps[1].verdict == "rejected" and "max_steps" in res.steps[1].reason


def test_unit_factor_constants_need_their_context_small_integers_from_three_are_givens():
    from prosfi.quant.licensed import allowed_constant

    # a unit factor needs both things it converts, named as whole words (or a unit symbol after a number)
    assert allowed_constant(60, "She works 2 hours a day. How many minutes?")
    assert allowed_constant(60, "a speed of 30 km/h for 20 minutes")
    assert allowed_constant(60, "She works 2 hours a day") is None  # nothing to convert the hours into
    assert allowed_constant(60, "Janet sells 16 eggs") is None
    assert allowed_constant(3600, "Janet's ducks lay eggs for 2 hours") is None  # the possessive is no "s"
    assert allowed_constant(7, "She jogs 3 miles a day") is None and allowed_constant(7, "3 miles a day, weekly")
    assert allowed_constant(52, "She is 12 years old and buys cards") is None
    assert allowed_constant(100, "25% of the price") and allowed_constant(2, "anything")
    assert allowed_constant(3, "anything") is None and allowed_constant(9, None) is None
    minutes = Problem.from_dict({
        "id": "min", "kind": "quantity", "source": "gsm8k", "question": "Ann reads for 2 hours. How many minutes?",
        "givens": [{"id": "g1", "value": "2", "unit": ""}], "answer": {"value": "120", "unit": ""}})
    assert score(minutes, completion([step("s1", "g1 * 60", 120)], "120")).reward == 1.0
    eggs = score(EGGS, completion([step("s1", "g1 * 60", 960)], "960"))
    assert "no context for" in eggs.steps[0].reason and eggs.steps[0].verdict == "rejected"


def test_a_percent_given_grounds_both_its_number_and_its_fraction():
    pct = Problem.from_dict({
        "id": "pct", "kind": "quantity", "source": "gsm8k", "question": "A $40 shirt costs 150% more. Price?",
        "givens": [{"id": "g1", "value": "40", "unit": "USD"}, {"id": "g2", "value": "150", "unit": "percent"}],
        "answer": {"value": "100", "unit": "USD"}})
    for expr in ("g1 * 150 / 100 + g1", "g1 * 1.5 + g1", "g1 * g2 + g1"):
        assert score(pct, completion([step("s1", expr, 100, "USD")], "$100")).reward == 1.0, expr


def test_a_fraction_given_may_be_written_as_its_two_literals():
    frac = Problem.from_dict({
        "id": "frac", "kind": "quantity", "source": "gsm8k", "question": "Of 15 apples, three-fifths are red.",
        "givens": [{"id": "g1", "value": "15", "unit": ""}, {"id": "g2", "value": "3/5", "unit": ""}],
        "answer": {"value": "9", "unit": ""}})
    assert score(frac, completion([step("s1", "g1 * 3/5", 9)], "9")).reward == 1.0
    assert "ungrounded literal" in score(frac, completion([step("s1", "g1 * 3/7 + 15 * 0", 9)], "9")).reason
