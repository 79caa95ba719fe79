"""Quantity answers and the units they are read in (docs/quantity.md, "Steps and answers" and "Units").

Reading: the spellings people and models write one number in (prefixes, bold, `\\boxed{}`, LaTeX, `$N`,
`N dollars`, unit words, a counting noun) read as that number; two numbers stay unreadable. Grading: the claim
read once in the gold's unit with the problem's one tolerance, relative to the gold's magnitude.
`final_matches_gold`: a chain's recomputed final value against the gold by the same reading. Units: the micro
prefix (both code points), reciprocal rates (`15 / h`, `200 1/USD`), inverse currency, Pint formatting.
"""

from __future__ import annotations

from decimal import Decimal
from fractions import Fraction

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from prosfi.data.problem import Problem
from prosfi.domains.quantity.answer import answer_tolerance, final_matches_gold, grade_answer, read_answer
from prosfi.quant import check_quantity, extract_givens, parse_quantity
from prosfi.quant.units import Value, format_value, make_value, unit_info
from prosfi.verdict import Status


def problem(value, unit="", tolerance=None) -> Problem:
    extra = {"tolerance": tolerance} if tolerance is not None else {}
    return Problem(id="p", kind="quantity", premises=[], answer={"value": value, "unit": unit},
                   target={"name": "answer", "unit": unit}, extra=extra)


def right(p: Problem, text: str) -> bool:
    return grade_answer(p, read_answer(text))[0]


# ------------------------------------------------------------------------------------------ reading
@pytest.mark.parametrize("text,value,unit", [
    ("18", 18, ""), ("The answer is: 18", 18, ""), ("The answer is 18.", 18, ""), ("Final answer: 18", 18, ""),
    ("The final answer is 18", 18, ""), ("Answer - 18", 18, ""), ("Answer: 18", 18, ""), ("**18**", 18, ""),
    ("**Final answer:** 18", 18, ""), ("\\boxed{18}", 18, ""), ("$\\boxed{18}$", 18, ""),
    ("The final answer is $\\boxed{18}$.", 18, ""), ("x = 18", 18, ""), ("approximately 18", 18, ""),
    ("1,000", 1000, ""), ("\\frac{1}{4}", Fraction(1, 4), ""), ("$18$", 18, ""),
    ("$18", 18, "USD"), ("$18.00", 18, "USD"), ("18 dollars", 18, "USD"), ("18 USD", 18, "USD"),
    ("USD 18", 18, "USD"), ("US$18", 18, "USD"), ("18$", 18, "USD"), ("18 US dollars", 18, "USD"),
    ("**$18**", 18, "USD"), ("\\boxed{\\$18}", 18, "USD"), ("-$5", -5, "USD"), ("$-5", -5, "USD"),
    ("25%", 25, "percent"), ("25 percent", 25, "percent"), ("25 per cent", 25, "percent"), ("25\\%", 25, "percent"),
    ("540 meters", 540, "m"), ("5 miles per hour", 5, "mi/h"), ("3.0 m/s", 3, "m/s"),
    ("3 \\mathrm{~m} \\cdot \\mathrm{s}^{-1}", 3, "m/s"), ("2.57 \\times 10^{11} \\mathrm{~J}", 257 * 10**9, "J"),
    ("$2.57 \\times 10^{11}$ J", 257 * 10**9, "J"), ("2.57 x 10^11 J", 257 * 10**9, "J"),
    ("-1.00 \\mu \\mathrm{C}", -1, "uC"), ("-1.00 μC", -1, "uC"), ("-1.00 µC", -1, "uC"),
    ("109°", 109, "degree"), ("109^{\\circ}", 109, "degree"), ("20 °C", 20, "degC"),
    ("15 / h", 15, "1/h"), ("200 1/USD", 200, "1/USD"),
])
def test_spellings_of_one_quantity_read(text, value, unit):
    claim = read_answer(text)
    assert claim.ok, claim.reason
    assert claim.value == make_value(Fraction(value), unit)


@pytest.mark.parametrize("text", ["18 or 19", "18-19", "between 18 and 19", "18 eggs or 19", "18 and 19",
                                  "\\boxed{18} \\boxed{19}", "eighteen", "", "$", "18 blorps per zorp 3",
                                  "1" * 400])
