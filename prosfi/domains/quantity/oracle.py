"""What a quantity chain computes as one function of the givens, judged without the chain rules (issue #34).

A chain's *composite* is its last step's expression with every cited step substituted: one exact function
of the givens. The oracle asks three questions of it:

- `collapses(steps, problem)`: does the work undo itself? A given the chain uses (transitively) is missing
  from its cancelled composite; or, as written once the cited steps are substituted, a term meets its negative
  in one sum or a factor its reciprocal in one product (a factor common to a numerator's terms counts: nothing
  is expanded) and what is left is a constant multiple of 1, a given or an earlier step (`g2 + (g1 * g2) / g1`
  is `2 * g2`, `(g1 + g2) - g2` is `g1`, `g1 * pi / pi` is `g1`); or a step multiplies by the literal 1, adds
  0 or raises to 0 or 1. A cancellation that leaves new work stands: the mass in `sqrt(2 * m * g * h / m)`,
  the time in `(v - u) / t * t ** 2 / 2` (physics gold chains do both).
- `restates(steps, problem)`: is a step's composite a constant, a given or an earlier step's composite?
- `same_function(steps, reference, problem)`: is the chain's composite the reference solution's, as a
  function of the givens? (`reference(problem)`: a generated problem's gold steps, a GSM8K solution's own
  equations with each literal read as an earlier result, else a given, else a constant.)

Why it is independent of the verifier (`prosfi/domains/quantity/chain.py`): it shares with it only the
grammar's parser (`prosfi.quant.parse_expr`: syntax, not judgment), the unit reader (a given's SI magnitude)
and the primitives' documented formulas (`Primitive.doc`). It uses none of the chain rules, their random
re-assignments, the licensed-number tables, the verifier's readings of literals as givens, prosfi.quant's
evaluator or its tolerance: collapses are decided symbolically (SymPy: substitution, common factors of
terms, cancellation) and functions are compared by this module's own exact evaluator at its own random rational
points, where givens with equal numbers (nothing tells them apart) move together. A gap in the verifier
therefore does not hide the same chain from the oracle. SymPy is imported only when a composite is built.
"""

from __future__ import annotations

import functools
import hashlib
import itertools
import math
import random
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any

from prosfi.data.problem import Problem
from prosfi.quant import QuantError, parse_expr, parse_quantity
from prosfi.quant.expr import BinOp, Call, Expr, Name, Num, Unary
from prosfi.quant.primitives import GAS_CONSTANT, PRIMITIVES

Number = Fraction | float
POINTS = 6  # random points a function is compared at
MIN_POINTS = 3  # fewer points where both sides are defined: undecided
MAX_BITS = 4096  # an exact intermediate larger than this continues as a float
MAX_READINGS = 128  # readings of a GSM8K solution's ambiguous literals
_REL = 1e-9  # two values computed in floating point (roots, pi) agree within this
_OPAQUE = ("floor", "ceil", "round", "%", "//", "min", "max", "abs")
_FLOAT_FUNCS = {"exp": math.exp, "ln": math.log, "log10": math.log10, "log2": math.log2, "sin": math.sin,
                "cos": math.cos, "tan": math.tan, "asin": math.asin, "acos": math.acos, "atan": math.atan}


class Undefined(ArithmeticError):
    """The chain has no value at this point (a division by zero, a root of a negative)."""


# ------------------------------------------------------------------ steps as expression texts
def _primitive_text(op: str, args: Sequence[str]) -> str:
    """A primitive step as an expression over its arguments, read from the primitive's documented formula."""
    args = [f"({a})" for a in args]
    if op == "convert":
        return args[0]
    if op in ("sum", "series_resistance"):
        return "(" + " + ".join(args) + ")"
    if op == "average":
        return f"(({' + '.join(args)}) / {len(args)})"
    if op == "parallel_resistance":
        return "(1 / (" + " + ".join(f"1 / {a}" for a in args) + "))"
    prim = PRIMITIVES[op]
    formula = re.split(r" \(|, shown", prim.doc)[0]
    names = {name: arg for (name, _), arg in zip(prim.params, args)}
    names["R"] = str(GAS_CONSTANT)  # J/(mol K): SI already
    text = re.sub(r"[A-Za-z_][A-Za-z0-9_]*", lambda m: names.get(m.group(0), m.group(0)), formula)
    return f"({text})"


def step_text(step: dict[str, Any]) -> str:
    """A step's expression text (a primitive expanded from its documented formula)."""
    if step.get("expr") is not None:
        return str(step["expr"])
    return _primitive_text(str(step.get("op")), [str(a) for a in step.get("args", [])])


