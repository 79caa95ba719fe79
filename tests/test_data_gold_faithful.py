"""The independent faithfulness check of GSM8K gold traces (`prosfi.data.gold_check`, issue #35): a trace must
compute the solution's own function of the givens, each number bound to what the solution's words say it is."""

from __future__ import annotations

import json
import subprocess
import sys
from fractions import Fraction
from pathlib import Path

import pytest

from prosfi.data import gold_check
from prosfi.data.gsm8k import equations, load_gsm8k, problem_from_record
from prosfi.data.quant_gold import constant_context


def _check(p, steps=None):
    """The check with the problem's own equations and words, as the gold builder calls it."""
    return gold_check.check(p, equations(p.extra["solution"]), constant_context(p), steps)


def _issue(p, steps=None) -> str:
    return _check(p, steps).issue


FIXTURES = Path(__file__).parent / "fixtures"
FAITHFUL = FIXTURES / "gsm8k_gold_faithful.jsonl"


def _record(n: int) -> dict:
    return json.loads(FAITHFUL.read_text(encoding="utf-8").splitlines()[n])


def _problem(n: int):
    return problem_from_record(_record(n), f"gsm8k-test-{n}", with_gold=False)


def _steps(*exprs: str) -> list[dict]:
    return [{"id": f"s{k + 1}", "expr": e, "value": 0, "unit": ""} for k, e in enumerate(exprs)]


# ------------------------------------------------------------------ the issue's records
def test_two_trains_are_not_two_days():
    """gsm8k-test-0016: "460 miles / 2 trains"; the old gold divided by the given "two days"."""
    p = _problem(0)
    assert [g["text"] for g in p.givens] == ["Two", "80 miles", "150 miles", "two days"]
    wrong = _check(p, _steps("g1 * g2", "g3 * g1", "s2 + s1", "s3 / g4"))
    assert wrong.issue.startswith("faithful: mismatch")
    assert _issue(p, _steps("g1 * g2", "g3 * g1", "s2 + s1", "s3 / g1")) == ""


def test_a_distance_is_not_the_speed_asked_for():
    """gsm8k-test-0019: the old gold answered the 6 miles left for the 6 mph asked."""
    p = _problem(1)
    assert _issue(p, _steps("g1 - g3 - g4")).startswith("faithful: mismatch")
    # the solution's own function: (12 - 4 - 2) / (12 / 4 mph - 1 - 1)
    honest = _steps("g1 / g5", "s1 - g2 - g2", "g1 - g3 - g4", "s3 / s2")
    assert _issue(p, honest) == ""
    # the "4 miles" walked for the "4 miles per hour" (the two 4s swapped): another function
    assert _issue(p, _steps("g1 / g3", "s1 - g2 - g2", "g1 - g5 - g4", "s3 / s2")) != ""


def test_one_fifty_percent_is_not_the_other():
    """gsm8k-test-0385: the old gold used "50% ... boys" for both halvings (`52/2`, `26/2`); the solution's words
    do not say which of the three halves (boys, girls, "half the people") each 2 is: dropped, never guessed."""
    p = _problem(2)
    assert [g["text"] for g in p.givens][:4] == ["52", "50%", "50%", "half"]
    assert _issue(p, _steps("g1 * g2", "s1 * g2", "s2 + g5")) != ""


def test_seven_hours_are_not_seven_days():
    """gsm8k-test-0803: "2 hours * 7 days"; the old gold multiplied the 2 hours by the 7 hours played before."""
    p = _problem(3)
    assert [g["text"] for g in p.givens] == ["30 hours", "half", "2 weeks", "2 hours"]
    assert _issue(p, _steps("g3 * 7", "g2 * s1", "g4 * s2", "g1 - s2 - s3")).startswith("faithful: mismatch")
    assert _issue(p, _steps("g3 * 7", "g2 * s1", "g4 * 7", "g1 - s2 - s3")) == ""


def test_half_the_swim_is_not_the_speed():
    """gsm8k-test-0945: the old gold divided the 12 miles by "half as long" where the solution divides by the
    2 mph; the three 2s (2 mph and two halves) are not settled by the words: dropped."""
    p = _problem(4)
    assert [g["text"] for g in p.givens][3:] == ["half", "half"]
    assert _issue(p, _steps("g1 * g3", "s1 * g4", "s2 * g4", "g1 - s1", "s2 + s3 + s4")) != ""


