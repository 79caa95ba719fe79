"""Constant answering (issue #36): an evaluation says when a model gives (nearly) every problem the same answer,
with the majority-answer baseline next to its accuracy."""

from __future__ import annotations

import pytest

from prosfi.eval.answers import CONSTANT_SHARE, answer_spread, constant_line, spread_cell


def _records(answers: list[str | None], golds: list[str]) -> list[dict]:
    return [{"problem_id": f"p{i}", "source": "toy", "sample": 0, "format_ok": a is not None, "answer": a,
             "answer_correct": a == g, "gold_answer": g} for i, (a, g) in enumerate(zip(answers, golds))]


GOLDS = ["True"] * 52 + ["False"] * 48


def test_a_model_answering_true_to_everything_is_a_constant_answerer():
    spread = answer_spread(_records(["True"] * 100, GOLDS))
    assert spread == {"n_problems": 100, "top_answer": "True", "top_share": 1.0, "majority_answer": "True",
                      "majority_baseline": 0.52, "constant": True}
    line = constant_line(spread, "the policy", accuracy=0.52)
    assert "'True' to 100 of 100 problems" in line and "majority-answer baseline 0.520 (always 'True')" in line
    assert spread_cell(spread) == "1.000 (True) CONSTANT"


@pytest.mark.parametrize(("n_true", "constant"), [(95, True), (94, False), (60, False)])
def test_the_threshold_is_one_answer_on_95_percent_of_the_problems(n_true, constant):
    spread = answer_spread(_records(["True"] * n_true + ["False"] * (100 - n_true), GOLDS))
    assert spread["top_share"] == n_true / 100 and spread["constant"] is constant
    assert CONSTANT_SHARE == 0.95
    assert (constant_line(spread) is None) is not constant


def test_no_answer_is_never_the_top_answer_and_counts_against_the_share():
    # 90 True and 10 out of format: 90 % of the problems got True, not 100 % of the answers given
    spread = answer_spread(_records(["True"] * 90 + [None] * 10, GOLDS))
    assert spread["top_answer"] == "True" and spread["top_share"] == 0.9 and not spread["constant"]
    assert answer_spread(_records([None] * 10, GOLDS[:10]))["top_answer"] is None
    assert answer_spread([]) is None


def test_first_sample_per_problem_and_records_without_a_gold_answer():
    records = [{"problem_id": "p0", "source": "s", "sample": 1, "format_ok": True, "answer": "False"},
               {"problem_id": "p0", "source": "s", "sample": 0, "format_ok": True, "answer": "True"},
               {"problem_id": "stranger", "source": None, "format_ok": True, "answer": "False"}]
    spread = answer_spread(records)
    assert spread["n_problems"] == 1 and spread["top_answer"] == "True"
    assert spread["majority_baseline"] is None and spread["majority_answer"] is None


def test_evaluate_reports_the_spread_and_notes_a_constant_answerer(tmp_path):
    from prosfi.data.gold import gold_completion
    from prosfi.data.toy import ToyConfig, generate
    from prosfi.eval import evaluate
    from prosfi.eval.generate import Generation
    from prosfi.verify import Verifier, VerifierConfig

    problems = generate(ToyConfig(min_depth=1, max_depth=1, layout="fixed"), 20, seed=3)
    # every completion answers True (A), whatever its problem
    gens = [Generation(problem_id=p.id, sample=0,
                       completion=gold_completion(p).replace("<answer>B</answer>", "<answer>A</answer>"))
            for p in problems]
    with Verifier(VerifierConfig(backends=("z3",), workers=1)) as verifier:
        result = evaluate(problems, gens, verifier=verifier, out_dir=tmp_path / "ev", plots=False)
    answers = result.summary["answers"]
    assert answers["top_answer"] == "True" and answers["constant"] and answers["majority_baseline"] == 0.5
    assert {r["gold_answer"] for r in result.records} == {"True", "False"}
    assert result.summary["notes"][0].startswith("constant answering: the model gives the answer 'True'")
    report = (tmp_path / "ev" / "summary.md").read_text()
    assert "Answers: 'True' on 100.0 % of the problems; majority-answer baseline 50.0 %" in report
    assert "a constant answerer" in report