@functools.lru_cache(maxsize=65536)
def _parsed(text: str) -> Expr:
    return parse_expr(text)


# ------------------------------------------------------------------ the givens and random points
@dataclass(frozen=True, eq=False)
class Givens:
    """A problem's givens as the oracle reads them: SI magnitudes, written numbers, and the groups of givens
    that share a number (nothing tells them apart: they move together)."""

    values: dict[str, Number]
    written: dict[str, Fraction | None]
    units: dict[str, str]
    group: dict[str, int]
    points: tuple[dict[str, Number], ...] = field(default=())


def _written(text: str) -> Fraction | None:
    try:
        return Fraction(str(text).strip().lstrip("$").rstrip("%").replace(",", ""))
    except (ValueError, ZeroDivisionError):
        return None


@functools.lru_cache(maxsize=4096)
def _givens_cached(key: tuple, seed: int) -> Givens:
    values, written, units = {}, {}, {}
    for gid, value, unit in key:
        try:
            values[gid] = parse_quantity({"value": value, "unit": unit}).mag
        except (QuantError, TypeError, ValueError):
            continue
        written[gid] = _written(value)
        units[gid] = unit
    parent = {g: g for g in values}

    def find(g: str) -> str:
        while parent[g] != g:
            g = parent[g]
        return g

    by_number: dict[Fraction, str] = {}
    for gid, mag in values.items():
        for number in {written[gid], mag if isinstance(mag, Fraction) else None} - {None}:
            other = by_number.setdefault(number, gid)
            parent[find(gid)] = find(other)
    roots = sorted({find(g) for g in values})
    group = {g: roots.index(find(g)) for g in values}
    rng = random.Random(seed)
    points = []
    for _ in range(POINTS):
        factors = [Fraction(rng.randint(400, 3000), 1000) for _ in roots]
        points.append({g: values[g] * factors[group[g]] for g in values})
    return Givens(values, written, units, group, tuple(points))


def givens_of(problem: Problem, seed: int = 0) -> Givens:
    key = tuple((str(g.get("id")), str(g.get("value")), str(g.get("unit") or "")) for g in problem.givens)
    digest = hashlib.sha256(f"{seed}\x00{problem.id}".encode()).digest()
    return _givens_cached(key, int.from_bytes(digest[:8], "big"))


# ------------------------------------------------------------------ exact evaluation
def _settle(x: Number) -> Number:
    if isinstance(x, Fraction) and x.numerator.bit_length() + x.denominator.bit_length() > MAX_BITS:
        return x.numerator / x.denominator
    return x


def _root(x: Fraction, n: int) -> Fraction | None:
    if x < 0:
        return None
    out = []
    for part in (x.numerator, x.denominator):
        r = round(part ** (1 / n)) if part < 2 ** 1000 else None
        if r is None:
            return None
        r = next((c for c in (r - 1, r, r + 1) if c >= 0 and c ** n == part), None)
        if r is None:
            return None
        out.append(r)
    return Fraction(out[0], out[1])


def _power(a: Number, b: Number) -> Number:
    if isinstance(b, Fraction) and b.denominator == 1 and isinstance(a, Fraction) and abs(b) <= 64:
        if a == 0 and b < 0:
            raise Undefined("0 to a negative power")
        return _settle(a ** int(b))
    if isinstance(b, Fraction) and b.denominator in (2, 3) and isinstance(a, Fraction) and abs(b.numerator) <= 8:
        r = _root(a, b.denominator)
        if r is not None:
            return _power(r, Fraction(b.numerator))
    fa, fb = float(a), float(b)
    if fa < 0 and not float(fb).is_integer():
        raise Undefined("a fractional power of a negative number")
    if fa == 0 and fb < 0:
        raise Undefined("0 to a negative power")
    try:
        return fa ** fb
    except OverflowError:
        raise Undefined("overflow") from None


def _round(x: Number, n: int = 0) -> Number:
    scale = Fraction(10) ** n
    y = Fraction(x) * scale if isinstance(x, Fraction) else x * float(scale)
    r = math.floor(abs(y) + Fraction(1, 2)) if isinstance(y, Fraction) else math.floor(abs(y) + 0.5)
    r = r if y >= 0 else -r
    return Fraction(r) / scale


