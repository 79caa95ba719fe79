"""Evaluating a direct-Lean policy: `prosfi eval --recipe` with a `reward_mode: direct_lean` recipe and a
direct-Lean run's held-out evaluation (`prosfi.train.heldout.score`) score its completions in its own format
(`DirectLeanFormat.score`): the answer against the gold, the proof through the Lean REPL, the reward under the
recipe's levels, and proof rates instead of step rates. Before, they were read as steps completions, so every
completion was a format failure and the table said nothing true.

The REPL is tests/standin_repl.py (not Lean: it answers "ok" unless the proof carries a marker,
`standin_error` for a Lean error, `standin_crash` for a REPL that dies), so these tests check the plumbing
from completion to verdict, never whether a proof is right. A missing Lean is a REPL command that does not
exist: every proof is then `unknown`, never verified, with a warning and a note in the summary.
"""

from __future__ import annotations

import json
import logging
import sys

import pytest
import yaml
from test_lean_direct import FALSE_, KK, STANDIN, TFU, UNCERTAIN, completion

from prosfi.eval.evaluate import evaluate
from prosfi.eval.generate import Generation
from prosfi.rewards.config import RewardConfig
from prosfi.verify.config import VerifierConfig
from prosfi.verify.lean.config import LeanConfig
from prosfi.verify.verifier import Verifier

PROBLEMS = [TFU, FALSE_, UNCERTAIN, KK]
GENERATIONS = [
    Generation("pqa-1", 0, completion("A", "exact h1 candy h2")),                  # right, proof accepted
    Generation("pqa-1", 1, completion("B", "exact h1 candy h2")),                  # wrong answer
    Generation("pqa-2", 0, completion("B", "exact standin_error")),                # right, Lean refuses the proof
    Generation("pqa-2", 1, "<think>x</think><steps>[]</steps><answer>B</answer>"),  # the steps format: broken here
    Generation("pqa-3", 0, completion("C")),                                       # right Uncertain: no proof asked
    Generation("kk-1", 0, completion("(1) Zoey is a knave (2) Oliver is a knight", "exact standin_crash")),
]
STANDIN_LEAN = LeanConfig(repl_command=(sys.executable, STANDIN), workers=2, timeout_s=5.0)
NO_LEAN = LeanConfig(repl_command=("/nonexistent/lean-repl",), workers=1)


def _verifier(lean: LeanConfig) -> Verifier:
    return Verifier(VerifierConfig(backends=("z3",), workers=0, lean=lean))  # the proofs go to Lean, not z3


def _by_sample(records) -> dict[tuple[str, int], dict]:
    return {(r["problem_id"], r["sample"]): r for r in records}


def test_eval_scores_direct_lean_completions_in_their_own_format(tmp_path):
    with _verifier(STANDIN_LEAN) as verifier:
        result = evaluate(PROBLEMS, GENERATIONS, verifier=verifier, reward_config=RewardConfig(mode="direct_lean"),
                          out_dir=tmp_path / "run", plots=False)
    recs = _by_sample(result.records)
    right = recs[("pqa-1", 0)]
    assert right["proof"] == "valid" and right["proof_verified"] and right["answer_correct"] and right["reward"] == 1.0
    wrong = recs[("pqa-1", 1)]
    assert not wrong["answer_correct"] and wrong["proof"] is None and wrong["reward"] == 0.1
    refused = recs[("pqa-2", 0)]
    assert refused["proof"] == "invalid" and refused["reward"] == 0.3 and "Lean error" in refused["reason"]
    assert recs[("pqa-2", 1)]["format_ok"] is False and recs[("pqa-2", 1)]["reward"] == 0.0
    assert recs[("pqa-3", 0)]["proof"] is None and recs[("pqa-3", 0)]["reward"] == 0.3
    crashed = recs[("kk-1", 0)]
    assert crashed["proof"] == "unknown" and not crashed["proof_verified"] and "crash" in crashed["reason"]
    assert "steps" not in right and "n_steps" not in right  # no step columns that would read as zero steps

    overall = result.summary["overall"]
    assert overall["accuracy"] == pytest.approx(4 / 6, abs=1e-4) and overall["format_rate"] == pytest.approx(5 / 6, abs=1e-4)
    assert overall["reward_hit"] == pytest.approx(1 / 6, abs=1e-4)
    assert overall["proof_verified_rate"] == pytest.approx(1 / 6, abs=1e-4)
    assert overall["proof_unknown_rate"] == pytest.approx(1 / 6, abs=1e-4)
    assert "step_validity" not in overall and "mean_steps" not in overall
    assert result.summary["reward_mode"] == "direct_lean" and result.summary["notes"] == []
    md = (tmp_path / "run" / "summary.md").read_text()
    assert "| proof verified | proof unknown |" in md and "verified steps" not in md
    assert "reward hit = right answer with a proof Lean accepts" in md