def test_two_numbers_or_none_are_unreadable(text):
    claim = read_answer(text)
    assert not claim.ok and claim.reason


@pytest.mark.parametrize("text,usd,plain,usd_per_h", [
    ("$18 per hour", True, True, True), ("$18/hour", True, True, True), ("$18 an hour", True, True, True),
    ("18 dollars per hour", True, True, True), ("18 USD/h", True, True, True), ("$18 per egg", True, True, False),
    ("18 eggs per day", False, True, False), ("$19 per hour", False, False, False), ("5 miles per hour", False, False, False),
    ("18 or 19 per hour", False, False, False),
])
def test_a_rate_reads_its_amount_for_a_plain_or_currency_gold(text, usd, plain, usd_per_h):
    """GSM8K's "$18 per hour" for an 18 USD gold (nominal units); a rate gold reads the rate."""
    claim = read_answer(text)
    assert grade_answer(problem("18", "USD"), claim)[0] is usd
    assert grade_answer(problem("18"), claim)[0] is plain
    assert grade_answer(problem("18", "USD/h"), claim)[0] is usd_per_h


def test_a_counting_noun_is_a_plain_number_not_a_bare_one():
    claim = read_answer("18 eggs")
    assert claim.ok and claim.value == Value(Fraction(18)) and claim.noun == "eggs" and not claim.bare
    assert read_answer("18").bare


# ------------------------------------------------------------------------------------------ grading
@pytest.mark.parametrize("text", ["$18", "18 dollars", "18 USD", "$18.00", "18", "USD 18", "**$18**",
                                  "The answer is: $18", "1800 cents", "\\boxed{18}"])
def test_dollars_are_right_for_a_dollar_gold(text):
    assert right(problem("18", "USD"), text)


@pytest.mark.parametrize("text", ["0.18", "$0.18", "18 eggs", "18%", "36", "18 m", "$19"])
def test_other_amounts_or_units_are_wrong_for_a_dollar_gold(text):
    ok, why = grade_answer(problem("18", "USD"), read_answer(text))
    assert not ok and why


@pytest.mark.parametrize("text,ok", [("60", True), ("60%", True), ("60 percent", True), ("0.6", False),
                                     ("6%", False), ("$60", False)])
def test_a_percent_gold(text, ok):
    assert right(problem("60", "percent"), text) is ok


@pytest.mark.parametrize("text,ok", [("540", True), ("540 meters", True), ("540 m", True), ("$540", True),
                                     ("540 eggs", True), ("540 s", True), ("540 pairs", True), ("540 dozen", True),
                                     ("0.54 km", False), ("541 m", False), ("540%", False), ("45 dozen", False)])
def test_a_plain_gold_compares_the_number_as_written(text, ok):
    """GSM8K counts are plain numbers: a unit word the gold does not have still reads as the number."""
    assert right(problem("540"), text) is ok


def test_a_percentage_keeps_its_value_against_a_plain_target():
    """A chain ending in 0.25 (plain) answered "25 percent" (the gold chains of percentage answers)."""
    assert right(problem("0.25"), "25%") and right(problem("0.25"), "25 percent") and not right(problem("25"), "25%")
    assert final_matches_gold(problem("0.25"), Value(Fraction(1, 4), unit_info("percent").dims, "percent"))[0]


# ------------------------------------------------------------------------------------------ end to end
def _score(p: Problem, steps: list, answer: str) -> float:
    import json

    from prosfi.rewards.config import RewardConfig
    from prosfi.rewards.score import score_batch

    text = f"<think>t</think>\n<steps>\n{json.dumps(steps)}\n</steps>\n<answer>{answer}</answer>"
    return score_batch([p], [text], object(), RewardConfig(mode="prosfi"))[0].reward


PERCENT = Problem.from_dict({
    "id": "pct", "kind": "quantity", "source": "gsm8k", "question": "Of 80 apples, 20 are red. What percent are red?",
    "givens": [{"id": "g1", "value": "80", "unit": "", "text": "80"}, {"id": "g2", "value": "20", "unit": "", "text": "20"}],
    "target": {"name": "share", "unit": "percent"}, "answer": {"value": "25", "unit": "percent"}})