def _call(func: str, args: list[Number]) -> Number:
    if func == "sqrt":
        return _power(args[0], Fraction(1, 2))
    if func == "cbrt":
        x = args[0]
        return -_power(-x, Fraction(1, 3)) if x < 0 else _power(x, Fraction(1, 3))
    if func == "floor":
        return Fraction(math.floor(args[0]))
    if func == "ceil":
        return Fraction(math.ceil(args[0]))
    if func == "round":
        return _round(args[0], int(args[1]) if len(args) > 1 else 0)
    if func == "abs":
        return abs(args[0])
    if func == "min":
        return min(args)
    if func == "max":
        return max(args)
    if func == "log" and len(args) == 2:
        if float(args[0]) <= 0 or float(args[1]) <= 0 or float(args[1]) == 1:
            raise Undefined("log outside its domain")
        return math.log(float(args[0])) / math.log(float(args[1]))
    if func == "log":
        func = "ln"
    if func == "atan2":
        return math.atan2(float(args[0]), float(args[1]))
    if func == "hypot":
        return _power(args[0] * args[0] + args[1] * args[1], Fraction(1, 2))
    try:
        return _FLOAT_FUNCS[func](float(args[0]))
    except (ValueError, OverflowError):
        raise Undefined(f"{func} outside its domain") from None


def evaluate_at(node: Expr, env: dict[str, Number]) -> Number:
    """The value of an expression with names bound by `env` (then `pi`, `e`): exact rationals wherever the
    operations allow. Raises Undefined."""
    t = type(node)
    if t is Num:
        return node.value
    if t is Name:
        if node.id in env:
            v = env[node.id]
            if v is None:
                raise Undefined(f"{node.id} is undefined here")
            return v
        if node.id == "pi":
            return math.pi
        if node.id == "e":
            return math.e
        raise Undefined(f"unknown name {node.id}")
    if t is Unary:
        v = evaluate_at(node.operand, env)
        return -v if node.op == "-" else v
    if t is Call:
        return _settle(_call(node.func, [evaluate_at(a, env) for a in node.args]))
    a, b = evaluate_at(node.left, env), evaluate_at(node.right, env)
    op = node.op
    if isinstance(a, float) or isinstance(b, float):
        a, b = float(a), float(b)
    try:
        if op == "+":
            return _settle(a + b)
        if op == "-":
            return _settle(a - b)
        if op == "*":
            return _settle(a * b)
        if op == "/":
            return _settle(a / b)
        if op == "//":
            return Fraction(math.floor(a / b))
        if op == "%":
            return _settle(a % b)
        if op == "**":
            return _power(a, b)
    except ZeroDivisionError:
        raise Undefined("division by zero") from None
    except OverflowError:
        raise Undefined("overflow") from None
    raise Undefined(f"unknown operator {op}")


def chain_values(steps: Sequence[dict[str, Any]], env: dict[str, Number]) -> dict[str, Number | None]:
    """Every step's value with the givens bound by `env` (None where a step is undefined)."""
    out: dict[str, Number | None] = dict(env)
    for s in steps:
        try:
            out[str(s["id"])] = evaluate_at(_parsed(step_text(s)), out)
        except (Undefined, QuantError, ValueError, TypeError, OverflowError, ZeroDivisionError, KeyError):
            out[str(s["id"])] = None
    return out


def _agree(a: Number | None, b: Number | None) -> bool:
    if a is None or b is None:
        return False
    if isinstance(a, Fraction) and isinstance(b, Fraction):
        return a == b
    x, y = float(a), float(b)
    return math.isfinite(x) and abs(x - y) <= _REL * max(abs(x), abs(y), 1e-300)


# ------------------------------------------------------------------ the symbolic composite
@dataclass
class Part:
    """One node of a composite: its SymPy expression (SymPy's own evaluation applied), and as written once the
    cited steps are substituted: the signed terms of the sum it heads and the factors (powers ±1) of the
    product it heads; the givens it uses, and the collapses found inside it."""

    expr: Any
    terms: tuple = ()
    factors: tuple = ()
    used: frozenset = frozenset()
    why: tuple = ()


def _sympy():
    import sympy

    return sympy


@functools.lru_cache(maxsize=1)
def _functions() -> dict[str, Any]:
    sp = _sympy()
    return {"floor": sp.floor, "ceil": sp.ceiling, "round": sp.Function("round"), "abs": sp.Abs, "min": sp.Min,
            "max": sp.Max, "sqrt": sp.sqrt, "cbrt": lambda x: sp.root(x, 3), "exp": sp.exp, "ln": sp.log,
            "log": sp.log, "log10": lambda x: sp.log(x, 10), "log2": lambda x: sp.log(x, 2), "sin": sp.sin,
            "cos": sp.cos, "tan": sp.tan, "asin": sp.asin, "acos": sp.acos, "atan": sp.atan, "atan2": sp.atan2,
            "hypot": lambda a, b: sp.sqrt(a ** 2 + b ** 2)}


