"""Evaluation metrics: hand-computed values on fixed records, pass@k / maj@k, bootstrap intervals, and
the whole scoring path on completions whose verdicts we know."""

from __future__ import annotations

import json
from math import comb

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from prosfi.data.problem import Problem
from prosfi.eval import evaluate, summarize
from prosfi.eval.generate import Generation
from prosfi.eval.metrics import bootstrap_ci, ks_for, maj_at_k, metrics, pass_at_k


def rec(pid, sample, correct, hit=False, fmt=True, answer=None, steps=0, verified=0, unknown=0, tokens=None,
        source="s", difficulty="1"):
    return {"problem_id": pid, "sample": sample, "answer_correct": correct, "chain_valid": hit, "format_ok": fmt,
            "answer": answer, "n_steps": steps, "verified_steps": verified, "unknown_steps": unknown,
            "tokens": tokens, "source": source, "difficulty": difficulty}


def test_metrics_by_hand_with_pass_and_maj_at_k():
    records = [
        # p1: answers A (right, verified), A (right, one bad step), B (wrong), unreadable
        rec("p1", 0, True, True, answer="A", steps=2, verified=2, tokens=10),
        rec("p1", 1, True, False, answer="A", steps=2, verified=1, unknown=1, tokens=20),
        rec("p1", 2, False, False, answer="B", steps=1, verified=1, tokens=30),
        rec("p1", 3, False, False, fmt=False, tokens=40),
        # p2: wrong majority B, B, then the right answer C twice... only 4 samples: B B C C -> tie, B first
        rec("p2", 0, False, answer="B", steps=1, difficulty="2"),
        rec("p2", 1, False, answer="B", steps=1, difficulty="2"),
        rec("p2", 2, True, True, answer="C", steps=1, verified=1, difficulty="2"),
        rec("p2", 3, True, True, answer="C", steps=1, verified=1, difficulty="2"),
    ]
    m = metrics(records, n_boot=200)
    assert m["n"] == 8 and m["n_problems"] == 2
    assert m["accuracy"] == 0.5
    assert m["format_rate"] == 7 / 8
    assert m["reward_hit"] == 3 / 8
    assert m["step_validity"] == pytest.approx(round(6 / 9, 4))  # verified steps / steps
    assert m["unknown_rate"] == pytest.approx(round(1 / 9, 4))
    assert m["mean_steps"] == 9 / 8
    assert m["mean_tokens"] == 25.0  # only completions that report tokens
    # pass@k: p1 has 2 right of 4, p2 has 2 right of 4
    assert m["pass@1"] == 0.5
    assert m["pass@2"] == pytest.approx(round(1 - comb(2, 2) / comb(4, 2), 4))
    assert m["pass@4"] == 1.0
    # maj@4: p1 votes A (right); p2 ties B/C and B came first (wrong)
    assert m["maj@4"] == 0.5
    assert m["maj@1"] == 0.5  # p1 sample 0 right, p2 sample 0 wrong
    for key in ("accuracy", "reward_hit", "pass@4", "maj@4"):
        lo, hi = m[f"{key}_ci"]
        assert 0 <= lo <= m[key] <= hi <= 1

    s = summarize(records, n_boot=200)
    assert [(g["source"], g["difficulty"]) for g in s["groups"]] == [("s", "1"), ("s", "2")]
    assert s["groups"][0]["accuracy"] == 0.5 and s["groups"][1]["reward_hit"] == 0.5
    assert s["groups"][1]["maj@4"] == 0.0 and s["groups"][0]["maj@4"] == 1.0


def test_no_pass_at_k_with_one_sample_and_none_without_steps():
    m = metrics([rec("p1", 0, True), rec("p2", 0, False)], n_boot=100)
    assert not any(k.startswith(("pass@", "maj@")) for k in m)
    assert m["step_validity"] is None and m["step_validity_ci"] is None  # no steps at all
    assert m["mean_tokens"] is None


def test_pass_at_k_estimator():
    assert pass_at_k(4, 1, 2) == 0.5
    assert pass_at_k(5, 0, 3) == 0.0 and pass_at_k(5, 3, 3) == 1.0
    with pytest.raises(ValueError):
        pass_at_k(2, 1, 3)
    assert ks_for(1) == [] and ks_for(8) == [1, 2, 4, 8] and ks_for(6) == [1, 2, 4, 6]


@given(st.integers(1, 12), st.data())
@settings(max_examples=60, deadline=None)
def test_pass_at_k_matches_enumeration(n, data):
    import itertools

    c = data.draw(st.integers(0, n))
    k = data.draw(st.integers(1, n))
    outcomes = [True] * c + [False] * (n - c)
    subsets = list(itertools.combinations(range(n), k))
    expected = sum(any(outcomes[i] for i in s) for s in subsets) / len(subsets)
    assert pass_at_k(n, c, k) == pytest.approx(expected)


