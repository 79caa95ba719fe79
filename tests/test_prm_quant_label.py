"""FoVer labels for GSM8K-style solutions (prosfi.prm.quant_label) against an independent exact evaluation.

The reference below is written here on its own (a tiny tokenizer and recursive-descent parser over
fractions.Fraction); it shares no code with prosfi's expression reader or the GSM8K annotation reader.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from fractions import Fraction
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from prosfi.data.gsm8k import problem_from_record
from prosfi.prm.quant_label import (
    final_answer,
    fover_record,
    label_solution,
    processbench_record,
    read_completions,
    solution_level,
)

ROOT = Path(__file__).resolve().parents[1]


# ------------------------------------------------------------------ the independent reference
def _ref_tokens(text: str) -> list[str]:
    text = text.replace("$", "").replace("×", "*").replace(" x ", " * ")
    text = re.sub(r"(?<=\d),(?=\d{3})", "", text)
    text = re.sub(r"(\d+(?:\.\d+)?)\s*%", r"(\1/100)", text)
    return re.findall(r"\d+\.\d*|\.\d+|\d+|[-+*/()]", text)


def ref_eval(text: str) -> Fraction:
    toks = _ref_tokens(text)
    pos = 0

    def peek():
        return toks[pos] if pos < len(toks) else None

    def take():
        nonlocal pos
        pos += 1
        return toks[pos - 1]

    def atom() -> Fraction:
        t = take()
        if t == "(":
            v = expr()
            assert take() == ")"
            return v
        if t == "-":
            return -atom()
        return Fraction(t)

    def term() -> Fraction:
        v = atom()
        while peek() in ("*", "/"):
            v = v * atom() if take() == "*" else v / atom()
        return v

    def expr() -> Fraction:
        v = term()
        while peek() in ("+", "-"):
            v = v + term() if take() == "+" else v - term()
        return v

    v = expr()
    assert pos == len(toks), text
    return v


def ref_labels(solution: str) -> list[bool]:
    """Per annotation: does its left side evaluate exactly (within 1e-5 relative) to its stated result?"""
    out = []
    for body in re.findall(r"<<([^<>]*)>>", solution):
        lhs, _, rhs = body.rpartition("=")
        true, claim = ref_eval(lhs), Fraction(rhs.strip())
        out.append(abs(true - claim) <= Fraction(1, 10**5) * max(abs(true), Fraction(1, 10**12)))
    return out


# ------------------------------------------------------------------ problems in GSM8K's test format
DUCKS = {"question": "Janet\u2019s ducks lay 16 eggs per day. She eats three for breakfast every morning and bakes "
         "muffins for her friends every day with four. She sells the remainder at the farmers' market daily for "
         "$2 per fresh duck egg. How much in dollars does she make every day at the farmers' market?",
         "answer": "Janet sells 16 - 3 - 4 = <<16-3-4=9>>9 duck eggs a day.\nShe makes 9 * 2 = $<<9*2=18>>18 every "
         "day at the farmer\u2019s market.\n#### 18"}
SPRINTS = {"question": "James decides to run 3 sprints 3 times a week.  He runs 60 meters each sprint.  How many "
           "total meters does he run a week?",
           "answer": "He sprints 3*3=<<3*3=9>>9 times\nSo he runs 9*60=<<9*60=540>>540 meters\n#### 540"}


@pytest.fixture(scope="module")
def ducks():
    return problem_from_record(DUCKS, "gsm8k-test-0000")


@pytest.fixture(scope="module")
def sprints():
    return problem_from_record(SPRINTS, "gsm8k-test-0003")


SOLUTIONS = [
    # gold
    DUCKS["answer"],
    # right arithmetic, wrong reasoning (GPT-3 6B's real solution: forgets the muffins)
    ("Janet eats 3 ducks eggs so she has 16 - 3 = <<16-3=13>>13 ducks eggs left\n"
     "She sells 2 each day so she makes 13 * 2 = $<<13*2=26>>26\nA: 26"),
    # wrong arithmetic in the first step, the second right on the wrong value
    "16 - 3 - 4 = <<16-3-4=8>>8 eggs.\nShe makes 8 * 2 = $<<8*2=16>>16\n#### 16",
    # wrong arithmetic in the last step only
    "16 - 3 - 4 = <<16-3-4=9>>9 eggs.\nShe makes 9 * 2 = $<<9*2=19>>19\n#### 19",
    # decimals, percentages and thousands commas
    ("She keeps 16 - 3 - 4 = <<16-3-4=9>>9 eggs; 9 x $2 = $<<9*2=18.0>>18.0 and 50% of it is 18 * 50% "
     "= <<18*50%=9>>9\n#### 9"),
]


@pytest.mark.parametrize("solution", SOLUTIONS)
def test_labels_agree_with_the_independent_evaluation(ducks, solution):
    rec = label_solution(ducks, solution)
    assert rec["labels"] == ref_labels(solution)
    assert len(rec["steps"]) == len(rec["verdicts"]) == len(rec["grounded"]) == solution.count("<<")
    assert rec["completion"] == solution and rec["problem_id"] == "gsm8k-test-0000"


def test_wrong_arithmetic_is_invalid_with_the_reason_and_a_first_error(ducks):
    rec = label_solution(ducks, SOLUTIONS[2])
    assert rec["verdicts"] == ["invalid", "valid"]  # the second step is right on the value it was given
    assert "wrong value" in rec["details"][0] and rec["first_error"] == 0
    assert rec["steps"][0]["expr"] == "g1 - g2 - g3" and rec["steps"][1]["expr"] == "s1 * g4"
    assert processbench_record(rec)["label"] == 0
    assert fover_record(rec)["error_labels"] == [False, True]
    last = label_solution(ducks, SOLUTIONS[3])
    assert processbench_record(last)["label"] == 1 and last["answer"] == 19 and last["answer_correct"] is False


def test_right_arithmetic_wrong_answer_passes_the_verifier(ducks):
    rec = label_solution(ducks, SOLUTIONS[1])
    assert rec["labels"] == [True, True] and rec["answer_correct"] is False
    assert processbench_record(rec)["label"] == -1
    assert all(rec["grounded"])  # every number is a given or an earlier result: validity cannot see the error


def test_unit_error_adding_dollars_to_eggs(ducks):
    # $2 + 9 eggs: 2 is also the listed constant 2 (always allowed), so a dimension-free reading exists
    sol = "16 - 3 - 4 = <<16-3-4=9>>9 eggs. She makes $2 + 9 = $<<2+9=11>>11\n#### 11"
    rec = label_solution(ducks, sol)
    assert rec["labels"] == ref_labels(sol) == [True, True]
    # with a price that is not a listed constant there is no such reading: 3 is the $3 given
    q = {"question": "A pen costs $3 and Tom has 5 pens. What is the total?", "answer": "5*3=<<5*3=15>>15\n#### 15"}
    pens = problem_from_record(q, "gsm8k-x-0000")
    bad = label_solution(pens, "Tom has 5 + 3 = <<5+3=8>>8\n#### 8")
    assert ref_labels("<<5+3=8>>") == [True]
    assert bad["labels"] == [False] and "dimension" in bad["details"][0]
    assert bad["steps"][0]["expr"] == "g2 + g1"
    good = label_solution(pens, "5 * 3 = $<<5*3=15>>15\n#### 15")
    assert good["labels"] == [True] and good["steps"][0]["unit"] == "USD" and good["answer_correct"] is True


def test_invented_numbers_are_valid_but_not_grounded(sprints):
    # 50 meters per sprint is invented: the arithmetic is right, the number has no provenance
    sol = "He runs 3*50=<<3*50=150>>150 meters\nSo he runs 150*3=<<150*3=450>>450 meters a week\nA: 450"
    rec = label_solution(sprints, sol)
    assert rec["labels"] == ref_labels(sol) == [True, True]
    assert rec["grounded"] == [False, True]
    assert "invented number 50" in rec["grounded_reasons"][0] and rec["grounded_reasons"][1] == ""
    assert rec["steps"][1]["expr"] in ("s1 * g1", "s1 * g2")
    # an invented number in a wrong step: both flags are off
    sol2 = "He runs 9*61=<<9*61=550>>550 meters\nA: 550"
    rec2 = label_solution(sprints, sol2)
    assert rec2["labels"] == ref_labels(sol2) == [False] and rec2["grounded"] == [False]


def test_unreadable_annotation_is_an_error_step_not_skipped(sprints):
    sol = "Let X be the time. X*.25=<<X*.25=19.5>>19.5\nThen 3*3=<<3*3=9>>9\nA: 9"
    rec = label_solution(sprints, sol)
    assert rec["verdicts"][0] == "error" and rec["labels"] == [False, True] and rec["grounded"][0] is False


def test_final_answer_reads_both_styles():
    assert final_answer("x\n#### 1,200") == 1200
    assert final_answer("x\nA: 26") == 26 and final_answer("A: 0.62") == Fraction("0.62")
    assert final_answer("no answer here") is None


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(st.sampled_from("+-*/"), st.integers(0, 2), st.integers(-3, 3)), min_size=1, max_size=5))
def test_property_random_annotations_agree(sprints_ops):
    """Chains of annotations over the givens and earlier results, some with a wrong result: the labels are the
    reference's, whatever the mix."""
    p = _SPRINTS_PROBLEM
    numbers = [Fraction(3), Fraction(60)]
    lines = []
    prev = None
    for op, pick, error in sprints_ops:
        a = prev if prev is not None else numbers[pick % 2]
        b = numbers[pick % 2] if op != "/" else Fraction(3)
        true = {"+": a + b, "-": a - b, "*": a * b, "/": a / b}[op]
        stated = true + error
        a_txt = _num(a)
        lines.append(f"{a_txt} {op} {_num(b)} = <<{a_txt}{op}{_num(b)}={_num(stated)}>>{_num(stated)}")
        prev = stated
    sol = "\n".join(lines) + "\nA: 1"
    rec = label_solution(p, sol)
    assert rec["labels"] == ref_labels(sol)