@functools.cache
def symbol(name: str):
    return _sympy().Symbol(name, positive=True)


def _leaf(expr, used: frozenset = frozenset(), why: tuple = ()) -> Part:
    return Part(expr, ((1, expr),), ((1, expr),), used, why)


class _Builder:
    """Builds the composites of one chain, step by step; `collapse` keeps the first collapse met: a sum whose
    terms or a product whose factors (common factors of a sum's terms pulled out, nothing expanded) cancel,
    where what is left is a constant multiple of 1, a given or an earlier step (a restatement or a free
    multiple: `g2 + g1 * g2 / g1`, `(g1 + g2) - g2`, `g1 * pi / pi`); a literal 1 as a factor or divisor, a 0
    as a term, an exponent 0 or 1."""

    def __init__(self) -> None:
        self.ctx: dict[str, Part] = {}
        self.known: list[Any] = []  # 1, the givens, the earlier steps' composites
        self.collapse = ""
        self.where = ""

    def note(self, why: str) -> None:
        if not self.collapse:
            self.collapse = f"{self.where}: {why}" if self.where else why

    def cancelled(self, part: Part, kind: str) -> None:
        if self.collapse:
            return
        sp = _sympy()
        try:
            left = sp.cancel(sp.together(part.expr))
        except (sp.PolynomialError, TypeError, ValueError):
            left = part.expr
        for x in self.known:
            try:
                ratio = sp.cancel(left / x)
            except (sp.PolynomialError, TypeError, ValueError, ZeroDivisionError):
                continue
            if not ratio.free_symbols and ratio.is_finite is not False:
                what = "a constant" if x == 1 else sp.sstr(x)
                self.note(f"{kind} cancel to {sp.sstr(ratio)} x {what}" if x != 1 else
                          f"{kind} cancel to the constant {sp.sstr(left)}")
                return

    def build(self, node: Expr) -> Part:
        sp = _sympy()
        t = type(node)
        if t is Num:
            return _leaf(sp.Rational(node.value.numerator, node.value.denominator))
        if t is Name:
            if node.id in self.ctx:
                return self.ctx[node.id]
            return _leaf(symbol(node.id))  # pi, e: constants written as names, symbols here (pi / pi must show)
        if t is Unary:
            p = self.build(node.operand)
            if node.op == "+":
                return p
            return Part(-p.expr, tuple((-s, x) for s, x in p.terms), ((1, -p.expr),), p.used, p.why)
        if t is Call:
            parts = [self.build(a) for a in node.args]
            expr = _functions()[node.func](*[p.expr for p in parts])
            return _leaf(expr, frozenset().union(*(p.used for p in parts)))
        a, b = self.build(node.left), self.build(node.right)
        used = a.used | b.used
        op = node.op
        if op in ("+", "-"):
            sign = 1 if op == "+" else -1
            terms = a.terms + tuple((sign * s, x) for s, x in b.terms)
            expr = a.expr + sign * b.expr
            part = Part(expr, terms, ((1, expr),), used)
            signs: dict[Any, set] = {}
            for s, x in terms:
                c, rest = x.as_coeff_Mul()
                if c == 0:
                    self.note("adds 0")
                signs.setdefault(rest, set()).add((s * c) > 0)
            if any(len(v) > 1 for v in signs.values()):
                self.cancelled(part, "terms")
            return part
        if op in ("*", "/"):
            k = 1 if op == "*" else -1
            if (isinstance(node.right, Num) and node.right.value == 1) or \
                    (op == "*" and isinstance(node.left, Num) and node.left.value == 1):
                self.note("multiplies by 1")
            factors = a.factors + tuple((k * p, x) for p, x in b.factors)
            if op == "/" and b.expr == 0:
                raise Undefined("division by zero")
            expr = a.expr * b.expr if op == "*" else a.expr / b.expr
            part = Part(expr, ((1, expr),), factors, used)
            powers: dict[Any, set] = {}
            for p, x in factors:
                written = sp.factor_terms(x) if x.is_Add else x
                for base, e in written.as_powers_dict().items():
                    if not base.is_number:
                        powers.setdefault(base, set()).add((p * e) > 0)
            if any(len(v) > 1 for v in powers.values()):
                self.cancelled(part, "factors")
            return part
        if op == "**" and b.expr.is_Integer:
            n = int(b.expr)
            if n in (0, 1):
                self.note(f"raises to {n}")
            return _leaf(a.expr ** n, used)
        if op == "**":
            expr = a.expr ** b.expr
        elif op == "%":
            expr = sp.Mod(a.expr, b.expr)
        elif op == "//":
            expr = sp.floor(a.expr / b.expr)
        else:  # pragma: no cover - the grammar has no other operator
            raise Undefined(f"unknown operator {op}")
        return _leaf(expr, used)