DOLLARS = Problem.from_dict({
    "id": "usd", "kind": "quantity", "source": "gsm8k", "question": "She sells 9 eggs at $2 each. How much does she make?",
    "givens": [{"id": "g1", "value": "9", "unit": "", "text": "9"}, {"id": "g2", "value": "2", "unit": "USD", "text": "$2"}],
    "target": {"name": "income", "unit": "USD"}, "answer": {"value": "18", "unit": "USD"}})


@pytest.mark.parametrize("answer", ["25 percent", "25%", "25", "The answer is: 25%", "**25%**"])
def test_a_percentage_gold_chain_earns_the_top_reward(answer):
    """A chain computing 0.25 for a percent target, answered `25%` or `25` (the chain's value is compared with
    the gold, 0.25 == 25 percent; the answer with the gold in its unit)."""
    assert _score(PERCENT, [{"id": "s1", "expr": "g2 / g1", "value": 0.25, "unit": ""}], answer) == 1.0


@pytest.mark.parametrize("answer", ["$18", "18 dollars", "18 USD", "$18.00", "18", "Final answer: $18",
                                    "\\boxed{18}"])
def test_dollar_answers_earn_the_top_reward(answer):
    assert _score(DOLLARS, [{"id": "s1", "expr": "g1 * g2", "value": 18, "unit": "USD"}], answer) == 1.0


COUNT = Problem.from_dict({
    "id": "count", "kind": "quantity", "source": "gsm8k", "question": "A track of 60 m is run 9 times. How far?",
    "givens": [{"id": "g1", "value": "60", "unit": "", "text": "60 m"}, {"id": "g2", "value": "9", "unit": "", "text": "9"}],
    "target": {"name": "distance", "unit": ""}, "answer": {"value": "540", "unit": ""}})


@pytest.mark.parametrize("answer", ["540", "540 meters", "540 m", "The answer is: 540 meters."])
def test_a_unit_word_on_a_plain_answer_earns_the_top_reward(answer):
    assert _score(COUNT, [{"id": "s1", "expr": "g1 * g2", "value": 540, "unit": ""}], answer) == 1.0


PLAIN_GOLD_DOLLARS = Problem.from_dict({**DOLLARS.to_dict(), "id": "usd-plain", "target": {"name": "income", "unit": ""},
                                       "answer": {"value": "18", "unit": ""}})


@pytest.mark.parametrize("answer", ["$18", "18"])
def test_a_dollar_chain_for_a_plain_gold_earns_the_top_reward(answer):
    assert final_matches_gold(PLAIN_GOLD_DOLLARS, make_value(Fraction(18), "USD"))[0]
    assert _score(PLAIN_GOLD_DOLLARS, [{"id": "s1", "expr": "g1 * g2", "value": 18, "unit": "USD"}], answer) == 1.0


@pytest.mark.parametrize("answer", ["$0.18", "0.18", "$19", "18 or 19"])
def test_wrong_dollar_answers_stay_wrong(answer):
    assert _score(DOLLARS, [{"id": "s1", "expr": "g1 * g2", "value": 18, "unit": "USD"}], answer) < 0.3


@pytest.mark.parametrize("text,ok", [("540 s", True), ("9 min", True), ("0.15 h", True), ("540", False),
                                     ("540 m", False), ("540 meters", False)])
def test_a_dimensioned_gold_converts_and_refuses_other_dimensions(text, ok):
    assert right(problem("540", "s"), text) is ok


def test_a_bare_number_is_wrong_for_a_physical_unit():
    assert right(problem("80", "km/h"), "80 km/h") and right(problem("80", "km/h"), "22.2222 m/s")
    assert not right(problem("80", "km/h"), "80")


@pytest.mark.parametrize("text,ok", [("3.2e-19 C", True), ("2 e", True), ("0.32 aC", True), ("3.3e-19 C", True),
                                     ("0 C", False), ("2.56e-18 C", False), ("3.52e-19 C", False),
                                     ("3.2e-19", False), ("3.2e-19 N", False)])
def test_tolerance_is_relative_to_the_gold_magnitude(text, ok):
    """SciBench's 5% near 1e-19 C: no absolute SI floor accepts 0 C or a value 8x off; 10% off is wrong."""
    assert right(problem("3.2e-19", "C", {"rel": 0.05}), text) is ok


