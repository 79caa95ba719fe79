"""Training configuration: prosfi's script arguments next to TRL's `GRPOConfig` and `ModelConfig`.

Reward levels, chain guards, verifier settings and the tiny-model shape are the fields of the
dataclasses that own them (`RewardConfig`, `ChainConfig`, `VerifierConfig`, `TinyModelConfig`),
mirrored here as flat prefixed fields (`reward_right_verified`, `verifier_timeout_ms`, ...), so a
recipe or a command line can set any of them and they cannot drift apart. In a recipe they may also
be written nested (`reward: {right_verified: 1.0}`), on the command line dotted
(`--reward.right_verified 1.0`).
"""

from __future__ import annotations

import dataclasses
import importlib
import types
import typing
from dataclasses import dataclass, field
from typing import Any

# prefix -> (module, class): dataclasses whose fields are mirrored into the script arguments.
# A module that is not importable (an optional piece not installed) contributes no fields.
MIRRORED: dict[str, tuple[str, str]] = {
    "reward": ("prosfi.rewards", "RewardConfig"),
    "chain": ("prosfi.chain", "ChainConfig"),
    "verifier": ("prosfi.verify.config", "VerifierConfig"),
    "lean": ("prosfi.verify.lean.config", "LeanConfig"),
    "tiny": ("prosfi.train.tiny", "TinyModelConfig"),
}



def _source_names(use: str) -> str:
    """The registered data sources for `use`, with their aliases (prosfi.data.sources)."""
    from prosfi.data.sources import known_names

    return known_names(use)


def _difficulty_help() -> str:
    """What dataset_difficulty means, per source that reads it (prosfi.data.sources)."""
    from prosfi.data.sources import SOURCES

    return "; ".join(f"{s.name}: {s.difficulty_help}" for s in SOURCES.values() if s.train and s.difficulty_help)


