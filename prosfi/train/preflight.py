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

# keys whose value TRL takes without a word and then trains wrongly or fails minutes later: (type, rule, words)
RANGES: dict[str, tuple[type, Any, str]] = {
    "learning_rate": (float, lambda v: v > 0, "must be > 0"),
    "sft_learning_rate": (float, lambda v: v > 0, "must be > 0"),
    "max_steps": (int, lambda v: v > 0 or v == -1, "must be > 0, or -1 to train by num_train_epochs"),
    "sft_max_steps": (int, lambda v: v > 0 or v == -1, "must be > 0, or -1 to train by sft_num_train_epochs"),
    "temperature": (float, lambda v: v > 0, "must be > 0 (GRPO samples; 0 divides the logits by zero)"),
    "num_train_epochs": (float, lambda v: v > 0, "must be > 0"),
    "per_device_train_batch_size": (int, lambda v: v > 0, "must be > 0"),
    "gradient_accumulation_steps": (int, lambda v: v > 0, "must be > 0"),
}


def value_refusal(values: dict[str, Any]) -> str | None:
    """`KEY: VALUE must be ...` for the first value of `RANGES` that is not a number of its type or out of range
    (recipe values, command-line strings or the resolved config's fields alike)."""
    for key, (kind, ok, words) in RANGES.items():
        raw = values.get(key)
        if raw is None or raw == "":
            continue
        try:
            value = None if isinstance(raw, bool) else kind(float(raw)) if kind is float else int(str(raw).strip())
        except (TypeError, ValueError):
            value = None
        if value is None:
            return f"{key}: {raw!r} is not {'a number' if kind is float else 'a whole number'}"
        if not ok(value):
            return f"{key}: {raw} {words}"
    return None


def check_model_path(script: Any, model_args: Any) -> None:
    """A model path that is neither a model folder, nor buildable (tiny_model_if_absent), nor a hub id.

    A path that looks local (`./x`, `/abs`, `runs/x` where `runs/` is a folder here) and is not there
    fails now: transformers would otherwise spend ~50 s retrying the hub before saying so."""
    from prosfi.usage import looks_local

    path = model_args.model_name_or_path
    if not path:
        raise RecipeError("model_name_or_path: set it in the recipe or on the command line")
    hub_like = path.count("/") == 1 and " " not in path and not looks_local(path)
    if script.tiny_model_if_absent and not Path(path).exists() and hub_like:
        raise RecipeError(f"model_name_or_path: {path} looks like a hub id, but tiny_model_if_absent would build "
                          "prosfi's random tiny model at that path instead; add --no_tiny_model_if_absent to "
                          "train the hub model, or give a local path (runs/tiny-model)")
    if script.tiny_model_if_absent or Path(path).exists():
        if Path(path).exists() and not Path(path).is_dir():
            raise RecipeError(f"model_name_or_path: {path} is a file; give the model's folder")
        return
    if not hub_like:
        raise RecipeError(f"model_name_or_path: no model at {path}; give a local model folder, a hub id "
                          "(e.g. Qwen/Qwen2.5-7B-Instruct), or set tiny_model_if_absent: true to build the "
                          "tiny model there")


def check_backends(script: Any) -> None:
    """The verifier's backends resolve as the run resolves them: an unknown name, or one asked for that
    cannot run here (Lean not installed), fails now; an optional one (`lean?`) is reported once."""
    import dataclasses

    from prosfi.train.config import sub_config
    from prosfi.verify import registry

    try:
        config = dataclasses.replace(sub_config(script, "verifier"), lean=sub_config(script, "lean"))
        registry.resolve(tuple(config.backends), config)
    except (ValueError, TypeError) as e:
        raise RecipeError(f"verifier_backends: {e}") from e
    from prosfi.rewards.formats import format_for

    missing = format_for(script.reward_mode).unavailable(lean_config=sub_config(script, "lean"))
    if missing:  # e.g. the direct-Lean format without a Lean toolchain
        raise RecipeError(f"reward_mode {script.reward_mode} {missing}")