def _build_chain(steps: Sequence[dict[str, Any]], problem: Problem) -> tuple[dict[str, Part], str]:
    g = givens_of(problem)
    sp = _sympy()
    b = _Builder()
    b.known.append(sp.Integer(1))
    for gid in g.values:
        s = symbol(gid)
        b.ctx[gid] = Part(s, ((1, s),), ((1, s),), frozenset({gid}))
        b.known.append(s)
    out: dict[str, Part] = {}
    for s in steps:
        b.where = str(s["id"])
        part = b.build(_parsed(step_text(s)))
        b.ctx[str(s["id"])] = out[str(s["id"])] = part
        b.known.append(part.expr)
    return out, b.collapse


def composites(steps: Sequence[dict[str, Any]], problem: Problem) -> dict[str, Part]:
    """Every step's composite (cited steps substituted; givens as positive symbols, literals exact rationals,
    `pi` and `e` as symbols, floor/ceil/round/Mod/Min/Max/Abs as opaque functions)."""
    return _build_chain(steps, problem)[0]


def composite(steps: Sequence[dict[str, Any]], problem: Problem):
    """The chain's composite: its last step's expression with every cited step substituted, cancelled."""
    parts = composites(steps, problem)
    return _sympy().cancel(parts[str(steps[-1]["id"])].expr) if parts else None


def collapses(steps: Sequence[dict[str, Any]], problem: Problem) -> str:
    """Why the chain's work undoes itself ('' when it does not): a given the chain uses is missing from its
    cancelled composite; or terms or factors cancel (`x - x`, `x / x`, a factor common to a numerator's terms
    and its denominator) and leave a constant multiple of 1, a given or an earlier step; or a step multiplies
    by 1, adds 0 or raises to 0 or 1."""
    sp = _sympy()
    if not steps:
        return ""
    try:
        parts, why = _build_chain(steps, problem)
    except Undefined as exc:
        return f"undefined: {exc}"
    if why:
        return why
    last = parts[str(steps[-1]["id"])]
    try:
        free = {str(x) for x in sp.cancel(last.expr).free_symbols}
    except (sp.PolynomialError, TypeError, ValueError):
        free = {str(x) for x in last.expr.free_symbols}
    missing = sorted(last.used - free)
    if missing:
        return f"{', '.join(missing)} cancel{'s' if len(missing) == 1 else ''} out of the composite"
    return ""


def opaque(steps: Sequence[dict[str, Any]]) -> list[str]:
    """The opaque operators a chain uses (floor, ceil, round, %, //, min, max, abs), step by step, outer first."""
    out = []
    for s in steps:
        for node in _parsed(step_text(s)).walk():
            if isinstance(node, Call) and node.func in _OPAQUE:
                out.append(node.func)
            elif isinstance(node, BinOp) and node.op in ("%", "//"):
                out.append(node.op)
    return out


# ------------------------------------------------------------------ functions at random points
def _series(steps: Sequence[dict[str, Any]], g: Givens) -> list[dict[str, Number | None]]:
    return [chain_values(steps, dict(point)) for point in g.points]


def restates(steps: Sequence[dict[str, Any]], problem: Problem) -> str:
    """Why a step restates ('' when none does): its composite is a constant, a given, or an earlier step's
    composite, as a function of the givens. A last step that only converts one given into the answer's unit
    (the question asks for it in another unit) is no restatement."""
    g = givens_of(problem)
    series = _series(steps, g)
    answer_unit = str((problem.answer or {}).get("unit") or "") if isinstance(problem.answer, dict) else ""
    seen: list[str] = []
    for k, s in enumerate(steps):
        sid = str(s["id"])
        vals = [pt.get(sid) for pt in series]
        live = [i for i, v in enumerate(vals) if v is not None]
        if len(live) >= MIN_POINTS:
            if all(_agree(vals[i], vals[live[0]]) for i in live):
                return f"{sid} is a constant"
            for other in list(g.values) + seen:
                if all(_agree(vals[i], series[i].get(other)) for i in live):
                    last_conversion = (k == len(steps) - 1 and other in g.values and answer_unit
                                       and str(s.get("unit") or "") != g.units.get(other, ""))
                    if not last_conversion:
                        return f"{sid} restates {other}"
        seen.append(sid)
    return ""