@dataclass
class _BaseScriptArguments:
    """What to train on, with which reward, in which stages."""

    dataset: str = field(
        default="kk",
        metadata={
            "help": "problems: a data source recipes can train on (docs/data.md, Sources): "
            + _source_names("train") + "; jsonl and gsm8k read dataset_path, proverqa reads the hub or dataset_path"
        },
    )
    toy_layout: str = field(
        default="shuffled",
        metadata={"help": "dataset toy: 'shuffled' premises, or 'fixed' (fact h1, rules h2.. in chain order, "
                  "distractors after: the ids to cite never change)"},
    )
    dataset_path: str | None = field(
        default=None,
        metadata={"help": "jsonl: the problems file; proverqa_hub: the data file in the repo (dev/hard.json)"},
    )
    dataset_size: int = field(
        default=1000,
        metadata={"help": "GRPO problems: generated, or the first N of a file (gsm8k, jsonl, proverqa_hub; -1: every "
                  "problem of the file that the SFT, format-gate and held-out sets do not take; docs/training.md)"},
    )
    dataset_seed: int = field(default=0, metadata={"help": "seed of the problem generator"})
    dataset_difficulty: str | None = field(
        default=None,
        metadata={"help": _difficulty_help()},
    )
    dataset_exclude_uncertain: bool = field(
        default=False,
        metadata={"help": "drop ProverQA problems whose answer is Uncertain (as the DocAILab recipe does)"},
    )
    system_prompt: str | None = field(
        default=None,
        metadata={"help": "system prompt of GRPO and SFT rows (default: each problem's domain prompt; logic: "
                  "prosfi.data.prompts.SYSTEM_PROMPT)"},
    )
    few_shot: int = field(default=0, metadata={"help": "worked examples put before each problem in the prompt"})
    torch_threads: int = field(
        default=0,
        metadata={"help": "CPU threads for torch (0: torch's default); 1 is fastest on a small, shared CPU"},
    )
    reward_mode: str = field(
        default="prosfi",
        metadata={"help": "reward function: prosfi, outcome, step_fraction, format or direct_lean"},
    )
    audit_path: str | None = field(
        default=None,
        metadata={"help": "JSONL file for per-completion verdicts, may contain {rank} (relative paths go "
                  "under output_dir)"},
    )
    reward_asynchronous: bool = field(
        default=False,
        metadata={"help": "use the async variant of the reward function (TRL awaits it off the main thread)"},
    )
    reward_url: str | None = field(
        default=None,
        metadata={"help": "score with `prosfi serve` at this URL (comma-separated: several, sharded) instead "
                  "of in-process; token from $PROSFI_SERVE_TOKEN; unscorable completions get None"},
    )
    tiny_model_if_absent: bool = field(
        default=False,
        metadata={"help": "build the tiny local model at model_name_or_path when nothing is there yet"},
    )
    sft: bool = field(default=False, metadata={"help": "run an SFT warm-up on gold traces before GRPO"})
    sft_size: int = field(default=500, metadata={"help": "problems whose gold traces form the SFT set"})
    sft_draws: int = field(
        default=1,
        metadata={"help": "generated SFT sets of sft_size drawn with successive seeds and pooled: a small "
                  "generated space (2-person K&K: ~400 claim patterns) comes back with other names"},
    )
    sft_sloppy_fraction: float = field(
        default=0.0,
        metadata={"help": "share of SFT gold traces replaced by a careless variant with the same answer whose "
                  "steps cite only their rule (the verifier rejects them): a stand-in for a base model that "
                  "answers right with unsound chains, which only a process reward can tell apart (0: off)"},
    )
    sft_careless_fraction: float = field(
        default=0.0,
        metadata={"help": "share of the SFT problems with a careless wrong-answer variant that get it (logic "
                  "True/False problems where a later rule about the goal has the other sign: the trace cites that "
                  "rule and answers by it, True and False problems alike): a base model that is sometimes wrong, "
                  "so held-out accuracy has room to rise under GRPO (0: off)"},
    )
    sft_max_steps: int = field(default=-1, metadata={"help": "SFT optimizer steps (-1: use sft_num_train_epochs)"})
    sft_num_train_epochs: float = field(default=1.0, metadata={"help": "SFT epochs over the gold traces"})
    sft_learning_rate: float = field(default=2e-5, metadata={"help": "SFT learning rate"})
    sft_completion_only_loss: bool = field(
        default=True,
        metadata={"help": "SFT loss on the completion only; false also trains on the prompt (helps a model "
                  "trained from scratch learn to copy from it)"},
    )
    sft_per_device_train_batch_size: int = field(default=8, metadata={"help": "SFT batch size per device"})
    sft_max_length: int = field(default=1024, metadata={"help": "SFT sequence length (prompt + trace) in tokens"})
    summary_window: int = field(
        default=2, metadata={"help": "logged GRPO steps averaged for the start and end columns of the summary"}
    )
    eval_data: str | None = field(
        default=None,
        metadata={"help": "held-out problems evaluated during training every eval_steps (prosfi eval --data "
                  "specs separated by spaces, e.g. 'kk:2..4 fol:hard'); logs eval/accuracy, eval/reward_hit, ..."},
    )
    eval_limit: int = field(
        default=16, metadata={"help": "eval_data problems per source and difficulty (generated or the first N)"}
    )
    eval_held_out: int = field(
        default=0,
        metadata={"help": "problems of the recipe's dataset, never seen in SFT or GRPO, evaluated (greedy) before "
                  "and after GRPO; the run's summary shows both (0: off)"},
    )
    eval_batch_size: int = field(default=16, metadata={"help": "prompts per generate() call of the held-out evaluation"})
    dry_run: bool = field(
        default=False, metadata={"help": "print the resolved configuration and exit (no model, no verifier)"}
    )
    is_ratio_warn_min: float = field(
        default=0.8,
        metadata={"help": "warn when the logged mean vLLM importance-sampling ratio "
                  "(sampling/importance_sampling_ratio/mean) falls below this (0: never)"},
    )
    is_ratio_warn_max: float = field(
        default=1.25,
        metadata={"help": "warn when the logged mean vLLM importance-sampling ratio rises above this (0: never)"},
    )
    sft_min_format_rate: float = field(
        default=0.0,
        metadata={"help": "after the SFT warm-up, stop the recipe (before GRPO) with a message when the warm-up "
                  "model's format rate on sft_format_check held-out prompts is below this (0: no check)"},
    )
    sft_format_check: int = field(
        default=32,
        metadata={"help": "held-out problems (never in SFT or GRPO) the warm-up's format rate is measured on, "
                  "greedy, when sft_min_format_rate > 0"},
    )
    overwrite: bool = field(
        default=False,
        metadata={"help": "start a fresh run in an output_dir that holds another one (its checkpoints, warm-up and "
                  "summary are removed; metrics.jsonl and the audit are kept and appended to). Without it such a "
                  "directory is resumed from its last checkpoint, or refused"},
    )
    num_processes: int = field(
        default=0,
        metadata={"help": "training processes the recipe's batch is meant for: --dry-run computes "
                  "generation_batch_size/steps_per_generation for it (0: the launch's WORLD_SIZE, else 1); a real "
                  "run uses its launch's count and says so when the two differ"},
    )


