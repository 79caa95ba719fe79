"""Check a verl launch before it runs: `python -m prosfi.integrations.verl_check OVERRIDES...`.

Give it the Hydra overrides (and `--config-path` / `--config-name`, if any) you pass to
`verl.trainer.main_ppo`. It refuses, one line per problem and exit status 2, a setup in which verl
would not call prosfi: a reward function that is not prosfi's, keys the installed verl does not read,
a reward manager its reward loop does not know, an entry that manager cannot call, and training data
whose `data_source` verl's own default scorer knows (a run that misses prosfi would then train on verl's
scorer silently instead of failing at the first step) or whose ground truth is not a prosfi problem.

Why: verl 0.9 reads `reward.custom_reward_function` and `reward.reward_manager.name`; the older top-level
`custom_reward_function` and `reward_model.reward_manager` are still accepted by its config but ignored by
`main_ppo` (only the fully async trainer moves them), so the documented setup of older releases silently ran
verl's default scorer. What verl reads is decided from the installed verl (its config files and reward
manager registry); without verl installed, 0.9's layout is assumed.
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import sys
from collections.abc import Iterable, Sequence
from typing import Any

import yaml

ENTRIES = ("compute_score", "compute_score_batch", "compute_score_float")
# which prosfi entry each reward manager calls correctly (docs/serving.md)
PER_SAMPLE = ("compute_score", "compute_score_float")
LEGACY_ENTRIES = {"naive": PER_SAMPLE, "dapo": PER_SAMPLE, "batch": ("compute_score_batch",),
                  "prime": ("compute_score_float",)}
# verl 0.9.1's reward loop (verl/experimental/reward_loop/reward_manager, @register): every one calls
# compute_score(data_source=, solution_str=, ground_truth=, extra_info=) for one sample
LOOP_MANAGERS = ("naive", "dapo", "gdpo", "rate_limited", "remote")
# data_source values verl 0.9.1's default scorer routes (verl/utils/reward_score/__init__.py), plus "aime*"
VERL_SCORED = frozenset({
    "openai/gsm8k", "lighteval/MATH", "DigitalLearningGmbH/MATH-lighteval", "HuggingFaceH4/MATH-500",
    "math_dapo", "math", "math_dapo_reasoning", "numina_aops_forum", "numina_synthetic_math", "numina_amc_aime",
    "numina_synthetic_amc", "numina_cn_k12", "numina_olympiads", "codecontests", "apps", "codeforces", "taco",
    "hiyouga/geometry3k", "searchR1_nq", "searchR1_triviaqa", "searchR1_popqa", "searchR1_hotpotqa",
    "searchR1_2wikimultihopqa", "searchR1_musique", "searchR1_bamboogle"})
ROWS_CHECKED = 16
# the keys of older verl releases and where verl 0.9 reads them
MOVED = {"custom_reward_function.path": "reward.custom_reward_function.path",
         "custom_reward_function.name": "reward.custom_reward_function.name",
         "reward_model.reward_manager": "reward.reward_manager.name"}


def verl_scores(data_source: Any) -> bool:
    """Whether verl's default scorer would score this data_source (instead of failing loudly)."""
    return isinstance(data_source, str) and (data_source in VERL_SCORED or data_source.startswith("aime"))


def installed_verl() -> tuple[str | None, bool]:
    """(version or None, whether it reads the `reward.*` keys) of the verl this Python would import."""
    spec = importlib.util.find_spec("verl")
    if spec is None or not spec.submodule_search_locations:
        return None, True
    root = next(iter(spec.submodule_search_locations))
    from importlib.metadata import PackageNotFoundError, version

    try:
        ver = version("verl")
    except PackageNotFoundError:  # a source checkout on the path
        ver = "?"
    return ver, os.path.exists(os.path.join(root, "trainer", "config", "reward", "reward.yaml"))


