"""What `prosfi train --dry-run` reports before a GPU is touched: the batch arithmetic of the launch it
is meant for, sampling settings that agree with vLLM's importance-sampling correction, and a stdout
that is only the YAML it prints.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from prosfi.train.batch import grpo_batch
from prosfi.train.recipe import RecipeError, resolve

pytest.importorskip("trl")

ROOT = Path(__file__).resolve().parents[1]
KK_7B = ROOT / "recipes" / "qwen2.5-7b-instruct" / "grpo" / "prosfi_kk.yaml"
BASE = {"model_name_or_path": "some/model", "use_cpu": True, "bf16": False, "report_to": "none"}


def _recipe(tmp_path: Path, **body) -> str:
    path = tmp_path / "exp.yaml"
    path.write_text(yaml.safe_dump({**BASE, **body}))
    return str(path)


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(pdbs=st.sampled_from([2, 4, 8]), gas=st.integers(1, 4), gens=st.sampled_from([2, 4, 8]),
       explicit=st.sampled_from([None, "generation_batch_size", "steps_per_generation"]))
def test_one_process_arithmetic_is_trls_own(tmp_path, pdbs, gas, gens, explicit):
    """For one process (what a config built here has) the derivation agrees with GRPOConfig's."""
    extra = {"generation_batch_size": pdbs * gas * 2} if explicit == "generation_batch_size" else (
        {"steps_per_generation": gas + 1} if explicit == "steps_per_generation" else {})
    body = {"per_device_train_batch_size": pdbs, "gradient_accumulation_steps": gas, "num_generations": gens,
            **extra}
    try:
        r = resolve(_recipe(tmp_path, **body), [])
    except RecipeError as e:  # TRL refused it for one process: ours must refuse it for the same reason
        with pytest.raises(ValueError):
            from trl import GRPOConfig

            GRPOConfig(output_dir=str(tmp_path), use_cpu=True, report_to="none", **body)
        assert "divisible" in str(e)
        return
    assert (r.batch.generation_batch_size, r.batch.steps_per_generation) == (
        r.training.generation_batch_size, r.training.steps_per_generation)


def test_dry_run_uses_the_recipe_process_count_and_the_flag_overrides_it():
    r = resolve(str(KK_7B), [], dry_run=True)
    assert r.script.num_processes == 4  # the single-node launcher's 4 trainer processes
    assert (r.training.generation_batch_size, r.training.steps_per_generation) == (64, 2)  # 4 x 8 x 2
    assert r.batch.prompts_per_step == 8 and r.as_dict()["batch"]["completions_per_step"] == 64
    r = resolve(str(KK_7B), ["--num_processes", "16", "--gradient_accumulation_steps", "1"], dry_run=True)
    assert (r.training.generation_batch_size, r.batch.prompts_per_step) == (128, 16)
    assert r.training.run_name == "prosfi_kk-gradient_accumulation_steps=1"  # a launch detail, not the run


def test_a_batch_the_launch_cannot_split_is_refused_naming_the_process_count(tmp_path):
    recipe = _recipe(tmp_path, per_device_train_batch_size=8, num_generations=8, generation_batch_size=48)
    resolve(recipe, ["--num_processes", "2"], dry_run=True)  # 48 = 8 x 2 x 3
    with pytest.raises(RecipeError, match="num_processes"):
        resolve(recipe, ["--num_processes", "4"], dry_run=True)  # 48 is not a multiple of 8 x 4


def test_grpo_batch_line_states_the_arithmetic():
    class T:
        per_device_train_batch_size, gradient_accumulation_steps, num_generations = 8, 2, 8
        generation_batch_size, steps_per_generation = None, None

    line = grpo_batch(T, 4).line()
    assert line.startswith("4 processes x 8 x 2 accumulation = 64 completions = 8 prompts x 8")


@pytest.mark.parametrize("override", [["--top_p", "0.95"], ["--top_k", "50"], ["--min_p", "0.05"],
                                      ["--repetition_penalty", "1.1"]])
def test_sampling_that_biases_the_is_correction_is_refused(override):
    with pytest.raises(RecipeError, match="trl#6789") as e:
        resolve(str(KK_7B), override, dry_run=True)
    assert override[0][2:] in str(e.value) and "vllm_importance_sampling_correction: false" in str(e.value)
    # without the correction (or without vLLM) the same sampling is the user's choice
    resolve(str(KK_7B), [*override, "--vllm_importance_sampling_correction", "false"], dry_run=True)
    resolve(str(KK_7B), [*override, "--use_vllm", "false"], dry_run=True)


def test_gpu_recipes_sample_the_full_distribution_with_the_is_correction_on():
    for recipe in (ROOT / "recipes" / "qwen2.5-7b-instruct" / "grpo").rglob("*.yaml"):  # the PRM recipes do not sample
        raw = yaml.safe_load(recipe.read_text())
        assert raw["top_p"] == 1.0 and raw["vllm_importance_sampling_correction"] is True, recipe
        assert "trl#6789" in recipe.read_text()  # the comment says why


def test_dry_run_stdout_is_only_yaml_under_a_launch_env_with_wandb_offline(tmp_path):
    """Fresh interpreter, so transformers' import-time 'Running in WANDB offline mode' print happens here
    whatever ran before; WORLD_SIZE as torchrun sets it must neither hang the dry run nor be ignored. prosfi_proverqa, not
    direct_lean: a dry run of direct_lean needs Lean, as the real run does."""
    env = {**os.environ, "PYTHONPATH": str(ROOT), "WANDB_MODE": "offline", "WORLD_SIZE": "8", "RANK": "0",
           "LOCAL_RANK": "0", "MASTER_ADDR": "127.0.0.1", "MASTER_PORT": "1", "CUDA_VISIBLE_DEVICES": ""}
    recipe = ROOT / "recipes" / "qwen2.5-7b-instruct" / "grpo" / "prosfi_proverqa.yaml"
    proc = subprocess.run([sys.executable, "-m", "prosfi.cli", "train", str(recipe), "--num_processes", "0",
                           "--dry-run"], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300, check=False)
    assert proc.returncode == 0, proc.stderr[-3000:]
    printed = yaml.safe_load(proc.stdout)
    assert printed["recipe"] == str(recipe)
    assert printed["batch"]["num_processes"] == 8  # --num_processes 0: the launch's WORLD_SIZE
    assert printed["training"]["generation_batch_size"] == 8 * 8 * 2
    assert "WANDB offline" in proc.stderr and "WANDB" not in proc.stdout
    assert list(tmp_path.iterdir()) == []


def test_summary_shows_the_is_ratio_when_logged_and_is_silent_otherwise():
    from prosfi.train.summary import summarize

    rows = [{"step": s, "reward": 0.1 * s, "sampling/importance_sampling_ratio/mean": r,
             "sampling/importance_sampling_ratio/min": 0.0} for s, r in ((1, 0.9), (2, 0.7), (3, 0.5))]
    text = summarize(rows, "run", window=1).to_text()
    line = next(line for line in text.splitlines() if line.startswith("vLLM IS ratio"))
    assert line.split()[3:6] == ["0.900", "0.500", "sampling/importance_sampling_ratio/mean"]
    plain = summarize([{"step": 1, "reward": 0.5}], "run").to_text()
    assert "IS ratio" not in plain