def _resolved_fields(cls: type) -> list[tuple[str, Any, dataclasses.Field]]:
    hints = typing.get_type_hints(cls)
    return [(f.name, hints[f.name], f) for f in dataclasses.fields(cls) if f.init]


def _parseable(tp: Any) -> Any | None:
    """The type HfArgumentParser can parse for `tp` (tuples become lists), or None if it cannot."""
    scalar = (str, int, float, bool)
    origin = typing.get_origin(tp)
    if tp in scalar:
        return tp
    if origin is typing.Literal:
        return tp
    if origin in (typing.Union, types.UnionType):
        args = [a for a in typing.get_args(tp) if a is not type(None)]
        if len(args) == 1 and _parseable(args[0]) is not None and typing.get_origin(args[0]) not in (list, tuple):
            return args[0] | None
        return None
    if origin in (list, tuple):
        args = [a for a in typing.get_args(tp) if a is not Ellipsis]
        if len(set(args)) == 1 and args[0] in scalar:
            return list[args[0]]
    return None


def _listify(value: Any) -> Any:
    return list(value) if isinstance(value, tuple) else value


def _mirror_fields(prefix: str, cls: type, taken: set[str]) -> list[tuple[str, Any, dataclasses.Field]]:
    out = []
    for name, tp, f in _resolved_fields(cls):
        key = f"{prefix}_{name}"
        parse_tp = _parseable(tp)
        if parse_tp is None or key in taken:
            continue
        if f.default is not dataclasses.MISSING and isinstance(f.default, (list, tuple)):
            new = field(default_factory=(lambda v=tuple(f.default): list(v)),
                        metadata={"help": f.metadata.get("help", f"{cls.__name__}.{name}")})
        elif f.default is not dataclasses.MISSING:
            new = field(default=f.default, metadata={"help": f.metadata.get("help", f"{cls.__name__}.{name}")})
        elif f.default_factory is not dataclasses.MISSING:
            new = field(  # called per instance, like the original (a default may depend on the machine)
                default_factory=(lambda make=f.default_factory: _listify(make())),
                metadata={"help": f.metadata.get("help", f"{cls.__name__}.{name}")},
            )
        else:
            continue  # a required field has no recipe default to mirror
        out.append((key, parse_tp, new))
    return out


def _load_mirrored() -> dict[str, type]:
    found = {}
    for prefix, (module, name) in MIRRORED.items():
        try:
            found[prefix] = getattr(importlib.import_module(module), name)
        except (ImportError, AttributeError):
            continue
    return found


def _make_script_arguments() -> type:
    base = {n for n, _, _ in _resolved_fields(_BaseScriptArguments)}
    extra: list[tuple[str, Any, dataclasses.Field]] = []
    for prefix, cls in _load_mirrored().items():
        extra += _mirror_fields(prefix, cls, base | {n for n, _, _ in extra})
    return dataclasses.make_dataclass(
        "ProsfiScriptArguments", extra, bases=(_BaseScriptArguments,), namespace={"__module__": __name__}
    )


ProsfiScriptArguments = _make_script_arguments()
ProsfiScriptArguments.__doc__ = (
    "prosfi's script arguments: dataset, reward mode and levels, chain guards, verifier, stages."
)


def sub_config(script_args: Any, prefix: str) -> Any | None:
    """Rebuild the mirrored dataclass for `prefix` from the flat script arguments (None if absent)."""
    cls = _load_mirrored().get(prefix)
    if cls is None:
        return None
    kwargs = {}
    for name, tp, _ in _resolved_fields(cls):
        key = f"{prefix}_{name}"
        if hasattr(script_args, key):
            value = getattr(script_args, key)
            if typing.get_origin(tp) is tuple and isinstance(value, list):
                value = tuple(value)
            kwargs[name] = value
    return cls(**kwargs)


