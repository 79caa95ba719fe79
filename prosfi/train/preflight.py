"""Checks a recipe can run before anything heavy loads, so `--dry-run` catches what a run would hit.

A newcomer's mistakes (a `dataset_size` larger than the generator's distinct puzzles, a model path
that points nowhere) otherwise surface minutes into a run as a library traceback. Generated and
local datasets are drawn here exactly as the run draws them (cheap: seconds for thousands of
problems); hub datasets are left to the run (a dry run loads nothing from the network).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from prosfi.train.recipe import RecipeError

OFFLINE_DATASETS = ("kk", "proverqa_gen", "jsonl", "physics")


def check_model_path(script: Any, model_args: Any) -> None:
    """A model path that is neither a model folder, nor buildable (tiny_model_if_absent), nor a hub id."""
    path = model_args.model_name_or_path
    if not path:
        raise RecipeError("model_name_or_path: set it in the recipe or on the command line")
    if script.tiny_model_if_absent or Path(path).exists():
        if Path(path).exists() and not Path(path).is_dir():
            raise RecipeError(f"model_name_or_path: {path} is a file; give the model's folder")
        return
    hub_like = path.count("/") == 1 and not path.startswith((".", "/", "~")) and " " not in path
    if not hub_like:
        raise RecipeError(f"model_name_or_path: no model at {path}; give a local model folder, a hub id "
                          "(e.g. Qwen/Qwen2.5-7B-Instruct), or set tiny_model_if_absent: true to build the "
                          "tiny model there")


def check_data(script: Any, sft_only: bool = False) -> str:
    """Draw the run's problems (GRPO set, and the SFT set when the recipe warms up); a one-line
    description of them, or RecipeError saying which key to change."""
    if script.dataset not in OFFLINE_DATASETS:
        return f"data: {script.dataset} is loaded by the run (not checked by a dry run)"
    from prosfi.train.problems import from_script_args
    from prosfi.train.sft import sft_problems

    def hint(key: str) -> str:
        if script.dataset == "kk":
            return (f"lower {key} or widen dataset_difficulty (people counts, e.g. '2-4'; "
                    f"now {script.dataset_difficulty!r})")
        if script.dataset == "jsonl":
            return f"lower {key} or use a larger file than {script.dataset_path}"
        return f"lower {key}"

    parts = []
    if not sft_only:
        try:
            grpo = from_script_args(script)
        except (OSError, ValueError) as e:
            raise RecipeError(f"dataset_size {script.dataset_size}: {e}; {hint('dataset_size')}") from e
        if len(grpo) < script.dataset_size and script.dataset != "jsonl":
            raise RecipeError(f"dataset_size {script.dataset_size}: only {len(grpo)} problems could be drawn; "
                              f"{hint('dataset_size')}")
        parts.append(f"{len(grpo)} GRPO problems")
    if script.sft or sft_only:
        try:
            sft = sft_problems(script)
        except (OSError, ValueError) as e:
            raise RecipeError(f"sft_size {script.sft_size}: {e}; {hint('sft_size')}") from e
        if not sft:
            raise RecipeError("sft: no SFT problems are left once GRPO's are removed; raise sft_size or "
                              "dataset_difficulty, or set sft: false")
        parts.append(f"{len(sft)} SFT problems")
    return "data: " + ", ".join(parts)


def preflight(resolved: Any, sft_only: bool = False) -> str:
    """Every check above; RecipeError on the first problem, else a one-line data description."""
    check_model_path(resolved.script, resolved.model)
    return check_data(resolved.script, sft_only)


__all__ = ["check_data", "check_model_path", "preflight"]
