"""Quantity chains judged as the one function they compute (issue #34; docs/quantity.md, "Composites").

Each rule is tested on its own (the algebra, then a chain it refuses and an honest chain it keeps), and each
family of attacks the issue lists is kept as a regression: below the top reward in both chain modes.
"""

from __future__ import annotations

import re
from fractions import Fraction
from pathlib import Path

import pytest

from prosfi.chain import ChainConfig
from prosfi.data.problem import Problem
from prosfi.domains.quantity.composite import Algebra, Collapse, Symbols, compose_expr, symbol
from prosfi.domains.quantity.opaque import opaque_table
from prosfi.quant.expr import parse_expr
from prosfi.quant.licensed import allowed_constant, concepts, is_licensed_multiple
from prosfi.rewards.config import RewardConfig
from prosfi.rewards.score import score_batch
from quant_chain_support import completion, step

NO_VERIFIER = object()
MODES = ("prosfi", "step_fraction")


def _problem(pid, question, givens, answer, unit="", **extra):
    return Problem.from_dict({
        "id": pid, "kind": "quantity", "source": "gsm8k", "question": question,
        "givens": [{"id": f"g{i + 1}", "value": str(v), "unit": u, "text": f"{v} {u}".strip()}
                   for i, (v, u) in enumerate(givens)],
        "target": {"name": "answer", "unit": unit}, "answer": {"value": str(answer), "unit": unit}, **extra})


def _reward(problem, steps, answer, mode="prosfi", chain=None):
    cfg = RewardConfig(mode=mode)
    return score_batch([problem], [completion(steps, answer)], NO_VERIFIER, cfg, chain_config=chain)[0]


# ------------------------------------------------------------------------------------------ the algebra
def _compose(chain, givens=("g1", "g2", "g3")):
    syms = Symbols(7)
    alg = Algebra(syms)
    env = {g: symbol(syms.of(("given", g), g, "given")) for g in givens}
    for sid, expr in chain:
        env[sid] = compose_expr(alg, parse_expr(expr), env, {})
    return alg, env


@pytest.mark.parametrize("chain", [
    [("s1", "g1 * g2"), ("s2", "g2 + s1 / g1")],          # 2 * g2: g1 cancels across two steps
    [("s1", "g1 * 60"), ("s2", "s1 / 60")],               # a literal cancels
    [("s1", "g1 * 2 * pi / pi")],                         # pi / pi, a free factor
    [("s1", "g1 / g2"), ("s2", "g3 / g2"), ("s3", "s1 / s2")],
    [("s1", "g1 + g2"), ("s2", "s1 - g2")],               # g2 is gone
    [("s1", "g1 / (g1 + g2)"), ("s2", "g2 / (g1 + g2)"), ("s3", "s1 + s2")],  # the sum cancels to 1
    [("s1", "g1 - g2 % g3"), ("s2", "s1 + g2 % g3")],     # an atom cancels
], ids=lambda c: " ; ".join(e for _, e in c))
def test_a_collapsing_composite_is_seen(chain):
    with pytest.raises(Collapse):
        _compose(chain)


@pytest.mark.parametrize("chain", [
    [("s1", "g1 + g2"), ("s2", "g1 * g3"), ("s3", "s2 + g1"), ("s4", "s3 - s1")],  # a profit: g1 leaves a term, stays
    [("s1", "g1 * g2 / 100"), ("s2", "g1 - s1")],
    [("s1", "g1 / g3"), ("s2", "g2 / g3"), ("s3", "s1 + s2")],                     # one denominator
    [("s1", "(g1 + g2) / g3"), ("s2", "s1 * g2")],
], ids=lambda c: " ; ".join(e for _, e in c))
def test_an_honest_composite_does_not_collapse(chain):
    _compose(chain)


def test_like_terms_that_merge_are_recorded_with_their_multiple():
    _, env = _compose([("s1", "g1 + g2"), ("s2", "s1 + g1")])
    assert [(m.term, m.multiple) for m in env["s2"].merges] == [("g1", Fraction(2))]


