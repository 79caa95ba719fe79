"""Quantity answers: the `<answer>` read as one quantity, and graded against the gold in the gold's unit."""

from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import Any

from prosfi.data.problem import Problem
from prosfi.quant import QuantError, Tolerance, close_enough, parse_quantity
from prosfi.quant.units import DIMENSIONLESS, Value, format_value, make_value, unit_info

_CURRENCY: tuple | None = None  # the currency dimension, read on first use (unit_info builds the registry)


@dataclass(frozen=True)
class QuantityAnswer:
    """A read `<answer>`: `value` (a bare number is dimensionless until read in the target's unit), `bare`
    when no unit was written, `reason` when unreadable."""

    value: Value | None = None
    bare: bool = False
    text: str = ""
    reason: str = ""

    @property
    def ok(self) -> bool:
        return not self.reason and self.value is not None

    def render(self) -> str:
        return format_value(self.value) if self.value is not None else self.text



_WORDS = {"dollars": "USD", "dollar": "USD", "usd": "USD", "bucks": "USD"}


def read_answer(text: str) -> QuantityAnswer:
    """`18`, `$18`, `18 dollars`, `1,000`, `3.0 m/s`, `25%`: one quantity; anything else has a reason."""
    given = text.strip()
    body = given
    low = body.lower()
    for prefix in ("the answer is", "answer:", "answer is", "answer"):
        if low.startswith(prefix):
            body = body[len(prefix):].strip()
            break
    body = body.removesuffix(".").strip()
    parts = body.rsplit(" ", 1)
    if len(parts) == 2 and parts[1].lower() in _WORDS:
        body = f"{parts[0]} {_WORDS[parts[1].lower()]}"
    try:
        value = parse_quantity(body)
    except QuantError as exc:
        return QuantityAnswer(text=given, reason=f"answer {_clip(given)!r} is not one quantity: {exc}"[:200])
    bare = not value.unit and value.dims == DIMENSIONLESS
    return QuantityAnswer(value=value, bare=bare, text=given)


def _currency() -> tuple:
    global _CURRENCY
    if _CURRENCY is None:
        _CURRENCY = unit_info("USD").dims
    return _CURRENCY


def _plain_unit(unit: str) -> bool:
    """A unit a bare number may stand for: none, percent-like (dimensionless) or a currency."""
    try:
        dims = unit_info(unit).dims if unit else DIMENSIONLESS
    except QuantError:
        return False
    return dims == DIMENSIONLESS or dims == _currency()


def read_in(claim: QuantityAnswer, unit: str) -> Value | None:
    """The claim's value, a bare number read in `unit` where `unit` is plain (none, percent, currency)."""
    if not claim.ok:
        return None
    if claim.bare and unit and _plain_unit(unit):
        return make_value(claim.value.mag, unit)
    return claim.value


def answer_tolerance(problem: Problem) -> Tolerance:
    raw = problem.extra.get("tolerance")
    if isinstance(raw, dict):
        try:
            return Tolerance(**{k: raw[k] for k in ("rel", "abs_eps", "sigfigs") if k in raw})
        except (TypeError, ValueError):
            pass
    return Tolerance()


def gold_value(problem: Problem) -> Value | None:
    answer = problem.answer
    if not isinstance(answer, dict) or "value" not in answer:
        return None
    return _gold(answer["value"] if not isinstance(answer["value"], float) else ("f", answer["value"]),
                 str(answer.get("unit") or ""))


@functools.lru_cache(maxsize=65536)
def _gold(value: Any, unit: str) -> Value | None:
    try:
        return parse_quantity({"value": value[1] if isinstance(value, tuple) else value, "unit": unit})
    except (QuantError, TypeError, ValueError):
        return None


def matches(target: Value, target_unit: str, claim: QuantityAnswer, tol: Tolerance) -> tuple[bool, str]:
    """Does the claim state `target` (value within tolerance, unit by dimension with conversion)?"""
    value = read_in(claim, target_unit)
    if value is None:
        return False, claim.reason or "no readable answer"
    return close_enough(target, value, tol)


def _clip(s: str, n: int = 40) -> str:
    return s if len(s) <= n else s[: n - 1] + "…"

__all__ = ["QuantityAnswer", "answer_tolerance", "gold_value", "matches", "read_answer", "read_in"]
