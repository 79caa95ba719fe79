"""The `prosfi score` output records for a batch of completion lines, shared by the command and the server.

An entry is `(problem_id, error record or None, completion text)`: a line that cannot be scored (not JSON,
unknown `problem_id`, no `completion`) already carries its output record, with a reason and a null reward.
`score_entries` / `ascore_entries` score the rest in one verifier pass and return one record per entry, in
order, so `prosfi score` and `POST /score` write exactly the same lines for the same input.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from prosfi import jsonl
from prosfi.rewards.score import ScoreResult, ascore_batch, score_batch

Entry = tuple[Any, "dict | None", str]


def bad_entry(pid: Any, mode: str, lineno: int, reason: str) -> Entry:
    return pid, ScoreResult(pid, mode, None, reason=f"line {lineno}: {reason}").to_json(), ""


def read_completion_line(line: str, lineno: int, problems: Mapping, mode: str) -> Entry:
    """The entry of one completions-JSONL line (1-based `lineno`)."""
    if not line.strip():
        return bad_entry(None, mode, lineno, "empty line")
    rec, why = jsonl.loads(line)
    if why is not None:
        return bad_entry(None, mode, lineno, f"not JSON: {why}")
    return read_completion(rec, lineno, problems, mode)


def read_completion(rec: Any, lineno: int, problems: Mapping, mode: str) -> Entry:
    """The entry of one decoded completion record `{"problem_id", "completion"}`."""
    if not isinstance(rec, dict):
        return bad_entry(None, mode, lineno, "not a JSON object")
    pid = rec.get("problem_id")
    pid = pid if isinstance(pid, str) or pid is None else str(pid)
    if pid not in problems:
        return bad_entry(pid, mode, lineno, f"unknown problem_id {pid!r}")
    text = rec.get("completion")
    if not isinstance(text, str):
        # a conversational completion is accepted too
        from prosfi.trace.extract import completion_text

        try:
            text = completion_text(text)
        except TypeError:
            return bad_entry(pid, mode, lineno, "no 'completion' text")
    return pid, None, text


def _todo(batch: Sequence[Entry]) -> list[tuple[int, Any, str]]:
    return [(i, pid, text) for i, (pid, err, text) in enumerate(batch) if err is None]


def _assemble(batch: Sequence[Entry], todo, scored: Sequence[ScoreResult]) -> list[dict]:
    by_index = {i: r for (i, _, _), r in zip(todo, scored)}
    return [err if err is not None else by_index[i].to_json() for i, (_, err, _) in enumerate(batch)]


def score_entries(batch: Sequence[Entry], problems: Mapping, verifier, reward_config, chain_config,
                  ) -> tuple[list[dict], list[ScoreResult], list[str]]:
    """(one record per entry, the ScoreResults of the scored ones, their texts) in one verifier pass."""
    todo = _todo(batch)
    scored = score_batch([problems[pid] for _, pid, _ in todo], [t for _, _, t in todo], verifier,
                         reward_config, chain_config) if todo else []
    return _assemble(batch, todo, scored), scored, [t for _, _, t in todo]


async def ascore_entries(batch: Sequence[Entry], problems: Mapping, verifier, reward_config, chain_config,
                         ) -> tuple[list[dict], list[ScoreResult], list[str]]:
    """`score_entries` for an event loop (verification awaits the verifier's worker pool)."""
    todo = _todo(batch)
    scored = await ascore_batch([problems[pid] for _, pid, _ in todo], [t for _, _, t in todo], verifier,
                                reward_config, chain_config) if todo else []
    return _assemble(batch, todo, scored), scored, [t for _, _, t in todo]


__all__ = ["Entry", "ascore_entries", "bad_entry", "read_completion", "read_completion_line", "score_entries"]
