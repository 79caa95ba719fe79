"""JSONL in and out for prosfi's line-oriented commands: one output line per input line, always.

Why not `open(path)` and `json.loads`: text mode splits a line at a bare `\\r` (universal
newlines) although JSON allows it inside a line; `json.loads` raises `RecursionError` on deep
nesting and `ValueError` on integers of more than 4,300 digits, and accepts `NaN`/`Infinity`,
which `json.dumps` then writes back as non-standard JSON; a lone surrogate (`"\\ud800"`) cannot be
encoded as UTF-8 on the way out. Here lines are split on `\\n` only, decoding never raises (bad
bytes are reported, not fatal), parsing never raises, and output is always standard JSON.
"""

from __future__ import annotations

import json
import math
import sys
from collections.abc import Iterator
from typing import IO, Any


def _finite(text: str) -> float:
    value = float(text)
    if not math.isfinite(value):
        raise ValueError(f"number {text[:20]} is out of range")
    return value


def _no_constants(name: str) -> Any:
    raise ValueError(f"{name} is not standard JSON")


def loads(text: str) -> tuple[Any, str | None]:
    """(value, None) for standard JSON, else (None, why): never raises, whatever the text.

    NaN, Infinity and numbers that overflow a float are refused (standard JSON has none)."""
    try:
        return json.loads(text, parse_constant=_no_constants, parse_float=_finite), None
    except RecursionError:
        return None, "nested too deeply"
    except json.JSONDecodeError as exc:
        return None, str(exc)
    except ValueError as exc:  # e.g. an integer of more than 4,300 digits, NaN
        return None, str(exc).split("; use sys.set_int_max_str_digits")[0]


def dumps(record: Any) -> str:
    """One line of standard JSON (UTF-8 text; escapes what UTF-8 cannot carry, e.g. lone surrogates)."""
    try:
        text = json.dumps(record, ensure_ascii=False, allow_nan=False)
        text.encode("utf-8")
        return text
    except UnicodeEncodeError:
        return json.dumps(record, ensure_ascii=True, allow_nan=False)
    except (RecursionError, ValueError, TypeError):  # e.g. an echoed id nested too deeply for this process
        if not isinstance(record, dict):
            raise
        return dumps({k: v if _plain(v) else f"<{type(v).__name__} not representable>" for k, v in record.items()})


def _plain(value: Any) -> bool:
    try:
        json.dumps(value, allow_nan=False)
        return True
    except (RecursionError, ValueError, TypeError):
        return False


def read_lines(src: IO[bytes]) -> Iterator[tuple[int, str, str | None]]:
    """(line number, text, decoding problem or None) for every line of a binary stream.

    Lines end at `\\n` only (a trailing `\\r` is dropped with it); the last line needs no newline;
    an empty stream yields nothing. Bytes that are not UTF-8 are replaced (U+FFFD) in `text` and
    reported in the third item. A UTF-8 byte-order mark opening the stream (Windows editors write one) is
    not part of the first line."""
    for lineno, raw in enumerate(src, 1):  # binary streams split at b"\n" only
        if lineno == 1 and raw.startswith(BOM):
            raw = raw[len(BOM):]
        yield (lineno, *_decode(raw[:-1] if raw.endswith(b"\n") else raw))


BOM = b"\xef\xbb\xbf"


def _decode(raw: bytes) -> tuple[str, str | None]:
    if raw.endswith(b"\r"):
        raw = raw[:-1]
    try:
        return raw.decode("utf-8"), None
    except UnicodeDecodeError as exc:
        return raw.decode("utf-8", errors="replace"), f"not valid UTF-8 (byte {exc.start + 1} of the line)"


def open_lines(path: str) -> IO[bytes]:
    """A binary stream for `path` ('-' is stdin). OSError when it cannot be opened."""
    if path == "-":
        return sys.stdin.buffer
    return open(path, "rb")


def read_objects(path: str) -> tuple[list[tuple[int, dict]], list[tuple[int, str]]]:
    """((line number, object) for every line holding a JSON object, (line number, why) for every other
    non-blank line) of a JSONL file of records (completions, labelled chains, scores, pairs).

    For commands that read records rather than answer each line: the caller reports the skipped lines
    (count and first reason) instead of stopping at one. Blank lines are neither. OSError when the file
    cannot be opened."""
    good: list[tuple[int, dict]] = []
    skipped: list[tuple[int, str]] = []
    src = open_lines(path)
    try:
        for lineno, text, bad_bytes in read_lines(src):
            if bad_bytes:
                skipped.append((lineno, bad_bytes))
                continue
            if not text.strip():
                continue
            value, why = loads(text)
            if why is not None:
                skipped.append((lineno, f"not JSON: {why}"))
            elif not isinstance(value, dict):
                skipped.append((lineno, "not a JSON object"))
            else:
                good.append((lineno, value))
    finally:
        if src is not sys.stdin.buffer:
            src.close()
    return good, skipped


def skipped_note(path: str, skipped: list[tuple[int, str]]) -> str:
    """'FILE: N line(s) skipped (first: line L: why)' for a `read_objects` skip list."""
    line, why = skipped[0]
    return f"{path}: {len(skipped)} line(s) skipped (first: line {line}: {why[:200]})"


__all__ = ["dumps", "loads", "open_lines", "read_lines", "read_objects", "skipped_note"]
