"""`prosfi eval` end to end on CPU with the tiny local model, `prosfi eval compare` on two fixed
evaluation folders, and eval curves during a (two-step) training run."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
import yaml

from prosfi.cli import main

pytest.importorskip("transformers")

FIXTURES = Path(__file__).parent / "fixtures"


def test_eval_of_the_tiny_model_writes_tables_plots_and_records(tiny_model, tmp_path, capsys):
    out = tmp_path / "eval"
    rc = main(["eval", "--data", "kk:2..3", "--data", "fol:easy", "--count", "2", "--model", str(tiny_model),
               "--n", "2", "--temperature", "1.0", "--max-new-tokens", "16", "--batch-size", "3",
               "--workers", "0", "-o", str(out), "--no-progress", "--label", "tiny"])
    assert rc == 0
    summary = json.loads((out / "summary.json").read_text(encoding="utf-8"))
    assert summary["n_problems"] == 6 and summary["n_completions"] == 12 and summary["model"] == "tiny"
    assert [(g["source"], g["difficulty"]) for g in summary["groups"]] == [("fol", "easy"), ("kk", "2"), ("kk", "3")]
    for m in [summary["overall"], *summary["groups"]]:
        for key in ("n", "accuracy", "format_rate", "reward_hit", "step_validity", "unknown_rate", "mean_steps",
                    "pass@2", "maj@2"):
            assert key in m
        for key in ("accuracy", "format_rate", "reward_hit", "pass@2"):
            assert 0.0 <= m[key] <= 1.0 and len(m[f"{key}_ci"]) == 2
    assert 0 < summary["overall"]["mean_tokens"] <= 16
    records = [json.loads(x) for x in (out / "completions.jsonl").read_text(encoding="utf-8").splitlines()]
    assert len(records) == 12 and {r["sample"] for r in records} == {0, 1}
    assert all({"problem_id", "completion", "answer", "steps", "reward"} <= set(r) for r in records)
    import matplotlib.image as mpimg

    for name in ("accuracy.png", "reward_hit.png"):
        img = mpimg.imread(out / name)
        assert img.shape[0] > 100 and img.shape[1] > 100
    assert "| kk | 2 | 4 |" in (out / "summary.md").read_text(encoding="utf-8")
    assert "| **overall** |" in capsys.readouterr().out


def test_batched_generation_uses_left_padding_correctly(tiny_model):
    """Greedy completions do not depend on the batch a prompt was padded in."""
    from prosfi.eval import GenerationConfig, generate_hf, load_hf, load_source

    problems = load_source("kk:2..4", count=1).problems + load_source("fol:easy", count=1).problems
    model, tok = load_hf(str(tiny_model), "cpu")
    one = generate_hf(problems, model, tok, GenerationConfig(max_new_tokens=12, batch_size=1), progress=False)
    four = generate_hf(problems, model, tok, GenerationConfig(max_new_tokens=12, batch_size=4), progress=False)
    assert [g.completion for g in one] == [g.completion for g in four]
    assert [g.tokens for g in one] == [g.tokens for g in four]


def test_prompts_follow_the_recipe(tmp_path):
    from prosfi.eval import build_prompts, load_source
    from prosfi.eval.cli import prompt_settings

    recipe = tmp_path / "r.yaml"
    recipe.write_text(yaml.safe_dump({"system_prompt": "Be brief.", "dataset": "kk", "dataset_difficulty": "2"}))
    settings = prompt_settings(str(recipe))
    messages = build_prompts(load_source("kk:2", count=1).problems, settings)[0]
    assert messages[0] == {"role": "system", "content": "Be brief."} and messages[-1]["role"] == "user"


def test_reading_a_recipe_prints_nothing_on_stdout(tmp_path):
    """`eval --recipe` prints its table on stdout: the libraries a recipe imports must not print there
    (transformers announces WANDB_MODE=offline with a print on import); a fresh process, so nothing is
    imported yet."""
    import subprocess
    import sys

    recipe = tmp_path / "r.yaml"
    recipe.write_text(yaml.safe_dump({"system_prompt": "Be brief.", "dataset": "kk"}))
    code = f"from prosfi.eval.cli import prompt_settings; prompt_settings({str(recipe)!r})"
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                          env={**os.environ, "WANDB_MODE": "offline"})
    assert proc.stdout == ""


def test_held_out_warning(tmp_path, capsys):
    from prosfi.eval.cli import held_out_notes
    from prosfi.eval.sources import load_source
    from prosfi.train.problems import generate_problems

    recipe = tmp_path / "r.yaml"
    recipe.write_text(yaml.safe_dump({"dataset": "kk", "dataset_difficulty": "2", "dataset_size": 30,
                                      "dataset_seed": 0}))
    training = generate_problems("kk", 30, seed=0, difficulty="2")
    assert any("not held out" in n for n in held_out_notes(training[:3], str(recipe)))
    fresh = load_source("kk:3", count=3).problems  # 3 people: cannot equal a 2-person training puzzle
    assert held_out_notes(fresh, str(recipe)) == []


def test_compare_two_fixed_runs(tmp_path, capsys):
    out = tmp_path / "cmp"
    assert main(["eval", "compare", str(FIXTURES / "eval_runs" / "base"), str(FIXTURES / "eval_runs" / "prosfi"),
                 "-o", str(out)]) == 0
    result = json.loads((out / "compare.json").read_text(encoding="utf-8"))
    assert [r["label"] for r in result["runs"]] == ["base-model", "prosfi-grpo"]
    tests = {(t["source"], t["metric"]): t for t in result["tests"]}
    # K&K: 40 shared problems (the run's extra problem is not paired); reward hit rose on 20 of them
    kk = tests[("kk", "reward_hit")]
    assert kk["n"] == 40 and kk["diff"] == 0.5 and kk["p"] < 0.05 and kk["diff_ci"][0] > 0
    assert tests[("kk", "accuracy")]["diff"] == 0.0 and tests[("kk", "accuracy")]["p"] == 1.0
    assert tests[("fol", "reward_hit")]["diff"] == 0.0
    overall = tests[(None, "reward_hit")]
    assert overall["n"] == 60 and overall["diff"] == pytest.approx(20 / 60, abs=1e-4)
    md = (out / "compare.md").read_text(encoding="utf-8")
    assert "| prosfi-grpo | kk 2 | reward_hit | 40 | +50.0 |" in md
    assert (out / "accuracy.png").exists() and (out / "reward_hit.png").exists()
    assert main(["eval", "compare", str(FIXTURES / "eval_runs" / "base")]) == 2  # needs two folders


def test_eval_curves_during_training(tiny_model, tmp_path):
    pytest.importorskip("trl")
    out = tmp_path / "run"
    recipe = tmp_path / "r.yaml"
    recipe.write_text(yaml.safe_dump({
        "model_name_or_path": str(tiny_model), "dataset": "kk", "dataset_difficulty": "2", "dataset_size": 8,
        "reward_mode": "prosfi", "verifier": {"backends": ["z3"], "workers": 1, "timeout_ms": 1000},
        "torch_threads": 1, "use_cpu": True, "bf16": False, "dataloader_num_workers": 0,
        "per_device_train_batch_size": 4, "num_generations": 2, "max_completion_length": 16, "max_steps": 2,
        "logging_steps": 1, "save_strategy": "no", "report_to": "none", "disable_tqdm": True,
        "eval_data": "kk:2 fol:easy", "eval_limit": 2, "eval_steps": 1, "output_dir": str(out),
    }))
    assert main(["train", str(recipe)]) == 0
    rows = [json.loads(x) for x in (out / "metrics.jsonl").read_text().splitlines()]
    evals = [r for r in rows if "eval_accuracy" in r]
    assert [r["step"] for r in evals] == [0, 1, 2]  # before training and after every step
    assert all(0 <= r["eval_reward_hit"] <= 1 and r["eval_mean_tokens"] <= 16 for r in evals)
    assert [r["step"] for r in rows if "loss" in r] == [1, 2]  # the training rows are still logged


def test_evaluate_checkpoint_in_one_call(tiny_model, tmp_path):
    from prosfi.eval import GenerationConfig, evaluate_checkpoint

    result = evaluate_checkpoint(tiny_model, ["kk:3"], count=2, config=GenerationConfig(max_new_tokens=8),
                                 out_dir=tmp_path, label="before", plots=False)
    assert result.summary["model"] == "before" and result.summary["n_completions"] == 2
    assert result.summary["groups"][0]["source"] == "kk" and (tmp_path / "summary.md").exists()


def test_compare_resamples_ten_thousand_times_by_default(tmp_path, capsys):
    """docs/eval.md: p is twice the share of 10,000 resampled means on the other side of zero (issue 21)."""
    runs = [str(FIXTURES / "eval_runs" / "base"), str(FIXTURES / "eval_runs" / "prosfi")]
    assert main(["eval", "compare", *runs, "--no-plots", "-o", str(tmp_path / "a")]) == 0
    assert json.loads((tmp_path / "a" / "compare.json").read_text())["n_boot"] == 10_000
    assert main(["eval", "compare", *runs, "--no-plots", "--bootstrap", "2000", "-o", str(tmp_path / "b")]) == 0
    assert json.loads((tmp_path / "b" / "compare.json").read_text())["n_boot"] == 2000


def test_paired_bootstrap_in_blocks_matches_one_block():
    import numpy as np

    from prosfi.eval.compare import paired_bootstrap

    rng = np.random.default_rng(1)
    a, b = rng.random(300), rng.random(300) + 0.05
    one = paired_bootstrap(a, b, n_boot=10_000, seed=3, block=10_000)
    blocks = paired_bootstrap(a, b, n_boot=10_000, seed=3, block=700)
    assert one == blocks and one["n"] == 300