def test_identities_read_literals_at_their_values():
    alg, env = _compose([("s1", "g1 * 2 * 0.5"), ("s2", "g1 * 3")])
    assert alg.equal(env["s1"], env["g1"]) and not alg.equal(env["s2"], env["g1"])
    assert alg.is_constant(_compose([("s1", "2 * 3")])[1]["s1"])


# ------------------------------------------------------------------------------------------ chains
BOXES = _problem("boxes", "A shelf has 6 boxes with 4 books in each box. How many books are on the shelf?",
                 [(6, ""), (4, "")], 8)
PROFIT = _problem("profit", "Josh buys a house for $80 and puts in $50 in repairs. This increased the value of the "
                  "house by 150%. How much profit did he make?", [(80, "USD"), (50, "USD"), (150, "percent")], 70,
                  "USD")
MORE = _problem("more", "Bob has 7 marbles. Ann has 5 more than Bob. How many marbles do they have together?",
                [(7, ""), (5, "")], 19)
SUMS = _problem("sums", "A farm has 7 cows and 5 pigs. How many animals?", [(7, ""), (5, "")], 19)


@pytest.mark.parametrize("mode", MODES)
def test_a_cancellation_across_two_steps_earns_no_top_reward(mode):
    r = _reward(BOXES, [step("s1", "g1 * g2", 24), step("s2", "g2 + s1 / g1", 8)], "8", mode)
    assert r.reward < 1.0 and "collapse" in r.reason


def test_switching_the_rules_off_lets_the_cancellation_through():
    """The ablation switches work alone: with `collapse` off, the cancellation's merge (g2 + g2) still stops
    it; with `merge` off too it earns the top, so these two rules, and only they, stop it."""
    steps = [step("s1", "g1 * g2", 24), step("s2", "g2 + s1 / g1", 8)]
    r = _reward(BOXES, steps, "8", chain=ChainConfig(quantity_off="collapse"))
    assert r.reward < 1.0 and "merges like terms" in r.reason
    assert _reward(BOXES, steps, "8", chain=ChainConfig(quantity_off="collapse,merge")).reward == 1.0


@pytest.mark.parametrize("mode", MODES)
def test_like_terms_merged_into_an_unstated_multiple_earn_no_top_reward(mode):
    r = _reward(SUMS, [step("s1", "g1 + g2", 12), step("s2", "s1 + g1", 19)], "19", mode)
    assert r.reward < 1.0 and "merges like terms" in r.reason


def test_a_comparison_licenses_counting_its_base_twice():
    assert _reward(MORE, [step("s1", "g1 + g2", 12), step("s2", "s1 + g1", 19)], "19").reward == 1.0


def test_an_honest_profit_keeps_the_top_reward():
    steps = [step("s1", "g1 + g2", 130, "USD"), step("s2", "g1 * g3", 120, "USD"), step("s3", "s2 + g1", 200, "USD"),
             step("s4", "s3 - s1", 70, "USD")]
    assert _reward(PROFIT, steps, "$70").reward == 1.0


# ------------------------------------------------------------------------------------------ opaque operators
LEFTOVER = _problem("leftover", "16 cookies are shared among 3 kids equally. How many cookies are left over?",
                    [(16, ""), (3, "")], 1)
PLUS_ONE = _problem("plus-one", "Sam reads 16 pages and 3 more chapters of 5 pages. How many pages does he read?",
                    [(16, ""), (3, ""), (5, "")], 6)
