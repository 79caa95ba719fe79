"""Schema-check the `<steps>` JSON array into `Step`s, and assemble a whole `Trace`.

A step is `{"id", "dependencies", "conclusion", "rule"}`. Whether a citation points somewhere
sensible (unknown, forward, self) is the chain checker's business, per step; here we only check
shape: a schema error makes the completion a format failure with a reason.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

from prosfi.jsonl import loads
from prosfi.trace.extract import completion_text, extract_blocks, strip_fence

MAX_REASONS = 3  # schema errors listed in one reason; the rest are counted


@dataclass(frozen=True)
class Step:
    id: str
    dependencies: tuple[str, ...]
    conclusion: str
    rule: str = ""


@dataclass(frozen=True)
class Trace:
    """A completion that has the right layout and a well-formed step array."""

    think: str
    steps: tuple[Step, ...]
    answer: str


@dataclass(frozen=True)
class ParsedTrace:
    """`trace` when the format is right, else None and a `reason` (the format failure)."""

    trace: Trace | None
    reason: str = ""
    answer: str | None = field(default=None)  # the answer text even when the steps are malformed

    @property
    def ok(self) -> bool:
        return self.trace is not None


def read_step_array(text: str, reserved_ids: Iterable[str], reserved: str,
                    read_one: Callable[[dict, str, str, list[str]], Any]) -> tuple[tuple[Any, ...], list[str]]:
    """The skeleton every domain's `<steps>` shares: JSON (code fence tolerated), an array of objects, each
    with a non-empty string `id` that is unique and does not shadow a `reserved` id (a premise, a given).
    `read_one(raw, id, where, errors)` reads the rest of one object: a step, or None after appending why."""
    body = strip_fence(text)
    data, why = loads(body)  # never raises: deep nesting, 5,000-digit integers, NaN are reasons
    if why is not None:
        return (), [f"steps are not valid JSON: {why}"]
    if not isinstance(data, list):
        return (), [f"steps must be a JSON array, not {type(data).__name__}"]
    taken = set(reserved_ids)
    errors: list[str] = []
    steps: list[Any] = []
    seen: set[str] = set()
    for i, raw in enumerate(data):
        where = f"step {i + 1}"
        if not isinstance(raw, dict):
            errors.append(f"{where}: must be an object")
            continue
        sid = raw.get("id")
        if not isinstance(sid, str) or not sid.strip():
            errors.append(f"{where}: 'id' must be a non-empty string")
            continue
        sid = sid.strip()
        where = f"step {sid!r}"
        if sid in taken:
            errors.append(f"{where}: id shadows {reserved} id")
        elif sid in seen:
            errors.append(f"{where}: duplicate id")
        seen.add(sid)
        step = read_one(raw, sid, where, errors)
        if step is not None:
            steps.append(step)
    return tuple(steps), errors


def parse_steps(text: str, premise_ids: Iterable[str] = ()) -> tuple[tuple[Step, ...], list[str]]:
    """Logic steps from the inner text of `<steps>` (code fence tolerated), plus schema errors."""
    return read_step_array(text, premise_ids, "a premise", _read_logic_step)


def _read_logic_step(raw: dict, sid: str, where: str, errors: list[str]) -> Step:
    deps = raw.get("dependencies")
    if not isinstance(deps, list) or not all(isinstance(d, str) for d in deps):
        errors.append(f"{where}: 'dependencies' must be a list of ids (strings)")
        deps = []
    conclusion = raw.get("conclusion")
    if not isinstance(conclusion, str) or not conclusion.strip():
        errors.append(f"{where}: 'conclusion' must be a non-empty formula string")
        conclusion = ""
    rule = raw.get("rule", "")
    if not isinstance(rule, str):
        errors.append(f"{where}: 'rule' must be a string")
        rule = ""
    return Step(sid, tuple(d.strip() for d in deps), conclusion.strip(), rule)


def parse_trace(completion: Any, premise_ids: Iterable[str] = (),
                read_steps: Callable[[str, Iterable[str]], tuple[tuple[Any, ...], list[str]]] | None = None
                ) -> ParsedTrace:
    """Completion (text or TRL messages) -> Trace, or a format failure with a reason. `read_steps` reads the
    `<steps>` body (default: logic steps; the quantity domain passes its own)."""
    try:
        text = completion_text(completion)
    except TypeError as exc:
        return ParsedTrace(None, str(exc))
    extraction = extract_blocks(text)
    if not extraction.ok:
        return ParsedTrace(None, extraction.reason)
    blocks = extraction.blocks
    steps, errors = (read_steps or parse_steps)(blocks.steps, premise_ids)
    if errors:
        more = len(errors) - MAX_REASONS
        reason = "; ".join(errors[:MAX_REASONS]) + (f"; and {more} more" if more > 0 else "")
        return ParsedTrace(None, reason, answer=blocks.answer)
    return ParsedTrace(Trace(blocks.think, steps, blocks.answer), answer=blocks.answer)


__all__ = ["ParsedTrace", "Step", "Trace", "parse_steps", "parse_trace", "read_step_array"]
