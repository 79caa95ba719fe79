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
    from prosfi.train.preflight import value_refusal  # the full check's own rule and words

    values = {**config, **{k: v for k, v in pairs}}
    return value_refusal(values) or _path_refusal(values)


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


__all__ = ["file_source", "known_keys", "prosfi_keys", "quick_refusal"]