def _num(x: Fraction) -> str:
    if x.denominator == 1:
        return str(x.numerator)
    return repr(float(x)) if Fraction(repr(float(x))) == x else f"{float(x):.12f}"


_SPRINTS_PROBLEM = problem_from_record(SPRINTS, "gsm8k-test-0003")


# ------------------------------------------------------------------ files and the command
EXAMPLE = {"question": SPRINTS["question"], "ground_truth": "He sprints 3*3=<<3*3=9>>9 times\nSo he runs "
           "9*60=<<9*60=540>>540 meters\nA: 540",
           "6b_finetuning": {"is_correct": False, "solution": "He runs 60/3=<<60/3=20.0>>20 meters in each sprint\n"
                             "So he runs 20*3=<<20*3=60>>60 meters in total each week\nA: 60"}}


def test_read_completions_both_formats(tmp_path, sprints):
    path = tmp_path / "c.jsonl"
    path.write_text(json.dumps(EXAMPLE) + "\n" + json.dumps({"problem_id": sprints.id, "completion": "3*3=<<3*3=9>>9"})
                    + "\n" + json.dumps({"question": "an unknown question", "ground_truth": "A: 1"}) + "\nnot json\n")
    items = read_completions(path, {sprints.id: sprints})
    assert [i.get("model") for i in items] == ["ground_truth", "6b_finetuning", None]
    assert all(i["problem_id"] == sprints.id for i in items)
    assert items[1]["is_correct"] is False


