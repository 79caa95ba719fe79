"""Gold traces of quantity problems: the stored or built chain (`prosfi.data.quant_gold`), rendered, and
kept only when it earns the top reward under the domain's own rules; the sloppy twin for SFT warm-ups."""

from __future__ import annotations

from fractions import Fraction
from typing import Any

from prosfi.data import quant_gold
from prosfi.data.problem import Problem
from prosfi.quant.units import format_number


def gold_steps(problem: Problem) -> list[dict[str, Any]] | None:
    return quant_gold.gold_steps(problem)


def gold_completion(problem: Problem, domain: Any) -> str | None:
    """The rendered gold chain when `domain` scores it at the top level (right answer, chain valid)."""
    text = quant_gold.gold_completion(problem)
    if text is None:
        return None
    trace = domain.parse_trace(problem, text)
    if not trace.ok:
        return None
    claim = domain.parse_answer(problem, trace.trace.answer)
    if not domain.answer_correct(problem, claim):
        return None
    return text if domain.check_chain(problem, trace.trace.steps, claim).chain_valid else None


def sloppy_completion(problem: Problem) -> str | None:
    """The gold answer with every step's expression replaced by its value written as a literal: the
    numbers are right, nothing is derived (rejected: literal-only steps)."""
    steps = gold_steps(problem)
    if not steps:
        return None
    sloppy = [{"id": s["id"], "expr": format_number(Fraction(str(s.get("value")))) if not isinstance(
        s.get("value"), float) else repr(s.get("value")), "value": s.get("value"), "unit": s.get("unit", ""),
        **({"name": s["name"]} if s.get("name") else {})} for s in steps]
    return quant_gold.render_completion(problem, sloppy)


def few_shot_examples(k: int) -> list[tuple[Problem, str]]:
    return list(quant_gold.few_shot_examples(k))[:k] if k > 0 else []


__all__ = ["few_shot_examples", "gold_completion", "gold_steps", "sloppy_completion"]
