"""GSM8K's public JSONL -> quantity problems: equations read from annotations and plain text, literals
grounded, unusable records skipped with the reason, gold chains that earn the top reward."""

from __future__ import annotations

import json
from fractions import Fraction
from pathlib import Path

import pytest

from prosfi.cli import main
from prosfi.data.gsm8k import LoadReport, equations, final_answer, load_gsm8k, normalise
from prosfi.data.quant_gold import gold_completion

SAMPLE = Path(__file__).parent / "fixtures" / "gsm8k_test_sample.jsonl"  # real records, MIT (see .SOURCE.md)


def _verifier():
    from prosfi.verify.config import VerifierConfig
    from prosfi.verify.verifier import Verifier

    return Verifier(VerifierConfig(workers=0))


@pytest.mark.parametrize("text,expr,result,origin", [
    ("Janet sells 16 - 3 - 4 = <<16-3-4=9>>9 duck eggs a day.", "16-3-4", 9, "annotation"),
    ("came out to 80,000+50,000=$<<80000+50000=130000>>130,000", "80000+50000", 130000, "annotation"),
    ("so she will need 60/15 = 4 containers of ice cream", "60/15", 4, "text"),
    ("Raymond does 1/2*400 = 200 pounds of laundry.", "1/2*400", 200, "text"),
    ("The cost is 6 \u00d7 $2.50 = 15 dollars", "6 * 2.50", 15, "text"),
    ("Charlie has 54 \u2212 37 = 17 stickers left.", "54 - 37", 17, "text"),
    ("which is 18 \u00f7 3 = 6 packages", "18 / 3", 6, "text"),
    ("She has 100 x 2 = 200 coins", "100 * 2", 200, "text"),
])
def test_equations_are_read_from_annotations_and_plain_text(text, expr, result, origin):
    eqs = equations(text + "\n#### 1")
    assert [(e.expr, e.result, e.origin) for e in eqs] == [(expr, Fraction(result), origin)]


def test_plain_text_that_restates_an_annotation_or_is_algebra_is_not_an_equation():
    assert [e.origin for e in equations("16 - 3 - 4 = <<16-3-4=9>>9 eggs")] == ["annotation"]
    assert equations("The team played (L+8) + L = 2L + 8 = 22 games.") == []
    assert equations("Let X be the price. X - X*25% = $19.50.") == []
    assert normalise("200 GB * 40%") == ("200 * (40/100)", {"40"})


def test_final_answer_allows_commas_and_dollars():
    assert final_answer("...\n#### 1,200") == 1200
    assert final_answer("...\n#### $18.50") == Fraction("18.5")
    assert final_answer("no final line") is None


def test_real_records_load_with_ids_by_line_and_gold_chains_that_cite_givens():
    report = LoadReport()
    problems = load_gsm8k(SAMPLE, report=report)
    assert [p.id for p in problems] == [f"gsm8k-gsm8k_test_sample-{i:04d}" for i in range(6)]
    assert report.loaded == 6 and not report.skipped
    janet = problems[0]
    assert janet.kind == "quantity" and janet.answer == {"value": "18", "unit": "USD"}
    steps = janet.extra["gold_steps"]
    by_value = {g["value"]: g["id"] for g in janet.givens}
    assert steps[0]["expr"] == f"{by_value['16']} - {by_value['3']} - {by_value['4']}" and steps[0]["value"] == 9
    assert steps[-1]["expr"].startswith("s1 * ") and steps[-1]["value"] == 18 and steps[-1]["unit"] == "USD"
    # Kyle's discount is solved by algebra (X - X*25% = $19.50): no computation reaches 26, so no gold chain
    kyle = problems[5]
    assert "gold_steps" not in kyle.extra and kyle.extra["gold_issue"].startswith("answer")
    for p in problems:
        p.validate()


def test_every_gold_chain_of_the_sample_earns_the_top_reward():
    from prosfi.rewards import score_batch

    problems = [p for p in load_gsm8k(SAMPLE) if "gold_steps" in p.extra]
    assert len(problems) >= 4
    with _verifier() as v:
        results = score_batch(problems, [gold_completion(p) for p in problems], v)
    assert [r.reward for r in results] == [1.0] * len(problems), [r.explain() if hasattr(r, "explain") else r
                                                                   for r in results]