def _scales(problem: Problem) -> tuple[Fraction, ...]:
    unit = str((problem.answer or {}).get("unit") or "") if isinstance(problem.answer, dict) else ""
    # a percentage as the fraction or the percent number; cents as dollars or as the count of cents
    return (Fraction(1), Fraction(100), Fraction(1, 100)) if unit.strip() in ("percent", "%", "cent") else (
        Fraction(1),)


def same_function(steps: Sequence[dict[str, Any]], reference: Sequence[dict[str, Any]] | Sequence[Sequence[dict]],
                  problem: Problem) -> bool | None:
    """Is the chain's composite the reference's, as a function of the givens (exact values at random rational
    points, givens sharing a number moved together)? `reference` is one step list or several readings of
    one (any reading that agrees will do). None when fewer than `MIN_POINTS` points define both."""
    readings = [reference] if reference and isinstance(reference[0], dict) else list(reference)
    g = givens_of(problem)
    key = tuple(tuple((str(x["id"]), step_text(x)) for x in ref) for ref in readings)
    undecided = False
    for variant in _complement_readings(steps, problem):
        mine = [pt.get(str(steps[-1]["id"])) for pt in _series(variant, g)]
        verdict = _agrees(mine, key, g, problem)
        if verdict:
            return True
        undecided = undecided or verdict is None
    return None if undecided else False


def _complement_readings(steps: Sequence[dict[str, Any]], problem: Problem) -> list[list[dict[str, Any]]]:
    """The chain as written, and with each literal that is 1 - x or 1 + x of a percentage or fraction given x
    read as that (0.6 for "decreases 40 %", 1.1 for "10 % more"), and a divisor that is the reciprocal of one
    (`x / 3` for "a third"): the documented grounding's complement, growth factor and divisor, which move with
    their given."""
    from prosfi.quant import parse_quantity

    fractions: dict[Fraction, str] = {}
    divisors: dict[Fraction, str] = {}  # `x / 4` for 25 %: the given, as a divisor (documented grounding)
    for gv in problem.givens:
        try:
            v = parse_quantity({"value": gv.get("value"), "unit": gv.get("unit") or ""})
        except (QuantError, TypeError, ValueError):
            continue
        if v.dimensionless and isinstance(v.mag, Fraction) and 0 < v.mag < 1:
            fractions.setdefault(1 - v.mag, f"(1 - {gv['id']})")
            fractions.setdefault(1 + v.mag, f"(1 + {gv['id']})")
            divisors.setdefault(1 / v.mag, str(gv["id"]))
    if not fractions:
        return [list(steps)]

    def divide(m: re.Match) -> str:
        try:
            gid = divisors.get(Fraction(m.group(1)))
        except (ValueError, ZeroDivisionError):
            gid = None
        return f"* {gid}" if gid else m.group(0)

    def swap(m: re.Match) -> str:
        try:
            return fractions.get(Fraction(m.group(0)), m.group(0))
        except (ValueError, ZeroDivisionError):
            return m.group(0)

    changed = []
    for st in steps:
        if "expr" in st:
            text = re.sub(r"/\s*(\d+(?:\.\d+)?)(?![\w.(*])", divide, str(st["expr"]))
            st = {**st, "expr": re.sub(r"(?<![\w.])\d+\.\d+(?![\w.])", swap, text)}
        changed.append(st)
    return [list(steps)] + ([changed] if changed != list(steps) else [])


def _agrees(mine: list, key: tuple, g: Givens, problem: Problem) -> bool | None:
    undecided = False
    for theirs in _reading_values(key, g):
        live = [i for i in range(len(mine)) if mine[i] is not None and theirs[i] is not None]
        if len(live) < MIN_POINTS:
            undecided = True
            continue
        for scale in _scales(problem):
            if all(_agree(mine[i], theirs[i] * scale if isinstance(theirs[i], Fraction) else float(theirs[i])
                          * float(scale)) for i in live):
                return True
    return None if undecided else False


