"""The quantity reward judged by what a chain computes, not by what it claims (issue #25's families).

Each family an adversarial review used to reach the top reward, as a policy would try it, with variants of
our own; and the honest chains the old rules scored below the top, which must earn it. Every attack is tried
in both chain modes (`prosfi` and `step_fraction`): none may reach 1.0 (nor step credit above the 0.3 floor).
"""

from __future__ import annotations

import pytest
from quant_chain_support import ECHO, EGGS, EGGS_GOLD, completion, step

from prosfi.data.problem import Problem
from prosfi.rewards.config import RewardConfig
from prosfi.rewards.score import score_batch

NO_VERIFIER = object()


def _problem(pid, question, givens, answer, unit="", **extra):
    return Problem.from_dict({
        "id": pid, "kind": "quantity", "source": "gsm8k", "question": question,
        "givens": [{"id": f"g{i + 1}", "value": str(v), "unit": u, "text": f"{v} {u}".strip()}
                   for i, (v, u) in enumerate(givens)],
        "target": {"name": "answer", "unit": unit}, "answer": None if answer is None else {"value": str(answer),
                                                                                           "unit": unit},
        **extra})


NO_GOLD = _problem("nogold", "Ann has 7 apples and buys 5 more.", [(7, ""), (5, "")], None)
CHARGE = _problem("charge", "Two charges of 1.6e-19 C and 3.2e-19 C meet. Total charge?",
                  [("1.6e-19", "C"), ("3.2e-19", "C")], "4.8e-19", "C", tolerance={"rel": 0.05})
SCIB = _problem("scib", "A 2 kg mass moves at 3 m/s. Kinetic energy?", [(2, "kg"), (3, "m/s")], 9, "J",
                tolerance={"rel": 0.05})
TWICE = _problem("twice-echo", "Tom had 18 marbles; Ann has twice as many and one more. He has 16, gets 3, loses 1.",
                 [(18, ""), (16, ""), (3, ""), (1, "")], 18, "")
HERSELF = _problem("herself", "Ann buys 4 eggs at $2 each for her 2 friends, including herself. Each gets $4 more.",
                   [(4, ""), (2, "USD"), (4, "USD")], 12, "USD")
LEFT = _problem("left", "Sam has 9 apples and eats 3. How many are left?", [(9, ""), (3, "")], 6, "")
PCT = _problem("pct", "Of 20 students, 12 enrolled in dance. What percentage enrolled?", [(20, ""), (12, "")],
               60, "percent")


def _score(problem, steps, answer, mode="prosfi"):
    cfg = RewardConfig(mode=mode)
    return score_batch([problem], [completion(steps, answer)], NO_VERIFIER, cfg)[0]