def test_the_default_answer_tolerance_has_no_absolute_floor():
    p = problem("3.2e-19", "C")
    assert answer_tolerance(p).rel == 1e-5
    assert right(p, "3.2e-19 C") and not right(p, "0 C") and not right(p, "3.2e-18 C")
    assert answer_tolerance(problem("1", "", {"rel": 0.05, "sigfigs": 3})).sigfigs == 3


# ------------------------------------------------------------------------------------------ chain value vs gold
@pytest.mark.parametrize("value,unit,gold,gold_unit,ok", [
    (Fraction(3, 5), "", "60", "percent", True),        # 0.6 == 60 %
    (Fraction(60), "", "60", "percent", False),          # 60 is not 60 %
    (Fraction(3, 5), "percent", "60", "percent", True),  # 0.6 shown in percent
    (Fraction(18), "", "18", "USD", True),               # a plain 18 read in the gold's currency
    (Fraction(18), "USD", "18", "USD", True),
    (Fraction(18, 100), "USD", "18", "USD", False),      # 0.18 USD is not 18 USD
    (Fraction(18, 100), "", "18", "USD", False),
    (Fraction(1, 4), "percent", "25", "USD", False),     # 25 % is not $25: a unit confusion stays a catch
    (Fraction(36), "pair", "18", "USD", False),          # 36 pairs: another dimension
    (Fraction(1800), "cent", "18", "USD", True),
    (Fraction(540), "m", "540", "", True),               # a plain gold: the number in the value's own unit
    (Fraction(540), "m", "540", "s", False),             # another dimension
    (Fraction(9), "min", "540", "s", True),
    (Fraction(0), "C", "3.2e-19", "C", False),           # no absolute floor
    (Fraction(256, 10**20), "C", "3.2e-19", "C", False),
])
def test_final_matches_gold(value, unit, gold, gold_unit, ok):
    """`value` is the number in `unit`, except for `percent`: the fraction (0.6) shown in percent."""
    v = Value(value, unit_info(unit).dims, unit) if unit == "percent" else make_value(value, unit)
    got, why = final_matches_gold(problem(gold, gold_unit), v)
    assert got is ok and (why == "") is ok


def test_final_matches_gold_uses_the_problem_tolerance_once():
    p = problem("2.57e11", "J", {"rel": 0.05})
    assert final_matches_gold(p, make_value(Fraction(262), "GJ"))[0]       # 2 % off
    assert not final_matches_gold(p, make_value(Fraction(283), "GJ"))[0]   # 10 % off
    assert not final_matches_gold(p, make_value(Fraction(257), "GN"))[0]   # another dimension
    assert final_matches_gold(problem("1"), None) == (False, "no final value")
    assert not final_matches_gold(Problem(id="x", kind="quantity", premises=[]), Value(Fraction(1)))[0]


# ------------------------------------------------------------------------------------------ property tests
AMOUNTS = st.decimals(min_value=0, max_value=10**7, places=2, allow_nan=False, allow_infinity=False)


def _spellings(d: Decimal) -> list[str]:
    plain = f"{d:f}"
    grouped = f"{d:,.2f}"
    return [f"${plain}", f"{plain} dollars", f"{plain} USD", f"${grouped}", f"USD {plain}",
            f"The answer is: ${plain}", f"**${plain}**", f"\\boxed{{${plain}}}", f"${plain} per hour"]


@settings(max_examples=150, deadline=None)
@given(AMOUNTS)
def test_any_amount_in_dollars_reads_as_usd_and_grades_right(d):
    want = make_value(Fraction(d), "USD")
    gold = problem(f"{d:f}", "USD")
    for text in _spellings(d):
        claim = read_answer(text)
        assert claim.ok and (claim.amount or claim).value == want, (text, claim.reason)
        assert grade_answer(gold, claim)[0], text
    assert right(gold, f"{d:f}")  # a bare number in the gold's currency
    if d == d.to_integral_value():
        assert right(gold, f"${int(d)}.00")
    off = problem(f"{d + 1 + d / 1000:f}", "USD")  # beyond the default rel 1e-5
    assert not right(off, f"${d:f}")


