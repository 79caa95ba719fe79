"""Resolve a recipe: YAML file + command-line overrides -> (script, training, model) arguments.

TRL's `TrlParser` does the parsing; this module adds what an ablation workflow needs on top:
nested/dotted keys, YAML values coerced to the field's type (`5e-6` is a string to YAML),
unknown keys rejected with the closest valid names, run names built from the recipe and its
overrides, a default output directory per run, and `resume_from_checkpoint: auto`.
"""

from __future__ import annotations

import argparse
import contextlib
import difflib
import os
import re
import zlib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from prosfi.train.batch import LAUNCH_ENV, GrpoBatch, grpo_batch, launch_processes

# Overrides that change where or how a run is logged or generates, not what it trains: left out of run
# names, so a launcher's connection flags (--vllm_server_host ...) keep the recipe's run directory.
_NOT_IN_RUN_NAME = {
    "output_dir", "run_name", "report_to", "logging_steps", "logging_dir", "save_steps", "save_strategy",
    "resume_from_checkpoint", "dry_run", "log_completions", "num_completions_to_print", "audit_path",
    "save_total_limit", "push_to_hub", "hub_model_id", "disable_tqdm", "logging_first_step",
    "use_vllm", "vllm_mode", "vllm_server_host", "vllm_server_port", "vllm_server_base_url",
    "vllm_server_timeout", "vllm_gpu_memory_utilization", "vllm_tensor_parallel_size", "vllm_group_port",
    "dataloader_num_workers", "torch_threads", "use_cpu", "num_processes", "overwrite",
}
# Short names for the keys people sweep most.
_SHORT = {"learning_rate": "lr", "num_generations": "n", "per_device_train_batch_size": "bs",
          "max_completion_length": "maxlen", "temperature": "temp", "model_name_or_path": "model"}
RUNS_ROOT = "runs"


class RecipeError(ValueError):
    """A recipe or override the user must fix; the message says what to change."""


@dataclass
class ResolvedRecipe:
    script: Any
    training: Any
    model: Any
    recipe_path: str | None
    overrides: list[tuple[str, str]] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    batch: GrpoBatch | None = None
    resume_refused: bool = False  # resume_from_checkpoint set to false explicitly
    run_plan: Any = None  # what the run does with its output_dir (rundir.RunPlan), set by preflight
    wandb_notice: str | None = None  # `report_to: wandb` logging offline or disabled, set by preflight

    def as_dict(self) -> dict[str, Any]:
        return {
            "recipe": self.recipe_path,
            "overrides": {k: v for k, v in self.overrides},
            **({"batch": self.batch.as_dict()} if self.batch else {}),
            "script": _plain(vars(self.script)),
            "model": _plain(vars(self.model)),
            "training": _plain(self.training.to_dict()),
        }

    def to_yaml(self) -> str:
        import yaml

        head = "".join(f"# note: {n}\n" for n in self.notes)
        return head + yaml.safe_dump(self.as_dict(), sort_keys=False, allow_unicode=True, width=110)

    def write(self, directory: str | Path | None = None) -> Path:
        out = Path(directory or self.training.output_dir)
        out.mkdir(parents=True, exist_ok=True)
        path = out / "prosfi_config.yaml"
        path.write_text(self.to_yaml())
        return path


def _plain(d: dict[str, Any]) -> dict[str, Any]:
    def conv(v: Any) -> Any:
        if isinstance(v, (str, int, float, bool)) or v is None:
            return v
        if isinstance(v, (list, tuple)):
            return [conv(x) for x in v]
        if isinstance(v, dict):
            return {str(k): conv(x) for k, x in v.items()}
        return getattr(v, "value", str(v))

    return {k: conv(v) for k, v in d.items() if not k.startswith("_")}


def make_parser(dataclass_types: tuple[type, ...] | None = None):
    """A TrlParser over (ProsfiScriptArguments, GRPOConfig, ModelConfig), no abbreviated flags."""
    from trl import GRPOConfig, ModelConfig, TrlParser

    from prosfi.train.config import ProsfiScriptArguments

    types_ = dataclass_types or (ProsfiScriptArguments, GRPOConfig, ModelConfig)
    return TrlParser(types_, allow_abbrev=False)