def test_hostile_lines_are_reported_not_raised(tmp_path, sprints):
    """A deeply nested line, a 5,000-digit integer, NaN and bytes that are not UTF-8 are bad lines of the
    report; the good line after them is still read."""
    from prosfi.prm.quant_label import ReadReport

    good = json.dumps({"problem_id": sprints.id, "completion": "3*3=<<3*3=9>>9"}).encode()
    path = tmp_path / "c.jsonl"
    path.write_bytes(b"[" * 100_000 + b"\n" + b'{"problem_id": 1, "x": ' + b"9" * 5000 + b"}\n"
                     + b'{"problem_id": NaN}\n' + b'{"problem_id": "\xff\xfe"}\n' + good + b"\n")
    report = ReadReport()
    items = read_completions(path, {sprints.id: sprints}, report)
    assert [i["problem_id"] for i in items] == [sprints.id]
    assert len(report.bad) == 4 and all("not valid JSON" in b for b in report.bad)


def test_solution_level_f1_counts(sprints):
    recs = [label_solution(sprints, EXAMPLE["ground_truth"], is_correct=True),
            label_solution(sprints, EXAMPLE["6b_finetuning"]["solution"], is_correct=False),
            label_solution(sprints, "3*3=<<3*3=10>>10\nA: 10", is_correct=False)]
    got = solution_level(recs)
    assert got["accuracy_correct"] == 1.0 and got["accuracy_erroneous"] == 0.5
    assert got["f1"] == pytest.approx(2 * 0.5 / 1.5)
    assert got["wrong_answer_all_steps_valid"] == 1


