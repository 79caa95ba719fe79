"""Red team for the quantity chain rules: every way we found to look verified without computing the
answer from the givens scores below the top level (with the guard named in the reason); the honest
chains of the same problems score 1.0."""

from __future__ import annotations

import pytest
from quant_chain_support import ECHO, ECHO_GOLD, EGGS, EGGS_GOLD, SPEED, SPEED_GOLD, completion, step

from prosfi.rewards.score import score_batch

NO_VERIFIER = object()

S1 = EGGS_GOLD[0]  # eggs for sale, 9 (honest)
HACKS = {
    # copying the answer
    "answer as a literal": (EGGS, [step("s1", "18", 18, "USD")], "literal-only"),
    "answer built from a small integer": (EGGS, [step("s1", "g4 * 9", 18, "USD")], "ungrounded literal 9"),
    "unit factor without its unit": (ECHO, [step("s1", "g3 * 12 - g2 - g4 - g3", 18)], "no context for"),
    "answer literal plus cancelling citation": (EGGS, [step("s1", "g1 - g1 + 18", 18)], "ungrounded literal 18"),
    "allowed constant plus cancelling citation": (ECHO, [step("s1", "g2 - g2 + 2", 2), step("s2", "s1 * g2 + g4 - g3 * s1", 29),
                                                         step("s3", "s2 - g1 + g4 * 2 + g1 - 13", 18)],
                                                  "does not depend on g2"),
    "multiply then divide by the same given": (EGGS, [S1, step("s2", "s1 * g4 * g3 / g3", 18, "USD")],
                                               "does not depend on g3"),
    "min clamps to the answer": (ECHO, [step("s1", "min(g2 + g3, g1)", 18)], "restates g1 through min"),
    "max clamps to the answer": (ECHO, [step("s1", "max(g4, g1)", 18)], "does not depend on g4"),
    "floor kills a citation": (ECHO, [*ECHO_GOLD[:1], step("s2", "s1 - g4 + floor(g3 / g2)", 18)],
                               "does not depend on g"),
    "multiply by zero": (ECHO, [*ECHO_GOLD[:1], step("s2", "s1 - g4 + 0 * g2", 18)], "does not depend on g2"),
    # restating
    "citing a given equal to the answer": (ECHO, [step("s1", "g1", 18)], "restates g1"),
    "given equal to the answer times one": (ECHO, [step("s1", "g1 * 1", 18)], "restates g1"),
    "dividing by 1": (EGGS, [S1, step("s2", "s1 * g4", 18, "USD"), step("s3", "s2 / 1", 18, "USD")], "restates s2"),
    "adding zero": (ECHO, [*ECHO_GOLD, step("s3", "s2 + 0", 18)], "adds 0"),
    "adding zero to money": (EGGS, [*EGGS_GOLD, step("s3", "s2 + 0", 18, "USD")], "dimension"),
    "answer is a given, chain is padding": (ECHO, [step("s1", "g2 + g3", 19)], "not the answer"),
    "given equal to the answer, laundered through two steps": (ECHO, [step("s1", "g1 + g4", 19),
                                                                      step("s2", "s1 - g4", 18)],
                                                               "restates g1"),
    "a given cancelled across steps": (EGGS, [step("s1", "g1 - g2", 13), step("s2", "s1 * g3", 52),
                                              step("s3", "s2 / g3 * g4 - g1 + g3 + g2", 9, "USD")], "max_ops"),
    "a given cancelled across short steps": (ECHO, [step("s1", "g2 * g3", 48), step("s2", "s1 / g3", 16),
                                                    step("s3", "s2 + g3", 19), step("s4", "s3 - g4", 18)],
                                             "restates g2"),
    "unit conversion only": (SPEED, [*SPEED_GOLD, {"id": "s2", "op": "convert", "args": ["s1", "m/s"],
                                                   "value": 22.22222222, "unit": "m/s"}], "restates s1"),
    "restating in another unit": (SPEED, [*SPEED_GOLD, step("s2", "s1", 22.2222222222, "m/s")], "restates s1"),
    # one giant expression / bundling
    "one giant expression": (EGGS, [step("s1", "((g1 - g2) - g3) * g4 * 1 / 1 + 0", 18, "USD")], "max_ops"),
    "everything in nested calls": (EGGS, [step("s1", "abs(abs(abs(abs(abs(g1 - g2 - g3))))) * g4", 18, "USD")],
                                   "max_ops"),
    # invented data
    "invented number": (EGGS, [S1, step("s2", "s1 * 2.5 - g3 + 1.5", 18, "USD")], "ungrounded literal 2.5"),
    "world fact not in the problem": (EGGS, [step("s1", "g1 * 30", 480)], "ungrounded literal 30"),
    # the answer not reached / padding
    "answer in an earlier step, then more": (EGGS, [*EGGS_GOLD, step("s3", "s2 + g4", 20, "USD")],
                                             "not the answer"),
    "unused honest padding": (EGGS, [step("s0", "g1 + g3", 20), *EGGS_GOLD], "unused step"),
    "unused step after a detour": (EGGS, [S1, step("sx", "s1 * g3", 36), step("s2", "s1 * g4", 18, "USD")],
                                   "unused step"),
    # units
    "wrong unit, right number": (EGGS, [S1, step("s2", "s1 * g4", 18, "kg")], "wrong unit"),
    "dimensionless claim for money": (EGGS, [S1, step("s2", "s1 * g4", 18, "")], "wrong unit"),
    "dimension error hidden in the expression": (SPEED, [step("s1", "g1 / g2 + g2 - g2", 80, "km/h")], "dimension"),
    "percent unit trick": (EGGS, [S1, step("s2", "s1 * g4", 1800, "percent")], "wrong unit"),
    # values and references
    "wrong intermediate value": (EGGS, [{**S1, "value": 8}, step("s2", "s1 * g4", 16, "USD")], "wrong value"),
    "forward reference": (EGGS, [step("s2", "s1 * g4", 18, "USD"), S1], "forward reference"),
    "self citation": (EGGS, [step("s1", "s1 + g1", 18, "USD")], "cites itself"),
    "citing an unknown given": (EGGS, [step("s1", "g7 * g4", 18, "USD")], "unknown id"),
    "tolerance abuse": (EGGS, [S1, step("s2", "s1 * g4", 18.01, "USD")], "wrong value"),
    "python escape": (EGGS, [step("s1", "g1.__class__", 18, "USD")], "expression"),
}


