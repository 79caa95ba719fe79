"""Counterfactual twins of a gold step (NS-PRM hard negatives): the same question answered with a wrong
operand or a wrong principle, recomputed so the twin is checkable, never equal to a gold step's value."""

from __future__ import annotations

import itertools
import json
import re
from collections.abc import Callable, Sequence
from fractions import Fraction
from typing import Any

from prosfi.data.problem import Problem
from prosfi.domains.quantity.chain import DEFAULT_RULES, QuantityState, _same
from prosfi.domains.quantity.steps import QuantityStep, claimed_value
from prosfi.quant import PRIMITIVES, QuantError
from prosfi.quant.check import compute
from prosfi.quant.units import Value, format_value, parse_number, unit_info


def perturbations(problem: Problem, prefix: Sequence[dict[str, Any]], chosen: dict[str, Any],
                  as_step: Callable[[Any], QuantityStep], gold: Sequence[dict[str, Any]] = ()
                  ) -> list[tuple[str, dict[str, Any]]]:
    """Twins of the gold step `chosen` with a recomputed (so checkable) value that no gold step has:
    `wrong_operand` cites another given or earlier step of the same dimension (or swaps a primitive's
    arguments); `wrong_principle` swaps one operator (+ and -, * and /) or applies another primitive of
    the same primitive domain. Every twin has the dimension of `chosen` (the target's unit)."""
    state = QuantityState()
    givens, _, _, _ = state.problem_givens(problem)
    env: dict[str, Value] = dict(givens)
    for s in prefix:
        try:
            env[str(s["id"])] = claimed_value(as_step(s))
        except (QuantError, ValueError, KeyError):
            return []
    gold_values = []
    for s in list(prefix) + [chosen] + list(gold):
        try:
            gold_values.append(claimed_value(as_step(s)))
        except (QuantError, ValueError, KeyError):
            pass
    step = as_step(chosen)
    variants: list[tuple[str, str | None, tuple[str, ...]]] = []
    if step.expr is not None:
        expr = state.expr(step.expr)
        if isinstance(expr, QuantError):
            return []
        for name in sorted(expr.names()):
            for other, value in env.items():
                if other != name and other not in expr.names() and value.dims == env[name].dims:
                    variants.append(("wrong_operand", _rename(step.expr, name, other), ()))
        for a, b in (("+", "-"), ("-", "+"), ("*", "/"), ("/", "*")):
            at = _binary_at(step.expr, a)
            if at is not None:
                variants.append(("wrong_principle", step.expr[:at] + b + step.expr[at + 1:], ()))
    elif step.op is not None:
        variants += [(kind, None, (op, args)) for kind, op, args in _primitive_variants(env, step)]
    try:
        target_dims = claimed_value(step).dims
    except (QuantError, ValueError):
        return []
    out, seen = [], set()
    for kind, text, args in variants:
        op, args = args if text is None else (None, args)
        try:
            true = compute(env, expr=text) if text is not None else compute(env, op=op, args=args)
            if true.dims != target_dims:
                continue  # the target's unit: a twin must be a candidate answer to the same question
            shown = format_value(true, step.unit if step.unit and unit_info(step.unit).dims == true.dims
                                 else None)
        except (QuantError, ArithmeticError, ValueError, OverflowError):
            continue
        if any(_same(true, g, DEFAULT_RULES.tolerance) for g in gold_values):
            continue  # the same value as a gold step: not wrong for the problem
        number, _, unit = shown.partition(" ")
        cand = {"id": step.id, **({"expr": text} if text is not None else {"op": op, "args": list(args)}),
                "value": _json_number(parse_number(number)), "unit": unit}
        key = json.dumps(cand, sort_keys=True)
        if key not in seen:
            seen.add(key)
            out.append((kind, cand))
    return out


MAX_PRIMITIVE_TWINS = 24


def _primitive_variants(env: dict[str, Value], step: QuantityStep) -> list[tuple[str, str, tuple[str, ...]]]:
    """Twins of a primitive step: `wrong_operand` puts another value of the same dimension in one argument
    (or swaps two); `wrong_principle` applies another primitive of the same primitive domain (kinematics,
    energy, ...) to the step's arguments and other values (the caller keeps those with the target's unit)."""
    prim = PRIMITIVES.get(step.op)
    if prim is None:
        return []
    args = list(step.args)
    out: list[tuple[str, str, tuple[str, ...]]] = []
    if len(args) >= 2 and args[0] != args[1]:
        out.append(("wrong_operand", step.op, tuple([args[1], args[0]] + args[2:])))
    for i, a in enumerate(args):
        if a not in env:
            continue
        for other, value in env.items():
            if other not in args and value.dims == env[a].dims:
                out.append(("wrong_operand", step.op, tuple(args[:i] + [other] + args[i + 1:])))
    names = list(dict.fromkeys(args + list(env)))  # the step's own arguments first
    names = [n for n in names if n in env]
    for other in sorted(PRIMITIVES.values(), key=lambda p: p.name):
        if other.name == prim.name or other.domain != prim.domain or other.name == "convert":
            continue
        n = len(other.params)
        for combo in itertools.islice(itertools.permutations(names, n), MAX_PRIMITIVE_TWINS):
            out.append(("wrong_principle", other.name, tuple(combo)))
    return out


def _rename(expr: str, name: str, other: str) -> str:
    return re.sub(rf"(?<![A-Za-z0-9_]){re.escape(name)}(?![A-Za-z0-9_])", other, expr)


def _binary_at(expr: str, op: str) -> int | None:
    """The index of the first binary `op` (a single-character operator, not part of `**` or `//`, not a sign)."""
    for i, ch in enumerate(expr):
        if ch != op or expr[i - 1:i] == op or expr[i + 1:i + 2] == op:
            continue
        before = expr[:i].rstrip()
        if op in "+-" and (not before or before[-1] in "(*/+-,^"):
            continue  # a sign, not an operator
        return i
    return None


def _json_number(x: Fraction) -> int | float:
    return int(x) if x.denominator == 1 else float(x)


__all__ = ["perturbations"]