def check_run_dir(resolved: Any, sft_only: bool = False) -> Any:
    """What the run will do with its output_dir (fresh, resume, overwrite); RecipeError for a folder
    that holds another run."""
    from prosfi.train.rundir import RunDirError, plan

    training = resolved.training
    try:
        resolved.run_plan = plan(training.output_dir, training.resume_from_checkpoint,
                                 bool(getattr(resolved.script, "overwrite", False)), sft_only=sft_only,
                                 resume_refused=resolved.resume_refused)
    except RunDirError as e:
        raise RecipeError(str(e)) from e
    return resolved.run_plan


def _source(script: Any):
    from prosfi.train.problems import dataset_source

    try:
        return dataset_source(script.dataset)
    except ValueError as e:
        raise RecipeError(str(e)) from e


def check_data(script: Any, sft_only: bool = False) -> str:
    """Draw the run's problems as the run draws them (GRPO set, the SFT set when the recipe warms up, the
    warm-up's format-gate and the held-out evaluation's problems); a one-line description of their sizes, or
    RecipeError saying which key to change."""
    from prosfi.train.problems import file_split, is_file_dataset

    path = script.dataset_path
    local = bool(path) and Path(path).is_file()
    source = _source(script)
    if source.needs_path and not local:
        hint = f"; {source.path_hint}" if source.path_hint else ""
        raise RecipeError(f"dataset_path: no such file {path}{hint}")
    if is_file_dataset(script):
        if not local:  # proverqa_hub from the hub: the run draws the sets before any model loads
            return check_hub_data(script)
        try:
            return "data: " + file_split(script, sft=script.sft or sft_only).describe(
                sft=script.sft or sft_only, grpo=not sft_only)
        except (OSError, ValueError) as e:
            raise RecipeError(str(e)) from e
    if not source.offline:
        return check_hub_data(script)
    return "data: " + ", ".join(_generated_sets(script, sft_only))


def _generated_sets(script: Any, sft_only: bool) -> list[str]:
    from prosfi.train.heldout import held_out_problems
    from prosfi.train.problems import REST, from_script_args, gate_size
    from prosfi.train.sft import sft_problems

    def hint(key: str) -> str:
        widen = _source(script).widen  # a small space: ~400 distinct 2-person K&K puzzles
        if widen:
            return f"lower {key} or widen dataset_difficulty ({widen}; now {script.dataset_difficulty!r})"
        return f"lower {key}"

    if script.dataset_size == REST:
        raise RecipeError(f"dataset_size {REST} (every problem of the file not drawn for another set) is for file "
                          f"datasets; give dataset {script.dataset!r} a number")
    parts = []
    try:
        grpo = from_script_args(script)
    except (OSError, ValueError) as e:
        raise RecipeError(f"dataset_size {script.dataset_size}: {e}; {hint('dataset_size')}") from e
    if len(grpo) < script.dataset_size:
        raise RecipeError(f"dataset_size {script.dataset_size}: only {len(grpo)} problems could be drawn; "
                          f"{hint('dataset_size')}")
    if not sft_only:
        parts.append(f"{len(grpo)} GRPO problems")
    sft: list = []
    if script.sft or sft_only:
        try:
            sft = sft_problems(script)
        except (OSError, ValueError) as e:
            raise RecipeError(f"sft_size {script.sft_size}: {e}; {hint('sft_size')}") from e
        if not sft:
            raise RecipeError("sft: no SFT problems are left once GRPO's are removed; raise sft_size or "
                              "dataset_difficulty, or set sft: false")
        parts.append(f"{len(sft)} SFT problems")
    training = grpo + sft if (script.sft or sft_only) else None
    for role, key, asked in (("gate", "sft_format_check", gate_size(script, script.sft or sft_only)),
                             ("eval", "eval_held_out", 0 if sft_only else max(0, script.eval_held_out))):
        if not asked:
            continue
        got = held_out_problems(script, asked, role=role, training=training)
        if not got:
            raise RecipeError(f"{key} {asked}: no problem outside the GRPO and SFT sets could be drawn; "
                              f"{hint('dataset_size')} or sft_size")
        parts.append(f"{len(got)} {'format-gate' if role == 'gate' else 'held-out'} problems")
    return parts