CLAMP = _problem("clamp", "Ann has 7 apples and Bob has 9 apples. How many apples does Bob have?",
                 [(7, ""), (9, "")], 9)


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("problem,steps,answer", [
    (PLUS_ONE, [step("s1", "g3 + g1 % g2", 6)], "6"),                   # 16 % 3: a free 1
    (PLUS_ONE, [step("s1", "g1 // g2", 5), step("s2", "s1 + 1", 6)], "6"),  # // where nothing asks for it
    (CLAMP, [step("s1", "max(g1 * 1, g2)", 9)], "9"),                   # a clamp to a stated number
    (PLUS_ONE, [step("s1", "round(g1 / g2)", 5), step("s2", "s1 + 1", 6)], "6"),
], ids=["mod offset", "floordiv unasked", "max clamp", "round inside"])
def test_an_opaque_operator_outside_its_licence_earns_no_top_reward(problem, steps, answer, mode):
    assert _reward(problem, steps, answer, mode).reward < 1.0


def test_a_remainder_asked_for_keeps_the_top_reward():
    assert _reward(LEFTOVER, [step("s1", "g1 % g2", 1)], "1").reward == 1.0


def test_the_documented_opaque_table_is_the_enforced_one():
    doc = (Path(__file__).parent.parent / "docs" / "quantity.md").read_text(encoding="utf-8")
    assert opaque_table() in doc


# ------------------------------------------------------------------------------------------ licences
@pytest.mark.parametrize("text,value", [
    ("The first leg of the trip with his dog was 30 miles. How far did they go in total?", 4),
    ("June has 30 stickers and uses 2 each day. How many are left?", 30),
    ("He printed a 3D model that took 5 hours. How long did 2 models take?", 24),
    ("She rode a double-decker bus 3 times. How many rides?", 2),
    ("He held 3 balls in both hands. How many balls?", 2),
])
def test_a_licence_word_in_another_sense_licenses_nothing(text, value):
    assert not is_licensed_multiple(value, text)
    if value not in (2,):
        assert allowed_constant(Fraction(value), text) is None


def test_licence_words_in_their_own_sense_still_license():
    assert "30-day month" in concepts("In June she reads 2 pages each day.")
    assert is_licensed_multiple(4, "A dog has 4 legs. How many legs do 3 dogs have?")
    assert is_licensed_multiple(2, "Both of them bought 3 apples.")
    assert "day" in concepts("It ran for 3 d.")


QUARTER = _problem("quarter", "A tank holds 80 liters. 25% of it is used. How many liters are used?",
                   [(80, ""), (25, "percent")], 20)
QUARTER_X4 = _problem("quarter-x4", "Ann used 25% of her paint, 80 liters. How much paint is 4 times that?",
                      [(80, ""), (25, "percent")], 320)


def test_a_reciprocal_of_a_percentage_is_a_divisor_only():
    assert _reward(QUARTER, [step("s1", "g1 / 4", 20)], "20").reward == 1.0
    assert _reward(QUARTER_X4, [step("s1", "g1 * 4", 320)], "320").reward < 1.0


SMALL_PCT = _problem("small-pct", "Of 500 people, 3 are left-handed. What percentage is left-handed?",
                     [(500, ""), (3, "")], "0.6", "percent")


@pytest.mark.parametrize("mode", MODES)
def test_a_fraction_is_not_read_as_the_percent_number(mode):
    """0.6 % is 0.006 or the percent number 0.6 written `* 100`; a bare 0.6 computed as a fraction is 60 %."""
    assert _reward(SMALL_PCT, [step("s1", "g2 / g1 * 100", 0.6)], "0.6%", mode).reward == 1.0
    assert _reward(SMALL_PCT, [step("s1", "g2 / g1", 0.006)], "0.6%", mode).reward == 1.0
    wrong = _problem("small-pct-wrong", SMALL_PCT.question, [(5, ""), (3, "")], "0.6", "percent")
    assert _reward(wrong, [step("s1", "g2 / g1", 0.6)], "0.6%", mode).reward < 1.0


# ------------------------------------------------------------------------------------------ the reference
SOLVED = _problem("solved", "Tom has 5 bags with 4 apples each and eats 8 apples. How many apples are left?",
                  [(5, ""), (4, ""), (8, "")], 12,
                  solution="He has 5*4=<<5*4=20>>20 apples.\nHe has 20-8=<<20-8=12>>12 left.\n#### 12")