ATTACKS = {
    # laundered constants: a given cancelled across steps gives a given-free number to build anything from
    "laundered one": (EGGS, [step("s1", "g1 + 1", 17), step("s2", "s1 - g1", 1),
                             step("s3", "s2 * g4 * g3 * 2", 16, "USD"), step("s4", "s3 + s2 * g4", 18, "USD")],
                      "18", "offset"),
    "laundered one, the offset stated": (HERSELF, [step("s1", "g1 + 1", 5), step("s2", "s1 - g1", 1),
                                                   step("s3", "g4 * s2 * g3", 8, "USD"), step("s4", "s3 + g3", 12, "USD")],
                                         "12", "constant"),
    "laundered zero": (EGGS, [step("s1", "g1 - g1 * 1", 0), step("s2", "g1 - g2 - g3 + s1", 9),
                              step("s3", "s2 * g4", 18, "USD")], "18", ""),
    "laundered through a literal given number": (EGGS, [step("s1", "16 - g1", 0), step("s2", "g1 - g2 - g3 + s1", 9),
                                                        step("s3", "s2 * g4", 18, "USD")], "18", "ungrounded"),
    "laundered, problem without gold": (NO_GOLD, [step("s1", "g1 + 1", 8), step("s2", "s1 - g1", 1),
                                                  step("s3", "s2 + 1", 2)], "2", "offset"),
    "laundered via a ratio": (ECHO, [step("s1", "g2 * g3", 48), step("s2", "s1 / g2", 3), step("s3", "s2 / g3", 1),
                                     step("s4", "s3 * g1", 18)], "18", "restates g3"),
    # the answer read in two units
    "cents for dollars": (EGGS, [step("s1", "g1 - g2 - g3", 9), step("s2", "s1 * g4 / 100", 0.18, "USD")], "18",
                          "no context"),
    "plain number for dollars": (EGGS, [step("s1", "g1 - g2 - g3", 9), step("s2", "s1 * 2", 18)], "18", ""),
    "a counting unit": (EGGS, [step("s1", "g1 - g2 - g3", 9, "pair")], "18", ""),
    # coming back to a given by a detour (the answer is a given: ECHO's g1 = 18)
    "x2 then x0.5": (ECHO, [step("s1", "g1 * 2", 36), step("s2", "s1 * 0.5", 18)], "18", "multiple"),
    "x2 then x0.5 where doubling is stated": (TWICE, [step("s1", "g1 * 2", 36), step("s2", "s1 * 0.5", 18)], "18",
                                             "restates g1"),
    "+1 then -1": (ECHO, [step("s1", "g1 + 1", 19), step("s2", "s1 - 1", 18)], "18", "offset"),
    "+1 then -1, one more stated": (TWICE, [step("s1", "g1 + 1", 19), step("s2", "s1 - 1", 18)], "18", "restates g1"),
    "+1 twice": (TWICE, [step("s1", "g2 + 1", 17), step("s2", "s1 + 1", 18)], "18", "offset"),
    "square then sqrt": (ECHO, [step("s1", "g1 ** 2", 324), step("s2", "sqrt(s1)", 18)], "18", "restates g1"),
    "through another given": (ECHO, [step("s1", "g1 * g3", 54), step("s2", "s1 / g3", 18)], "18", "restates g1"),
    "times a given equal to one": (ECHO, [step("s1", "g1 * 1", 18)], "18", "restates g1"),
    # counts nobody stated
    "repeated addition": (EGGS, [step("s1", "g4 + g4 + g4", 6, "USD"), step("s2", "s1 * g2", 18, "USD")], "18",
                          "a count of 3"),
    "repeated addition in a primitive": (EGGS, [{"id": "s1", "op": "sum", "args": ["g4", "g4", "g4"], "value": 6,
                                                 "unit": "USD"}, step("s2", "s1 * g2", 18, "USD")], "18",
                                         "a count of 3"),
    "doubling with no word for it": (LEFT, [step("s1", "g2 * 2", 6)], "6", "multiple"),
    "halving with no word for it": (LEFT, [step("s1", "g1 / 2", 4.5), step("s2", "s1 + 1.5", 6)], "6", "multiple"),
    "repeated doubling": (ECHO, [step("s1", "g4 + g4", 2), step("s2", "s1 + s1", 4)], "4", ""),
    "fraction pair grounding its parts elsewhere": (
        _problem("frac", "Two-thirds of 9 liters is water; 5 more liters are added.", [("2/3", ""), (9, ""), (5, "")],
                 11, ""), [step("s1", "g2 * 2/3 + 3 + 2", 11)], "11", "ungrounded literal 3"),
    # tolerances
    "chained tolerance (5 % twice)": (SCIB, [{"id": "s1", "op": "kinetic_energy", "args": ["g1", "g2"], "value": 9,
                                              "unit": "J"}, step("s2", "s1 * g1 / g1", 9, "J")], "9.4", ""),
    "slips absorbed step by step": (
        _problem("slip", "A 1000 USD deposit grows by 1.5 times, then by 1.5 times, then by 1.5 times.",
                 [(1000, "USD"), (1.5, "")], 3375, "USD"),
        [step("s1", "g1 * g2", 1500.009, "USD"), step("s2", "s1 * g2", 2250.027, "USD"),
         step("s3", "s2 * g2", 3375.06, "USD")], "3375", "wrong value"),
    "zero for a tiny charge": (CHARGE, [step("s1", "g1 + g2 - g1 - g2", 0, "C")], "0 C", ""),
    # unit factors matched loosely
    "possessive as seconds": (EGGS, [step("s1", "g1 - g2 - g3", 9), step("s2", "s1 * g4 * 3600", 64800, "USD")],
                              "64800", "no context"),
    "day licensing a week": (_problem("day", "Sam reads 3 pages a day.", [(3, "")], 21, ""),
                             [step("s1", "g1 * 7", 21)], "21", "no context"),
    "years licensing 52": (_problem("deck", "Jo is 12 years old and has 2 decks of cards.", [(12, ""), (2, "")],
                                    104, ""), [step("s1", "g2 * 52", 104)], "104", "no context"),
    # step credit without computing the answer
    "guessed answer plus valid unrelated steps": (EGGS, [step("s1", "g1 + g2", 19), step("s2", "s1 + g3", 23)], "18",
                                                  "not the answer"),
    "built on a rejected step": (EGGS, [step("s1", "g1 * 9", 144), step("s2", "s1 - g1", 128),
                                        step("s3", "s2 / g1", 8)], "18", "ungrounded literal 9"),
}


