"""`prosfi eval` on quantity problems: dimension-error and grounding-failure rates by source and difficulty,
plots for them, and one report for a mixed logic + quantity run."""

from __future__ import annotations

import json

from quant_chain_support import EGGS, EGGS_GOLD, SPEED, SPEED_GOLD, completion, step

from prosfi.data.problem import Problem
from prosfi.eval.evaluate import evaluate
from prosfi.eval.generate import Generation
from prosfi.eval.metrics import summarize

LOGIC = Problem.from_dict({
    "id": "p1", "kind": "true_false_uncertain", "source": "toy", "question": "?", "goal": "Alive tom",
    "premises": [{"id": "h1", "formal": "∀ x, Cat x → Alive x"}, {"id": "h2", "formal": "Cat tom"}],
    "options": {"A": "True", "B": "False", "C": "Uncertain"}, "answer": "A", "difficulty": 1})
GOOD_LOGIC = ('<think>t</think><steps>[{"id": "s1", "dependencies": ["h1", "h2"], "conclusion": "Alive tom", '
              '"rule": "mp"}]</steps><answer>A</answer>')


def _gens():
    return [
        Generation("p1", 0, GOOD_LOGIC), Generation("p1", 1, "junk"),
        Generation("eggs", 0, completion(EGGS_GOLD, "18")),  # 2 steps, honest
        Generation("eggs", 1, completion([step("s1", "g1 - g2 - g3", 9),
                                          step("s2", "s1 * g4", 18, "kg")], "18")),  # 1 dimension error
        Generation("speed", 0, completion(SPEED_GOLD, "80 km/h")),
        Generation("speed", 1, completion([step("s1", "g1 / g2 * 1", 80, "km/h"), step("s2", "g1 * 7", 840, "km")],
                                          "80 km/h")),  # 1 ungrounded literal, 1 unused step
    ]


def test_mixed_run_is_one_report_with_quantity_rates_where_defined(tmp_path):
    result = evaluate([LOGIC, EGGS, SPEED], _gens(), out_dir=tmp_path / "run")
    s = result.summary
    assert s["n_completions"] == 6 and s["n_problems"] == 3
    groups = {(g["source"], g["difficulty"]): g for g in s["groups"]}
    assert set(groups) == {("toy", "1"), ("gsm8k", "2"), ("physics", "easy")}
    assert "dimension_error_rate" not in groups[("toy", "1")]  # logic steps carry no such category
    assert groups[("gsm8k", "2")]["dimension_error_rate"] == 0.25  # 1 of 4 steps
    assert groups[("gsm8k", "2")]["grounding_failure_rate"] == 0.0
    # sample 1: `g1 * 7` (no week or day in the problem) is ungrounded, and s1 is not on its path (unused)
    assert groups[("physics", "easy")]["grounding_failure_rate"] == round(2 / 3, 4)
    assert s["overall"]["dimension_error_rate"] == round(1 / 7, 4)
    assert groups[("gsm8k", "2")]["reward_hit"] == 0.5 and groups[("toy", "1")]["reward_hit"] == 0.5
    out = tmp_path / "run"
    assert (out / "dimension_error_rate.png").is_file() and (out / "grounding_failure_rate.png").is_file()
    md = (out / "summary.md").read_text()
    assert "| dimension errors | grounding failures |" in md
    recs = [json.loads(line) for line in (out / "completions.jsonl").read_text().splitlines()]
    eggs_bad = next(r for r in recs if r["problem_id"] == "eggs" and r["sample"] == 1)
    assert eggs_bad["dimension_errors"] == 1 and eggs_bad["guarded_steps"] == 2
    assert "guarded_steps" not in next(r for r in recs if r["problem_id"] == "p1")


def test_logic_only_summaries_keep_their_keys():
    recs = [{"problem_id": "a", "source": "kk", "difficulty": "2", "format_ok": True, "answer_correct": True,
             "chain_valid": True, "n_steps": 2, "verified_steps": 2, "unknown_steps": 0}]
    overall = summarize(recs, n_boot=10)["overall"]
    assert not any(k.startswith(("dimension", "grounding")) for k in overall)
