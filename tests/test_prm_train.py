"""A tiny PRM trains on CPU and scores (FoVer SFT objective; NS-PRM pairwise objective)."""

from __future__ import annotations

import json
from pathlib import Path

import prm_support as S
import pytest

from prosfi.cli import main as prosfi_main

pytest.importorskip("trl")


@pytest.fixture(scope="module")
def tiny(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("prm_tiny") / "model"
    assert prosfi_main(["model", "tiny", "--out", str(out), "--vocab-size", "1024", "--hidden-size", "64",
                        "--intermediate-size", "128", "--num-hidden-layers", "2", "--corpus-problems", "60"]) == 0
    return out


@pytest.fixture(scope="module")
def labelled(tmp_path_factory) -> Path:
    """`prosfi prm label` on gold and corrupted completions of generated problems."""
    from prosfi.data.problem import write_problems

    tmp = tmp_path_factory.mktemp("prm_data")
    problems = S.problems(4, 4)
    write_problems(problems, tmp / "problems.jsonl")
    S.write_jsonl(tmp / "completions.jsonl", S.completions(problems))
    rc = prosfi_main(["prm", "label", "--data", str(tmp / "problems.jsonl"), "--completions",
                      str(tmp / "completions.jsonl"), "--backends", "z3", "--workers", "0", "--balance", "0.5",
                      "--val-fraction", "0.25", "-o", str(tmp / "data")])
    assert rc == 0
    return tmp


def _recipe(tmp: Path, model: Path, objective: str, **extra) -> str:
    import yaml

    body = {"objective": objective, "model_name_or_path": str(model), "use_cpu": True, "bf16": False,
            "torch_threads": 1, "max_steps": 2, "per_device_train_batch_size": 4, "learning_rate": 1e-3,
            "logging_steps": 1, "save_strategy": "no", "report_to": "none", "dataloader_num_workers": 0,
            "max_length": 1024, **extra}
    path = tmp / f"{objective}.yaml"
    path.write_text(yaml.safe_dump(body))
    return str(path)


def test_label_command_writes_split_balanced_stepwise_records(labelled):
    data = labelled / "data"
    train = [json.loads(x) for x in (data / "train.jsonl").read_text().splitlines()]
    val = [json.loads(x) for x in (data / "val.jsonl").read_text().splitlines()]
    assert train and val
    assert not {r["problem_id"] for r in train} & {r["problem_id"] for r in val}
    for r in train + val:
        assert len(r["completions"]) == len(r["labels"]) == len(r["steps"]) and isinstance(r["prompt"], str)
        assert r["first_error"] == next((i for i, x in enumerate(r["labels"]) if not x), None)
    stats = json.loads((data / "stats.json").read_text())
    assert stats["train"]["correct_fraction"] == pytest.approx(0.5, abs=0.1)


def test_sft_rows_load_into_the_trainer_with_the_loss_on_the_label_word(labelled, tiny):
    from transformers import AutoTokenizer
    from trl import SFTConfig, SFTTrainer

    from prosfi.prm.model import GenerativePRM
    from prosfi.prm.train import sft_dataset

    dataset = sft_dataset(str(labelled / "data" / "train.jsonl"), dedupe=True)
    args = SFTConfig(output_dir=str(labelled / "unused"), use_cpu=True, report_to="none", max_steps=1,
                     completion_only_loss=True, max_length=1024)
    trainer = SFTTrainer(model=str(tiny), args=args, train_dataset=dataset)
    tok = AutoTokenizer.from_pretrained(str(tiny))
    prm = GenerativePRM(trainer.model, tok)
    for row, raw in zip(trainer.train_dataset, dataset):
        first = next(i for i, x in enumerate(row["labels"]) if x != -100)  # TRL folds the completion mask in
        expected = prm.correct_id if raw["completion"][0]["content"] == "correct" else prm.incorrect_id
        assert row["input_ids"][first] == expected  # the scored token is the one trained


def test_sft_prm_trains_on_cpu_and_scores(labelled, tiny, tmp_path):
    from prosfi.prm.dataset import read_records
    from prosfi.prm.model import load_prm

    out = tmp_path / "prm"
    recipe = _recipe(tmp_path, tiny, "sft", output_dir=str(out), max_steps=12, completion_only_loss=True)
    # all-correct labels: training must raise P(correct)
    records = read_records(labelled / "data" / "train.jsonl")
    for r in records:
        r["labels"] = [True] * len(r["labels"])
    S.write_jsonl(tmp_path / "all_correct.jsonl", records)
    items = [(r["prompt"], r["steps"][:k], r["steps"][k]) for r in records[:4] for k in range(len(r["steps"]))]
    from transformers import AutoModelForCausalLM, AutoTokenizer

    from prosfi.prm.model import GenerativePRM

    before = GenerativePRM(AutoModelForCausalLM.from_pretrained(str(tiny)), AutoTokenizer.from_pretrained(str(tiny)))
    p_before = before.score_steps(items)
    assert prosfi_main(["prm", "train", recipe, "--train_file", str(tmp_path / "all_correct.jsonl")]) == 0
    assert json.loads((out / "prosfi_prm.json").read_text())["objective"] == "sft"
    prm = load_prm(out, device="cpu")
    p_after = prm.score_steps(items)
    assert all(0.0 < p < 1.0 for p in p_after) and prm.calls == len(items)
    assert sum(p_after) / len(p_after) > sum(p_before) / len(p_before) + 0.05
    # scoring and meta-evaluating held-out chains through the CLI
    rc = prosfi_main(["prm", "score", "--prm", str(out), "--labelled", str(labelled / "data" / "val.jsonl"),
                      "-o", str(tmp_path / "val_scores.jsonl")])
    assert rc == 0
    report = json.loads((tmp_path / "val_scores.jsonl.metaeval.json").read_text())
    assert report["steps"] == sum(len(r["labels"]) for r in read_records(labelled / "data" / "val.jsonl"))
    # Best-of-K on the labelled completions, through the eval code
    rc = prosfi_main(["prm", "rerank", "--prm", str(out), "--data", str(labelled / "problems.jsonl"),
                      "--completions", str(labelled / "completions.jsonl"), "--backends", "z3", "--workers", "0",
                      "--bootstrap", "20", "-o", str(tmp_path / "rerank")])
    assert rc == 0
    rows = json.loads((tmp_path / "rerank" / "rerank.json").read_text())
    methods = {r["method"] for r in rows}
    assert {"prm:min", "prm:product+verifier", "majority", "random (expected)", "oracle (pass@K)"} <= methods
    oracle = next(r for r in rows if r["method"] == "oracle (pass@K)")
    assert all(r["reward_hit"] <= oracle["reward_hit"] + 1e-9 for r in rows)


def test_pairwise_prm_trains_on_cpu_and_scores_sigma_of_the_head(tiny, tmp_path):
    from prosfi.data.problem import write_problems
    from prosfi.prm.dataset import read_records
    from prosfi.prm.model import HeadPRM, load_prm
    from prosfi.train.problems import generate_problems

    problems = generate_problems("proverqa_gen", 8, seed=0, difficulty="medium")
    write_problems(problems, tmp_path / "problems.jsonl")
    pairs = tmp_path / "pairs.jsonl"
    assert prosfi_main(["prm", "negatives", "--data", str(tmp_path / "problems.jsonl"), "--backends", "z3",
                        "--workers", "0", "-o", str(pairs)]) == 0
    rows = read_records(pairs)
    assert rows and {r["kind"] for r in rows} <= {"wrong_operand", "wrong_principle"}
    out = tmp_path / "prm"
    recipe = _recipe(tmp_path, tiny, "pairwise", output_dir=str(out), max_steps=3)
    assert prosfi_main(["prm", "train", recipe, "--train_file", str(pairs),
                        "--problems", str(tmp_path / "problems.jsonl")]) == 0
    prm = load_prm(out, device="cpu")
    assert isinstance(prm, HeadPRM) and json.loads((out / "prosfi_prm.json").read_text())["objective"] == "pairwise"
    from prosfi.data.prompts import user_prompt

    by_id = {p.id: p for p in problems}
    items = [(user_prompt(by_id[r["problem_id"]]), r["prefix"], r[side]) for r in rows[:4]
             for side in ("chosen", "rejected")]
    scores = prm.score_steps(items)
    assert len(scores) == 8 and all(0.0 < s < 1.0 for s in scores)
    # the head reads the step's last token: a sequence ending elsewhere scores differently
    import torch

    context, step = items[0][0], items[0][2]
    from prosfi.prm.inputs import pairwise_text

    text = "".join(pairwise_text(context, items[0][1], step))
    ids = prm.tokenizer(text, add_special_tokens=False, return_tensors="pt")["input_ids"]
    with torch.no_grad():
        head = prm.model(input_ids=ids).logits[0, 0]
    assert torch.sigmoid(head).item() == pytest.approx(scores[0], abs=1e-5)


def test_pairwise_dry_run_resolves_reward_config_with_overrides(tmp_path, capsys):
    recipe = "recipes/prm/cpu_pairwise.yaml"
    assert prosfi_main(["prm", "train", recipe, "--train_file", "x.jsonl", "--learning_rate", "2e-4",
                        "--dry-run"]) == 0
    text = capsys.readouterr().out
    assert "learning_rate: 0.0002" in text and "objective: pairwise" in text and "center_rewards_coefficient" in text
    assert prosfi_main(["prm", "train", recipe, "--objective", "sft", "--dry-run", "--train_file", "x"]) == 0
    assert "completion_only_loss" in capsys.readouterr().out  # SFTConfig chosen by the override
    # an SFT-only key under the pairwise objective is named in the error
    assert prosfi_main(["prm", "train", "recipes/prm/cpu_fover.yaml", "--objective", "pairwise", "--dry-run",
                        "--train_file", "x"]) == 2
    assert "completion_only_loss" in capsys.readouterr().err
    assert prosfi_main(["prm", "train", recipe, "--no_such_key", "1"]) == 2


@pytest.mark.parametrize("recipe", sorted((Path(__file__).resolve().parents[1] / "recipes").rglob("prm/*.yaml")),
                         ids=lambda p: p.name)
def test_every_shipped_prm_recipe_resolves_with_dry_run(recipe, capsys, monkeypatch, tmp_path):
    import yaml

    recipe = recipe.resolve()
    monkeypatch.chdir(tmp_path)  # dry runs must not create anything
    assert prosfi_main(["prm", "train", str(recipe), "--train_file", "x.jsonl", "--dry-run"]) == 0
    printed = yaml.safe_load(capsys.readouterr().out)
    raw = yaml.safe_load(recipe.read_text())
    assert printed["script"]["objective"] == raw["objective"]
    assert printed["model"]["model_name_or_path"] == raw["model_name_or_path"]
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("objective", ["sft", "pairwise"])
def test_lora_prm_is_merged_and_loads_as_a_plain_model(objective, labelled, tiny, tmp_path):
    from prosfi.prm.dataset import read_records
    from prosfi.prm.model import load_prm

    if objective == "sft":
        train = labelled / "data" / "train.jsonl"
        extra = []
    else:
        train = tmp_path / "pairs.jsonl"
        assert prosfi_main(["prm", "negatives", "--data", str(labelled / "problems.jsonl"), "--backends", "z3",
                            "--workers", "0", "-o", str(train)]) == 0
        extra = ["--problems", str(labelled / "problems.jsonl")]
    out = tmp_path / "prm"
    recipe = _recipe(tmp_path, tiny, objective, output_dir=str(out), max_steps=1, use_peft=True, lora_r=4,
                     lora_alpha=8, lora_target_modules=["q_proj", "v_proj"])
    assert prosfi_main(["prm", "train", recipe, "--train_file", str(train), *extra]) == 0
    assert not (out / "adapter_config.json").exists()  # merged into the saved model
    prm = load_prm(out, device="cpu")
    records = read_records(labelled / "data" / "val.jsonl")
    items = [(r["prompt"], r["steps"][:k], r["steps"][k]) for r in records[:2] for k in range(len(r["steps"]))]
    assert all(0.0 < s < 1.0 for s in prm.score_steps(items))


# ZeRO-3 that releases every gathered parameter after use, as it does for a 7B model (a tiny model stays
# under DeepSpeed's live-parameter and reuse limits, so its weights happen to stay gathered after training)
ZERO3_RELEASING = {
    "zero_optimization": {"stage": 3, "stage3_max_live_parameters": 0, "stage3_max_reuse_distance": 0,
                          "stage3_param_persistence_threshold": 0, "stage3_prefetch_bucket_size": 0},
    "train_micro_batch_size_per_gpu": "auto", "gradient_accumulation_steps": "auto", "train_batch_size": "auto",
    "gradient_clipping": "auto", "zero_allow_untested_optimizer": True,
}


@pytest.mark.parametrize("use_peft", [True, False])
def test_prm_train_under_zero3_saves_gathered_full_weights(use_peft, labelled, tiny, tmp_path):
    # issue #21 item 10: the main process saved (and merged) ZeRO-3 shards: empty weights. One DeepSpeed
    # rank on CPU, started the way `accelerate launch` starts it (ZeRO-3 partitions even one rank's weights)
    import os
    import socket
    import sys

    import torch
    from safetensors import safe_open
    from transformers import AutoModelForCausalLM

    pytest.importorskip("deepspeed")
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    ds_config = tmp_path / "zero3.json"
    ds_config.write_text(json.dumps(ZERO3_RELEASING))
    out = tmp_path / "prm"
    lora = {"use_peft": True, "lora_r": 4, "lora_alpha": 8, "lora_target_modules": ["q_proj", "v_proj"]}
    recipe = _recipe(tmp_path, tiny, "sft", output_dir=str(out), max_steps=1, **(lora if use_peft else {}))
    env = {**os.environ, "MASTER_ADDR": "127.0.0.1", "MASTER_PORT": str(port), "RANK": "0", "LOCAL_RANK": "0",
           "WORLD_SIZE": "1", "ACCELERATE_USE_DEEPSPEED": "true", "ACCELERATE_DEEPSPEED_CONFIG_FILE": str(ds_config),
           "ACCELERATE_DEEPSPEED_ZERO3_INIT": "true", "ACCELERATE_MIXED_PRECISION": "no",
           "CUDA_VISIBLE_DEVICES": "", "OMP_NUM_THREADS": "1"}
    cmd = [sys.executable, "-m", "prosfi", "prm", "train", recipe, "--train_file",
           str(labelled / "data" / "train.jsonl")]
    from launch_support import failure, run_launch

    proc = run_launch(cmd, env, timeout=180, what="one ZeRO-3 rank of prosfi prm train")  # alone: about 15 s
    assert proc.returncode == 0, failure(proc)
    base = dict(AutoModelForCausalLM.from_pretrained(tiny).named_parameters())
    with safe_open(str(out / "model.safetensors"), "pt") as f:
        saved = {k: f.get_tensor(k) for k in f.keys()}
    for name, tensor in base.items():  # full tensors, not the [0]-shaped stand-ins of released shards
        assert name in saved and saved[name].shape == tensor.shape, name
    q, k = "model.layers.0.self_attn.q_proj.weight", "model.layers.0.self_attn.k_proj.weight"
    assert not torch.equal(saved[q], base[q].detach())  # trained (LoRA: the adapter merged in)
    if use_peft:
        assert torch.equal(saved[k], base[k].detach())  # no adapter on k_proj: the base weight, whole
        assert not any("lora" in name for name in saved)
    from prosfi.prm.model import load_prm

    assert load_prm(out, device="cpu") is not None


def test_the_quantity_prm_recipe_reads_every_problem_its_negatives_command_makes(tmp_path):
    # the GPU recipe's `problems` once listed only physics while its command also draws GSM8K pairs: every
    # GSM8K pair would have had no problem text. The command in its comment, run on a small GSM8K file:
    import shlex

    import yaml

    from prosfi.prm.train import _prompts

    path = Path(__file__).resolve().parents[1] / "recipes/qwen2.5-7b-instruct/prm/nsprm_quant_pairwise.yaml"
    text = path.read_text()
    command = next(line.lstrip("#").split() for line in text.splitlines() if "prm negatives" in line)
    specs = [command[i + 1] for i, word in enumerate(command) if word == "--data"]
    count = int(command[command.index("--count") + 1])
    raw = yaml.safe_load(text)
    assert raw["problems"] == specs and raw["problems_count"] == count
    fixture = Path(__file__).resolve().parent / "fixtures" / "gsm8k_train_small.jsonl"
    local = [f"gsm8k:{fixture}" if s.startswith("gsm8k:") else s for s in specs]
    pairs = tmp_path / "pairs.jsonl"
    argv = [a for s in local for a in ("--data", s)]
    assert prosfi_main(["prm", "negatives", *argv, "--count", "3", "-o", str(pairs)]) == 0, shlex.join(argv)
    ids = {json.loads(line)["problem_id"] for line in pairs.read_text().splitlines()}
    assert any(i.startswith("gsm8k-") for i in ids) and any(i.startswith("physics-") for i in ids)
    assert ids <= set(_prompts(local, 3, None))
