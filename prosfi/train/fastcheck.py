"""The mistakes `prosfi train` can refuse before it imports the training stack (TRL, transformers, torch: 7-33 s):
a recipe that is not there or not YAML, an unknown key (with the closest names), a local-looking model path that
is not there (unless the recipe builds the tiny model there), a `dataset: jsonl` file that is not there, an output_dir that is a file. Everything else is checked, as
before, by the full resolve after the imports; this check only ever refuses what that one refuses too."""

from __future__ import annotations

import dataclasses
import os
from pathlib import Path
from typing import Any


def prosfi_keys() -> set[str]:
    """prosfi's own recipe keys (the script arguments, with the `no_` negations of booleans)."""
    from prosfi.train.config import ProsfiScriptArguments

    fields = dataclasses.fields(ProsfiScriptArguments)
    flags = {f.name for f in fields if isinstance(f.default, bool) or f.type in (bool, "bool")}
    return {f.name for f in fields} | {f"no_{n}" for n in flags}


def known_keys() -> set[str] | None:
    """Every recipe key, or None where the installed TRL is not the one `trl_keys` lists (then only the
    full check, after the imports, can say which keys exist)."""
    from importlib.metadata import PackageNotFoundError, version

    from prosfi.train.trl_keys import TRL_KEYS, TRL_VERSION

    try:
        if version("trl") != TRL_VERSION:
            return None
    except PackageNotFoundError:
        return None  # `prosfi train` will say which extra is missing
    return prosfi_keys() | set(TRL_KEYS) | {"config"}


def quick_refusal(recipe: str | None, overrides: list[str]) -> str | None:
    """The one-line reason `prosfi train RECIPE OVERRIDES` cannot run, when it can be told without importing
    the training stack; None when nothing is wrong that can be seen here."""
    from prosfi.train.recipe import (
        RecipeError,
        flatten,
        load_yaml,
        normalise_overrides,
        override_pairs,
        unknown_key_error,
    )

    try:
        config: dict[str, Any] = {}
        known = known_keys()
        if recipe:
            loaded = load_yaml(recipe)  # not there, not YAML: its RecipeError
            if not isinstance(loaded, (dict, type(None))):
                return f"recipe {recipe} must be a YAML mapping of keys to values"
            loaded = dict(loaded or {})
            loaded.pop("env", None)
            config = flatten(loaded, dict.fromkeys(known or ()), recipe)
            for key in config if known is not None else ():
                if key not in known:
                    raise unknown_key_error(key, dict.fromkeys(known), f"recipe {recipe}")
        pairs = override_pairs(normalise_overrides(list(overrides)))
        for key, _ in pairs if known is not None else ():
            if key not in known:
                raise unknown_key_error(key, dict.fromkeys(known), "the command line")
    except RecipeError as exc:
        return str(exc)
    values = {**config, **{k: v for k, v in pairs}}
    return value_refusal(values) or _path_refusal(values)


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
            if isinstance(raw, bool):
                raise ValueError
            value = kind(float(raw)) if kind is float else int(str(raw).strip())
        except (TypeError, ValueError):
            return f"{key}: {raw!r} is not {'a number' if kind is float else 'a whole number'}"
        if not ok(value):
            return f"{key}: {raw} {words}"
    return None


def _path_refusal(values: dict[str, Any]) -> str | None:
    from types import SimpleNamespace

    from prosfi.train.preflight import check_model_path  # the full check's own rule and words
    from prosfi.train.recipe import RecipeError

    model = values.get("model_name_or_path")
    flag = values.get("tiny_model_if_absent", False)
    builds = flag is True or str(flag).lower() in ("true", "1", "yes", "")  # a bare --flag is ''
    if isinstance(model, str) and model:  # the demos build their tiny model when it is absent
        try:
            check_model_path(SimpleNamespace(tiny_model_if_absent=builds), SimpleNamespace(model_name_or_path=model))
        except RecipeError as exc:
            return str(exc)
    path = values.get("dataset_path")
    source = file_source(values.get("dataset"))
    if source is not None and isinstance(path, str) and path and not os.path.isfile(path):
        what = "is a folder, not a file:" if os.path.isdir(path) else "no such file"
        hint = f"; {source.path_hint}" if source.path_hint else ""  # the full check's words (preflight.check_data)
        return f"dataset_path: {what} {path}{hint}"
    out = values.get("output_dir")
    if isinstance(out, str) and out and Path(out).is_file():
        return f"output_dir {out} is a file; give a folder for the run"
    return None


def file_source(dataset: Any) -> Any:
    """The registered source a recipe's `dataset` names when it is read from the file `dataset_path` names
    (jsonl, gsm8k, ...: `DataSource.needs_path`), else None."""
    from prosfi.data.sources import SOURCES, resolve_name

    name = resolve_name(dataset) if isinstance(dataset, str) else None
    return SOURCES[name] if name is not None and SOURCES[name].needs_path else None


__all__ = ["RANGES", "file_source", "known_keys", "prosfi_keys", "quick_refusal", "value_refusal"]