def test_a_number_the_question_never_states_stays_ungrounded(tmp_path):
    # cards in a deck are a fact no word pair of the table licenses (52 needs "week" and "year")
    rec = {"question": "Ann shuffles 3 decks of cards together. How many cards are in the pile?",
           "answer": "A deck has 52 cards, so the pile has 3*52=<<3*52=156>>156 cards\n#### 156"}
    path = tmp_path / "deck.jsonl"
    path.write_text(json.dumps(rec) + "\n", encoding="utf-8")
    report = LoadReport()
    (p,) = load_gsm8k(path, report=report)
    assert "gold_steps" not in p.extra and p.extra["gold_issue"].startswith("ungrounded: literal 52")
    assert report.no_gold == {"ungrounded": 1}


def test_unusable_records_are_skipped_with_the_reason(tmp_path):
    good = SAMPLE.read_text(encoding="utf-8").splitlines()[0]
    lines = [good, '{"question": "How many?", "answer": "It is 3."}', "{not json",
             '{"question": "How many?", "answer": "#### lots"}', '["a list"]', good]
    path = tmp_path / "mixed.jsonl"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    report = LoadReport()
    problems = load_gsm8k(path, report=report)
    assert [p.id for p in problems] == ["gsm8k-mixed-0000", "gsm8k-mixed-0005"]
    reasons = [why for _, why in report.skipped]
    assert [i for i, _ in report.skipped] == [1, 2, 3, 4]
    assert "no '#### N'" in reasons[0] and "not valid JSON" in reasons[1] and "'lots' is not a number" in reasons[2]
    assert "not a JSON object" in reasons[3]


def test_cli_writes_problems_and_gold_and_counts_skips(tmp_path, capsys):
    out, gold = tmp_path / "g.jsonl", tmp_path / "gold.jsonl"
    assert main(["data", "gsm8k", "--file", str(SAMPLE), "-o", str(out)]) == 0
    err = capsys.readouterr().err
    assert "wrote 6 GSM8K problems" in err and "4 with a gold chain" in err
    assert main(["data", "gold", str(out), "-o", str(gold)]) == 0
    rows = [json.loads(line) for line in gold.read_text(encoding="utf-8").splitlines()]
    assert len(rows) == 4 and all("<steps>" in r["completion"] for r in rows)
    assert main(["data", "gsm8k", "--file", str(tmp_path / "missing.jsonl"), "-o", str(out)]) == 2


def test_eval_spec_reads_a_gsm8k_file():
    from prosfi.eval.sources import load_source

    src = load_source(f"gsm8k:{SAMPLE}", limit=3)
    assert len(src.problems) == 3 and {src.group(p)[0] for p in src.problems} == {"gsm8k"}


def test_a_long_sum_is_split_into_steps_the_chain_rules_allow(tmp_path):
    from prosfi.rewards import score_batch

    rec = {"question": "Isabelle spent $12 on cake, $43 on presents, $15 on decorations, $4 on invitations and $22 "
                       "on goodie bags. How much did she spend?",
           "answer": "She spent 12 + 43 + 15 + 4 + 22 = $<<12+43+15+4+22=96>>96.\n#### 96"}
    path = tmp_path / "party.jsonl"
    path.write_text(json.dumps(rec) + "\n", encoding="utf-8")
    (p,) = load_gsm8k(path)
    steps = p.extra["gold_steps"]
    assert len(steps) == 2 and steps[-1]["value"] == 96 and steps[-1]["unit"] == "USD"
    assert all(len([t for t in s["expr"].split() if t[0] in "gs"]) <= 4 for s in steps)
    with _verifier() as v:
        assert score_batch([p], [gold_completion(p)], v)[0].reward == 1.0


def test_hostile_digit_runs_and_long_lines_are_skipped_quickly():
    # a 5,000-digit run used to backtrack quadratically in normalise/equations (> 8 s)
    import time

    from prosfi.data.gsm8k import equations, normalise

    t0 = time.perf_counter()
    assert normalise("9" * 5000 + "*2") is None
    assert equations("<<" + "9" * 5000 + "=1>>1\n#### 1") == []
    assert equations("x" * 50_000 + " 2*3 = 6") == []
    assert [e.result for e in equations("He has 2*3 = <<2*3=6>>6 apples.\n#### 6")] == [6]
    assert time.perf_counter() - t0 < 5  # generous: the old code took over 8 s on the first line alone


