"""Counterfactual twins of a gold step (NS-PRM hard negatives): the same question answered with a wrong
operand or a wrong principle, recomputed so the twin is checkable, never equal to a gold step's value."""

from __future__ import annotations

import itertools
import json
import re
from collections.abc import Callable, Sequence
from typing import Any

from prosfi.data.problem import Problem
from prosfi.domains.quantity.chain import DEFAULT_RULES, QuantityState, same_value
from prosfi.domains.quantity.steps import QuantityStep, claimed_value
from prosfi.quant import PRIMITIVES, QuantError
from prosfi.quant.check import compute
from prosfi.quant.units import Value, format_value, json_number, parse_number, unit_info


def perturbations(problem: Problem, prefix: Sequence[dict[str, Any]], chosen: dict[str, Any],
                  as_step: Callable[[Any], QuantityStep], gold: Sequence[dict[str, Any]] = ()
                  ) -> list[tuple[str, dict[str, Any]]]:
    """Twins of the gold step `chosen` with a recomputed (so checkable) value that no correct computation of
    the gold chain has (no gold step's, none another valid order reaches: `reachable_values`), shown in the
    chosen step's unit:
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
    # a value another valid order of the gold computes (a rate first, 16 * 2 before 3 * 2) is no negative
    reach = _reachable_cached(problem, list(gold) or list(prefix) + [chosen], as_step)
    gold_values = _ValueIndex(gold_values + reach)
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
            # in the chosen step's own unit convention (a plain number stays plain, not `percent`): the pair
            # must differ in what it computes, never in a unit label a PRM could key on
            shown = format_value(true, step.unit if not step.unit or unit_info(step.unit).dims == true.dims
                                 else None)
        except (QuantError, ArithmeticError, ValueError, OverflowError):
            continue
        if gold_values.has(true):
            continue  # the value of a correct computation (a gold step, another order's step): not wrong
        number, _, unit = shown.partition(" ")
        cand = {"id": step.id, **({"expr": text} if text is not None else {"op": op, "args": list(args)}),
                "value": json_number(parse_number(number)), "unit": unit}
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


# ------------------------------------------------------------------ values another valid order computes
MAX_PARTS = 12  # every sub-sum and sub-product of a node with at most this many parts; beyond, those of at most
SMALL_PARTS = 2  # this many parts and their complements (a sum of 30 terms would have 2**30)


def _formula(op: str, n_args: int) -> str | None:
    """A primitive written out over `a0, a1, …` (its documented formula, checked against the primitive by the
    caller), so the values inside it (`u * t` inside a displacement) are sub-expressions too."""
    names = [f"a{i}" for i in range(n_args)]
    if op in ("sum", "series_resistance"):
        return " + ".join(names)
    if op == "parallel_resistance":
        return "1 / (" + " + ".join(f"1 / {a}" for a in names) + ")"
    if op == "average":
        return "(" + " + ".join(names) + f") / {n_args}"
    prim = PRIMITIVES.get(op)
    if prim is None or prim.variadic or len(prim.params) != n_args:
        return None
    text = re.split(r"\s+\((?=R =|\d+%)", prim.doc)[0].split(",")[0].strip()
    for i, (param, _) in enumerate(prim.params):
        text = re.sub(rf"(?<![A-Za-z0-9_]){re.escape(param)}(?![A-Za-z0-9_])", f"a{i}", text)
    return text


def _flat(node, env: dict[str, Value], inlined: dict[str, tuple]) -> tuple:
    """A gold expression as nested sums and products (associative and commutative, so any order of their
    parts is the same computation): ("sum", value, [(sign, part)]), ("prod", value, [(exponent, part)]),
    ("atom", value, [children]). Names of earlier gold steps are their own trees (inlined)."""
    from prosfi.quant.evaluate import div, mul, neg
    from prosfi.quant.expr import BinOp, Name, Num, Unary

    if isinstance(node, Name) and node.id in inlined:
        return inlined[node.id]
    if isinstance(node, Name):
        return ("atom", env[node.id], [])
    if isinstance(node, Num):
        return ("atom", Value(node.value), [])
    if isinstance(node, BinOp) and node.op in ("+", "-"):
        parts = []
        for side, sign in ((node.left, 1), (node.right, 1 if node.op == "+" else -1)):
            f = _flat(side, env, inlined)
            parts += [(sign * s, c) for s, c in f[2]] if f[0] == "sum" else [(sign, f)]
        return ("sum", _signed_sum(parts), parts)
    if isinstance(node, BinOp) and node.op in ("*", "/"):
        parts = []
        for side, e in ((node.left, 1), (node.right, 1 if node.op == "*" else -1)):
            f = _flat(side, env, inlined)
            parts += [(e * x, c) for x, c in f[2]] if f[0] == "prod" else [(e, f)]
        value = Value(1)
        for e, c in parts:
            value = mul(value, c[1]) if e == 1 else div(value, c[1])
        return ("prod", value, parts)
    if isinstance(node, Unary) and node.op == "-":
        f = _flat(node.operand, env, inlined)
        parts = [(-s, c) for s, c in f[2]] if f[0] == "sum" else [(-1, f)]
        return ("sum", neg(f[1]), parts)
    if isinstance(node, Unary):
        return _flat(node.operand, env, inlined)
    from prosfi.quant import evaluate

    kids = [_flat(c, env, inlined) for c in node.children()]
    return ("atom", evaluate(node, {**env, **{k: v[1] for k, v in inlined.items()}}), kids)


def _signed_sum(parts) -> Value:
    from prosfi.quant.evaluate import add, neg

    total = None
    for s, c in parts:
        v = c[1] if s == 1 else neg(c[1])
        total = v if total is None else add(total, v)
    return total


def _reach(f: tuple, out: list[Value]) -> None:
    """Every value of `f` and of its parts a valid order computes: each node; each sub-sum (and its negation:
    3 + 4 eggs used, for 16 - 3 - 4) and sub-product (and its reciprocal: a rate either way) of a node's
    parts; each term of a sum factor times a sub-product of the other factors (16 * 2 before 3 * 2)."""
    from prosfi.quant.evaluate import div, mul, neg

    out.append(f[1])
    kind, _, parts = f
    for p in (parts if kind == "atom" else [c for _, c in parts]):
        _reach(p, out)
    if kind == "atom":
        return
    for idx in _subsets(len(parts)):
        try:
            if kind == "sum":
                v = _signed_sum([parts[i] for i in idx])
                out += [v, neg(v)]
                continue
            v = Value(1)
            for i in idx:
                v = mul(v, parts[i][1][1]) if parts[i][0] == 1 else div(v, parts[i][1][1])
            out += [v, div(Value(1), v)]
            for j in idx:
                e, c = parts[j]
                if e == 1 and c[0] == "sum":
                    rest = div(v, c[1])
                    out += [mul(term[1] if s == 1 else neg(term[1]), rest) for s, term in c[2]]
        except (QuantError, ArithmeticError, OverflowError):
            continue


def _subsets(n: int):
    """Index lists of the non-empty subsets of n parts (all of them up to MAX_PARTS; beyond, the small ones and
    their complements)."""
    if n <= MAX_PARTS:
        for mask in range(1, 2 ** n):
            yield [i for i in range(n) if mask >> i & 1]
        return
    for k in range(1, SMALL_PARTS + 1):
        for idx in itertools.combinations(range(n), k):
            yield list(idx)
            yield [i for i in range(n) if i not in idx]


def reachable_values(problem: Problem, gold: Sequence[dict[str, Any]], as_step: Callable[[Any], QuantityStep]
                     ) -> list[Value]:
    """The values a correct computation of the gold chain could produce in some valid order: the givens, every
    gold step, and every sub-expression of the gold's full expression tree over the givens (earlier steps
    inlined, primitives written out as their formulas), read modulo associativity, commutativity and
    distribution (see `_reach`). A twin equal to one of these is a correct step of another order of the
    solution (a rate computed first), not a negative."""
    from prosfi.quant import parse_expr
    from prosfi.quant.primitives import apply_primitive, gas_constant

    state = QuantityState()
    givens, _, _, _ = state.problem_givens(problem)
    env: dict[str, Value] = dict(givens)
    inlined: dict[str, tuple] = {}
    out: list[Value] = list(env.values())
    for s in gold:
        try:
            step = as_step(s)
            if step.expr is not None:
                f = _flat(parse_expr(step.expr), env, inlined)
            else:
                args = list(step.args)
                values = [inlined[a][1] if a in inlined else env[a] for a in args]
                true = apply_primitive(step.op, values)
                text = _formula(step.op, len(args))
                f = None
                if text is not None:
                    local = {f"a{i}": v for i, v in enumerate(values)} | {"R": gas_constant()}
                    sub = {f"a{i}": inlined[a] for i, a in enumerate(args) if a in inlined}
                    try:
                        g = _flat(parse_expr(text), local, sub)
                        f = g if same_value(g[1], true, DEFAULT_RULES.tolerance) else None
                    except (QuantError, KeyError, AttributeError, ArithmeticError):
                        f = None
                if f is None:  # a primitive without a usable formula: its value and its arguments' trees
                    f = ("atom", true, [inlined.get(a) or ("atom", env[a], []) for a in args])
        except (QuantError, ValueError, KeyError, ArithmeticError, OverflowError):
            continue
        inlined[str(s["id"])] = f
        _reach(f, out)
    return out


class _ValueIndex:
    """Values looked up by dimension and magnitude (sorted floats, bisected): `has(v)` is `same_value` against any
    of them (either way round), without comparing a twin with every one of the hundreds of values a gold
    tree reaches."""

    def __init__(self, values: Sequence[Value]):
        import bisect

        self._bisect = bisect
        self.tol = DEFAULT_RULES.tolerance
        self.by_dims: dict[tuple, list[tuple[float, int]]] = {}
        self.values = list(values)
        self.huge: list[Value] = []  # magnitudes past float range: compared one by one
        for i, v in enumerate(self.values):
            try:
                self.by_dims.setdefault(v.dims, []).append((float(v.mag), i))
            except OverflowError:
                self.huge.append(v)
        for entries in self.by_dims.values():
            entries.sort()

    def has(self, v: Value) -> bool:
        if any(same_value(v, h, self.tol) or same_value(h, v, self.tol) for h in self.huge):
            return True
        entries = self.by_dims.get(v.dims, [])
        try:
            x = float(v.mag)
        except OverflowError:
            return any(same_value(v, self.values[i], self.tol) or same_value(self.values[i], v, self.tol) for _, i in entries)
        w = 2 * self.tol.rel * max(abs(x), self.tol.abs_eps)
        lo = self._bisect.bisect_left(entries, (x - w, -1))
        for y, i in entries[lo:]:
            if y > x + w:
                break
            if same_value(v, self.values[i], self.tol) or same_value(self.values[i], v, self.tol):
                return True  # either way round: the tolerance scales with one side, and a twin at its edge
        return False


_REACH_CACHE: dict[tuple, list[Value]] = {}


def _reachable_cached(problem: Problem, gold: list[dict[str, Any]], as_step) -> list[Value]:
    """`reachable_values` once per problem and gold chain (perturbations runs once per gold step)."""
    key = (problem.id, json.dumps(problem.givens, sort_keys=True, default=str),
           json.dumps(gold, sort_keys=True, default=str))
    if key not in _REACH_CACHE:
        if len(_REACH_CACHE) > 64:
            _REACH_CACHE.clear()
        _REACH_CACHE[key] = reachable_values(problem, gold, as_step)
    return _REACH_CACHE[key]


__all__ = ["perturbations", "reachable_values"]
