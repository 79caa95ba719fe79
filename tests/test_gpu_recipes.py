"""The one-GPU experiment's recipes and scripts (issue #28, "Ready for the first GPU run"), checked on CPU:
the SmolLM2 recipes ask the CPU demo's question (same task keys as recipes/demo/cpu_chains.yaml), differ
from each other only in the reward, resolve, and fit their budget; both GPU scripts parse and, without
CUDA, stop in their preflight with one line naming what is missing."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[1]
CPU_DEMO = ROOT / "recipes" / "demo" / "cpu_chains.yaml"
GPU = ROOT / "recipes" / "demo" / "gpu_smollm2.yaml"
GPU_OUTCOME = ROOT / "recipes" / "demo" / "gpu_smollm2_outcome.yaml"
# what makes the task (and so the comparison) the CPU demo's: the problems, the warm-up's mix, the held-out set
TASK_KEYS = ("dataset", "dataset_path", "dataset_size", "dataset_seed", "dataset_difficulty", "dataset_exclude_uncertain",
             "toy_layout", "system_prompt", "few_shot", "sft_size", "sft_draws", "sft_sloppy_fraction", "eval_held_out")
SCRIPTS = ("gpu_smoke.sh", "gpu_experiment.sh")
PY_ENV = {"PYTHON": sys.executable}  # the scripts' Python (launch/gpu_common.sh): this one, with torch


def _load(path: Path) -> dict:
    return yaml.safe_load(path.read_text())


@pytest.mark.parametrize("recipe", [GPU, GPU_OUTCOME], ids=lambda p: p.stem)
def test_the_gpu_recipes_pose_the_cpu_demos_task(recipe):
    cpu, gpu = _load(CPU_DEMO), _load(recipe)
    assert {k: gpu.get(k) for k in TASK_KEYS} == {k: cpu.get(k) for k in TASK_KEYS}


def test_the_outcome_twin_differs_only_in_the_reward():
    pro, outcome = _load(GPU), _load(GPU_OUTCOME)
    assert {k for k in pro.keys() | outcome.keys() if pro.get(k) != outcome.get(k)} == {"reward_mode"}
    assert (pro["reward_mode"], outcome["reward_mode"]) == ("prosfi", "outcome")


def test_the_gpu_recipe_resolves_and_fits_one_gpu():
    pytest.importorskip("trl")
    from prosfi.train.recipe import resolve

    r = resolve(str(GPU), [], dry_run=True)
    script, training = r.script, r.training
    assert training.bf16 and not training.use_cpu and not training.use_vllm and not script.tiny_model_if_absent
    assert r.batch.num_processes == 1 and training.per_device_train_batch_size == 64  # 8 prompts x 8
    # the comment's arithmetic: 60 steps at <= 4 s with the twin beside it, leaving 8 minutes room
    assert training.max_steps * 4 <= 270 and training.save_strategy == "no"
    assert 0 < script.sft_min_format_rate <= 1 and script.sft_max_steps * script.sft_per_device_train_batch_size >= 5000


@pytest.mark.skipif(shutil.which("bash") is None, reason="needs bash")
@pytest.mark.parametrize("script", SCRIPTS)
def test_the_gpu_scripts_parse(script):
    assert subprocess.run(["bash", "-n", str(ROOT / "launch" / script)], check=False).returncode == 0


@pytest.mark.skipif(shutil.which("bash") is None, reason="needs bash")
@pytest.mark.parametrize("script", SCRIPTS)
def test_without_cuda_each_script_says_so_in_one_line(script, tmp_path):
    # ~5 s each: one Python start with torch (the preflight), nothing trained
    env = {**os.environ, **PY_ENV, "CUDA_VISIBLE_DEVICES": "", "PYTHONPATH": str(ROOT), "RUN": str(tmp_path / "run")}
    model = tmp_path / "model"
    model.mkdir()
    (model / "config.json").write_text("{}")  # the experiment's model folder is there: only CUDA is missing
    proc = subprocess.run(["bash", str(ROOT / "launch" / script), str(model if "experiment" in script else tmp_path / "w")],
                          env=env, capture_output=True, text=True, timeout=300, check=False)
    lines = proc.stdout.strip().splitlines()
    name = script.removesuffix(".sh")
    assert proc.returncode == 1 and len(lines) == 1, proc.stdout + proc.stderr[-2000:]
    assert lines[0].startswith(f"{name}: FAIL [preflight] missing: CUDA (torch ") and "sees no GPU" in lines[0]
    assert not (tmp_path / "run").exists() and not (tmp_path / "w").exists()  # nothing started


@pytest.mark.skipif(shutil.which("bash") is None, reason="needs bash")
def test_the_experiment_names_a_missing_model_folder_and_the_command_that_makes_it(tmp_path):
    env = {**os.environ, **PY_ENV, "CUDA_VISIBLE_DEVICES": "", "PYTHONPATH": str(ROOT), "RUN": str(tmp_path / "run")}
    proc = subprocess.run(["bash", str(ROOT / "launch" / "gpu_experiment.sh"), str(tmp_path / "smollm2")], env=env,
                          capture_output=True, text=True, timeout=300, check=False)
    lines = proc.stdout.strip().splitlines()
    assert proc.returncode == 1 and len(lines) == 1
    assert f"run `prosfi model smollm2 --out {tmp_path / 'smollm2'}`" in lines[0] and "CUDA" in lines[0]


@pytest.mark.skipif(shutil.which("bash") is None, reason="needs bash")
def test_wheels_that_are_not_a_folder_are_named(tmp_path):
    env = {**os.environ, **PY_ENV, "CUDA_VISIBLE_DEVICES": "", "PYTHONPATH": str(ROOT), "WHEELS": str(tmp_path / "none")}
    proc = subprocess.run(["bash", str(ROOT / "launch" / "gpu_smoke.sh"), str(tmp_path / "w")], env=env,
                          capture_output=True, text=True, timeout=60, check=False)
    assert proc.returncode == 1 and proc.stdout.strip() == f"gpu_smoke: FAIL [preflight] WHEELS={tmp_path / 'none'} is not a folder"


@pytest.mark.skipif(shutil.which("bash") is None, reason="needs bash")
def test_carried_wheels_are_unpacked_once_and_importable(tmp_path):
    import zipfile

    wheels = tmp_path / "wheels"
    wheels.mkdir()
    with zipfile.ZipFile(wheels / "fakepkg-1.0-py3-none-any.whl", "w", zipfile.ZIP_LZMA) as z:  # LZMA: as slimmed
        z.writestr("fakepkg/__init__.py", "VALUE = 7\n")
    site = tmp_path / "site"
    body = ('. launch/gpu_common.sh; use_wheels t; "$PY" -c "import fakepkg, prosfi; print(fakepkg.VALUE)"; '
            'echo "$PYTHONPATH"')
    env = {**os.environ, **PY_ENV, "WHEELS": str(wheels), "WHEELS_SITE": str(site)}
    for _ in range(2):  # the second time finds the set unpacked already
        proc = subprocess.run(["bash", "-c", body], cwd=ROOT, env=env, capture_output=True, text=True, check=False)
        out = proc.stdout.split()
        assert proc.returncode == 0 and out[0] == "7", proc.stderr
        assert out[1].split(":")[:2] == [str(ROOT), str(site)]  # this tree first, then the wheels
    assert (site / ".prosfi-wheels").read_text() == "./fakepkg-1.0-py3-none-any.whl"
