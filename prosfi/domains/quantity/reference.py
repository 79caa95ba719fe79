"""The reference function (docs/quantity.md, "Composites", rule 5): where a problem carries a reference
solution, the answer's composite must be the same function of the givens as the reference's.

Coincidental arithmetic (a chain that reaches the gold by another computation that happens to agree on this
problem's numbers) is invisible to every other rule: only the function tells it apart. Both are evaluated
exactly at a few points where every given moves on its own grid (an integer to another integer, a number
with d decimals to another with d decimals) and givens with one value move together (nothing tells them
apart: a chain may cite either). Which references are trusted:

- a generated problem's chain (`extra["reference"] == "gold_steps"`, or a `physics` problem's gold steps): the
  generator computed the answer with it;
- a solution written as equations (`extra["solution"]`: GSM8K, GSM-Symbolic) whose every equation holds and
  one of which gives the answer. Its literals are read without the gold builder: an earlier result with that
  number (latest first), else the givens stating it, else a constant; a literal that could be both a result
  and a given is read both ways, and the chain must compute one of the readings.
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

from prosfi.data.problem import Problem
from prosfi.quant import QuantError, evaluate, parse_expr
from prosfi.quant.check import compute
from prosfi.quant.expr import BinOp, Num, group_fractions
from prosfi.quant.licensed import allowed_constant, in_context
from prosfi.quant.units import Value

POINTS = 4  # points the two functions are compared at
MAX_READINGS = 64  # readings of a solution whose literals are ambiguous
_ERRORS = (QuantError, ArithmeticError, ValueError, OverflowError, TypeError, KeyError, IndexError)


@dataclass
class Reference:
    """A reference solution: `final(point)` gives its answer at a re-assignment of the givens, one value per
    reading (GSM8K numbers are plain: they are read in the gold's unit by the caller)."""

    kind: str  # "gold_steps" or "equations"
    steps: list  # gold step dicts, or [(parsed expr, [(node id, number, owners)])] per equation
    base: Fraction | Value  # the answer at the problem's own numbers (equations: a number)
    readings: list  # per reading: {node id: owner} (equations only)
    final_index: int = -1

    def final(self, problem: Problem, values: dict[str, Value], point: dict[str, Value]) -> list[Any]:
        if self.kind == "gold_steps":
            return [_run_steps(self.steps, point)]
        out = []
        for reading in self.readings:
            try:
                out.append(_run_equations(self.steps, reading, values, point, self.final_index))
            except _ERRORS:
                out.append(None)
        return out


def _run_steps(steps: list[dict], point: dict[str, Value]) -> Value:
    env = dict(point)
    last = None
    for s in steps:
        if s.get("expr") is not None:
            last = evaluate(parse_expr(str(s["expr"])), env)
        else:
            last = compute(env, op=s.get("op"), args=list(s.get("args") or []))
        env[str(s.get("id"))] = last
    return last


def _run_equations(eqs: list, reading: dict, values: dict[str, Value], point: dict[str, Value],
                   final_index: int) -> Fraction:
    results: list[Any] = []
    for expr, nodes in eqs[:final_index + 1]:
        lits = {}
        for nid, number, _ in nodes:
            owner = reading.get(nid)
            if owner is None:
                continue
            kind, ref = owner
            if kind == "result":
                lits[nid] = Value(results[ref])
            elif kind == "inverse_result":
                lits[nid] = Value(1 / Fraction(results[ref]))
            elif kind == "given":
                old, new = values[ref].mag, point[ref].mag
                lits[nid] = Value(number * Fraction(new) / Fraction(old)) if old else Value(number)
            elif kind in ("complement", "growth"):
                lits[nid] = Value(1 - Fraction(point[ref].mag) if kind == "complement" else 1 + Fraction(point[ref].mag))
            elif kind == "inverse":
                old, new = values[ref].mag, point[ref].mag
                lits[nid] = Value(number * Fraction(old) / Fraction(new))
        v = evaluate(expr, {}, lits)
        results.append(v.mag)
    return results[final_index]


def _close(a: Any, b: Any) -> bool:
    try:
        x, y = Fraction(a), Fraction(b)
    except (TypeError, ValueError, OverflowError):
        return False
    return abs(x - y) <= abs(y) / 100 + Fraction(1, 10**9)


def build(problem: Problem, values: dict[str, Value]) -> Reference | None:
    """The problem's trusted reference, or None (docstring above)."""
    extra = problem.extra if isinstance(problem.extra, dict) else {}
    steps = extra.get("gold_steps")
    if isinstance(steps, list) and steps and (extra.get("reference") == "gold_steps" or problem.source == "physics"):
        try:
            base = _run_steps(steps, values)
        except _ERRORS:
            return None
        return Reference("gold_steps", steps, base, [])
    solution = extra.get("solution")
    answer = problem.answer.get("value") if isinstance(problem.answer, dict) else None
    if not isinstance(solution, str) or answer is None:
        return None
    try:
        from prosfi.data.gsm8k import equations

        eqs = equations(solution)
        gold = Fraction(str(answer))
    except _ERRORS:
        return None
    return _from_equations(eqs, gold, problem, values)


def _given_numbers(problem: Problem, values: dict[str, Value]) -> dict[Fraction, list[str]]:
    from prosfi.data.gsm8k import parse_number

    out: dict[Fraction, list[str]] = {}
    for g in problem.givens:
        gid = str(g.get("id", ""))
        v = values.get(gid)
        if v is None:
            continue
        numbers = set()
        try:
            numbers.add(Fraction(v.mag))
        except (TypeError, ValueError, OverflowError):
            pass
        written = parse_number(str(g.get("value", "")).strip().lstrip("$").rstrip("%"))
        if written is not None:
            numbers.add(Fraction(written))
        for x in numbers:
            out.setdefault(x, []).append(gid)
    return out


def _owners(value: Fraction, numbers: dict, values: dict[str, Value], results: list, context: str) -> list:
    """What a solution's literal may stand for: an earlier result with its number (latest first) or its
    reciprocal, the givens stating it
    (one per dimension: same-valued givens of one dimension move together), the reciprocal of a fraction given
    (2 for "half": `20 * 2` is 20 / half), or a listed constant the problem names."""
    owners: list = []
    owners.extend(("result", j) for j in range(len(results) - 1, -1, -1) if results[j] == value)
    if value:  # `7200 / 4` after `1 - 3/4 = 1/4`: the reciprocal of an earlier result
        owners.extend(("inverse_result", j) for j in range(len(results) - 1, -1, -1)
                      if results[j] == 1 / value and 0 < results[j] < 1)
    given = numbers.get(value)
    if given:
        owners.extend(("given", gid) for gid in {values[x].dims: x for x in reversed(given)}.values())
    if value and 0 < 1 / value < 1 and 1 / value in numbers:
        owners.append(("inverse", numbers[1 / value][0]))
    for gid, v in values.items():  # 0.99 for "1% left", 1.15 for "a 15% tip": 1 - x, 1 + x of a fraction given
        if not given and v.dimensionless and isinstance(v.mag, Fraction) and 0 < v.mag < 1:
            if value == 1 - v.mag:
                owners.append(("complement", gid))
            elif value == 1 + v.mag:
                owners.append(("growth", gid))
    stated = any(o[0] in ("given", "inverse", "complement", "growth") for o in owners)
    if owners and (not stated or value in (0, 1) or in_context(value, context)) and \
            allowed_constant(value, context) is not None:  # a fact a pair of words names (3 wheels of a tricycle)  # a number a given states is that
        # given (16 - 3 - 4 is never 9 by a listed constant); the chain's side may read its literal either way
        owners.append(("constant", None))
    return owners


def _from_equations(eqs: list, gold: Fraction, problem: Problem, values: dict[str, Value]) -> Reference | None:
    from prosfi.data.quant_gold import constant_context

    numbers = _given_numbers(problem, values)
    context = constant_context(problem)
    unit = str(problem.answer.get("unit") or "").strip() if isinstance(problem.answer, dict) else ""
    percent = unit in ("percent", "%")
    parsed = []
    results: list[Fraction] = []
    final_index = -1
    choices: list[tuple[int, list]] = []
    for k, eq in enumerate(eqs):
        try:
            expr = parse_expr(group_fractions(str(eq.expr)))
            stated = Fraction(eq.result)
            if not _close(evaluate(expr, {}).mag, stated):
                return None  # an equation that does not hold: the solution is not a trustworthy reference
        except _ERRORS:
            return None
        nodes = []
        pairs = set()
        for node in expr.walk():  # `3/4` for "three-fourths", `50/100` for an earlier 1/2: the pair is one number
            if isinstance(node, BinOp) and node.op == "/" and isinstance(node.left, Num) and \
                    isinstance(node.right, Num) and node.right.value and \
                    0 < node.left.value / node.right.value < 1 and \
                    (node.left.value / node.right.value in numbers or node.left.value / node.right.value in results):
                pairs.update((id(node.left), id(node.right)))
                owners = _owners(node.left.value / node.right.value, numbers, values, results, context)
                nodes.append((id(node), node.left.value / node.right.value, owners))
                choices.append((id(node), owners))
        for node in expr.walk():
            if not isinstance(node, Num) or id(node) in pairs:
                continue
            owners = _owners(node.value, numbers, values, results, context)
            if owners:
                nodes.append((id(node), node.value, owners))
                choices.append((id(node), owners))
            # else a constant: a number nothing explains (a result computed in words, "10 years * 5% = 50%") stays
            # fixed, so a chain that moves it with the givens misses this reading
        parsed.append((expr, nodes))
        results.append(stated)
        if _close(stated, gold) or (percent and _close(stated * 100, gold)):  # 85 / 250 = 17/50 for a 34 % gold
            final_index = k
    if final_index < 0:
        return None
    readings: list[dict] = [{}]
    for nid, owners in choices:
        readings = [{**r, nid: o} for r in readings for o in owners][:MAX_READINGS]
    return Reference("equations", parsed, results[final_index], readings, final_index)


def points(problem: Problem, values: dict[str, Value], seed: int, n: int = POINTS) -> list[dict[str, Value]]:
    """`n` exact re-assignments of the givens: each on its own grid, givens with one value together."""
    rng = random.Random(seed ^ 0x5EED)
    written = {str(g.get("id", "")): str(g.get("value", "")) for g in problem.givens}
    out = []
    for _ in range(n):
        moved: dict[tuple, Fraction] = {}
        point = {}
        for gid, v in values.items():
            try:
                shown = Fraction(v.magnitude_in())
                scale = Fraction(v.mag) / shown if shown else Fraction(1)
            except (QuantError, TypeError, ValueError, OverflowError, ZeroDivisionError):
                shown, scale = Fraction(v.mag), Fraction(1)
            key = (shown, v.dims)
            if key not in moved:
                moved[key] = _move(shown, written.get(gid, ""), rng)
            point[gid] = Value(moved[key] * scale, v.dims, v.unit)
        out.append(point)
    return out


def _move(shown: Fraction, written: str, rng: random.Random) -> Fraction:
    text = written.strip().lstrip("$").rstrip("%").replace(",", "")
    decimals = None
    if text.isdigit():
        decimals = 0
    elif "." in text and text.replace(".", "", 1).isdigit():
        decimals = len(text.split(".", 1)[1])
    factor = Fraction(rng.randint(40, 260), 100)
    x = shown * factor if shown else factor
    if decimals is not None:
        step = Fraction(1, 10 ** decimals)
        x = round(x / step) * step
        while x == shown or x <= 0 < shown:
            x = shown + step * rng.randint(1, 5)
    elif x == shown:
        x = shown * Fraction(rng.randint(110, 190), 100)
    return x


__all__ = ["POINTS", "Reference", "build", "points"]
