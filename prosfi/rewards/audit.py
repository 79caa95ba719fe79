"""The audit log: every scored completion, one JSON line each, appended and flushed per batch.

A batch is written with one `os.write` on a file opened `O_APPEND`, so a run killed mid-way
leaves whole batches behind (at worst a torn last line, which `read_audit` skips). The object
owns its file descriptor; close it (or use it as a context manager) when the run ends.

Each record keeps the completion's text (up to `max_text_chars`: its head and its tail, where
the steps and the answer are), so a user can read what the model wrote next to its verdicts.
A training run starts with a marker record (`{"event": "run_start", ...}`, `mark`);
`read_audit` leaves markers out unless asked for them.
"""

from __future__ import annotations

import hashlib
import json
import os
import threading
import time
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

from prosfi.rewards.score import ScoreResult


def completion_sha256(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


def audit_path_for_rank(path: str | os.PathLike) -> Path:
    """`{rank}` in the path becomes this process's RANK (0 when unset): one file per trainer rank."""
    return Path(str(path).replace("{rank}", os.environ.get("RANK", "0")))


MAX_TEXT_CHARS = 4000


def bounded_text(text: str, limit: int = MAX_TEXT_CHARS) -> str:
    """`text` itself, or its head and tail with the number of characters left out between them."""
    if limit <= 0:
        return ""
    if len(text) <= limit:
        return text
    half = limit // 2
    return f"{text[:half]}\n[… {len(text) - 2 * half} characters left out …]\n{text[-half:]}"


class AuditLog:
    def __init__(self, path: str | os.PathLike, fsync: bool = False, max_text_chars: int = MAX_TEXT_CHARS) -> None:
        self.path = audit_path_for_rank(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self.fsync = fsync
        self.max_text_chars = max_text_chars
        self._fd: int | None = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
        if _ends_torn(self.path):  # a killed run left half a line: keep our first record whole
            os.write(self._fd, b"\n")
        self._lock = threading.Lock()

    def write(self, results: Sequence[ScoreResult], completions: Sequence[str], step: int | None = None) -> int:
        """Append one record per scored completion; returns the number of records written."""
        now = round(time.time(), 3)
        lines = []
        for r, text in zip(results, completions):
            text = text if isinstance(text, str) else repr(text)
            rec = {
                "time": now,
                "step": step,
                "mode": r.mode,
                "problem_id": r.problem_id,
                "completion_sha256": completion_sha256(text),
                "completion": bounded_text(text, self.max_text_chars),
                "reward": r.reward,
                "format_ok": r.format_ok,
                "answer": r.answer,
                "answer_correct": r.answer_correct,
                "chain_valid": r.chain_valid,
                "steps": [{"id": s.id, "verdict": s.verdict, "reason": s.reason, "backend": s.backend}
                          for s in r.steps],
                "reason": r.reason,
            }
            lines.append(rec)
        return self.append(lines)

    def mark(self, event: str, **info) -> None:
        """Append a marker record (e.g. `run_start` with the run's name and resume step)."""
        self.append([{"event": event, "time": round(time.time(), 3), **info}])

    def append(self, records: Sequence[dict]) -> int:
        """Append records (JSON objects) with one write, so a kill leaves whole batches behind."""
        if not records:
            return 0
        lines = [json.dumps(rec, ensure_ascii=False) for rec in records]
        data = ("\n".join(lines) + "\n").encode("utf-8", "surrogatepass")
        with self._lock:
            if self._fd is None:
                raise ValueError(f"audit log {self.path} is closed")
            view = memoryview(data)
            while view:
                view = view[os.write(self._fd, view):]
            if self.fsync:
                os.fsync(self._fd)
        return len(lines)

    def close(self) -> None:
        with self._lock:
            if self._fd is not None:
                os.close(self._fd)
                self._fd = None

    def __enter__(self) -> AuditLog:  # noqa: PYI034
        return self

    def __exit__(self, *exc) -> None:
        self.close()


def _ends_torn(path: Path) -> bool:
    with open(path, "rb") as fh:
        fh.seek(0, os.SEEK_END)
        if fh.tell() == 0:
            return False
        fh.seek(-1, os.SEEK_END)
        return fh.read(1) != b"\n"


def read_audit(path: str | os.PathLike, events: bool = False) -> Iterator[dict]:
    """Records of an audit log. Torn lines (a writer killed mid-write, possibly followed by a
    resumed run's records) are skipped; so are marker records unless `events` is true."""
    with open(path, encoding="utf-8", errors="replace") as fh:
        for line in fh:
            if not line.strip():
                continue
            try:
                rec = json.loads(line)
            except json.JSONDecodeError:
                continue
            if isinstance(rec, dict) and (events or "event" not in rec):
                yield rec


__all__ = ["AuditLog", "audit_path_for_rank", "audit_step", "bounded_text", "completion_sha256", "read_audit"]


def audit_step(state: Any) -> int | None:
    """The step a batch is scored for, numbered as metrics.jsonl numbers it: TRL scores a batch
    before the optimizer step it trains, when `global_step` still counts the steps done."""
    step = getattr(state, "global_step", None)
    return step + 1 if isinstance(step, int) else None