OTHER = [step("s1", "g3 + g2", 12)]  # 8 + 4: the right number, another function of the givens


@pytest.mark.parametrize("mode", MODES)
def test_coincidental_arithmetic_is_not_the_reference_function(mode):
    """8 + 4 is 12 like 5 * 4 - 8: only the function tells them apart."""
    honest = [step("s1", "g1 * g2", 20), step("s2", "s1 - g3", 12)]
    assert _reward(SOLVED, honest, "12", mode).reward == 1.0
    r = _reward(SOLVED, OTHER, "12", mode)
    assert r.reward < 1.0 and "reference" in r.reason


def test_the_reference_can_be_switched_off():
    assert _reward(SOLVED, OTHER, "12", chain=ChainConfig(quantity_reference="off")).reward == 1.0
    assert _reward(SOLVED, OTHER, "12", chain=ChainConfig(quantity_off="reference")).reward == 1.0


def test_a_physics_gold_chain_is_its_own_reference():
    from prosfi.data.physics import generate
    from prosfi.data.quant_gold import gold_completion

    problems = [p for d in ("easy", "medium", "hard") for p in generate(d, 6, seed=3)]
    results = score_batch(problems, [gold_completion(p) for p in problems], NO_VERIFIER, RewardConfig())
    assert [r.reward for r in results] == [1.0] * len(problems)


# ------------------------------------------------------------------------------------------ settings
def test_quantity_settings_are_judged_when_the_config_is_built():
    with pytest.raises(ValueError, match=re.escape("trials must be an int in 0..16")):
        ChainConfig(quantity_trials=17)
    with pytest.raises(ValueError, match="unknown rule bogus"):
        ChainConfig(quantity_off="merge,bogus")
    with pytest.raises(ValueError, match="'auto' or 'off'"):
        ChainConfig(quantity_reference="sometimes")


# ------------------------------------------------------------------------------------------ bounds
def _long_chain(exprs, givens):
    from prosfi.quant import evaluate
    from prosfi.quant.units import Value

    env = {f"g{i + 1}": Value(Fraction(v)) for i, v in enumerate(givens)}
    steps = []
    for i, e in enumerate(exprs):
        v = evaluate(parse_expr(e), env)
        env[f"s{i + 1}"] = v
        steps.append(step(f"s{i + 1}", e, int(v.mag) if v.mag.denominator == 1 else float(f"{float(v.mag):.9g}")))
    return steps, env[f"s{len(exprs)}"]


def test_a_64_step_chain_is_judged_and_a_composite_past_the_bounds_is_refused():
    """Exact composites stay small enough to judge on long chains; one that grows past the bounds (a square of
    a square ...) is refused as too large to judge, never passed (the process-level bound is pytest's timeout)."""
    steps, last = _long_chain(["g1 * g2"] + [f"s{i} * g{1 + i % 3}" for i in range(1, 64)], ("3", "5", "7"))
    p = _problem("long", "Ann has 3 boxes, 5 bags and 7 cups. How many?", [(3, ""), (5, ""), (7, "")],
                 str(last.mag)[:90] if len(str(last.mag)) <= 90 else 1)
    assert _reward(p, steps, str(last.mag)).reward in (0.1, 0.3, 1.0)
    steps, last = _long_chain(["g1 * g2"] + [f"s{i} * s{i}" for i in range(1, 8)], ("1.01", "1.02"))
    answer = f"{float(last.mag):.6f}"
    p = _problem("squares", "A price grows by 1.01 and 1.02. What is it after squaring 7 times?",
                 [("1.01", ""), ("1.02", "")], answer, tolerance={"rel": 1e-4})
    r = _reward(p, steps, answer)
    assert r.reward < 1.0 and "too large to judge" in r.reason