def test_cli_label_gsm8k(tmp_path):
    data = tmp_path / "test.jsonl"
    data.write_text(json.dumps(SPRINTS) + "\n" + json.dumps(DUCKS) + "\n")
    comp = tmp_path / "solutions.jsonl"
    comp.write_text(json.dumps(EXAMPLE) + "\n")
    out = tmp_path / "out"
    cmd = [sys.executable, "-m", "prosfi", "prm", "label", "--data", f"gsm8k:{data}", "--completions", str(comp),
           "--completion-format", "gsm8k", "--val-fraction", "0", "-o", str(out)]
    r = subprocess.run(cmd, check=False, capture_output=True, text=True, cwd=ROOT, timeout=120)
    assert r.returncode == 0, r.stderr
    labels = [json.loads(x) for x in (out / "labels.jsonl").read_text().splitlines()]
    assert [rec["labels"] for rec in labels] == [ref_labels(EXAMPLE["ground_truth"]),
                                                 ref_labels(EXAMPLE["6b_finetuning"]["solution"])]
    pb = [json.loads(x) for x in (out / "processbench.jsonl").read_text().splitlines()]
    assert [x["label"] for x in pb] == [-1, -1]
    fv = [json.loads(x) for x in (out / "fover.jsonl").read_text().splitlines()]
    assert fv[0]["error_labels"] == [True, True] and len(fv[0]["solution_steps"]) == 2
    train = [json.loads(x) for x in (out / "train.jsonl").read_text().splitlines()]
    assert all({"prompt", "completions", "labels"} <= set(t) for t in train)
    stats = json.loads((out / "stats.json").read_text())
    # model solutions and GSM8K's own (the answer key) are counted apart
    assert stats["model_solutions"]["solution_level"][0]["wrong_answer_all_steps_valid"] == 1
    assert stats["model_solutions"]["solutions"] == 1 and stats["reference_solutions"]["solutions"] == 1
    assert stats["reference_solutions"]["valid_rate"] == 1.0 and "steps" not in stats
    # a usage mistake is one line, exit 2
    r = subprocess.run(cmd[:-2] + ["-o", str(tmp_path / "o2"), "--completions", str(tmp_path / "missing.jsonl")],
                       check=False, capture_output=True, text=True, cwd=ROOT, timeout=120)
    assert r.returncode == 2 and len(r.stderr.strip().splitlines()) == 1


def test_scores_for_rerank_and_the_ablation_table(sprints):
    from prosfi.prm.metaeval import ablation_table
    from prosfi.prm.quant_label import score_records
    from prosfi.prm.rerank import rerank_table

    sols = [(EXAMPLE["ground_truth"], "ground_truth", True), (EXAMPLE["6b_finetuning"]["solution"], "6b", False),
            ("He runs 3*50=<<3*50=150>>150 meters\nA: 150", "invent", False),
            ("3*3=<<3*3=9>>9\n9*60=<<9*60=540>>540\nA: 540", "175b", True)]
    recs = [label_solution(sprints, text, model=m, is_correct=ok) for text, m, ok in sols]
    scored = score_records(recs, seed=3)
    assert [s["model"] for s in scored] == ["6b", "invent", "175b"]  # the answer key does not compete
    assert sorted(s["sample"] for s in scored) == [0, 1, 2]
    assert scored[1]["step_scores"] == [0.0] and scored[2]["step_scores"] == [1.0, 1.0]
    rows = {r["method"]: r for r in rerank_table(scored, n_boot=20)}
    assert rows["oracle (pass@K)"]["accuracy"] == 1.0
    assert rows["prm:min"]["accuracy"] <= rows["oracle (pass@K)"]["accuracy"]
    # verifier alone / PRM alone / verifier + PRM against valid-and-grounded: a PRM that scores the invented
    # step low and everything else high is perfect; the verifier alone misses the invented number
    prm = [[0.9] * len(r["labels"]) if r["model"] != "invent" else [0.1] for r in recs]
    table = {row["judge"]: row for row in ablation_table(recs, prm)}
    assert table["PRM only"]["step_accuracy"] == 1.0 and table["verifier + PRM"]["step_accuracy"] == 1.0
    assert table["verifier only"]["step_accuracy"] < 1.0
    assert table["verifier only"]["first_error_accuracy_erroneous"] == 0.0