def check_hub_data(script: Any) -> str:
    """A hub dataset the run cannot load: offline (HF_HUB_OFFLINE) and not in the local cache (each hub source
    says how to look, `DataSource.hub_cache`)."""
    import os

    if script.dataset_path and Path(script.dataset_path).is_file():
        return f"data: {script.dataset} read from {script.dataset_path}"
    offline = os.environ.get("HF_HUB_OFFLINE", "").lower() in ("1", "true", "yes", "on")
    source = _source(script)
    if source.hub_cache is not None and offline:
        try:
            return f"data: {script.dataset} {source.hub_cache(script.dataset_difficulty)}"
        except ValueError as e:
            raise RecipeError(f"dataset {script.dataset}: {e}") from e
    return f"data: {script.dataset} is loaded from the hub by the run (not fetched by a dry run)"


WANDB_OFF_MODES = ("offline", "disabled", "dryrun")


def wandb_credentials(env: Any = None, netrc_path: str | None = None) -> str | None:
    """Where this process's wandb login comes from (`WANDB_API_KEY`, an entry for the wandb host in the netrc
    file that `wandb login` writes), or None. Read locally: no network."""
    import netrc
    import os
    from urllib.parse import urlparse

    env = os.environ if env is None else env
    if env.get("WANDB_API_KEY", "").strip():
        return "WANDB_API_KEY"
    host = urlparse(env.get("WANDB_BASE_URL") or "https://api.wandb.ai").hostname or "api.wandb.ai"
    path = netrc_path or env.get("NETRC") or str(Path(env.get("HOME") or Path.home()) / ".netrc")
    try:
        entry = netrc.netrc(path).authenticators(host)
    except (OSError, netrc.NetrcParseError):
        return None
    return f"{path} ({host})" if entry and entry[2] else None


def check_wandb(training: Any, env: Any = None, netrc_path: str | None = None) -> str | None:
    """`report_to: wandb` with no way to log: RecipeError in one line before any model loads (wandb would
    otherwise stop at its login prompt when the first trainer starts, after the models are loaded). A notice
    (for stderr) when the run logs offline, else None."""
    import os

    if "wandb" not in (getattr(training, "report_to", None) or []):
        return None
    env = os.environ if env is None else env
    mode = env.get("WANDB_MODE", "").strip().lower()
    if mode in WANDB_OFF_MODES or env.get("WANDB_DISABLED", "").strip().lower() in ("1", "true", "yes"):
        return (f"[prosfi] wandb logs {mode or 'nothing'} (WANDB_MODE={mode})" if mode else
                "[prosfi] wandb is disabled (WANDB_DISABLED)") + "; `wandb sync` uploads offline runs later"
    if wandb_credentials(env, netrc_path):
        return None
    raise RecipeError("report_to wandb: no wandb login here (WANDB_API_KEY is unset and no netrc entry for the "
                      "wandb host) and WANDB_MODE is not offline, so the run would stop at wandb's login after the "
                      "models load; run `wandb login`, set WANDB_API_KEY, set WANDB_MODE=offline (upload later with "
                      "`wandb sync`), or give --report_to none")


def preflight(resolved: Any, sft_only: bool = False) -> str:
    """Every check above; RecipeError on the first problem, else a one-line data description."""
    fields = {k: getattr(o, k) for o in (resolved.training, resolved.script) for k in RANGES if hasattr(o, k)}
    refusal = value_refusal(fields)
    if refusal is not None:
        raise RecipeError(refusal)
    check_model_path(resolved.script, resolved.model)
    check_run_dir(resolved, sft_only)
    check_backends(resolved.script)
    resolved.wandb_notice = check_wandb(resolved.training)
    data = check_data(resolved.script, sft_only)
    path = resolved.model.model_name_or_path
    if resolved.script.tiny_model_if_absent and not Path(path).exists():  # a typo must not pass unseen
        data += (f"\n# model: nothing at {path}: the run builds prosfi's random tiny model there "
                 "(tiny_model_if_absent); check the path if you meant a model you have")
    return data


__all__ = ["RANGES", "check_backends", "check_data", "check_hub_data", "check_model_path", "check_run_dir",
           "check_wandb", "preflight", "value_refusal", "wandb_credentials"]