@settings(max_examples=150, deadline=None)
@given(st.integers(min_value=-10**9, max_value=10**9), st.sampled_from(["", "meters", "m", "eggs", "s"]))
def test_any_integer_with_a_unit_word_reads_as_the_number_for_a_plain_gold(n, word):
    assert right(problem(str(n)), f"{n} {word}".strip())
    assert not right(problem(str(n + 1 + abs(n) // 1000)), f"{n} {word}".strip())  # beyond rel 1e-5


@settings(max_examples=300, deadline=None)
@given(st.text(max_size=60))
def test_read_answer_never_raises(text):
    claim = read_answer(text)
    assert claim.ok or claim.reason


# ------------------------------------------------------------------------------------------ units
@pytest.mark.parametrize("text", ["6.0 \u03bcC", "6.0 \u00b5C", "6.0 uC"])  # Greek mu, micro sign, ASCII
def test_micro_prefix_both_code_points(text):
    assert parse_quantity(text) == make_value(Fraction(6), "uC")
    assert parse_quantity(text).mag == Fraction(6, 10**6)


def test_question_givens_keep_micro_units():
    q = "Charges of 6.0 μC and 4.0 µC sit 40 μm apart for 2 µs; the line holds 3 µC/m and 1.5 uC."
    got = [(g.value, g.unit) for g in extract_givens(q)]
    assert got == [("6", "uC"), ("4", "uC"), ("40", "um"), ("2", "us"), ("3", "uC/m"), ("1.5", "uC")]
    for value, unit in got:
        assert parse_quantity({"value": value, "unit": unit}).dims == unit_info(unit).dims


@pytest.mark.parametrize("claim,unit", [("15 / h", "1/h"), ("15 1/h", "1/h"), ("200 1/USD", "USD**-1"),
                                        ("5 USD/h", "USD/h"), ("2 USD**-1", "1/USD")])
def test_rate_claims_read_as_units(claim, unit):
    v = parse_quantity(claim)
    assert v.dims == unit_info(unit).dims


@pytest.mark.parametrize("unit,text", [("$", "USD"), ("usd", "USD"), ("Usd", "USD"), ("$/h", "USD/h"), ("1/$", "1/USD")])
def test_dollar_spellings_in_a_unit_field(unit, text):
    """GSM8K writes `$`; models write `usd`: a step's unit field reads them as USD."""
    assert unit_info(unit).text == text and unit_info(unit).dims == unit_info(text).dims
    assert check_quantity({"n": "9", "p": "$2"}, expr="n * p", claim={"value": 18, "unit": "$"}).status == Status.VALID


def test_rate_claims_check_valid():
    assert check_quantity({"n": "30", "t": "2 h"}, expr="n / t", claim="15 / h").status == Status.VALID
    assert check_quantity({"n": "400", "c": "2 USD"}, expr="n / c", claim="200 1/USD").status == Status.VALID
    assert check_quantity({"n": "400", "c": "2 USD"}, expr="n / c", claim="200 USD").status == Status.INVALID


def test_inverse_currency_formats_and_converts():
    inverse = Value(Fraction(2), unit_info("USD**-1").dims)
    assert format_value(inverse) == "2 1/USD"
    assert format_value(make_value(Fraction(200), "1/USD"), "1/cent") == "2 1/cent"
    assert f"{inverse.to_pint():~}" == "2 / USD" and inverse.to_pint().to("1/cent").magnitude == Fraction(1, 50)
    assert format_value(Value(Fraction(1, 2), unit_info("USD/h").dims)) == "0.5 USD/s"


def test_to_pint_formats_with_number_specs():
    q = parse_quantity("2.5 m/s").to_pint()
    assert f"{q:.3f~P}" == "2.500 m/s" and f"{q.to('km/h'):.1f~}" == "9.0 km / h"
    assert f"{q:.2e}" == "2.50e+00 meter / second" and str(q) == "2.5 meter / second"
    assert q.to("km/h").magnitude == 9  # still exact
    assert f"{parse_quantity('20 degC').to_pint().to('K'):.2f}" == "293.15 kelvin"
    assert str(parse_quantity("1/3").to_pint()) == "0.3333333333 dimensionless"


@pytest.mark.parametrize("expr,claim", [("2 * pi * r", "12.56637 m"), ("e ** x", "2.718282"),
                                        ("exp(x) - e", "0"), ("pi * r ** 2", "12.56637 m**2")])
def test_pi_and_e_are_the_constants(expr, claim):
    assert check_quantity({"r": "2 m", "x": "1"}, expr=expr, claim=claim).status == Status.VALID