def test_a_king_bed_is_not_a_king_load():
    """gsm8k-test-1056: "4/2 loads of twin sheets + 1 load for king size": the 1 is the king bed over the king
    set per load; the old gold's literal 2 for the "2 twin sets" and either 1 are dropped."""
    p = _problem(5)
    assert _issue(p, _steps("g1 / 2", "s1 + g2", "s2 * 52")) != ""
    assert _issue(p, _steps("g1 / g3", "s1 + g2", "s2 * 52")) != ""


def test_a_days_total_is_not_a_unit_price():
    """gsm8k-test-1156: "$40 x 2" is the $40 sale price of one device (the latest 40), not Monday's $40 cost;
    the old gold multiplied Monday's total by the devices."""
    p = _problem(6)
    assert _issue(p, _steps("g3 * g1", "g4 * g1", "s2 + s1", "s1 * g3", "s1 * g4", "s5 + s4", "s6 - s3")) != ""


def test_the_builder_drops_the_unfaithful_traces():
    problems = load_gsm8k(FAITHFUL)
    assert len(problems) == 7
    for p in problems:
        steps = p.extra.get("gold_steps")
        if steps is not None:  # built to the meaning of the solution, or dropped with the reason recorded
            assert _issue(p, steps) == "", p.id
    assert problems[0].extra["gold_issue"].startswith("faithful: mismatch")
    assert problems[1].extra["gold_issue"].startswith("faithful: mismatch")
    assert problems[2].extra["gold_issue"].startswith("faithful: ambiguous")
    assert all("gold_steps" not in p.extra for p in problems[3:])  # 0803, 0945, 1056, 1156: dropped


def test_a_number_computed_twice_is_the_latest_and_every_result_is_used():
    """gsm8k-test-0020: two results of 9 (water, orange drink left); "9 x 2/3" takes the latest, "9 + 6" the
    other (a solution computes nothing it leaves unused); the swapped trace is another function."""
    p = problem_from_record(_rec(
        "I have 10 liters of orange drink that are two-thirds water and I wish to add it to 15 liters of pineapple "
        "drink that is three-fifths water. But as I pour it, I spill one liter of the orange drink. How much water "
        "is in the remaining 24 liters?",
        "There are 15 x 3/5 = <<15*3/5=9>>9 liters of water from the 15 liters pineapple drink.\n"
        "After 1 liter of orange drink was spilled, there were 10 - 1 = <<10-1=9>>9 liters of orange drink left.\n"
        "Out of the 9 liters, 9 x 2/3 = <<9*2/3=6>>6 liters are water.\n"
        "Thus, there are a total of 9 + 6 = <<9+6=15>>15 liters of water out of the 24 liters.\n#### 15"),
        "t", with_gold=False)
    assert _issue(p, _steps("g4 * g3", "g1 - g5", "g2 * s2", "s1 + s3")) == ""
    assert _issue(p, _steps("g4 * g3", "g1 - g5", "g2 * s1", "s2 + s3")).startswith("faithful: mismatch")


def test_the_five_pies_are_the_5_apple_pies():
    """"baked 5 apple pies ... set the five pies out": a definite "the N noun" is the earlier given again."""
    p = problem_from_record(_rec(
        "Grandma Jones baked 5 apple pies for the fireman's luncheon.  She cut each pie into 8 pieces and set the "
        "five pies out on the buffet table for the guests to serve themselves.  At the end of the evening, after "
        "the guests had taken and eaten their pieces of pie, there were 14 pieces of pie remaining.  How many "
        "pieces were taken by the guests?",
        "To start the evening, there were 5 pies, each with 8 pieces, which is 5*8=<<5*8=40>>40 pieces of pie.\n"
        "If only 14 remained, then 40-14=<<40-14=26>>26 pieces of pie had been taken by guests.\n#### 26"),
        "t", with_gold=False)
    assert _issue(p, _steps("g1 * g2", "s1 - g4")) == ""
    assert _issue(p, _steps("g3 * g2", "s1 - g4")) == ""


def test_a_count_no_step_needs_is_not_preferred():
    """gsm8k-test-0804: "Two cars ... after 2 hours", "60*2 ... 70*2": the second 2 is not "Two cars" because
    it is otherwise unused (a question may state a count no step uses): the words leave it open, dropped."""
    p = problem_from_record(_rec(
        "Two cars are driving on a highway.  The first car is traveling at an average speed of 60 miles per hour "
        "when the second car passes it at an average speed of 70 miles per hour.  If both cars continue on the "
        "highway at the same speed, how many miles will separate them after 2 hours?",
        "In two hours, the first car will have traveled 60*2 = <<60*2=120>>120 miles.\n"
        "Similarly, the second car will have traveled 70*2 = <<70*2=140>>140 miles.\n"
        "Thus, the cars are separated by 140 - 120 = <<140-120=20>>20 miles after two hours.\n#### 20"),
        "t", with_gold=False)
    assert _issue(p, _steps("g2 * g4", "g3 * g1", "s2 - s1")) != ""