def parser_dests(parser: argparse.ArgumentParser) -> dict[str, argparse.Action]:
    return {a.dest: a for a in parser._actions if a.dest != "help"}


def parser_flags(parser: argparse.ArgumentParser) -> dict[str, argparse.Action]:
    """Command-line spellings (underscored) -> action, including the `no_*` negations of booleans."""
    return {o[2:].replace("-", "_"): a for a in parser._actions if a.dest != "help"
            for o in a.option_strings if o.startswith("--")}


def unknown_key_error(key: str, known: dict[str, Any], where: str) -> RecipeError:
    close = difflib.get_close_matches(key, list(known), n=3, cutoff=0.6)
    hint = f"; did you mean {', '.join(close)}?" if close else "; run `prosfi train --help` for the keys"
    return RecipeError(f"unknown key {key!r} in {where}{hint}")


def flatten(config: dict[str, Any], known: dict[str, Any], where: str) -> dict[str, Any]:
    """`reward: {right_verified: 1}` -> `reward_right_verified: 1` for group keys that are not fields."""
    flat: dict[str, Any] = {}
    for key, value in config.items():
        key = str(key).replace("-", "_")
        if isinstance(value, dict) and key not in known:
            for sub, sub_value in flatten(value, {}, where).items():
                flat[f"{key}_{sub}"] = sub_value
        else:
            flat[key] = value
    return flat


def _coerce(action: argparse.Action, value: Any) -> Any:
    """Give a YAML value the field's type, as the command line would (YAML reads 5e-6 as a string)."""
    if value is None or action.type is None:
        return value
    if action.nargs in ("+", "*"):
        items = value if isinstance(value, (list, tuple)) else [value]
        return [action.type(x) if isinstance(x, str) else x for x in items]
    if isinstance(value, str):
        return action.type(value)
    if isinstance(value, int) and action.type is float:
        return float(value)
    return value


def _check_value(action: argparse.Action, key: str, value: str) -> None:
    """Type-check one command-line value so the error names the key (argparse would print its usage)."""
    tokens = value.split(",") if action.nargs in ("+", "*") else [value]
    for token in tokens:
        if token == "" and action.nargs == "?":
            continue  # a bare boolean flag
        try:
            converted = action.type(token) if action.type else token
        except (TypeError, ValueError, argparse.ArgumentTypeError) as e:
            raise RecipeError(f"--{key}: invalid value {token!r} ({e})") from e
        if action.choices is not None and converted not in action.choices:
            raise RecipeError(f"--{key}: {token!r} is not one of {', '.join(map(str, action.choices))}")


def normalise_overrides(argv: list[str]) -> list[str]:
    """`--reward.right_verified=1` -> `--reward_right_verified 1`; dashes in keys become underscores."""
    out: list[str] = []
    for token in argv:
        if token.startswith("--") and len(token) > 2:
            key, eq, value = token[2:].partition("=")
            out.append("--" + key.replace(".", "_").replace("-", "_"))
            if eq:
                out.append(value)
        else:
            out.append(token)
    return out


def override_pairs(argv: list[str]) -> list[tuple[str, str]]:
    pairs: list[tuple[str, str]] = []
    key = None
    for token in argv:
        if token.startswith("--"):
            key = token[2:]
            pairs.append((key, ""))
        elif key is not None:
            k, v = pairs[-1]
            pairs[-1] = (k, f"{v},{token}" if v else token)
    return pairs


def run_name(recipe_path: str | None, overrides: list[tuple[str, str]]) -> str:
    """`prosfi_kk` + `-lr=2e-6-beta=0.01` for the overrides that change what is trained."""
    base = Path(recipe_path).stem if recipe_path else "prosfi"
    parts = [base]
    for key, value in overrides:
        if key in _NOT_IN_RUN_NAME:
            continue
        value = Path(value).name if "/" in value else value
        value = value if len(value) <= 24 else value[:16] + "~" + f"{zlib.crc32(value.encode()):08x}"
        parts.append(f"{_SHORT.get(key, key)}={value or 'true'}")
    return re.sub(r"[^A-Za-z0-9._=,+~-]", "_", "-".join(parts))[:200]


