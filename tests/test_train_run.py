"""Training runs on CPU with the tiny local model: `prosfi model tiny`, a two-step GRPO run (with the
SFT warm-up stage) through `prosfi train`, a resumed run, wandb offline logging, and (slow) two processes.

Sizes are the smallest that still exercise every stage: 2 layers, hidden 64, 24-token completions,
batch 4 with 2 generations, verifier in one worker process.
"""

from __future__ import annotations

import json
import os
import shutil
import sys
from pathlib import Path

import pytest
import yaml

from prosfi.cli import main as prosfi_main

pytest.importorskip("trl")


def _recipe(tmp_path: Path, model: Path, **extra) -> str:
    body = {
        "model_name_or_path": str(model), "dataset": "kk", "dataset_difficulty": "2", "dataset_size": 16,
        "reward_mode": "prosfi", "verifier": {"backends": ["z3"], "workers": 1, "timeout_ms": 1000},
        "torch_threads": 1, "use_cpu": True, "bf16": False, "gradient_checkpointing": False,
        "dataloader_num_workers": 0, "per_device_train_batch_size": 4, "num_generations": 2,
        "max_completion_length": 24, "max_steps": 2, "learning_rate": 1e-4, "logging_steps": 1,
        "save_strategy": "steps", "save_steps": 1, "report_to": "none", "seed": 0, "disable_tqdm": True,
        "audit_path": "audit.jsonl",
        **extra,
    }
    path = tmp_path / "tiny_kk.yaml"
    path.write_text(yaml.safe_dump(body))
    return str(path)