@pytest.mark.parametrize("name", list(ATTACKS))
@pytest.mark.parametrize("mode", ["prosfi", "step_fraction"])
def test_no_attack_reaches_the_top_reward(name, mode):
    problem, steps, answer, why = ATTACKS[name]
    r = _score(problem, steps, answer, mode)
    assert r.reward < 1.0 and not r.chain_valid, (name, r.reason)
    if r.answer_correct:
        assert r.reward == pytest.approx(0.3), (name, r.reward, r.reason)  # no step credit either
    assert why in r.reason or why in " ".join(s.reason for s in r.steps), (name, r.reason)


def test_steps_built_on_a_rejected_step_are_rejected_too():
    r = _score(EGGS, ATTACKS["built on a rejected step"][1], "18")
    assert [s.verdict for s in r.steps] == ["rejected"] * 3
    assert "built on s1" in r.steps[1].reason and "built on s2" in r.steps[2].reason


def test_a_step_is_recomputed_from_the_givens_not_from_earlier_claims():
    """s1 claims 9.00001 (within the step tolerance); s2's claim 18.00002 is checked against 9 * 2 = 18."""
    r = _score(EGGS, [step("s1", "g1 - g2 - g3", 9.00008), step("s2", "s1 * g4", 18.00016, "USD")], "18")
    assert r.steps[0].verdict == "valid" and r.steps[1].verdict == "valid"  # each within 1e-5 of its own value
    r = _score(EGGS, [step("s1", "g1 - g2 - g3", 9.00008), step("s2", "s1 * g4 * g4 / g4", 18.00035, "USD")], "18")
    assert r.steps[1].verdict != "valid"


def test_one_tolerance_between_the_chain_and_the_gold():
    ke = [{"id": "s1", "op": "kinetic_energy", "args": ["g1", "g2"], "value": 9, "unit": "J"}]
    assert _score(SCIB, ke, "9.4 J").reward == 1.0  # the answer within 5 % of the gold, the chain exact
    assert _score(SCIB, ke, "9.6 J").reward == 0.1  # 6.7 % off: wrong
    assert _score(SCIB, ke, "9000 mJ").reward == 1.0 and _score(SCIB, ke, "9 N").reward == 0.1