_HOSTILE = ["<<9**9**9**9=1>>", "<<" + "9" * 5000 + "=1>>", "<<" + "(" * 2000 + "1" + ")" * 2000 + "=1>>",
            "<<1/0=1>>", "<<=>>", "<<<<1+1=2>>>>", "<<10**10**10=3>>", "<<1e400*2=3>>", "#### \u221e", "A: $"]


@settings(max_examples=80, deadline=None)
@given(st.lists(st.one_of(st.sampled_from(_HOSTILE), st.text(max_size=40),
                          st.builds(lambda a, op, b, c: f"<<{a}{op}{b}={c}>>", st.integers(-10**6, 10**6),
                                    st.sampled_from(["+", "-", "*", "/", "**", "%", "x", "$"]),
                                    st.integers(-99, 99), st.integers(-10**6, 10**6))), max_size=6))
def test_any_solution_text_gives_a_record(parts):
    """A bad completion never crashes labelling: every annotation still gets one label, in order."""
    sol = "\n".join(parts)
    rec = label_solution(_SPRINTS_PROBLEM, sol)
    assert len(rec["labels"]) == len(rec["steps"]) == len(rec["grounded"])
    if "read_error" not in rec:
        assert len(rec["labels"]) == len(re.findall(r"<<([^<>]*)>>", sol))


def test_shipped_examples_label_cleanly():
    from prosfi.data.gsm8k import load_gsm8k
    from prosfi.prm.quant_label import label_items

    problems = {p.id: p for p in load_gsm8k(ROOT / "examples" / "gsm8k_test_mini.jsonl")}
    items = read_completions(ROOT / "examples" / "gsm8k_model_solutions_mini.jsonl", problems)
    assert len(items) == 11 and {i["problem_id"] for i in items} == set(problems)
    recs = label_items(problems, items)
    for rec in recs:  # the verifier's labels are the independent evaluation's on real GSM8K text
        assert rec["labels"] == ref_labels(rec["completion"])
    assert all(all(r["labels"]) and all(r["grounded"]) for r in recs if r.get("model") == "ground_truth")


# ------------------------------------------------------------------ readings: no invented dimension errors
FIXTURES = ROOT / "tests" / "fixtures"


@pytest.fixture(scope="module")
def written():
    """Five problems and fifteen solutions written for these tests in GSM8K's formats
    (tests/fixtures/gsm8k_label_*.jsonl): givens that share a number across units, cents, a percent."""
    from prosfi.data.gsm8k import load_gsm8k
    from prosfi.prm.quant_label import label_items

    problems = {p.id: p for p in load_gsm8k(FIXTURES / "gsm8k_label_problems.jsonl")}
    items = read_completions(FIXTURES / "gsm8k_label_solutions.jsonl", problems)
    recs = label_items(problems, items)
    return {(r["problem_id"][-2:], r["model"]): r for r in recs}


def test_written_solutions_label_as_their_arithmetic_except_the_true_confusion(written):
    """Every arithmetically right annotation is valid, every wrong one invalid, except one: "The tax is $25"
    (25 is the written number of the 25% given) added to $80."""
    assert len(written) == 15
    for key, rec in written.items():
        ref = ref_labels(rec["completion"])
        if key == ("03", "6b_finetuning"):
            assert ref == [True] and rec["labels"] == [False]
            continue
        assert rec["labels"] == ref, (key, rec["details"])
    assert not any("internal error" in d for r in written.values() for d in r["details"])