def _has_bf16_device() -> bool:
    import torch

    return bool(torch.cuda.is_available() and torch.cuda.is_bf16_supported())


def load_yaml(recipe_path: str) -> Any:
    """The recipe's YAML, or RecipeError in one line (missing file, syntax error with its place)."""
    import yaml

    try:
        return yaml.safe_load(Path(recipe_path).read_text(encoding="utf-8-sig"))  # a BOM too
    except FileNotFoundError as e:
        raise RecipeError(f"recipe not found: {recipe_path}") from e
    except yaml.YAMLError as e:
        mark = getattr(e, "problem_mark", None)
        where = f" at line {mark.line + 1}, column {mark.column + 1}" if mark is not None else ""
        what = getattr(e, "problem", None) or str(e).splitlines()[0]
        raise RecipeError(f"recipe {recipe_path} is not valid YAML{where}: {what}") from e
    except (OSError, UnicodeDecodeError) as e:
        raise RecipeError(f"cannot read recipe {recipe_path}: {getattr(e, 'strerror', None) or e}") from e


def resolve(recipe_path: str | None, overrides: list[str], *, dry_run: bool = False,
            dataclass_types: tuple[type, ...] | None = None, validate_script=None) -> ResolvedRecipe:
    """Parse a recipe and overrides into the three argument dataclasses, or raise RecipeError.

    `dataclass_types` and `validate_script` serve other entry points (`prosfi prm train`): their own
    (script, training, model) dataclasses and script check; the defaults are `prosfi train`'s (with
    the GRPO sampling check).
    """

    parser = make_parser(dataclass_types)
    known = parser_dests(parser)
    config: dict[str, Any] = {}
    if recipe_path:
        loaded = load_yaml(recipe_path)
        if loaded is None:
            loaded = {}
        if not isinstance(loaded, dict):
            raise RecipeError(f"recipe {recipe_path} must be a YAML mapping of keys to values")
        env = loaded.pop("env", {}) or {}
        if not isinstance(env, dict):
            raise RecipeError(f"recipe {recipe_path}: 'env' must be a mapping of variable names to values")
        for k, v in env.items():
            os.environ.setdefault(str(k), str(v))
        config = flatten(loaded, known, recipe_path)
        for key in config:
            if key not in known:
                raise unknown_key_error(key, known, f"recipe {recipe_path}")
        try:
            config = {k: _coerce(known[k], v) for k, v in config.items()}
        except (TypeError, ValueError) as e:
            raise RecipeError(f"recipe {recipe_path}: {e}") from e

    argv = normalise_overrides(list(overrides))
    pairs = override_pairs(argv)
    flags = parser_flags(parser)
    for key, value in pairs:
        if key not in flags:
            raise unknown_key_error(key, flags, "the command line")
        _check_value(flags[key], key, value)
    dry_run = dry_run or any(k == "dry_run" and v.lower() not in ("false", "0", "no") for k, v in pairs)
    pairs = [(k, v) for k, v in pairs if k != "dry_run"]
    explicit = set(config) | {k for k, _ in pairs}

    notes: list[str] = []
    name = run_name(recipe_path, pairs)
    if "run_name" not in explicit:
        config["run_name"] = name
    if "output_dir" not in explicit:
        config["output_dir"] = str(Path(RUNS_ROOT) / (config.get("run_name") or name))
    if dry_run:
        config["dry_run"] = True
    # TrainingArguments refuses bf16 without a bf16 device at construction; a dry run resolves the
    # recipe, not the hardware, so it checks with use_cpu on and restores the recipe's value.
    cpu_for_check = dry_run and not _has_bf16_device()
    recipe_use_cpu = config.get("use_cpu", False)
    if cpu_for_check:
        config["use_cpu"] = True  # an explicit --use_cpu on the command line still wins

    parser.set_defaults_with_config(**config)
    launched = launch_processes()
    try:
        # a dry run loads nothing and joins no process group, even where a launcher's variables are set
        with _without_launch_env() if dry_run else contextlib.nullcontext():
            script, training, model, rest = parser.parse_args_into_dataclasses(
                args=argv, return_remaining_strings=True
            )
    except SystemExit as e:  # argparse already printed the reason (bad value for a typed key)
        raise RecipeError(f"invalid value on the command line: {' '.join(overrides)}") from e
    except ValueError as e:  # a config's __post_init__ rejected a combination of values
        raise RecipeError(str(e)) from e
    if rest:
        raise RecipeError(f"unexpected arguments {rest}: overrides are `--key value` pairs")
    if cpu_for_check and "use_cpu" not in {k for k, _ in pairs}:
        training.use_cpu = recipe_use_cpu
        if (training.bf16 or training.fp16) and not recipe_use_cpu:
            notes.append("no bf16-capable accelerator here: its hardware checks were skipped for this dry run")

    from prosfi.train.config import validate, validate_sampling

    try:
        if validate_script is None:
            validate(script)
            validate_sampling(training)
        else:
            validate_script(script)
    except ValueError as e:
        raise RecipeError(str(e)) from e
    raw_resume = training.resume_from_checkpoint
    refused = "resume_from_checkpoint" in explicit and str(raw_resume).lower() in ("false", "no", "none", "")
    _resolve_resume(training, notes, auto=validate_script is None and not getattr(script, "overwrite", False)
                    and not refused)
    batch = _batch(script, training, explicit, dry_run, launched)
    return ResolvedRecipe(script, training, model, recipe_path, pairs, notes, batch, resume_refused=refused)


