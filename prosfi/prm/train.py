"""`prosfi prm train RECIPE.yaml [--key value ...]`: fine-tune a PRM with TRL, one of two objectives.

- `objective: sft` (FoVer): `SFTTrainer` on conversational prompt/completion rows built from
  `prosfi prm label` records; the loss covers the label word only (`completion_only_loss`).
- `objective: pairwise` (NS-PRM): `RewardTrainer` on `prosfi prm negatives` pairs with their `margin`
  column; sequences end on the step's last token (tokenised here, so TRL adds no EOS), which is
  where the linear head is read.

Keys are the fields of `PRMScriptArguments`, TRL's `SFTConfig` / `RewardConfig` (by objective) and
`ModelConfig`, resolved like `prosfi train` (YAML + overrides, dotted keys, run names). LoRA is
`use_peft: true`; the adapters are merged into the saved model, so `prosfi prm score` loads a plain
model directory with `prosfi_prm.json`. Under DeepSpeed ZeRO-3 the shards are gathered before saving.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from prosfi.prm.dataset import read_records
from prosfi.prm.model import OBJECTIVES, write_marker


@dataclass
class PRMScriptArguments:
    """What to train the PRM on."""

    objective: str = field(default="sft", metadata={"help": "sft (FoVer: correct/incorrect per step with "
                                                   "SFTTrainer) or pairwise (NS-PRM: RewardTrainer on CSP pairs)"})
    train_file: str | None = field(default=None, metadata={"help": "sft: `prosfi prm label` JSONL (train split); "
                                                           "pairwise: `prosfi prm negatives` JSONL"})
    eval_file: str | None = field(default=None, metadata={"help": "optional held-out file of the same kind"})
    problems: list[str] | None = field(default=None, metadata={"help": "pairwise: the problem sources (`--data` specs "
                                                           "of `prosfi prm negatives`) that give each pair's problem text"})
    problems_count: int = field(default=100, metadata={"help": "pairwise: `--count` used with `prosfi prm negatives`"})
    problems_seed: int | None = field(default=None, metadata={"help": "pairwise: `--data-seed` used with `prosfi prm "
                                                          "negatives` (default: its default)"})
    dedupe: bool = field(default=True, metadata={"help": "sft: keep one copy of identical (problem, steps so far, "
                                                 "step) examples"})
    max_examples: int = field(default=0, metadata={"help": "use at most this many training rows (0: all)"})
    tiny_model_if_absent: bool = field(default=False, metadata={"help": "build prosfi's tiny local model at "
                                                               "model_name_or_path when nothing is there"})
    torch_threads: int = field(default=0, metadata={"help": "torch CPU threads (0: torch's default)"})
    dry_run: bool = field(default=False, metadata={"help": "print the resolved configuration and stop"})

    def __post_init__(self) -> None:
        if self.objective not in OBJECTIVES:
            raise ValueError(f"objective: {self.objective!r} is not one of {', '.join(OBJECTIVES)}")


def validate(script: PRMScriptArguments) -> None:
    """Before any model is built or loaded: the data files are there."""
    if script.dry_run:
        return
    if not script.train_file:
        raise ValueError("train_file: set it in the recipe or with --train_file PATH")
    made_by = "prosfi prm label -o DIR" if script.objective == "sft" else "prosfi prm negatives -o FILE"
    for key in ("train_file", "eval_file"):
        path = getattr(script, key)
        if path and not Path(path).is_file():
            raise ValueError(f"{key}: no such file {path!r} (make it with `{made_by}`)")


def objective_of(recipe: str | None, overrides: list[str]) -> str:
    """The objective before parsing (it decides TRL's config class): the command line, else the recipe."""
    for i, token in enumerate(overrides):
        if token in ("--objective", "--objective=") and i + 1 < len(overrides):
            return overrides[i + 1]
        if token.startswith("--objective="):
            return token.split("=", 1)[1]
    if recipe and Path(recipe).is_file():
        from prosfi.train.recipe import load_yaml

        loaded = load_yaml(recipe) or {}  # RecipeError in one line for a YAML syntax error
        if isinstance(loaded, dict) and loaded.get("objective"):
            return str(loaded["objective"])
    return "sft"


def dataclass_types(objective: str) -> tuple[type, ...]:
    from trl import ModelConfig, RewardConfig, SFTConfig

    if objective not in OBJECTIVES:
        from prosfi.train.recipe import RecipeError

        raise RecipeError(f"objective: {objective!r} is not one of {', '.join(OBJECTIVES)}")
    return (PRMScriptArguments, SFTConfig if objective == "sft" else RewardConfig, ModelConfig)


def resolve(recipe: str | None, overrides: list[str], dry_run: bool = False):
    from prosfi.train.recipe import resolve as resolve_recipe

    return resolve_recipe(recipe, overrides, dry_run=dry_run, dataclass_types=dataclass_types(
        objective_of(recipe, overrides)), validate_script=validate)


PAIR_FIELDS: dict[str, Any] = {"problem_id": (str, int), "prefix": list, "chosen": dict, "rejected": dict}


def sft_dataset(path: str, dedupe: bool, limit: int = 0):
    from datasets import Dataset

    from prosfi.prm.dataset import SFT_FIELDS, labelled_records, sft_rows

    rows = sft_rows(labelled_records(path, needs=SFT_FIELDS), dedupe=dedupe)
    if not rows:
        raise ValueError(f"{path}: no labelled steps")
    return Dataset.from_list(rows[:limit] if limit else rows)


def pairwise_dataset(path: str, tokenizer, prompts: dict[str, str], limit: int = 0,
                     pairs: list[dict[str, Any]] | None = None):
    """Tokenised chosen/rejected sequences (context + step, no EOS) with their margins (`pairs`: the
    file's records when already read)."""
    from datasets import Dataset

    from prosfi.prm.inputs import pairwise_text

    rows = []
    for pair in read_records(path, needs=PAIR_FIELDS) if pairs is None else pairs:
        prompt = pair.get("prompt") or prompts.get(pair["problem_id"])
        if prompt is None:
            raise ValueError(f"{path}: no problem text for {pair['problem_id']!r}; pass the problems with --problems SPEC")
        ids = {}
        for side in ("chosen", "rejected"):
            context, step = pairwise_text(prompt, pair["prefix"], pair[side])
            ids[f"{side}_ids"] = tokenizer(context + step, add_special_tokens=False)["input_ids"]
        margin = pair.get("margin", 0.0)
        rows.append({**ids, "margin": float(margin) if isinstance(margin, (int, float)) else 0.0})
        if limit and len(rows) >= limit:
            break
    if not rows:
        raise ValueError(f"{path}: no pairs")
    return Dataset.from_list(rows)


def _prompts(specs: list[str] | None, count: int, seed: int | None) -> dict[str, str]:
    if not specs:
        return {}
    from prosfi.domains import domain_for
    from prosfi.eval.sources import DEFAULT_SEED, all_problems, load_sources

    sources = load_sources(specs, count=count, seed=DEFAULT_SEED if seed is None else seed)
    return {p.id: domain_for(p).user_prompt(p) for p in all_problems(sources)}


def run(resolved) -> str:
    """Train, merge LoRA adapters, save the PRM with its marker; return the output directory."""
    from trl import get_peft_config

    from prosfi.train.sft import model_init_kwargs

    script, training, model_args = resolved.script, resolved.training, resolved.model
    if script.torch_threads > 0:
        import torch

        torch.set_num_threads(script.torch_threads)
    path = model_args.model_name_or_path
    if not path:
        raise ValueError("model_name_or_path: set it in the recipe or on the command line")
    # the data first: a bad file costs nothing (no model built or loaded yet)
    if script.objective == "sft":
        train = sft_dataset(script.train_file, script.dedupe, script.max_examples)
        evaluation = sft_dataset(script.eval_file, script.dedupe) if script.eval_file else None
    else:
        pairs = read_records(script.train_file, needs=PAIR_FIELDS)
        eval_pairs = read_records(script.eval_file, needs=PAIR_FIELDS) if script.eval_file else None
    if script.tiny_model_if_absent:
        from prosfi.train.tiny import build_tiny_model, is_model_dir

        if not is_model_dir(path):
            build_tiny_model(path)
    training.model_init_kwargs = model_init_kwargs(model_args)
    if script.objective == "pairwise" and model_args.use_peft:
        model_args.lora_task_type = "SEQ_CLS"  # trains (and saves) the score head next to the adapters
    peft_config = get_peft_config(model_args)
    resolved.write()
    if script.objective == "sft":
        from trl import SFTTrainer

        trainer = SFTTrainer(model=path, args=training, train_dataset=train, eval_dataset=evaluation,
                             peft_config=peft_config)
    else:
        from transformers import AutoTokenizer
        from trl import RewardTrainer

        tokenizer = AutoTokenizer.from_pretrained(path)
        if tokenizer.pad_token is None:
            tokenizer.pad_token = tokenizer.eos_token
        prompts = _prompts(script.problems, script.problems_count, script.problems_seed)
        train = pairwise_dataset(script.train_file, tokenizer, prompts, script.max_examples, pairs=pairs)
        evaluation = (pairwise_dataset(script.eval_file, tokenizer, prompts, pairs=eval_pairs)
                      if script.eval_file else None)
        trainer = RewardTrainer(model=path, args=training, train_dataset=train, eval_dataset=evaluation,
                                processing_class=tokenizer, peft_config=peft_config)
    trainer.train()
    out = Path(training.output_dir)
    save_full_model(trainer, out)
    if trainer.accelerator.is_main_process:
        trainer.processing_class.save_pretrained(out)
        write_marker(out, script.objective, base_model=path, train_rows=len(train),
                     steps=trainer.state.global_step)
    trainer.accelerator.wait_for_everyone()
    return str(out)


def save_full_model(trainer: Any, out: Path) -> None:
    """Write the trained model to `out` whole (LoRA adapters merged) from the main process. Under ZeRO-3
    every rank holds a shard of each parameter (an empty tensor in place of the weight): all ranks gather
    them first (a collective), as the SFT warm-up's save does, then the main process merges and saves."""
    from contextlib import nullcontext

    model = trainer.accelerator.unwrap_model(trainer.model)
    plugin = getattr(trainer.accelerator.state, "deepspeed_plugin", None)
    gathered = nullcontext()
    if plugin is not None and plugin.zero_stage == 3:
        import deepspeed

        gathered = deepspeed.zero.GatheredParameters(list(model.parameters()), modifier_rank=None)
    with gathered:
        if trainer.accelerator.is_main_process:
            if hasattr(model, "merge_and_unload"):
                model = model.merge_and_unload()
            model.save_pretrained(out)


__all__ = ["PRMScriptArguments", "dataclass_types", "objective_of", "resolve", "run"]