def test_a_number_shared_by_hours_and_dollars_is_read_either_way(written):
    # `$10*50` with "10 hours" and "$10" both given: hours x hours is one reading, $10 x 50 hours another; the
    # next step adds it to dollars, so only the second is consistent, and it is the one used
    rec = written[("00", "6b_finetuning")]
    assert rec["labels"] == [True, True, True]
    assert rec["steps"][1]["unit"] == "USD" and rec["steps"][2]["expr"] == "s1 + s2"
    # a wrong sum stays wrong, whatever the reading
    assert written[("00", "175b_finetuning")]["labels"] == [True, False, True]


def test_prices_times_counts_are_never_dollars_squared(written):
    for key in (("01", "ground_truth"), ("01", "6b_finetuning")):
        rec = written[key]
        assert rec["labels"] == [True, True, True] and {s["unit"] for s in rec["steps"]} == {"USD"}


def test_cents_times_cans_and_cents_to_dollars(written):
    # 40 cans x 5 cents = 200 cents, x 5 bags = 1000 cents, / 100 = $10: no USD**2, and the last step reads the
    # 1000 cents in dollars because the text writes `$<<…>>`
    rec = written[("02", "6b_finetuning")]
    assert rec["labels"] == [True, True, True]
    assert [s["unit"] for s in rec["steps"]] == ["cent", "cent", "USD"]


def test_a_true_unit_confusion_stays_a_catch(written):
    rec = written[("03", "6b_finetuning")]
    assert rec["verdicts"] == ["invalid"] and rec["details"][0].startswith("dimension error")
    assert rec["steps"][0]["expr"] == "g1 + 25" and rec["grounded"] == [False]
    # the same tax computed from the percent is valid
    assert written[("03", "175b_finetuning")]["labels"] == [True, True]


def test_cents_added_to_dollars_as_if_the_same_unit_is_a_catch():
    q = {"question": "A pencil costs 25 cents and a notebook costs $5. How much do both cost?",
         "answer": "25 cents is $0.25, so both cost 5+0.25=$<<5+0.25=5.25>>5.25\n#### 5.25"}
    p = problem_from_record(q, "gsm8k-x-0001")
    assert [g["unit"] for g in p.givens] == ["cent", "USD"]
    bad = label_solution(p, "Both cost 25+5=<<25+5=30>>30\nA: 30")
    assert ref_labels(bad["completion"]) == [True] and bad["labels"] == [False]
    assert "wrong value" in bad["details"][0]
    assert label_solution(p, q["answer"])["labels"] == [True]


def test_inverse_currency_is_a_verdict(written):
    """Apples per dollar is 1/USD: a wrong count is `wrong value` (it was an internal error), and the unit
    written on the step reads back."""
    from prosfi.quant.units import unit_info

    wrong, right = written[("04", "6b_finetuning")], written[("04", "ground_truth")]
    assert wrong["verdicts"] == ["invalid"] and wrong["details"][0].startswith("wrong value")
    assert right["labels"] == [True]
    assert unit_info(right["steps"][0]["unit"]).dims[-1] == -1


def test_stats_keep_model_and_reference_solutions_apart(written):
    from prosfi.prm.quant_label import label_stats

    stats = label_stats(list(written.values()))
    models, refs = stats["model_solutions"], stats["reference_solutions"]
    assert (models["solutions"], refs["solutions"]) == (10, 5)
    assert refs["valid_rate"] == 1.0 and refs["steps"] == 12
    assert models["steps"] == 22 and models["valid_steps"] == 19 and models["dimension_error_steps"] == 1
    assert models["solution_level"][0]["wrong_answer_solutions"] == 5
    assert refs["solution_level"][0]["wrong_answer_solutions"] == 0


_PRICED = problem_from_record({"question": "Figures cost $3 each and cars cost $5 each. Tim buys 5 figures and 3 "
                                           "cars. How much does he spend?", "answer": "#### 30"}, "gsm8k-x-0002")


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(st.sampled_from("+-*"), st.sampled_from([3, 5]), st.sampled_from([3, 5]),
                          st.integers(-2, 2)), min_size=1, max_size=4))