def test_twice_multiplies_and_an_average_divides_by_the_count():
    """"18 - 2" is not 18 - "twice" (a line writing "twice" and a bare 2 cites it); "On average they ate 45 because 90 / 2" divides by the two eaters, not by the
    given "two roll-ups wide" the line does not name."""
    p = problem_from_record(_rec(
        "Marcell and Beatrice are having a contest to see who can eat the most fruit roll-ups, so they unroll as "
        "many as they can find. Unfortunately, someone makes a mistake and Beatrice's was two roll-ups wide and 24 "
        "rolls up long while Marcell's was 3 roll-ups wide and 14 roll-ups long. If they both ate their entire "
        "amount, how many did they eat on average?",
        "Beatrice ate 48 because 24 x 2 = <<24*2=48>>48.\nMarcell ate 42 because 14 x 3 = <<14*3=42>>42\n"
        "In total they ate 90 because 48 + 42 = <<48+42=90>>90\nOn average they ate 45 because 90 / 2 = <<90/2=45>>45"
        "\n#### 45"), "t", with_gold=False)
    assert _issue(p, _steps("g2 * g1", "g4 * g3", "s1 + s2", "s3 / 2")) == ""
    assert _issue(p, _steps("g2 * g1", "g4 * g3", "s1 + s2", "s3 / g1")) != ""
    q = problem_from_record(_rec(
        "Joseph had 9 books. He used to have twice as many. He lost 2 books. How many books did he have then?",
        "Joseph used to have twice as many, 9 * 2 = <<9*2=18>>18 books.\nAfter he lost some he remained with "
        "18 - 2 = <<18-2=16>>16 books.\n#### 16"), "t", with_gold=False)
    assert [g["text"] for g in q.givens] == ["9", "twice", "2"]
    assert _issue(q, _steps("g1 * g2", "s1 - g3")) == ""
    assert _issue(q, _steps("g1 * g3", "s1 - g2")) != ""


def test_twice_is_not_cited_for_another_two():
    """"The math and science book weigh 2 pounds each so 2*2": a trace citing "twice" for the two books is
    dropped (a multiplier word stays fixed at the compared points, so it is checked at one where it moves)."""
    p = problem_from_record(_rec(
        "Sarah's math and science books weigh 2 pounds each, her French book weighs 5 pounds, her English book "
        "weighs 3 pounds and her history book weighs twice as much as her English book. How much do her books "
        "weigh in total?",
        "The math and science book weigh 2 pounds each so they weigh 2*2 = <<2*2=4>>4 pounds\n"
        "Her history books weighs twice the amount of her 3 pound English book so it weighs 2*3 = <<2*3=6>>6 "
        "pounds\nWhen you add the weight of all of her textbooks together, they weight 4 +5+3+6 = <<4+5+3+6=18>>18 "
        "pounds\n#### 18"), "t", with_gold=False)
    assert [g["text"] for g in p.givens] == ["2 pounds", "5 pounds", "3 pounds", "twice"]
    assert _issue(p, _steps("g1 * g4", "g4 * g3", "s1 + g2 + g3 + s2")) != ""
    assert _issue(p, _steps("g1 * 2", "g4 * g3", "s1 + g2 + g3 + s2")) == ""


def test_dollars_written_after_an_annotation_name_its_result():
    """gsm8k-test-0799: in "2 bagels cost 2 * $1 = $<<2*1=2>>2" the "$2" is the result, not the operand 2."""
    p = problem_from_record(_rec(
        "A loaf of bread at the bakery costs $2. Bagels cost $1 each. How much more do 3 loaves of bread cost than "
        "2 bagels?",
        "3 loaves of bread cost 3 * $2 = $<<3*2=6>>6.\n2 bagels cost 2 * $1 = $<<2*1=2>>2.\n"
        "The loaves of bread cost $6 - $2 = $<<6-2=4>>4 more than the bagels.\n#### 4"), "t", with_gold=False)
    assert _issue(p, _steps("g3 * g1", "g4 * g2", "s1 - s2")) == ""
    assert _issue(p, _steps("g3 * g1", "g1 * g2", "s1 - s2")) != ""


# ------------------------------------------------------------------ how the solution is read
def test_words_after_a_number_bind_it():
    assert gold_check.number_words("The average is 460 miles / 2 trains = <<460/2=230>>230 miles/train",
                                   Fraction(2)) == {"train"}
    assert "$" in gold_check.number_words("16 bottles * $2 per bottle = $<<16*2=32>>32", Fraction(2))
    assert "first" in gold_check.number_words("His first 3 customers buy 3 * 1 = <<3*1=3>>3 DVDs.",
                                              Fraction(3))