def _rows(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def test_tiny_model_loads_offline_with_a_chat_template(tiny_model):
    from transformers import AutoModelForCausalLM, AutoTokenizer

    from prosfi.data.gold import gold_completion
    from prosfi.domains.prompts import to_prompt_row
    from prosfi.train.problems import generate_problems

    model = AutoModelForCausalLM.from_pretrained(tiny_model)
    tok = AutoTokenizer.from_pretrained(tiny_model)
    assert type(model).__name__ == "Qwen2ForCausalLM" and model.config.hidden_size == 64
    problem = generate_problems("kk", 1, seed=7, difficulty="2")[0]
    text = tok.apply_chat_template(to_prompt_row(problem)["prompt"], add_generation_prompt=True, tokenize=False)
    assert text.startswith("<|im_start|>system\n") and text.endswith("<|im_start|>assistant\n")
    gold = gold_completion(problem)
    ids = tok(gold)["input_ids"]
    assert tok.decode(ids) == gold  # byte-level: nothing is lost
    assert len(ids) < len(gold) / 2  # trained on the task's text, so traces are short in tokens
    assert tok.eos_token == "<|im_end|>" and model.generation_config.eos_token_id == tok.eos_token_id


@pytest.fixture(scope="module")
def two_step_run(tiny_model, tmp_path_factory) -> Path:
    tmp = tmp_path_factory.mktemp("run")
    out = tmp / "out"
    recipe = _recipe(tmp, tiny_model, output_dir=str(out), sft=True, sft_size=8, sft_max_steps=2,
                     sft_per_device_train_batch_size=4)
    assert prosfi_main(["train", recipe, "--learning_rate", "2e-4"]) == 0
    return out


def test_two_step_grpo_run_through_prosfi_train(two_step_run):
    out = two_step_run
    assert (out / "model.safetensors").is_file() and (out / "sft" / "prosfi_sft_done").is_file()
    config = yaml.safe_load((out / "prosfi_config.yaml").read_text())
    assert config["training"]["learning_rate"] == pytest.approx(2e-4)  # the override, not the recipe
    assert config["overrides"] == {"learning_rate": "2e-4"}
    train_rows = [r for r in _rows(out / "metrics.jsonl") if "reward" in r]
    assert [r["step"] for r in train_rows] == [1, 2]
    for row in train_rows:
        assert 0.0 <= row["reward"] <= 1.0
        assert {"prosfi/answer_accuracy", "prosfi/chain_valid_rate", "prosfi/format_rate"} <= set(row)
    audit = _rows(out / "audit.jsonl")
    assert audit[0]["event"] == "run_start" and audit[0]["resume_from_step"] is None  # the run's marker
    audit = audit[1:]
    assert len(audit) == 2 * 4  # every completion of both steps was scored and recorded
    assert sorted({r["step"] for r in audit}) == [1, 2]  # numbered as metrics.jsonl numbers them
    assert all(isinstance(r["completion"], str) for r in audit)  # what the model wrote, readable
    summary = json.loads((out / "summary.json").read_text())
    assert summary["steps"] == 2
    assert summary["metrics"]["reward"]["start"] == pytest.approx(train_rows[0]["reward"] / 2
                                                                   + train_rows[1]["reward"] / 2)
    assert summary["metrics"]["chain validity"]["key"] == "prosfi/chain_valid_rate"


def test_resumed_run_continues_from_the_last_checkpoint(two_step_run, tiny_model, tmp_path, capsys):
    out = tmp_path / "out"
    shutil.copytree(two_step_run, out)
    recipe = _recipe(tmp_path, tiny_model, output_dir=str(out), sft=True, sft_size=8, sft_max_steps=2)
    assert prosfi_main(["train", recipe, "--max_steps", "3", "--resume_from_checkpoint", "auto"]) == 0
    config = yaml.safe_load((out / "prosfi_config.yaml").read_text())
    assert config["training"]["resume_from_checkpoint"] == str(out / "checkpoint-2")
    train_rows = [r for r in _rows(out / "metrics.jsonl") if "reward" in r]
    assert [r["step"] for r in train_rows] == [1, 2, 3]  # steps 1-2 from the first run, only 3 is new
    state = json.loads((out / "checkpoint-3" / "trainer_state.json").read_text())
    assert state["global_step"] == 3
    # the audit tells the same story: one marker per run, steps numbered as in metrics.jsonl
    audit = _rows(out / "audit.jsonl")
    assert [r["resume_from_step"] for r in audit if "event" in r] == [None, 2]
    assert sorted(r["step"] for r in audit if "event" not in r) == [1] * 4 + [2] * 4 + [3] * 4
    printed = capsys.readouterr().out
    assert "SFT warm-up: already done" in printed and "SFT warm-up on gold traces" not in printed
    assert "{'loss'" not in printed and "{'reward'" not in printed  # compact lines, not raw dicts
    assert "[grpo] step 3/3  reward" in printed
    card = (out / "README.md").read_text()
    assert "[None]" not in card and str(tiny_model) in card and 'model="None"' not in card


def test_prosfi_sft_runs_the_warm_up_alone(tiny_model, tmp_path):
    out = tmp_path / "out"
    recipe = _recipe(tmp_path, tiny_model, output_dir=str(out), sft_size=8, sft_max_steps=1)
    assert prosfi_main(["sft", recipe]) == 0
    assert (out / "sft" / "prosfi_sft_done").is_file() and (out / "sft" / "model.safetensors").is_file()
    assert not (out / "model.safetensors").exists()  # no GRPO stage


def test_lora_warm_up_is_merged_and_grpo_trains_a_new_adapter(tiny_model, tmp_path):
    from transformers import AutoModelForCausalLM

    out = tmp_path / "out"
    recipe = _recipe(tmp_path, tiny_model, output_dir=str(out), sft=True, sft_size=8, sft_max_steps=1,
                     max_steps=1, save_strategy="no", use_peft=True, lora_r=4, lora_alpha=8,
                     lora_target_modules=["q_proj", "v_proj"])
    assert prosfi_main(["train", recipe]) == 0
    merged = AutoModelForCausalLM.from_pretrained(out / "sft")  # a plain model: the SFT adapter was merged
    assert not any("lora" in name for name, _ in merged.named_parameters())
    assert (out / "adapter_config.json").is_file()  # GRPO saved its own LoRA adapter


def test_wandb_offline_run_holds_the_prosfi_metrics(tiny_model, tmp_path, monkeypatch):
    pytest.importorskip("wandb")
    monkeypatch.setenv("WANDB_MODE", "offline")
    monkeypatch.setenv("WANDB_DIR", str(tmp_path / "wandb_root"))
    monkeypatch.setenv("WANDB_SILENT", "true")
    monkeypatch.setenv("WANDB_PROJECT", "prosfi-tests")  # restored after the test (run() only sets a default)
    out = tmp_path / "out"
    recipe = _recipe(tmp_path, tiny_model, output_dir=str(out), max_steps=1, save_strategy="no",
                     report_to=["wandb"], log_completions=True)
    assert prosfi_main(["train", recipe]) == 0
    runs = list((tmp_path / "wandb_root" / "wandb").glob("offline-run-*"))
    assert len(runs) == 1
    logged = b"".join(p.read_bytes() for p in runs[0].rglob("*") if p.is_file())
    for key in (b"prosfi/answer_accuracy", b"prosfi/chain_valid_rate", b"rewards/prosfi_reward/mean"):
        assert key in logged
    tables = list(runs[0].rglob("completions_*.table.json"))  # log_completions: the completions table
    assert tables and {"completion", "prosfi_reward", "verdicts"} <= set(json.loads(tables[-1].read_text())["columns"])
    summary = json.loads((out / "summary.json").read_text())
    assert summary["where"]["wandb"] == str(runs[0])


def test_direct_lean_without_lean_fails_with_a_clear_message(tiny_model, tmp_path, capsys):
    import shutil as sh

    if sh.which("lake"):
        pytest.skip("Lean is installed here; the message is for machines without it")
    recipe = _recipe(tmp_path, tiny_model, output_dir=str(tmp_path / "out"), reward_mode="direct_lean")
    assert prosfi_main(["train", recipe]) == 2
    err = capsys.readouterr().err
    assert "direct_lean" in err and "Lean" in err


@pytest.mark.slow
def test_two_process_cpu_run(tiny_model, tmp_path):
    out = tmp_path / "out"
    recipe = _recipe(tmp_path, tiny_model, output_dir=str(out), audit_path="audit-{rank}.jsonl",
                     save_strategy="no")
    from launch_support import failure, run_launch

    env = {**os.environ, "CUDA_VISIBLE_DEVICES": "", "OMP_NUM_THREADS": "1"}
    cmd = [sys.executable, "-m", "torch.distributed.run", "--standalone", "--nproc_per_node", "2",
           "-m", "prosfi.train", recipe]
    proc = run_launch(cmd, env, timeout=240, what="two CPU ranks (torchrun)")  # alone: about 17 s
    assert proc.returncode == 0, failure(proc)
    # each rank generated and scored its own 4 completions per step (per_device_train_batch_size)
    for rank in (0, 1):
        assert len([r for r in _rows(out / f"audit-{rank}.jsonl") if "event" not in r]) == 2 * 4
    train_rows = [r for r in _rows(out / "metrics.jsonl") if "reward" in r]
    assert [r["step"] for r in train_rows] == [1, 2]