def test_property_a_wrong_annotation_is_never_valid(ops):
    """Annotations over numbers that are both prices and counts (3 and 5), some with a wrong result: whatever
    the readings, a wrong result is invalid, and a product of two of them (a price times a count) is valid."""
    lines = []
    for op, a, b, error in ops:
        true = {"+": a + b, "-": a - b, "*": a * b}[op]
        lines.append(f"{a} {op} {b} = <<{a}{op}{b}={true + error}>>{true + error}")
    sol = "\n".join(lines) + "\nA: 1"
    rec = label_solution(_PRICED, sol)
    ref = ref_labels(sol)
    for (op, *_rest, error), got, want in zip(ops, rec["labels"], ref):
        assert not got or want
        if op == "*" and error == 0:
            assert got


# numbers whose unit the text leaves open (shapes from GSM8K's own test solutions, reworded here)
OPEN_UNIT = [
    # a count computed in plain text (`60/15 = 4` cartons), then used next to a $4 price
    ({"question": "Ben drinks one glass of juice a day. A carton holds 8 glasses and costs $4. How much does he "
                  "spend on juice in 32 days?", "answer": "#### 16"},
     "He needs 32/8 = 4 cartons.\nThey cost 4*4 = $<<4*4=16>>16.\nA: 16"),
    # a ratio of dollars the text writes in dollars ($1 back for every $20), then subtracted from dollars
    ({"question": "A store gives $1 back for every $20 spent. Ann spent $60 last week. Today her bill is $30 and "
                  "she uses her money back. How much does she pay today?", "answer": "#### 27"},
     "She earned 60/20 = $<<60/20=3>>3 back.\nShe pays 30-3 = $<<30-3=27>>27.\nA: 27"),
    # a bare annotation restating a sum (`30+10= <<40=40>>40`), then used as a count
    ({"question": "Mia had 90 stickers. She gave 30 to Leo, a third of that to Sam, and sold the others for $40. "
                  "How many stickers did she sell?", "answer": "#### 50"},
     "She gave away 30+10= <<40=40>>40 stickers.\nShe sold 90-40=<<90-40=50>>50 stickers.\nA: 50"),
    # a sum of money the question states without a dollar sign ("sells them for 40")
    ({"question": "Omar buys 6 games at $15 each. He sells 2 of them for 40. How much money is he out?",
      "answer": "#### 50"},
     "He paid 6*15=$<<6*15=90>>90.\nHe is out 90-40=$<<90-40=50>>50.\nA: 50"),
]


@pytest.mark.parametrize("record,solution", OPEN_UNIT)
def test_numbers_whose_unit_the_text_leaves_open_are_read_either_way(record, solution):
    p = problem_from_record(record, "gsm8k-x-0100")
    rec = label_solution(p, solution)
    assert ref_labels(solution) == [True] * solution.count("<<")
    assert rec["labels"] == ref_labels(solution), rec["details"]


def test_a_percent_number_added_to_dollars_is_caught_even_when_the_text_writes_dollars():
    # the dollars mark lets a count given be read as dollars, never the written number of a percent
    q = {"question": "Omar buys 6 games at $15 each and pays 8% sales tax. How much does he pay?", "answer": "#### 97.2"}
    p = problem_from_record(q, "gsm8k-x-0101")
    rec = label_solution(p, "He pays 6*15=$<<6*15=90>>90 and the tax is $8.\nSo 90+8=$<<90+8=98>>98.\nA: 98")
    assert rec["labels"] == [True, False] and rec["details"][1].startswith("dimension error")


@pytest.mark.parametrize("question,number,money", [
    ("He sells 2 of them for 40. How much is he out?", "40", True),
    ("Rayna has 60 more dollars than Kim.", "60", True),
    ("If he makes 2000 a week, how much does he make?", "2000", True),
    ("He buys 3 books for 16 dollars each.", "3", False),
    ("She has 2 twenty dollar bills and 40 dollar bills.", "40", False),
    ("He runs for 3 hours a day.", "3", False),
    ("She sells 5 pens.", "5", False),
    ("An orange costs 5 less than a melon.", "5", True),
    ("She sells 5 more pens than Tom.", "5", False),
])
def test_money_stated_without_a_dollar_sign(question, number, money):
    from prosfi.prm.quant_label import _money_count

    start = question.index(number)
    g = {"id": "g1", "value": number, "unit": "", "text": number, "start": start, "end": start + len(number)}
    assert _money_count(question, g) is money
