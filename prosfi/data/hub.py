"""Fetching raw dataset files from the Hugging Face hub, only when a user asks for them.

We download the file itself (`hf_hub_download`) rather than going through `datasets.load_dataset`:
ProverQA's `nl2fol` is a dict whose keys differ per record, and an Arrow struct would merge the
keys of all records (None-filled, in the wrong order), losing the premise order h1..hn relies on.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any


class HubUnavailable(RuntimeError):
    """The hub could not be reached (or the file is not there); the message says what to do."""


def read_records(path: str | Path, skipped: list | None = None) -> list[dict[str, Any]]:
    """Records from a local `.json` (a list, or {"data": [...]}) or `.jsonl` file.

    JSONL lines are read with `prosfi.jsonl` (split at `\\n` only; bad bytes, deep nesting, huge
    integers never raise): with a `skipped` list, a line that is not a JSON object goes there as
    ("line N", reason) and the rest is read; without one it is a ValueError naming the line. A whole-file
    JSON that cannot be read is a ValueError."""
    from prosfi import jsonl

    raw = Path(path).read_bytes()
    text = raw.decode("utf-8", errors="replace")
    stripped = text.lstrip()
    whole = stripped.startswith("[") or (stripped.startswith("{") and "\n{" not in stripped.strip())
    if whole:
        try:
            raw.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise ValueError(f"{path}: not valid UTF-8 (byte {exc.start + 1})") from None
        obj, why = jsonl.loads(text)
        if why is not None:
            raise ValueError(f"{path}: not valid JSON: {why}")
        if isinstance(obj, dict) and isinstance(obj.get("data"), list):
            obj = obj["data"]
        records = obj if isinstance(obj, list) else [obj]
        out = []
        for i, rec in enumerate(records):
            if isinstance(rec, dict):
                out.append(rec)
            elif skipped is not None:
                skipped.append((f"record {i}", "not a JSON object"))
            else:
                raise ValueError(f"{path}: record {i} is not a JSON object")
        return out
    out = []
    with open(path, "rb") as fh:
        for lineno, line, bad_bytes in jsonl.read_lines(fh):
            if not line.strip() and not bad_bytes:
                continue
            rec, why = (None, bad_bytes) if bad_bytes else jsonl.loads(line)
            if why is None and not isinstance(rec, dict):
                why = "not a JSON object"
            if why is None:
                out.append(rec)
            elif skipped is not None:
                skipped.append((f"line {lineno}", why))
            else:
                raise ValueError(f"{path}:{lineno}: not valid JSON: {why}")
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