@functools.lru_cache(maxsize=512)
def _reading_values(key: tuple, g: Givens) -> tuple[tuple[Number | None, ...], ...]:
    """Each reading's last value at the random points (the readings of one reference are compared with many
    chains; readings sharing their first steps share those steps' values)."""
    memo: dict[tuple, list[dict[str, Number | None]]] = {(): [dict(pt) for pt in g.points]}
    out = []
    for ref in key:
        for k in range(1, len(ref) + 1):
            prefix = ref[:k]
            if prefix in memo:
                continue
            sid, text = prefix[-1]
            envs = []
            for env in memo[prefix[:-1]]:
                env = dict(env)
                try:
                    env[sid] = evaluate_at(_parsed(text), env)
                except (Undefined, QuantError, ValueError, TypeError, OverflowError, ZeroDivisionError, KeyError):
                    env[sid] = None
                envs.append(env)
            memo[prefix] = envs
        out.append(tuple(env.get(ref[-1][0]) for env in memo[ref]))
    return tuple(dict.fromkeys(out))


def value_at_givens(steps: Sequence[dict[str, Any]], problem: Problem) -> Number | None:
    """The chain's last value at the problem's own givens (SI), by the oracle's evaluator."""
    return chain_values(steps, dict(givens_of(problem).values)).get(str(steps[-1]["id"]))


# ------------------------------------------------------------------ the reference solution
def _answer_number(problem: Problem) -> Fraction | None:
    a = problem.answer if isinstance(problem.answer, dict) else {"value": problem.answer}
    try:
        return Fraction(str(a.get("value")).replace(",", ""))
    except (ValueError, ZeroDivisionError, TypeError):
        return None


def _print(node: Expr, literal: dict[int, str]) -> str:
    if id(node) in literal:
        return literal[id(node)]
    if isinstance(node, Num):
        return node.text
    if isinstance(node, Name):
        return node.id
    if isinstance(node, Unary):
        return f"{node.op}({_print(node.operand, literal)})"
    if isinstance(node, Call):
        return f"{node.func}({', '.join(_print(a, literal) for a in node.args)})"
    return f"({_print(node.left, literal)} {node.op} {_print(node.right, literal)})"


def _number_text(x: Fraction) -> str:
    return str(x.numerator) if x.denominator == 1 else f"({x.numerator}/{x.denominator})"


ALWAYS_LITERALS = frozenset({Fraction(0), Fraction(1), Fraction(2), Fraction(1, 2)})  # numbers, not givens
_PAIR = re.compile(r"(?<![\w.)/])(\d+(?:\.\d+)?)\s*/\s*(\d+(?:\.\d+)?)(?![\w.(]|\s*\*\*)")


def _readings_of(v: Fraction, k: int, results: Sequence[Fraction], g: Givens,
                 groups: dict[int, list[str]]) -> list[str]:
    """What a number in equation k may stand for, most likely first: an earlier result with its value (latest
    first), a given stating it (its value, or its number as written: 25 of 25 %), a given's reciprocal (2 for
    "half", 3 for "a third"), complement or growth factor (0.75 for "25 % off", 1.25 for "25 % more")."""
    out = [f"s{j + 1}" for j in reversed(range(k)) if results[j] == v]
    for members in groups.values():
        for gid in members:
            mag, w = g.values[gid], g.written[gid]
            if isinstance(mag, Fraction) and mag == v:
                out.append(gid)
                break
            if w is not None and w == v and w != 0 and isinstance(mag, Fraction):
                scale = mag / w
                out.append(gid if scale == 1 else f"({gid} / {_number_text(scale)})")
                break
    for gid in g.values:
        mag = g.values[gid]
        if not isinstance(mag, Fraction) or g.units.get(gid, "") not in ("", "percent", "%"):
            continue
        if mag != 0 and 1 / mag == v and v != 1:
            out.append(f"(1 / {gid})")
        if 0 < mag < 1 and 1 - mag == v:
            out.append(f"(1 - {gid})")
        if 0 < mag < 1 and 1 + mag == v:
            out.append(f"(1 + {gid})")
    return list(dict.fromkeys(out))