def test_eval_without_lean_reports_proofs_unknown_and_says_so(tmp_path, caplog):
    with caplog.at_level(logging.WARNING, logger="prosfi.rewards.direct_lean"), _verifier(NO_LEAN) as verifier:
        result = evaluate(PROBLEMS, GENERATIONS, verifier=verifier, reward_config=RewardConfig(mode="direct_lean"),
                          out_dir=tmp_path / "run", plots=False)
    recs = _by_sample(result.records)
    for key in (("pqa-1", 0), ("pqa-2", 0), ("kk-1", 0)):  # every proof of a right answer
        assert recs[key]["proof"] == "unknown" and recs[key]["reward"] == 0.3
        assert recs[key]["reason"].startswith("Lean unavailable: REPL command")
    assert recs[("pqa-1", 1)]["proof"] is None and recs[("pqa-1", 1)]["reward"] == 0.1  # still a wrong answer
    overall = result.summary["overall"]
    assert overall["proof_verified_rate"] == 0.0 and overall["reward_hit"] == 0.0
    assert overall["proof_unknown_rate"] == 0.5 and overall["accuracy"] == pytest.approx(4 / 6, abs=1e-4)
    assert any("Lean is not available here" in r.getMessage() for r in caplog.records)
    (note,) = result.summary["notes"]
    assert note.startswith("3 of 6 completions have a proof Lean could not check here") and "not verified" in note
    assert note in (tmp_path / "run" / "summary.md").read_text()


def _script(**keys):
    pytest.importorskip("trl")
    from prosfi.train.config import ProsfiScriptArguments

    return ProsfiScriptArguments(reward_mode="direct_lean", sft=False, **keys)


@pytest.mark.parametrize("lean", [STANDIN_LEAN, NO_LEAN], ids=["standin", "no-lean"])
def test_held_out_evaluation_of_a_direct_lean_run_scores_proofs(lean, tmp_path):
    from prosfi.train.heldout import score
    from prosfi.train.summary import Summary

    script = _script(reward_right_unverified=0.4)  # the run's levels reach the held-out rewards
    with _verifier(lean) as verifier:  # a run's verifier carries its lean_* keys (grpo.make_verifier)
        summary = score(GENERATIONS, PROBLEMS, script, verifier, tmp_path / "eval_after", "after")
    records = _by_sample(json.loads(line) for line in (tmp_path / "eval_after" / "completions.jsonl").open())
    verified = lean is STANDIN_LEAN
    assert records[("pqa-1", 0)]["proof"] == ("valid" if verified else "unknown")
    assert records[("pqa-1", 0)]["reward"] == (1.0 if verified else 0.4)
    assert not records[("pqa-1", 1)]["answer_correct"]
    overall = summary["overall"]
    assert overall["reward_hit"] == (pytest.approx(1 / 6, abs=1e-4) if verified else 0.0)
    assert overall["accuracy"] == pytest.approx(4 / 6, abs=1e-4)  # not 0: the completions are read as Lean's
    assert bool(summary["notes"]) is not verified
    run = Summary("run", 1, 1)
    run.add_held_out(summary, summary)
    text = run.to_text()
    assert "proof_verified_rate" in text and "step_validity" not in text


def test_prosfi_eval_with_a_direct_lean_recipe_scores_lean_proofs(tmp_path, capsys):
    """The path the bug was on: `prosfi eval --recipe` built Lean prompts and scored steps. One subprocess-free
    CLI run (~6 s: resolving the recipe imports the trainer's stack)."""
    pytest.importorskip("trl")
    from prosfi.cli import main

    recipe = tmp_path / "direct_lean.yaml"
    recipe.write_text(yaml.safe_dump({"reward_mode": "direct_lean", "sft": False, "dataset": "proverqa_gen",
                                      "dataset_size": 4, "reward": {"right_unverified": 0.4}}))
    data = tmp_path / "problems.jsonl"
    data.write_text("".join(json.dumps(p.to_dict()) + "\n" for p in PROBLEMS))
    comps = tmp_path / "completions.jsonl"
    comps.write_text("".join(json.dumps(g.to_json()) + "\n" for g in GENERATIONS))
    out = tmp_path / "eval"
    rc = main(["eval", "--recipe", str(recipe), "--data", str(data), "--completions", str(comps), "-o", str(out),
               "--no-plots", "--no-progress", "--lean-repl-command", f"{sys.executable} {STANDIN}"])
    assert rc == 0
    summary = json.loads((out / "summary.json").read_text())
    assert summary["reward_mode"] == "direct_lean"
    assert summary["overall"]["proof_verified_rate"] == pytest.approx(1 / 6, abs=1e-4)
    records = _by_sample(json.loads(line) for line in (out / "completions.jsonl").open())
    assert records[("pqa-2", 0)]["reward"] == 0.4  # the recipe's right_unverified level, Lean's "invalid"
    assert "proof verified" in capsys.readouterr().out


@pytest.mark.lean
def test_real_lean_scores_direct_lean_eval(tmp_path):
    """Where Lean is built: the proofs of test_lean_direct's real-Lean test, scored by eval."""
    gens = [Generation("pqa-1", 0, completion("A", "exact h1 candy h2")),
            Generation("pqa-1", 1, completion("A", "exact h2")),  # a type error: invalid
            Generation("pqa-2", 0, completion("B", "intro hn\nexact h1 candy h2 hn")),
            Generation("kk-1", 0, completion("(1) Zoey is a knave (2) Oliver is a knight",
                                             "constructor\n· simp_all\n· exact h2"))]
    with _verifier(LeanConfig(workers=2, timeout_s=120)) as verifier:
        result = evaluate(PROBLEMS, gens, verifier=verifier, reward_config=RewardConfig(mode="direct_lean"),
                          plots=False)
    assert [r["proof"] for r in result.records] == ["valid", "invalid", "valid", "valid"]
    assert result.summary["overall"]["proof_verified_rate"] == 0.75 and result.summary["notes"] == []