def loop_managers(verl_version: str | None) -> tuple[str, ...]:
    """The names verl's reward loop registry knows (imported from the installed verl when there is one)."""
    if verl_version is None:
        return LOOP_MANAGERS
    try:
        import verl.experimental.reward_loop.reward_manager  # noqa: F401  (registers the built-in ones)
        from verl.experimental.reward_loop.reward_manager.registry import REWARD_MANAGER

        return tuple(sorted(REWARD_MANAGER))
    except Exception:  # noqa: BLE001 - a verl that does not import here: 0.9.1's names
        return LOOP_MANAGERS


def _flatten(tree: Any, prefix: str = "") -> dict[str, Any]:
    out: dict[str, Any] = {}
    if isinstance(tree, dict):
        for k, v in tree.items():
            out.update(_flatten(v, f"{prefix}{k}."))
    elif prefix:
        out[prefix[:-1]] = tree
    return out


def _value(text: str) -> Any:
    text = text.strip()
    if len(text) >= 2 and text[0] == text[-1] and text[0] in "'\"":
        return text[1:-1]
    if text.startswith("[") and text.endswith("]"):
        return [_value(p) for p in text[1:-1].split(",") if p.strip()]
    if text.lower() in ("null", "none", "~"):
        return None
    return text


def read_settings(args: Sequence[str]) -> dict[str, Any]:
    """Dotted key -> value from a `--config-path/--config-name` YAML (if given) and the overrides after it."""
    p = argparse.ArgumentParser(add_help=False)
    p.add_argument("--config-path", "-cp")
    p.add_argument("--config-name", "-cn")
    known, overrides = p.parse_known_args(list(args))
    settings: dict[str, Any] = {}
    if known.config_name:
        name = known.config_name if known.config_name.endswith(".yaml") else known.config_name + ".yaml"
        path = os.path.join(known.config_path or ".", name)
        with open(path, encoding="utf-8-sig") as f:
            settings.update(_flatten(yaml.safe_load(f) or {}))
    for item in overrides:
        if item.startswith("~"):
            settings.pop(item[1:].split("=", 1)[0], None)
            continue
        if "=" not in item:
            raise SystemExit(f"verl_check: {item!r} is not a Hydra override KEY=VALUE")
        key, value = item.split("=", 1)
        settings[key.lstrip("+")] = _value(value)
    return settings


def _is_prosfi_file(path: str) -> bool:
    import prosfi.integrations.verl as ours

    if os.path.exists(path) and os.path.realpath(path) == os.path.realpath(ours.__file__):
        return True
    # prosfi's file in another install (the path as the training nodes see it)
    return path.replace(os.sep, "/").endswith("prosfi/integrations/verl.py")


def _files(value: Any) -> list[str]:
    if value is None:
        return []
    return [str(v) for v in value] if isinstance(value, (list, tuple)) else [str(value)]


def data_problems(files: Iterable[str], notes: list[str] | None = None) -> list[str]:
    """Refusals for the parquet files' `data_source` and `reward_model.ground_truth` columns (files not
    here, e.g. on HDFS, go to `notes`)."""
    from prosfi.integrations._verl import problem_of

    out: list[str] = []
    for path in files:
        if not os.path.exists(path):
            if notes is not None:
                notes.append(f"{path} is not here: its data_source and ground truths were not checked")
            continue
        import pyarrow.parquet as pq

        table = pq.read_table(path)
        if "data_source" in table.column_names:
            known = sorted({s for s in table.column("data_source").to_pylist() if verl_scores(s)})
            if known:
                out.append(f"{path}: data_source {known[0]!r} is one verl's default scorer knows; a run that "
                           f"missed prosfi would train on verl's scorer without an error: name it e.g. 'prosfi'")
        if "reward_model" in table.column_names:
            for i, rm in enumerate(table.column("reward_model").slice(0, ROWS_CHECKED).to_pylist()):
                gt = rm.get("ground_truth") if isinstance(rm, dict) else None
                if isinstance(gt, str) and not gt.lstrip().startswith("{"):
                    continue  # a preloaded problem's id: only the service can tell
                try:
                    problem_of(gt, None)
                except (ValueError, TypeError, KeyError) as e:
                    out.append(f"{path}: row {i}'s reward_model.ground_truth is not a prosfi problem ({e})")
                    break
    return out