def equation_readings(problem: Problem, equations: Sequence[Any]) -> list[list[dict[str, Any]]]:
    """A worked solution's equations as step lists over the givens, the answer last: each literal (or literal
    pair `a/b`, such as 3/5 for "three-fifths") read as an earlier result with its value (latest first), else
    as the given(s) stating it (givens sharing a number are one), else as a constant; a given's reciprocal,
    complement or growth factor are further readings (`x / 2` for "half of x"), and 0, 1, 2 and 1/2 may be
    constants too (a stated number never is: 16 - 3 - 4 is never 9). The first reading takes the first
    choice everywhere; the others (at most `MAX_READINGS`) the other choices, fewest changes first."""
    answer = _answer_number(problem)
    if answer is None:
        return []
    targets = {answer} | ({answer / 100, answer * 100} if len(_scales(problem)) > 1 else set())
    last = max((k for k, e in enumerate(equations) if Fraction(e.result) in targets), default=None)
    if last is None:
        return []
    g = givens_of(problem)
    groups: dict[int, list[str]] = {}
    for gid in g.values:
        groups.setdefault(g.group[gid], []).append(gid)
    results = [Fraction(e.result) for e in equations]
    trees, sites = [], []
    for k, eq in enumerate(equations[:last + 1]):
        def group(m: re.Match, k: int = k) -> str:  # `15*3/5` -> `15*(3/5)` where 3/5 is something stated
            v = Fraction(m.group(1)) / Fraction(m.group(2)) if Fraction(m.group(2)) else None
            return f"({m.group(0)})" if v is not None and _readings_of(v, k, results, g, groups) else m.group(0)

        try:
            tree = parse_expr(_PAIR.sub(group, eq.expr))
        except QuantError:
            return []
        trees.append(tree)
        inside: set[int] = set()
        for node in tree.walk():
            if isinstance(node, BinOp) and node.op == "/" and isinstance(node.left, Num) and \
                    isinstance(node.right, Num) and node.right.value != 0:
                choice = _readings_of(node.left.value / node.right.value, k, results, g, groups)
                if choice:
                    sites.append((k, id(node), choice + [None]))  # None: read its two numbers apart
                    inside.update((id(node.left), id(node.right)))
        for node in tree.walk():
            if isinstance(node, Num):
                choice = _readings_of(node.value, k, results, g, groups)
                if not choice or node.value in ALWAYS_LITERALS:  # a stated number is never read as a constant
                    choice.append(_number_text(node.value))
                sites.append((k, id(node), choice))
    picks = [tuple(0 for _ in sites)]
    for n_dev in range(1, len(sites) + 1):
        for where in itertools.combinations(range(len(sites)), n_dev):
            for combo in itertools.product(*[range(1, len(sites[i][2])) for i in where]):
                pick = [0] * len(sites)
                for i, c in zip(where, combo):
                    pick[i] = c
                picks.append(tuple(pick))
                if len(picks) >= MAX_READINGS:
                    break
            if len(picks) >= MAX_READINGS:
                break
        if len(picks) >= MAX_READINGS:
            break
    readings = []
    for pick in picks:
        literal_by_eq: dict[int, dict[int, str]] = {}
        for (k, nid, choice), c in zip(sites, pick):
            if choice[c] is not None:
                literal_by_eq.setdefault(k, {})[nid] = choice[c]
        readings.append([{"id": f"s{k + 1}", "expr": _print(tree, literal_by_eq.get(k, {}))}
                         for k, tree in enumerate(trees)])
    return readings


def reference(problem: Problem) -> list[list[dict[str, Any]]]:
    """The readings of the problem's reference solution (empty when it has none): a generated problem's gold
    steps (physics, GSM-Symbolic: written by its templates), or a GSM8K solution's own equations (its gold
    steps were built by the project's own builder, under the chain rules: not a reference for them). A
    GSM-Symbolic problem without gold steps falls back to its solution's equations."""
    gold = problem.extra.get("gold_steps") if isinstance(problem.extra, dict) else None
    if problem.source != "gsm8k" and isinstance(gold, list) and gold:
        return [[dict(s) for s in gold]]
    solution = problem.extra.get("solution") if isinstance(problem.extra, dict) else None
    if not isinstance(solution, str):
        return []
    from prosfi.data.gsm8k import equations

    return equation_readings(problem, equations(solution))


def judge(steps: Sequence[dict[str, Any]], problem: Problem,
          readings: Sequence[Sequence[dict[str, Any]]] | None = None) -> dict[str, Any]:
    """Everything the oracle says of one chain: collapse, restatement, opaque operators, reference function."""
    readings = reference(problem) if readings is None else readings
    return {"collapses": collapses(steps, problem), "restates": restates(steps, problem),
            "opaque": opaque(steps),
            "same_function": same_function(steps, readings, problem) if readings else None}


__all__ = ["Givens", "Part", "Undefined", "chain_values", "collapses", "composite", "composites",
           "equation_readings", "evaluate_at", "givens_of", "judge", "opaque", "reference", "restates",
           "same_function", "step_text", "value_at_givens"]