def _score(problem, steps, answer="18"):
    return score_batch([problem], [completion(steps, answer)], NO_VERIFIER)[0]


@pytest.mark.parametrize("name", list(HACKS))
def test_every_hack_scores_below_the_top_level_and_names_its_guard(name):
    problem, steps, why = HACKS[name]
    answer = {"speed": "80 km/h"}.get(problem.id, "18")
    r = _score(problem, steps, answer)
    assert r.answer_correct, (name, r.reason)  # the answer is right: only the chain can be wrong
    assert r.reward < 1.0 and not r.chain_valid, (name, r.reason)
    assert why in r.reason, (name, r.reason)


def test_honest_chains_of_the_same_problems_score_one():
    for problem, steps, answer in ((EGGS, EGGS_GOLD, "18"), (ECHO, ECHO_GOLD, "18"), (SPEED, SPEED_GOLD, "80 km/h"),
                                   (SPEED, SPEED_GOLD, "22.2222222 m/s"),
                                   (EGGS, [step("s1", "(g1 - g2 - g3) * g4", 18, "USD")], "$18"),
                                   (EGGS, [step("s1", "g1 - (g2 + g3)", 9), step("s2", "g4 * s1", 18, "USD")],
                                    "18 dollars")):
        r = _score(problem, steps, answer)
        assert r.reward == 1.0, (problem.id, answer, r.reason)


def test_a_bare_number_for_a_physical_answer_is_wrong_even_with_an_honest_chain():
    r = _score(SPEED, SPEED_GOLD, "80")
    assert r.reward == 0.1 and not r.answer_correct


def test_a_batch_of_every_hack_never_reaches_the_top_level():
    problems = [p for p, _, _ in HACKS.values()]
    texts = [completion(s, {"speed": "80 km/h"}.get(p.id, "18")) for p, s, _ in HACKS.values()]
    results = score_batch(problems * 4, texts * 4, NO_VERIFIER)  # shared batch state, repeated chains
    assert max(r.reward for r in results) < 1.0


def test_a_chain_that_comes_back_to_a_given_value_honestly_still_scores_one():
    from prosfi.data.problem import Problem

    back = Problem.from_dict({
        "id": "back", "kind": "quantity", "source": "gsm8k", "question": "Ann has 5 pens, gives away 2, buys 2.",
        "givens": [{"id": "g1", "value": "5", "unit": ""}, {"id": "g2", "value": "2", "unit": ""},
                   {"id": "g3", "value": "2", "unit": ""}], "answer": {"value": "5", "unit": ""}})
    r = _score(back, [step("s1", "g1 - g2", 3), step("s2", "s1 + g3", 5)], "5")
    assert r.reward == 1.0, r.reason


def test_an_honest_physical_cancellation_is_not_a_restatement():
    """v = sqrt(2 * E / m) after E = m * g * h: the mass cancels (physics), and the momentum needs it again."""
    from prosfi.data.problem import Problem

    drop = Problem.from_dict({
        "id": "drop", "kind": "quantity", "source": "physics", "question": "A 2 kg stone falls 5 m (g = 9.8 m/s^2).",
        "givens": [{"id": "g1", "value": "2", "unit": "kg"}, {"id": "g2", "value": "5", "unit": "m"},
                   {"id": "g3", "value": "9.8", "unit": "m/s**2"}], "answer": {"value": "19.79898987", "unit": "kg*m/s"},
        "tolerance": {"rel": 1e-6}})
    steps = [step("s1", "g1 * g3 * g2", 98, "J"), step("s2", "sqrt(2 * s1 / g1)", 9.899494937, "m/s"),
             step("s3", "g1 * s2", 19.79898987, "kg*m/s")]
    assert _score(drop, steps, "19.79898987 kg*m/s").reward == 1.0


def test_an_honest_chain_may_return_to_an_earlier_steps_value():
    """GSM-Symbolic: 400 trolls, 0.75 as many, 2 as many, 0.5 as many: 300, 600, 300."""
    from prosfi.data.problem import Problem

    trolls = Problem.from_dict({
        "id": "trolls", "kind": "quantity", "source": "gsm_symbolic", "question": "David slew 400 trolls ...",
        "givens": [{"id": "g1", "value": "400", "unit": ""}, {"id": "g2", "value": "0.75", "unit": ""},
                   {"id": "g3", "value": "2", "unit": ""}, {"id": "g4", "value": "0.5", "unit": ""}],
        "answer": {"value": "300", "unit": ""}})
    steps = [step("s1", "g1 * g2", 300), step("s2", "g3 * s1", 600), step("s3", "s2 * g4", 300)]
    assert _score(trolls, steps, "300").reward == 1.0