# ---------------------------------------------------------------- the refusal classes of issue #25
CLASSES = Path(__file__).parent / "fixtures" / "gsm8k_gold_classes.jsonl"  # written for these tests, GSM8K format


def _classes():
    return {int(p.id.rsplit("-", 1)[1]): p for p in load_gsm8k(CLASSES)}


def _cited(p, step: int) -> str:
    return p.extra["gold_steps"][step]["expr"]


def test_each_refusal_class_now_gets_a_gold_chain_that_earns_the_top_reward():
    from prosfi.rewards import score_batch

    ps = _classes()
    # implicit multiplication `36(1/3)`; a bare `<<6=6>>` after `3 x 2 =`; "Three-fourths" is 3/4; `$0.05` is
    # "5 cents"; `(3/4)*300` is "three-quarters"; the 9 patients against nine hours; "twice" never divides
    assert "g2" in _cited(ps[0], 0) and "g1" in _cited(ps[0], 0)
    assert [s["expr"] for s in ps[1].extra["gold_steps"]] == ["g1 * g2", "s1 + g3"]
    assert {g["value"] for g in ps[2].givens} == {"40", "0.75"} and _cited(ps[2], 0) == "g2 * g1"
    assert ps[3].givens[0]["unit"] == "cent" and _cited(ps[3], 0) == "g2 * g1"
    assert ps[3].extra["gold_steps"][0]["unit"] == "USD" and ps[3].extra["gold_steps"][0]["value"] == 2
    assert ps[4].givens[1]["text"] == "three-quarters" and "g2" in _cited(ps[4], 0)
    # the builder reads the 9 patients against nine hours; "9 - 3 = 6 hours" names nothing after its 9, so the
    # independent check (prosfi.data.gold_check) cannot tell which 9 the solution means and drops the trace
    built5 = builder_steps(ps[5])
    assert built5[0]["expr"] == "g2 * g3" and built5[2]["expr"] == "g1 - s2"  # g2 = 9 patients, g1 = nine hours
    assert ps[5].extra["gold_issue"].startswith("faithful: ambiguous")
    assert _cited(ps[7], 0) == "g1 / 2"  # halving licensed by "twice"; the given "twice" only multiplies
    built = [ps[i] for i in (0, 1, 2, 3, 4, 7)]
    with _verifier() as v:
        assert [r.reward for r in score_batch(built, [gold_completion(p) for p in built], v)] == [1.0] * 6


def builder_steps(p):
    """The gold builder's chain for a loaded record, before the independent faithfulness check."""
    from prosfi.data.gsm8k import equations, final_answer
    from prosfi.data.quant_gold import build_chain

    solution = p.extra["solution"]
    return build_chain(p, [(e.expr, e.result, e) for e in equations(solution)], final_answer(solution)).steps


def test_two_givens_with_one_value_and_nothing_to_tell_them_apart_give_no_trace():
    p = _classes()[6]  # 4 cats and 4 dogs; the solution writes only `4 * 2`
    assert "gold_steps" not in p.extra and p.extra["gold_issue"].startswith("ambiguous: 4 could be g1 (cat), g2 (dog)")


def test_clock_times_are_no_givens_a_chain_could_compute_with():
    p = _classes()[8]
    assert [g["value"] for g in p.givens] == ["2"]  # not 1, 00, 5, 00
    assert "gold_steps" not in p.extra and p.extra["gold_issue"].startswith("ungrounded: literal 5")


def test_the_answer_unit_comes_from_the_record_with_or_without_a_gold_chain():
    ps = _classes()
    assert ps[9].answer == {"value": "9", "unit": "USD"} and "gold_steps" not in ps[9].extra  # asked "how much money"
    assert ps[1].answer["unit"] == "USD"  # the final line writes $10
    assert ps[10].answer["unit"] == ""  # "how many scoops", though "$6.00" is on the final line
    assert ps[3].answer["unit"] == "USD"  # "how many dollars"
    bare = {int(p.id.rsplit("-", 1)[1]): p for p in load_gsm8k(CLASSES, with_gold=False)}
    assert all(bare[i].answer == ps[i].answer for i in ps)


