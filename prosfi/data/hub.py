"""Fetching raw dataset files from the Hugging Face hub, only when a user asks for them.

We download the file itself (`hf_hub_download`) rather than going through `datasets.load_dataset`:
ProverQA's `nl2fol` is a dict whose keys differ per record, and an Arrow struct would merge the
keys of all records (None-filled, in the wrong order), losing the premise order h1..hn relies on.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any


class HubUnavailable(RuntimeError):
    """The hub could not be reached (or the file is not there); the message says what to do."""


def read_records(path: str | Path) -> list[dict[str, Any]]:
    """Records from a local `.json` (a list, or {"data": [...]}) or `.jsonl` file."""
    text = Path(path).read_text(encoding="utf-8")
    stripped = text.lstrip()
    if stripped.startswith("["):
        return list(json.loads(text))
    if stripped.startswith("{") and "\n{" not in stripped.strip():
        obj = json.loads(text)
        if isinstance(obj, dict) and isinstance(obj.get("data"), list):
            return obj["data"]
        return [obj]
    out = []
    for lineno, line in enumerate(text.splitlines(), 1):
        if line.strip():
            try:
                out.append(json.loads(line))
            except json.JSONDecodeError as exc:
                raise ValueError(f"{path}:{lineno}: not valid JSON: {exc}") from None
    return out


def load_hub_records(repo_id: str, filename: str, endpoint: str | None = None,
                     cache_dir: str | Path | None = None) -> list[dict[str, Any]]:
    """Download `filename` from dataset `repo_id` (or reuse the local HF cache) and read its records."""
    try:
        from huggingface_hub import hf_hub_download
    except ImportError as exc:  # pragma: no cover - datasets pulls it in
        raise HubUnavailable("loading from the hub needs `huggingface_hub` "
                             "(pip install -e '.[train]')") from exc
    try:
        path = hf_hub_download(repo_id, filename, repo_type="dataset", endpoint=endpoint,
                               cache_dir=None if cache_dir is None else str(cache_dir), etag_timeout=10)
    except Exception as exc:  # network errors, offline mode, missing file: all mean "not available here"
        raise HubUnavailable(
            f"cannot fetch {filename!r} from the dataset {repo_id!r} on the Hugging Face hub "
            f"({type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''}). Run where the hub is "
            f"reachable, or download the file yourself and pass it with --file."
        ) from None
    return read_records(path)