def validate(script_args: Any) -> None:
    """Fail early, naming the field, on values the dataclass types cannot express."""
    from prosfi.data import sources

    try:
        source = sources.get(script_args.dataset, "train", what="name")
    except sources.SpecError as exc:
        raise ValueError(f"dataset: {exc}") from None
    if source.needs_path and not script_args.dataset_path:
        raise ValueError(f"dataset_path: required when dataset is {script_args.dataset!r}")
    if script_args.toy_layout not in ("shuffled", "fixed"):
        raise ValueError(f"toy_layout: 'shuffled' or 'fixed', got {script_args.toy_layout!r}")
    if not 0.0 <= script_args.sft_min_format_rate <= 1.0:
        raise ValueError(f"sft_min_format_rate: between 0 and 1, got {script_args.sft_min_format_rate}")
    if not 0.0 <= script_args.sft_sloppy_fraction <= 1.0:
        raise ValueError(f"sft_sloppy_fraction: between 0 and 1, got {script_args.sft_sloppy_fraction}")
    if not 0.0 <= script_args.sft_careless_fraction <= 1.0:
        raise ValueError(f"sft_careless_fraction: between 0 and 1, got {script_args.sft_careless_fraction}")
    try:
        from prosfi.rewards.formats import format_for, mode_names
    except ImportError:
        mode_names = None
    if mode_names is not None:
        if script_args.reward_mode not in mode_names():
            raise ValueError(f"reward_mode: {script_args.reward_mode!r} is not one of {', '.join(mode_names())}")
        fmt = format_for(script_args.reward_mode)
        if script_args.sft and not fmt.gold_traces:
            raise ValueError(f"sft: the gold traces are in the steps format, not the {fmt.title} one; set sft: false "
                             f"with reward_mode: {script_args.reward_mode}")
    for prefix in MIRRORED:  # their own __post_init__ checks, now rather than when the run reaches them (the
        try:  # chain's quantity_* keys are judged by the quantity domain's rules there: trials in 0..16, ...)
            sub_config(script_args, prefix)
        except (TypeError, ValueError) as e:
            keys = "quantity_*" if "QuantityRules" in str(e) else "*"
            raise ValueError(f"{prefix}_{keys}: {e}") from e


# TRL 1.16's values of `vllm_importance_sampling_mode` (GRPOConfig's help; GRPOTrainer raises on any other, but
# only when the first vLLM batch is scored, minutes into a run): tests/test_train_gpu_path.py keeps them equal
IS_MODES = ("token_truncate", "token_mask", "sequence_truncate", "sequence_mask")


def validate_is_mode(training: Any) -> None:
    """A typo in `vllm_importance_sampling_mode` fails the dry run, not the first vLLM step. Checked whatever
    `use_vllm` says: a recipe is often dry-run without vLLM and launched with it."""
    mode = getattr(training, "vllm_importance_sampling_mode", None)
    if mode is not None and mode not in IS_MODES:
        raise ValueError(f"vllm_importance_sampling_mode: {mode!r} is not one of {', '.join(IS_MODES)} (TRL's values)")


def validate_sampling(training: Any) -> None:
    """vLLM's importance-sampling correction compares vLLM's log-probs of the sampled tokens with the
    trainer's. TRL has vLLM return them after its logit processing (`processed_logprobs`: top-p/top-k/min-p
    renormalised, penalties applied) while the trainer computes them over the full vocabulary with
    temperature only, so every token's ratio carries the kept probability mass (< 1) and the sequence
    ratio over thousands of tokens goes to 0, silently scaling the loss down (huggingface/trl#6789).
    Fail early on that combination, naming what to change. The importance-sampling mode is checked first."""
    validate_is_mode(training)
    if not (getattr(training, "use_vllm", False) and getattr(training, "vllm_importance_sampling_correction", False)):
        return
    gen = training.generation_kwargs if isinstance(training.generation_kwargs, dict) else {}
    reshaping = {
        "top_p": gen.get("top_p", training.top_p) < 1.0,
        "top_k": (gen.get("top_k", training.top_k) or 0) > 0,
        "min_p": (gen.get("min_p", training.min_p) or 0.0) > 0.0,
        "repetition_penalty": gen.get("repetition_penalty", training.repetition_penalty) != 1.0,
    }
    bad = [k for k, v in reshaping.items() if v]
    if bad:
        raise ValueError(
            f"{', '.join(bad)}: vLLM reports log-probs after {', '.join(bad)} reshapes the distribution while the "
            "trainer recomputes them over the full vocabulary, which biases vllm_importance_sampling_correction "
            "towards 0 (huggingface/trl#6789); sample with top_p: 1.0, top_k: 0, min_p: null, repetition_penalty: 1.0 "
            "(temperature is fine), or set vllm_importance_sampling_correction: false"
        )