def _rec(question: str, solution: str) -> dict:
    return {"question": question, "answer": solution}


def test_a_restated_quantity_moves_as_one():
    """"$5 for 8 weeks. At the end of the 8 weeks": one quantity said twice, either may be cited."""
    p = problem_from_record(_rec(
        "Bailey starts with a certain amount of money. Then she receives a weekly allowance of $5 for 8 weeks. "
        "At the end of the 8 weeks, if she has a total of $100, how much money did Bailey start with?",
        "In 8 weeks, Bailey receives $5 * 8 = $<<5*8=40>>40 in allowance\n"
        "Bailey started with $100 - $40 = $<<100-40=60>>60\n#### 60"), "t", with_gold=False)
    assert _issue(p, _steps("g1 * g2", "g4 - s1")) == ""
    assert _issue(p, _steps("g1 * g3", "g4 - s1")) == ""
    assert _issue(p, _steps("g1 * g2", "s1 - g4")) != ""  # another function


def test_unsettled_same_valued_givens_drop_the_trace():
    """Two 2s the solution's words do not tell apart: whichever the trace cites, it is a guess."""
    p = problem_from_record(_rec(
        "Jean has 30 lollipops. Jean eats 2 of the lollipops. With the remaining lollipops, Jean wants to "
        "package 2 lollipops in one bag. How many bags can Jean fill?",
        "Jean has 30 - 2 = <<30-2=28>>28 lollipops\nJean can fill up 28 / 2 = <<28/2=14>>14 bags with "
        "lollipops\n#### 14"), "t", with_gold=False)
    for steps in (_steps("g1 - g2", "s1 / g3"), _steps("g1 - g3", "s1 / g2")):
        assert _issue(p, steps).startswith("faithful: ambiguous")


def test_dollars_are_never_added_to_a_percentage():
    """"100 - 30" after a "$30 discount" of a "30%": the $30 (the percentage would not give dollars)."""
    p = problem_from_record(_rec(
        "John adopts a dog.  He takes the dog to the groomer, which costs $100.  The groomer offers him a 30% "
        "discount for being a new customer.  How much does the grooming cost?",
        "The groomer gave a 100*.3=$<<100*.3=30>>30 discount\nSo the grooming cost 100-30=$<<100-30=70>>70\n"
        "#### 70"), "t", with_gold=False)
    assert _issue(p, _steps("g1 * g2", "g1 - s1")) == ""


def test_a_solution_that_does_not_hold_checks_nothing():
    p = problem_from_record(_rec("Tom has 3 apples and buys 4 more. How many apples does he have?",
                                 "He has 3 + 4 = <<3+4=8>>8 apples.\n#### 8"), "t", with_gold=False)
    assert _issue(p, _steps("g1 + g2")).startswith("faithful: unread")


@pytest.mark.parametrize("name", ["gsm8k_test_head.jsonl"])
def test_every_kept_gold_trace_passes_the_check(name):
    problems = load_gsm8k(FIXTURES / name)
    kept = [p for p in problems if "gold_steps" in p.extra]
    assert len(kept) >= 80  # 91 of 150 at the time of writing
    for p in kept:
        assert _issue(p) == "", p.id
    dropped = [p for p in problems if str(p.extra.get("gold_issue", "")).startswith("faithful:")]
    assert dropped  # the check does drop traces here (0016, 0019 among them)


# ------------------------------------------------------------------ import order (#35, item 3)
_GOLD_SCRIPT = """
import json, sys
{pre}
from prosfi.data.gsm8k import load_gsm8k
out = {{}}
for path in sys.argv[1:]:
    for p in load_gsm8k(path):
        out[p.id] = [p.extra.get("gold_steps"), p.extra.get("gold_issue")]
print(json.dumps(out, sort_keys=True))
"""


def test_gold_does_not_depend_on_import_order():
    paths = [str(FIXTURES / n) for n in ("gsm8k_test_sample.jsonl", "gsm8k_train_small.jsonl",
                                         "gsm8k_gold_faithful.jsonl")]
    outs = []
    for pre in ("", "import prosfi.domains.quantity"):
        run = subprocess.run([sys.executable, "-c", _GOLD_SCRIPT.format(pre=pre), *paths], capture_output=True,
                             text=True, timeout=300, check=True)
        outs.append(json.loads(run.stdout))
    assert outs[0] == outs[1]
    assert any(v[0] for v in outs[0].values())  # some gold is built at all