def test_maj_at_k_ignores_unreadable_answers():
    assert maj_at_k([(None, False), (None, False), ("A", True)], 3) == 1.0
    assert maj_at_k([(None, False)], 1) == 0.0
    assert maj_at_k([("B", False), ("A", True), ("A", True)], 2) == 0.0  # tie B/A: B seen first


def test_bootstrap_interval_shrinks_with_more_problems():
    rng = np.random.default_rng(0)
    small = np.array([1.0, 0.0] * 10)
    big = np.array([1.0, 0.0] * 200)
    lo_s, hi_s = bootstrap_ci(small, np.ones_like(small), rng, 2000)
    lo_b, hi_b = bootstrap_ci(big, np.ones_like(big), rng, 2000)
    assert lo_s < lo_b <= 0.5 <= hi_b < hi_s
    # normal approximation: half-width ~ 1.96 * sqrt(.25 / 400) = 0.049
    assert 0.035 < (hi_b - lo_b) / 2 < 0.065
    const = np.ones(30)
    assert bootstrap_ci(const, np.ones(30), rng, 500) == [1.0, 1.0]


OPTIONS = {"A": "True", "B": "False", "C": "Uncertain"}
PROBLEM = Problem.from_dict({
    "id": "p1", "kind": "true_false_uncertain", "goal": "Alive tom", "options": OPTIONS, "answer": "A",
    "source": "toy", "difficulty": "easy",
    "premises": [{"id": "h1", "formal": "∀ x, Cat x → Alive x"}, {"id": "h2", "formal": "Cat tom"}]})
GOOD = ('<think>t</think><steps>[{"id": "s1", "dependencies": ["h1", "h2"], "conclusion": "Alive tom", '
        '"rule": "mp"}]</steps><answer>A</answer>')
BAD_STEP = GOOD.replace('"Alive tom"', '"Alive rex"')
WRONG = GOOD.replace("<answer>A", "<answer>B")


def test_evaluate_scores_completions_with_known_verdicts(tmp_path):
    gens = [Generation("p1", i, t) for i, t in enumerate([GOOD, BAD_STEP, WRONG, "no format at all"])]
    gens.append(Generation("elsewhere", 0, GOOD))  # not an evaluated problem: reported, not counted
    result = evaluate([PROBLEM], gens, out_dir=tmp_path, n_boot=200, plots=False)
    o = result.summary["overall"]
    assert o["n"] == 4
    assert o["accuracy"] == 0.5 and o["reward_hit"] == 0.25 and o["format_rate"] == 0.75
    assert o["step_validity"] == pytest.approx(round(2 / 3, 4))  # GOOD and WRONG's step valid, BAD_STEP's not
    assert o["pass@4"] == 1.0 and o["maj@4"] == 1.0  # A, A, B, unreadable
    assert result.summary["groups"] == [{"source": "toy", "difficulty": "easy", **o}]
    assert any("not among the evaluated problems" in n for n in result.summary["notes"])
    lines = [json.loads(x) for x in (tmp_path / "completions.jsonl").read_text(encoding="utf-8").splitlines()]
    assert [x["reward"] for x in lines[:4]] == [1.0, 0.3, 0.1, 0.0]
    assert lines[1]["steps"][0]["verdict"] == "invalid" and lines[0]["completion"] == GOOD
    saved = json.loads((tmp_path / "summary.json").read_text(encoding="utf-8"))
    assert set(saved) >= {"overall", "groups", "n_problems", "n_completions", "model", "judge"}
    assert saved["n_problems"] == 1 and saved["n_completions"] == 4 and saved["judge"] is None
    assert "| toy | easy | 4 | 50.0 [" in (tmp_path / "summary.md").read_text(encoding="utf-8")


def test_read_completions_numbers_samples_and_skips_bad_lines(tmp_path):
    from prosfi.eval import read_completions

    path = tmp_path / "c.jsonl"
    path.write_text("\n".join([
        json.dumps({"problem_id": "p1", "completion": GOOD}),
        json.dumps({"problem_id": "p1", "completion": [{"role": "assistant", "content": WRONG}], "tokens": 7}),
        "{not json",
        json.dumps({"problem_id": "p2"}),
        json.dumps({"problem_id": "p2", "completion": "x", "sample": 3}),
    ]) + "\n", encoding="utf-8")
    skipped: list = []
    gens = read_completions(path, skipped)
    assert [(g.problem_id, g.sample, g.tokens) for g in gens] == [("p1", 0, None), ("p1", 1, 7), ("p2", 3, None)]
    assert gens[1].completion == WRONG
    assert [line for line, _ in skipped] == [3, 4]