def check(settings: dict[str, Any], verl_version: str | None, reads_reward_keys: bool,
          managers: Sequence[str] = LOOP_MANAGERS, notes: list[str] | None = None) -> tuple[list[str], str]:
    """(refusals, what verl will call) for these settings and that verl; `notes` gets what was not checked."""
    bad: list[str] = []
    which = f"verl {verl_version}" if verl_version else "verl 0.9"
    legacy_path, legacy_name, legacy_manager = (settings.get(k) for k in MOVED)
    if reads_reward_keys:
        path, name = settings.get("reward.custom_reward_function.path"), settings.get(
            "reward.custom_reward_function.name", "compute_score")
        manager = settings.get("reward.reward_manager.name", "naive")
        source = settings.get("reward.reward_manager.source", "register")
        for key, now in MOVED.items():
            if settings.get(key) is not None:
                bad.append(f"{key} is ignored by {which}'s main_ppo: write {now}")
        if source == "register" and manager not in managers:
            bad.append(f"reward.reward_manager.name={manager}: {which}'s reward loop says 'Unknown reward manager' "
                       f"(it knows {', '.join(managers)}); use naive")
        allowed = PER_SAMPLE if source == "register" else ENTRIES
        prefix = "reward."
    else:
        path = settings.get("reward.custom_reward_function.path", legacy_path)
        name = settings.get("reward.custom_reward_function.name", legacy_name) or "compute_score"
        manager = settings.get("reward.reward_manager.name", legacy_manager) or "naive"
        allowed = LEGACY_ENTRIES.get(manager, ENTRIES)
        prefix = ""
        if manager == "prime" and notes is not None and not os.environ.get("PROSFI_SERVE_URL"):
            notes.append("the prime manager starts a new process pool (up to 64) per batch and each process "
                         "a cold verifier, several times slower than a service: start "
                         "`prosfi serve` and set PROSFI_SERVE_URL")
    if not path:
        bad.append(f"no {prefix}custom_reward_function.path: {which} would score with its default scorer, not "
                   f"prosfi; set it to {_our_file()}")
    elif not _is_prosfi_file(str(path)):
        bad.append(f"{prefix}custom_reward_function.path={path} is not prosfi's verl.py ({_our_file()})")
    if name not in ENTRIES:
        bad.append(f"{prefix}custom_reward_function.name={name} is not one of prosfi's entries ({', '.join(ENTRIES)})")
    elif name not in allowed:
        bad.append(f"{prefix}custom_reward_function.name={name} does not fit the {manager} reward manager: "
                   f"use {allowed[0]}")
    bad += data_problems(_files(settings.get("data.train_files")) + _files(settings.get("data.val_files")), notes)
    assumed = "" if verl_version else " (verl is not installed here: 0.9's keys assumed)"
    return bad, f"{which} calls prosfi's {name} through the {manager} reward manager{assumed}"


def _our_file() -> str:
    import prosfi.integrations.verl as ours

    return ours.__file__


def main(argv: Sequence[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    if args and args[0] in ("-h", "--help"):
        print(__doc__.strip())
        return 0
    version, reads_reward_keys = installed_verl()
    notes: list[str] = []
    bad, ok = check(read_settings(args), version, reads_reward_keys,
                    loop_managers(version) if reads_reward_keys else LOOP_MANAGERS, notes)
    for line in notes:
        print(f"verl_check: note: {line}", file=sys.stderr)
    for line in bad:
        print(f"verl_check: refused: {line}", file=sys.stderr)
    if bad:
        return 2
    print(f"verl_check: ok: {ok}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