def _batch(script: Any, training: Any, explicit: set[str], dry_run: bool, launched: int | None) -> GrpoBatch | None:
    """The batch arithmetic of the run: a dry run's for the process count it will have (num_processes,
    else the launch's WORLD_SIZE, else 1), written into its config; a real run's for its own count.
    None for a trainer without generations (the PRM recipes' SFT and reward trainers)."""
    if not hasattr(training, "num_generations"):
        return None
    n = (getattr(script, "num_processes", None) or launched or 1) if dry_run else training.world_size
    try:
        batch = grpo_batch(training, n, explicit)
    except ValueError as e:
        raise RecipeError(f"{e}; set num_processes (or --num_processes) to the launch's process count") from e
    if dry_run:
        training.generation_batch_size = batch.generation_batch_size
        training.steps_per_generation = batch.steps_per_generation
    return batch


@contextlib.contextmanager
def _without_launch_env():
    saved = {k: os.environ.pop(k) for k in LAUNCH_ENV if k in os.environ}
    try:
        yield
    finally:
        os.environ.update(saved)


def _resolve_resume(training: Any, notes: list[str], auto: bool = False) -> None:
    """`resume_from_checkpoint`: true/auto -> the last checkpoint in output_dir (or a fresh start). With
    `auto` (prosfi train without --overwrite) a run left unset resumes from output_dir's last checkpoint
    too: re-running a recipe continues its run instead of mixing a second one into the same folder."""
    from prosfi.train.rundir import last_checkpoint

    value = training.resume_from_checkpoint
    if value is None and auto:
        training.resume_from_checkpoint = last_checkpoint(training.output_dir)
        if training.resume_from_checkpoint:
            notes.append(f"resume: {training.resume_from_checkpoint} (output_dir holds a checkpoint)")
        return
    if value is None or str(value).lower() in ("false", "no", "none", ""):
        training.resume_from_checkpoint = None
        return
    if str(value).lower() in ("true", "auto", "yes", "last"):
        out = Path(training.output_dir)
        last = last_checkpoint(out)
        training.resume_from_checkpoint = last
        notes.append(f"resume: {last}" if last else f"resume: no checkpoint in {out}, starting fresh")


def split_argv(argv: list[str]) -> tuple[str | None, list[str]]:
    """(recipe path, overrides): the recipe is the first bare argument or the value of --config."""
    argv = list(argv)
    if "--config" in argv:
        i = argv.index("--config")
        if i + 1 >= len(argv):
            raise SystemExit("prosfi train: --config needs a path")
        recipe = argv[i + 1]
        return recipe, argv[:i] + argv[i + 2:]
    if argv and not argv[0].startswith("-"):
        return argv[0], argv[1:]
    return None, argv
