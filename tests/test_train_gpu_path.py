"""The GPU path's pieces that run on CPU (issue #21 items 11-13): the 7B recipes' vLLM importance-sampling
and warm-up settings, the warm-up's format-rate gate before GRPO, and `prosfi model merge`."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from prosfi.cli import main as prosfi_main

pytest.importorskip("trl")

ROOT = Path(__file__).resolve().parents[1]
GPU_RECIPES = sorted((ROOT / "recipes" / "qwen2.5-7b-instruct" / "grpo").glob("*.yaml"))


def _resolve(recipe: Path):
    from prosfi.train.recipe import resolve

    return resolve(str(recipe), [], dry_run=True)  # dry: no bf16 GPU needed to resolve


@pytest.mark.parametrize("recipe", GPU_RECIPES, ids=lambda p: p.stem)
def test_gpu_recipes_bound_the_vllm_importance_sampling_ratio_per_token(recipe):
    # the policy is scored with its LoRA adapter unmerged while vLLM samples from merged bf16 weights: a
    # small systematic per-token gap. A sequence-level ratio compounds it over thousands of tokens (and
    # without a lower bound silently down-weights whole sequences); per-token ratios clipped to a band do not
    training = _resolve(recipe).training
    assert training.use_vllm and training.vllm_importance_sampling_correction
    assert training.vllm_importance_sampling_mode == "token_truncate"
    assert training.vllm_importance_sampling_clip_min == pytest.approx(0.5)
    assert training.vllm_importance_sampling_clip_max == pytest.approx(2.0)


@pytest.mark.parametrize("recipe", GPU_RECIPES, ids=lambda p: p.stem)
def test_gpu_recipes_warn_when_the_ratio_mean_leaves_its_band(recipe):
    from prosfi.train.console import is_ratio_band

    low, high = is_ratio_band(_resolve(recipe).script)
    assert 0.5 < low < 1.0 < high < 2.0  # inside the clip band: a drift shows before the clipping hides it


@pytest.mark.parametrize("recipe", [r for r in GPU_RECIPES if yaml.safe_load(r.read_text()).get("sft")],
                         ids=lambda p: p.stem)
def test_gpu_recipes_warm_up_moves_a_lora_model_and_is_checked(recipe):
    r = _resolve(recipe)
    script, model = r.script, r.model
    assert model.use_peft and 1e-4 <= script.sft_learning_rate <= 2e-4  # LoRA's usual range, not 1e-5
    # optimizer steps of the warm-up on one node's 4 processes: enough to learn a format
    per_step = script.sft_per_device_train_batch_size * 4
    steps = script.sft_num_train_epochs * script.sft_size / per_step
    assert steps >= 250
    assert 0.0 < script.sft_min_format_rate <= 1.0 and script.sft_format_check >= 32


def test_a_typo_in_the_importance_sampling_mode_fails_the_dry_run(capsys):
    # TRL raises on an unknown mode only when it scores the first vLLM batch, minutes into a GPU run
    recipe = str(GPU_RECIPES[0])
    assert prosfi_main(["train", recipe, "--dry-run", "--vllm_importance_sampling_mode", "token_trunc"]) == 2
    err = [line for line in capsys.readouterr().err.splitlines() if "error" in line]
    assert len(err) == 1 and "'token_trunc' is not one of token_truncate, token_mask" in err[0]


def test_the_importance_sampling_modes_are_trls():
    import dataclasses
    import re

    from trl import GRPOConfig

    from prosfi.train.config import IS_MODES

    field = next(f for f in dataclasses.fields(GRPOConfig) if f.name == "vllm_importance_sampling_mode")
    named = re.findall(r"'(\w+)'", field.metadata["help"].split("Supported options are:")[1])
    assert sorted(named) == sorted(IS_MODES) and field.default in IS_MODES


def test_warm_up_verdict_names_the_rate_and_the_key():
    from types import SimpleNamespace

    from prosfi.train.heldout import warm_up_verdict

    script = SimpleNamespace(sft_min_format_rate=0.5, sft_format_check=32)
    training = SimpleNamespace(output_dir="runs/x")
    assert warm_up_verdict(0.5, script, training) is None
    line = warm_up_verdict(0.125, script, training)
    assert "12% of 32" in line and "sft_min_format_rate 0.5" in line and "\n" not in line


def test_recipe_stops_before_grpo_when_the_warm_up_rarely_writes_the_format(tiny_model, tmp_path, capsys):
    from test_train_run import _recipe

    out = tmp_path / "out"
    recipe = _recipe(tmp_path, tiny_model, output_dir=str(out), sft=True, sft_size=8, sft_max_steps=1,
                     sft_per_device_train_batch_size=4, sft_min_format_rate=1.0, sft_format_check=4,
                     max_completion_length=16)
    assert prosfi_main(["train", recipe]) == 2
    err = [line for line in capsys.readouterr().err.splitlines() if line.startswith("prosfi train: error")]
    assert len(err) == 1 and "sft_min_format_rate 1" in err[0] and "of 4 held-out prompts" in err[0]
    assert (out / "sft" / "prosfi_sft_done").is_file()  # the warm-up itself finished
    assert (out / "sft" / "format_check" / "completions.jsonl").is_file()  # what it wrote, to read
    assert not (out / "metrics.jsonl").exists() and not (out / "model.safetensors").exists()  # no GRPO


def test_the_format_gate_runs_once_per_warm_up(tiny_model, tmp_path, capsys, monkeypatch):
    # the launchers run `prosfi sft` (the gate) and then `prosfi train`, which finds the warm-up done: the
    # second stage reuses the recorded rate instead of reloading the model and generating again
    import json

    from test_train_run import _recipe

    from prosfi.train import heldout

    out = tmp_path / "out"
    recipe = _recipe(tmp_path, tiny_model, output_dir=str(out), sft=True, sft_size=8, sft_max_steps=1,
                     sft_per_device_train_batch_size=4, sft_min_format_rate=1.0, sft_format_check=4,
                     max_completion_length=16)
    assert prosfi_main(["sft", recipe]) == 2
    first = [line for line in capsys.readouterr().err.splitlines() if line.startswith("prosfi sft: error")]
    record = json.loads((out / "sft" / "format_check" / "gate.json").read_text())
    assert record["key"]["prompts"] == 4 and 0.0 <= record["rate"] < 1.0
    calls = []

    def measured(*args, **kwargs):
        calls.append(args)
        return {"overall": {"format_rate": 0.75}}

    monkeypatch.setattr(heldout, "evaluate_policy", measured)
    assert prosfi_main(["train", recipe]) == 2
    captured = capsys.readouterr()
    again = [line for line in captured.err.splitlines() if line.startswith("prosfi train: error")]
    assert calls == [] and "measured already" in captured.out  # no model loaded, no generation
    assert again[0].split("error: ")[1] == first[0].split("error: ")[1]  # the same verdict, same rate
    # another gate (more prompts) is measured again, and its rate judged against a lowered bound
    assert prosfi_main(["train", recipe, "--sft_format_check", "5", "--sft_min_format_rate", "0.9"]) == 2
    assert len(calls) == 1 and "75% of 5 held-out prompts" in capsys.readouterr().err
    assert json.loads((out / "sft" / "format_check" / "gate.json").read_text())["rate"] == 0.75


def test_min_format_rate_outside_0_1_is_refused(tmp_path, capsys):
    from test_train_run import _recipe

    (tmp_path / "model").mkdir()  # a model folder, so the refusal is about the rate (paths are checked first)
    (tmp_path / "model" / "config.json").write_text("{}")
    recipe = _recipe(tmp_path, tmp_path / "model", sft_min_format_rate=1.5)
    assert prosfi_main(["train", recipe, "--dry-run"]) == 2
    assert "sft_min_format_rate" in capsys.readouterr().err


@pytest.fixture(scope="module")
def tiny_adapter(tiny_model, tmp_path_factory) -> Path:
    """A tiny LoRA adapter on the tiny model, with non-zero weights (a fresh LoRA's B is zero)."""
    import torch
    from peft import LoraConfig, get_peft_model
    from transformers import AutoModelForCausalLM, AutoTokenizer

    out = tmp_path_factory.mktemp("adapter") / "run"
    model = get_peft_model(AutoModelForCausalLM.from_pretrained(tiny_model),
                           LoraConfig(r=4, lora_alpha=8, target_modules=["q_proj", "v_proj"]))
    torch.manual_seed(0)
    with torch.no_grad():
        for name, p in model.named_parameters():
            if "lora_B" in name:
                p.normal_(0, 0.5)
    model.save_pretrained(out)
    AutoTokenizer.from_pretrained(tiny_model).save_pretrained(out)  # as GRPO's save_model writes it
    return out


def test_model_merge_writes_a_full_model_with_the_adapters_outputs(tiny_model, tiny_adapter, tmp_path, capsys):
    import torch
    from peft import PeftModel
    from transformers import AutoModelForCausalLM

    out = tmp_path / "merged"
    assert prosfi_main(["model", "merge", "--adapter", str(tiny_adapter), "-o", str(out)]) == 0
    assert str(out) in capsys.readouterr().out
    assert (out / "config.json").is_file() and not (out / "adapter_config.json").exists()
    merged = AutoModelForCausalLM.from_pretrained(out)
    assert not any("lora" in name for name, _ in merged.named_parameters())  # a plain model (vLLM loads it)
    peft = PeftModel.from_pretrained(AutoModelForCausalLM.from_pretrained(tiny_model), str(tiny_adapter))
    ids = torch.tensor([[5, 17, 42, 99, 3]])
    with torch.no_grad():
        want, got = peft(ids).logits, merged(ids).logits
        base = AutoModelForCausalLM.from_pretrained(tiny_model)(ids).logits
    assert torch.allclose(want, got, atol=1e-4) and not torch.allclose(base, got, atol=1e-3)


def test_merged_model_loads_in_prosfi_eval(tiny_adapter, tmp_path):
    out = tmp_path / "merged"
    assert prosfi_main(["model", "merge", "--adapter", str(tiny_adapter), "-o", str(out)]) == 0
    rc = prosfi_main(["eval", "--model", str(out), "--data", "kk:2", "--count", "2", "--max-new-tokens", "8",
                      "-o", str(tmp_path / "eval")])
    assert rc == 0 and (tmp_path / "eval" / "summary.json").is_file()


def test_model_merge_refuses_what_it_cannot_merge(tiny_model, tiny_adapter, tmp_path, capsys):
    full = ["model", "merge", "--adapter", str(tiny_model), "-o", str(tmp_path / "a")]
    assert prosfi_main(full) == 2 and "a full model already" in capsys.readouterr().err
    assert prosfi_main(["model", "merge", "--adapter", str(tmp_path), "-o", str(tmp_path / "b")]) == 2
    assert "no adapter_config.json" in capsys.readouterr().err
    taken = tmp_path / "taken"
    taken.mkdir()
    (taken / "x").write_text("keep")
    assert prosfi_main(["model", "merge", "--adapter", str(tiny_adapter), "-o", str(taken)]) == 2
    err = capsys.readouterr().err
    assert "not an empty folder" in err and len(err.strip().splitlines()) == 1
    assert (taken / "x").read_text() == "keep"


def test_model_merge_refuses_an_adapter_without_weights(tiny_adapter, tmp_path, capsys):
    import shutil

    bare = tmp_path / "bare"
    bare.mkdir()
    shutil.copy(tiny_adapter / "adapter_config.json", bare)
    for case, weights in (("missing", None), ("no tensors", b"{}"), ("garbage", b"not a header")):
        if weights is not None:
            header = weights if case == "no tensors" else b""
            (bare / "adapter_model.safetensors").write_bytes(len(header).to_bytes(8, "little") + header
                                                             if header else weights)
        out = tmp_path / f"out-{case.replace(' ', '-')}"
        assert prosfi_main(["model", "merge", "--adapter", str(bare), "-o", str(out)]) == 2, case
        err = capsys.readouterr().err.strip().splitlines()
        assert len(err) == 1 and str(bare) in err[0], (case, err)
        assert {"missing": "no adapter_model.safetensors or adapter_model.bin", "no tensors": "holds no tensors",
                "garbage": "not a readable safetensors"}[case] in err[0]
        assert not out.exists()  # refused before anything is loaded or written


def test_held_out_draw_without_sft_ignores_an_sft_size_the_generator_cannot_fill(tmp_path):
    # sft: false, 2-person K&K (~400 distinct puzzles) and the default sft_size 500: the held-out draw
    # used to fail on the SFT set this run never builds
    from test_train_run import _recipe

    from prosfi.train.heldout import held_out_problems
    from prosfi.train.recipe import resolve

    r = resolve(_recipe(tmp_path, tmp_path / "model", eval_held_out=3), [], dry_run=True)
    assert not r.script.sft and r.script.sft_size == 500
    assert len(held_out_problems(r.script)) == 3