@pytest.mark.parametrize("question,final,answer,unit", [
    ("How much in dollars does she make every day?", "She makes 9 * 2 = $<<9*2=18>>18 every day.", 18, "USD"),
    ("How much profit did he make?", "So he made a profit of 200,000-130,000=$<<200000-130000=70000>>70,000", 70000,
     "USD"),
    ("How many days will it take him to save the remaining amount of money?", "It takes $8 / $2 = 4 days.", 4, ""),
    ("How many lego sets does he still have?", "He has 13 - 11 = <<13-11=2>>2 sets left", 2, ""),
    ("How many cents will she have left?", "She has 145 - 55 = <<145-55=90>>90 cents left.", 90, "cent"),
    ("How much will each stick cost in cents?", "each stick will cost 15/30 = $<<15/30=0.5>>0.50", 50, "cent"),
    ("She spent €1090. How much money will she have left for her clothing?", "1500 - 1423 = 77 euros", 77, ""),
    ("How much did she pay?", "Then 40 + 10 = 50 dollars.", 50, "USD"),
    ("What is the pen's price?", "The pen costs $2 - $1 = $<<2-1=1>>1.", 1, "USD"),
    ("Erin has $6.00. How many scoops can she buy?", "Erin has $6.00 so 6/1 = <<6/1=6>>6 scoops total", 6, ""),
])
def test_answer_unit_rule(question, final, answer, unit):
    from prosfi.data.gsm8k import answer_unit

    solution = f"Some work.\n{final}\n#### {answer}"
    assert answer_unit(question, solution, Fraction(answer)) == unit


def test_implicit_multiplication_and_bare_annotations_are_read():
    assert [(e.expr, e.result) for e in equations("Scottish Unicorns:27(1/3)=9")] == [("27 * (1/3)", 9)]
    assert [(e.expr, e.result) for e in equations("Yuri scored 1/2 (68) + 10 = 44 points")] == \
        [("1/2 * (68) + 10", 44)]
    assert [e.expr for e in equations("2+2(16) = 34 cars")] == ["2+2 * (16)"]
    assert [e.expr for e in equations("Ruins: 220(.40)=88")] == ["220 * (.40)"]
    eqs = equations("Each gallon costs $5 because 3 + 2 = <<5=5>>5")
    assert [(e.expr, e.origin, e.money) for e in eqs] == [("5", "annotation", True), ("3 + 2", "text", True)]
    assert equations("3r + 5(r + 2) = 42") == []  # algebra stays out


def test_gold_traces_never_cite_one_given_for_two_numbers_or_a_unit_the_solution_contradicts(tmp_path):
    recs = [{"question": "3 people came by with trikes. Each tire costs $2 to fix. How many dollars did she make?",
             "answer": "There were 3 * 3 = <<3*3=9>>9 tires.\nShe made 9 * 2 = $<<9*2=18>>18.\n#### 18"},
            {"question": "It takes 90 minutes to peel the potatoes and 5 seconds to cut each of the 60 potatoes. "
                         "How many minutes does it take?",
             "answer": "Cutting takes 5 minutes in all, so it takes 90 minutes + 5 minutes = <<90+5=95>>95 minutes."
                       "\n#### 95"}]
    path = tmp_path / "two.jsonl"
    path.write_text("\n".join(json.dumps(r) for r in recs) + "\n", encoding="utf-8")
    tires, potatoes = load_gsm8k(path)
    assert "gold_steps" not in tires.extra  # `g1 * g1`: the second 3 is tires per trike, a fact no pair licenses
    assert "gold_steps" not in potatoes.extra  # "5 minutes" is not the given "5 seconds"
    # "tricycle" and "tire" license the 3 (grounding.CONSTANT_CONTEXT): the fact, the given cited once
    recs[0]["question"] = recs[0]["question"].replace("trikes", "tricycles")
    path.write_text(json.dumps(recs[0]) + "\n", encoding="utf-8")
    (tricycles,) = load_gsm8k(path)
    assert [s["expr"] for s in tricycles.extra["gold_steps"]] == ["g1 * 3", "s1 * g2"]
