"""Best-of-K picks on fixed scores for every aggregation, baselines, and the step-level meta-evaluation."""

from __future__ import annotations

import math

import pytest

from prosfi.prm.metaeval import meta_eval
from prosfi.prm.rerank import aggregate, majority, oracle, pick, rerank_table


def _rec(sample: int, scores: list[float], answer: str = "A", correct: bool = False, valid: bool = False,
         pid: str = "p", fmt: bool = True) -> dict:
    return {"problem_id": pid, "sample": sample, "step_scores": scores, "answer": answer, "answer_correct": correct,
            "chain_valid": valid, "format_ok": fmt, "n_steps": len(scores), "verified_steps": 0, "unknown_steps": 0}


# each aggregation prefers a different completion
A = _rec(0, [0.99, 0.1, 0.99, 0.99])        # min .10  mean .77  last .99  product .097
B = _rec(1, [0.6, 0.6])                     # min .60  mean .60  last .60  product .36
C = _rec(2, [0.45], valid=True)             # min .45  mean .45  last .45  product .45
D = _rec(3, [0.55, 0.55, 0.55, 0.55], valid=True)  # min .55 mean .55 last .55 product .09
E = _rec(4, [0.2, 0.999])                   # min .20  mean .60  last .999 product .20
F = _rec(5, [], fmt=False)                  # no steps: never picked
CANDIDATES = [F, A, B, C, D, E]


@pytest.mark.parametrize("how,expected", [("min", B), ("mean", A), ("last", E), ("product", C)])
def test_each_aggregation_picks_its_best(how, expected):
    assert pick(CANDIDATES, how) is expected


@pytest.mark.parametrize("how,expected", [("min", D), ("mean", D), ("last", D), ("product", C)])
def test_verifier_filter_restricts_to_verified_chains(how, expected):
    assert pick(CANDIDATES, how, verifier_filter=True) is expected


def test_filter_falls_back_to_all_when_nothing_is_verified_and_ties_go_first():
    x, y = _rec(0, [0.5]), _rec(1, [0.5])
    assert pick([x, y], "min", verifier_filter=True) is x


def test_aggregate_values():
    assert aggregate([0.5, 0.4], "product") == pytest.approx(0.2)
    assert aggregate([], "min") == -math.inf
    with pytest.raises(ValueError):
        aggregate([0.5], "median")


def test_majority_and_oracle():
    rs = [_rec(0, [.1], "A"), _rec(1, [.1], "B", correct=True), _rec(2, [.1], "B", correct=True, valid=True),
          _rec(3, [.1], "C")]
    assert majority(rs) is rs[1]
    assert oracle(rs) is rs[2]
    assert majority([_rec(0, [], fmt=False)])["sample"] == 0


def test_rerank_table_measures_picks_with_the_eval_metrics():
    # problem p: the PRM (min) picks the right, verified sample; q: it picks a wrong one
    p = [_rec(0, [0.2], "B", pid="p"), _rec(1, [0.9], "A", correct=True, valid=True, pid="p")]
    q = [_rec(0, [0.9], "B", pid="q"), _rec(1, [0.3], "A", correct=True, pid="q")]
    rows = {r["method"]: r for r in rerank_table(p + q, n_boot=50)}
    assert rows["prm:min"]["accuracy"] == 0.5 and rows["prm:min"]["reward_hit"] == 0.5
    assert rows["oracle (pass@K)"]["accuracy"] == 1.0 and rows["oracle (pass@K)"]["reward_hit"] == 0.5
    assert rows["random (expected)"]["accuracy"] == 0.5 and rows["random (expected)"]["reward_hit"] == 0.25
    assert rows["prm:min"]["problems"] == 2 and rows["prm:min"]["k"] == 2


def test_meta_eval_step_accuracy_and_first_error_f1():
    records = [{"labels": [True, False, True]}, {"labels": [True, True]}, {"labels": [False]},
               {"labels": [True, True, False]}]
    scores = [[0.9, 0.2, 0.1],   # first error found at 1 (right); step 3 wrong
              [0.8, 0.4],        # a false alarm at 1: a correct chain judged erroneous
              [0.3],             # found at 0
              [0.1, 0.9, 0.9]]   # flagged at 0, true error at 2: wrong; missed the error
    m = meta_eval(records, scores)
    assert m["steps"] == 9 and m["step_accuracy"] == pytest.approx(5 / 9)
    assert m["first_error_accuracy_erroneous"] == pytest.approx(2 / 3)
    assert m["first_error_accuracy_correct"] == 0.0
    assert m["first_error_f1"] == 0.0
    m2 = meta_eval(records[:1] + records[2:3], scores[:1] + scores[2:3])
    assert m2["first_error_accuracy_erroneous"] == 1.0 and m2["first_error_accuracy_correct"] is None
    with pytest.raises(ValueError):
        meta_eval(records, scores[:2])


def test_ablation_table_judges_against_valid_and_grounded():
    from prosfi.prm.metaeval import ablation_table

    records = [{"labels": [True, True, False], "grounded": [True, False, None]},
               {"labels": [True], "grounded": [None]}]  # a valid step without groundedness: left out
    scores = [[0.9, 0.2, 0.8], [0.9]]
    rows = {r["judge"]: r for r in ablation_table(records, scores)}
    assert rows["verifier only"]["chains"] == 1
    assert rows["verifier only"]["step_accuracy"] == pytest.approx(2 / 3)  # misses the ungrounded step
    assert rows["PRM only"]["step_accuracy"] == pytest.approx(2 / 3)  # passes the invalid step
    assert rows["verifier + PRM"]["step_accuracy"] == 1.0 and rows["verifier + PRM"]["first_error_f1"] is None
    assert rows["verifier + PRM"]["first_error_accuracy_erroneous"] == 1.0