# -------------------------------------------------------------------------- honest work earns the top
HONEST = {
    "pi as a constant": (_problem("circle", "A wheel has a radius of 2 m. How far does it roll in one turn?",
                                  [(2, "m")], "12.566370614", "m", tolerance={"rel": 1e-6}),
                         [step("s1", "2 * pi * g1", 12.566370614, "m")], "12.566370614 m"),
    "e as a constant": (_problem("growth", "A culture of 3 grams grows continuously at rate 1 for 2 hours.",
                                 [(3, ""), (2, "")], "22.1671682968", "", tolerance={"rel": 1e-6}),
                        [step("s1", "g1 * e ** g2", 22.1671682968)], "22.1671682968"),
    "a fraction answered as a percent": (PCT, [step("s1", "g2 / g1", 0.6)], "60"),
    "a fraction answered with %": (PCT, [step("s1", "g2 / g1", 0.6)], "60%"),
    "a result equal to an operand": (_problem("op", "25 cookies are shared by 5 kids; each gives 5 to a friend.",
                                              [(25, ""), (5, ""), (5, "")], 0, ""),
                                     [step("s1", "g1 / g2", 5), step("s2", "s1 - g3", 0)], "0"),
    "8 - 4 = 4": (_problem("op2", "Tom had 8 cards, lost 4, then doubled what was left. And he has 4 friends.",
                           [(8, ""), (4, ""), (4, "")], 8, ""),
                  [step("s1", "g1 - g2", 4), step("s2", "s1 * 2", 8)], "8"),
    "tiny SI values": (CHARGE, [step("s1", "g1 + g2", 4.8e-19, "C")], "4.8e-19 C"),
    "twice, stated": (_problem("twice", "Toulouse has twice as many sheep as Charleston, which has 80 sheep.",
                               [(80, "")], 160, ""), [step("s1", "g1 * 2", 160)], "160"),
    "half, stated": (_problem("half", "A robe takes 2 bolts of blue fiber and half that much white fiber. Total?",
                              [(2, "")], 3, ""), [step("s1", "g1 / 2", 1), step("s2", "g1 + s1", 3)], "3"),
    "hours to minutes": (_problem("mins", "Ann reads for 2 hours. How many minutes is that?", [(2, "")], 120, ""),
                         [step("s1", "g1 * 60", 120)], "120"),
    "a percent given as its number": (_problem("pct2", "A $40 shirt costs 150% more. Price?",
                                               [(40, "USD"), (150, "percent")], 100, "USD"),
                                      [step("s1", "g1 * 150 / 100 + g1", 100, "USD")], "$100"),
    "a fraction given as a literal pair": (_problem("frac2", "I have 15 liters that are three-fifths water.",
                                                    [(15, ""), ("3/5", "")], 9, ""),
                                           [step("s1", "g1 * 3/5", 9)], "9"),
    "the eggs": (EGGS, EGGS_GOLD, "18"),
}


@pytest.mark.parametrize("name", list(HONEST))
def test_honest_chains_earn_the_top_reward(name):
    problem, steps, answer = HONEST[name]
    for mode in ("prosfi", "step_fraction"):
        r = _score(problem, steps, answer, mode)
        assert r.reward == 1.0, (name, mode, r.reason)


def test_a_batch_of_every_attack_never_reaches_the_top_level():
    problems = [p for p, _, _, _ in ATTACKS.values()]
    texts = [completion(s, a) for _, s, a, _ in ATTACKS.values()]
    results = score_batch(problems * 3, texts * 3, NO_VERIFIER)
    assert max(r.reward for r in results) < 1.0


def test_the_documented_constants_table_is_the_enforced_one():
    from pathlib import Path

    from prosfi.quant.licensed import constants_table

    doc = (Path(__file__).parent.parent / "docs" / "quantity.md").read_text(encoding="utf-8")
    table = doc.split("<!-- constants-table: begin -->\n", 1)[1].split("\n<!-- constants-table: end -->", 1)[0]
    assert table == constants_table()


def test_the_system_prompt_promises_only_what_the_rules_accept():
    from prosfi.domains.quantity import SYSTEM_PROMPT
    from prosfi.domains.quantity.chain import QuantityRules
    from prosfi.domains.quantity.prompts import system_prompt

    assert "0-10" not in SYSTEM_PROMPT and "At most 4 operations" in SYSTEM_PROMPT
    assert "At most 6 operations" in system_prompt(QuantityRules(max_ops=6))
    for number in ("60 (hour and minute", "twice", "half"):
        assert number in SYSTEM_PROMPT
