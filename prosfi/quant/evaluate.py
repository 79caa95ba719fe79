"""Evaluation: exact rationals where possible, floats otherwise, dimensions checked at every node.

Work is bounded a priori, never by a timer: every exact intermediate is checked against
MAX_EXACT_BITS (numerator + denominator bits) and an integer power's result size is *estimated
before* it is computed (|n| * bits(base)); past the bound the value continues as a float, and a
float that overflows (10**10**10, exp(1e6)) is a QuantError of kind "bound". With the parser's
limits (length, depth, nodes, literal digits) one evaluation is a few thousand big-int operations
on numbers of at most MAX_EXACT_BITS bits: microseconds to a few milliseconds whatever the input.
"""

from __future__ import annotations

import math
from fractions import Fraction
from typing import Callable, Mapping, Sequence

from prosfi.quant.errors import QuantError
from prosfi.quant.expr import BinOp, Call, Expr, Name, Num, Unary
from prosfi.quant.units import DIMENSIONLESS, Value, dims_text

MAX_EXACT_BITS = 8192  # numerator + denominator bits of one exact intermediate (~2,500 digits)
MAX_DIM_EXPONENT = 64  # |exponent| of a dimension in a result (m**64)
MAX_ROOT_DEGREE = 12  # largest q in x**(p/q) applied to a dimensioned base
CONSTANTS = {"pi": math.pi, "e": math.e}

Number = Fraction | float


# ------------------------------------------------------------------------------- magnitudes
def _bits(x: Fraction) -> int:
    return x.numerator.bit_length() + x.denominator.bit_length()


def settle(x: Number) -> Number:
    """Keep an exact result exact while it is small; else a float; a non-finite float is a bound."""
    if isinstance(x, Fraction):
        if _bits(x) <= MAX_EXACT_BITS:
            return x
        try:
            x = x.numerator / x.denominator
        except OverflowError:
            raise QuantError("result too large", "bound") from None
    if not math.isfinite(x):
        raise QuantError("result too large (float overflow)", "bound")
    return x


def _float(x: Number) -> float:
    try:
        return float(x)
    except OverflowError:
        raise QuantError("result too large for floating point", "bound") from None


def _mix(a: Number, b: Number) -> tuple[Number, Number]:
    if isinstance(a, Fraction) and isinstance(b, Fraction):
        return a, b
    return _float(a), _float(b)


# ------------------------------------------------------------------------------- arithmetic
def _same_dims(a: Value, b: Value, what: str) -> None:
    if a.dims != b.dims:
        raise QuantError(f"dimension error: cannot {what} {dims_text(a.dims)} and {dims_text(b.dims)}",
                         "dimension")


def _unit_of(a: Value, b: Value) -> str:
    return a.unit or b.unit


def add(a: Value, b: Value) -> Value:
    _same_dims(a, b, "add")
    x, y = _mix(a.mag, b.mag)
    return Value(settle(x + y), a.dims, _unit_of(a, b))


def sub(a: Value, b: Value) -> Value:
    _same_dims(a, b, "subtract")
    x, y = _mix(a.mag, b.mag)
    return Value(settle(x - y), a.dims, _unit_of(a, b))


def _dims_combine(a: tuple, b: tuple, sign: int) -> tuple:
    out = tuple(x + sign * y for x, y in zip(a, b))
    if any(abs(e) > MAX_DIM_EXPONENT for e in out):
        raise QuantError(f"a dimension exponent beyond {MAX_DIM_EXPONENT}", "bound")
    return out


def _product_unit(a: Value, b: Value) -> str:
    if b.dims == DIMENSIONLESS:
        return a.unit if a.unit != "percent" else ""
    if a.dims == DIMENSIONLESS:
        return b.unit if b.unit != "percent" else ""
    return ""


def mul(a: Value, b: Value) -> Value:
    x, y = _mix(a.mag, b.mag)
    if isinstance(x, Fraction) and _bits(x) + _bits(y) > 2 * MAX_EXACT_BITS + 8:
        x, y = _float(x), _float(y)  # pragma: no cover - settle() keeps operands below the bound
    return Value(settle(x * y), _dims_combine(a.dims, b.dims, 1), _product_unit(a, b))


def div(a: Value, b: Value) -> Value:
    x, y = _mix(a.mag, b.mag)
    if y == 0:
        raise QuantError("division by zero", "math")
    unit = a.unit if b.dims == DIMENSIONLESS and a.unit != "percent" else ""
    return Value(settle(x / y), _dims_combine(a.dims, b.dims, -1), unit)


def floordiv(a: Value, b: Value) -> Value:
    _same_dims(a, b, "floor-divide")
    x, y = _mix(a.mag, b.mag)
    if y == 0:
        raise QuantError("division by zero", "math")
    q = x // y
    return Value(Fraction(int(q)), DIMENSIONLESS, "")


def mod(a: Value, b: Value) -> Value:
    _same_dims(a, b, "take the remainder of")
    x, y = _mix(a.mag, b.mag)
    if y == 0:
        raise QuantError("modulo by zero", "math")
    return Value(settle(x % y), a.dims, _unit_of(a, b))


def neg(a: Value) -> Value:
    return Value(-a.mag, a.dims, a.unit)


def _iroot(n: int, q: int) -> int | None:
    """The exact integer q-th root of n >= 0, or None."""
    if n < 2:
        return n
    if n.bit_length() > 4 * MAX_EXACT_BITS:
        return None
    try:
        guess = round(n ** (1.0 / q))
    except OverflowError:
        guess = round(math.exp(math.log(n) / q))
    for c in (guess - 1, guess, guess + 1):
        if c >= 0 and c ** q == n:
            return c
    return None


def _exact_exponent(b: Value) -> Fraction | None:
    """The exponent as a small-denominator Fraction when it is one (2, 0.5, 1/3 as a float)."""
    if isinstance(b.mag, Fraction):
        return b.mag if b.mag.denominator <= MAX_ROOT_DEGREE else None
    f = Fraction(b.mag).limit_denominator(MAX_ROOT_DEGREE)
    return f if abs(float(f) - b.mag) <= 1e-12 * max(1.0, abs(b.mag)) else None


def power(a: Value, b: Value) -> Value:
    if b.dims != DIMENSIONLESS:
        raise QuantError(f"dimension error: an exponent must be dimensionless, not {dims_text(b.dims)}",
                         "dimension")
    p = _exact_exponent(b)
    if a.dims != DIMENSIONLESS:
        if p is None:
            raise QuantError(f"dimension error: {dims_text(a.dims)} raised to a non-rational power",
                             "dimension")
        dims = tuple(e * p for e in a.dims)
        dims = tuple(int(e) if isinstance(e, Fraction) and e.denominator == 1 else e for e in dims)
        if any(abs(e) > MAX_DIM_EXPONENT for e in dims):
            raise QuantError(f"a dimension exponent beyond {MAX_DIM_EXPONENT}", "bound")
        if any(isinstance(e, Fraction) and e.denominator > MAX_ROOT_DEGREE for e in dims):
            raise QuantError(f"a dimension exponent with a denominator above {MAX_ROOT_DEGREE} "
                             "(roots of roots of a dimensioned value)", "bound")
    else:
        dims = DIMENSIONLESS
    x = a.mag
    if x == 0 and b.mag < 0:
        raise QuantError("zero raised to a negative power", "math")
    if isinstance(x, Fraction) and p is not None and isinstance(b.mag, Fraction):
        q, n = p.denominator, p.numerator
        base: Fraction | None = x
        if q != 1:
            if x < 0:
                raise QuantError("a fractional power of a negative number", "math")
            rn, rd = _iroot(x.numerator, q), _iroot(x.denominator, q)
            base = Fraction(rn, rd) if rn is not None and rd is not None else None
        if base is not None:
            size = abs(n) * max(base.numerator.bit_length(), base.denominator.bit_length())
            if size <= MAX_EXACT_BITS:
                return Value(base ** n, dims, "")
    xf, yf = _float(x), _float(b.mag)
    if xf < 0 and yf != int(yf):
        raise QuantError("a fractional power of a negative number", "math")
    try:
        r = math.pow(xf, yf)
    except OverflowError:
        raise QuantError("result too large (power)", "bound") from None
    except (ValueError, ZeroDivisionError):
        raise QuantError("power has no real value", "math") from None
    return Value(settle(r), dims, "")


# ------------------------------------------------------------------------------- functions
def _dimensionless(name: str, v: Value) -> float:
    if v.dims != DIMENSIONLESS:
        raise QuantError(f"dimension error: {name}() of {dims_text(v.dims)} (its argument must be "
                         "dimensionless)", "dimension")
    return _float(v.mag)


def _float_fn(name: str, fn: Callable[[float], float], domain: Callable[[float], bool] | None = None):
    def apply(args: Sequence[Value]) -> Value:
        x = _dimensionless(name, args[0])
        if domain is not None and not domain(x):
            raise QuantError(f"{name}({x:g}) is undefined", "math")
        try:
            r = fn(x)
        except OverflowError:
            raise QuantError(f"{name}() result too large", "bound") from None
        except ValueError:
            raise QuantError(f"{name}({x:g}) is undefined", "math") from None
        return Value(settle(r))
    return apply


def _log(args: Sequence[Value]) -> Value:
    x = _dimensionless("log", args[0])
    if x <= 0:
        raise QuantError("log of a non-positive number", "math")
    if len(args) == 1:
        return Value(settle(math.log(x)))
    base = _dimensionless("log", args[1])
    if base <= 0 or base == 1:
        raise QuantError("log with a base <= 0 or == 1", "math")
    return Value(settle(math.log(x) / math.log(base)))


def _sqrt(args: Sequence[Value]) -> Value:
    if args[0].mag < 0:
        raise QuantError("sqrt of a negative number", "math")
    return power(args[0], Value(Fraction(1, 2)))


def _cbrt(args: Sequence[Value]) -> Value:
    a = args[0]
    if a.mag < 0:
        r = power(neg(a), Value(Fraction(1, 3)))
        return neg(r)
    return power(a, Value(Fraction(1, 3)))


def _to_int(x: Number) -> Fraction:
    if isinstance(x, float) and abs(x) > 2.0 ** 1000:
        raise QuantError("floor/ceil/round of a huge number", "bound")
    return x


def _floor(args: Sequence[Value]) -> Value:
    a = args[0]
    return Value(Fraction(math.floor(_to_int(a.mag))), a.dims, a.unit)


def _ceil(args: Sequence[Value]) -> Value:
    a = args[0]
    return Value(Fraction(math.ceil(_to_int(a.mag))), a.dims, a.unit)


def _round(args: Sequence[Value]) -> Value:
    """Round half away from zero (textbook rounding), to `ndigits` decimals (default 0)."""
    a = args[0]
    nd = 0
    if len(args) == 2:
        d = args[1]
        if d.dims != DIMENSIONLESS or not isinstance(d.mag, Fraction) or d.mag.denominator != 1:
            raise QuantError("round(x, n): n must be a whole number")
        nd = int(d.mag)
        if abs(nd) > 20:
            raise QuantError("round(x, n): |n| must be at most 20", "bound")
    x = _to_int(a.mag)
    exact = x if isinstance(x, Fraction) else Fraction(x)
    scale = Fraction(10) ** nd
    y = abs(exact) * scale + Fraction(1, 2)
    r = Fraction(math.floor(y)) / scale
    r = -r if exact < 0 else r
    return Value(r if isinstance(x, Fraction) else settle(float(r)), a.dims, a.unit)


def _abs(args: Sequence[Value]) -> Value:
    a = args[0]
    return Value(abs(a.mag), a.dims, a.unit)


def _extreme(name: str, pick: Callable):
    def apply(args: Sequence[Value]) -> Value:
        first = args[0]
        for other in args[1:]:
            _same_dims(first, other, f"compare in {name}()")
        return pick(args, key=lambda v: v.mag)
    return apply


def _atan2(args: Sequence[Value]) -> Value:
    _same_dims(args[0], args[1], "compare in atan2()")
    return Value(settle(math.atan2(_float(args[0].mag), _float(args[1].mag))))


def _hypot(args: Sequence[Value]) -> Value:
    _same_dims(args[0], args[1], "combine in hypot()")
    return power(add(mul(args[0], args[0]), mul(args[1], args[1])), Value(Fraction(1, 2)))


def _unit_interval(x: float) -> bool:
    return -1.0 <= x <= 1.0


_IMPL: dict[str, Callable[[Sequence[Value]], Value]] = {
    "sqrt": _sqrt, "cbrt": _cbrt, "exp": _float_fn("exp", math.exp), "log": _log,
    "ln": _float_fn("ln", math.log, lambda x: x > 0),
    "log10": _float_fn("log10", math.log10, lambda x: x > 0),
    "log2": _float_fn("log2", math.log2, lambda x: x > 0),
    "sin": _float_fn("sin", math.sin, math.isfinite), "cos": _float_fn("cos", math.cos, math.isfinite),
    "tan": _float_fn("tan", math.tan, math.isfinite),
    "asin": _float_fn("asin", math.asin, _unit_interval),
    "acos": _float_fn("acos", math.acos, _unit_interval),
    "atan": _float_fn("atan", math.atan), "atan2": _atan2, "hypot": _hypot,
    "abs": _abs, "floor": _floor, "ceil": _ceil, "round": _round,
    "min": _extreme("min", min), "max": _extreme("max", max),
}

_BINARY = {"+": add, "-": sub, "*": mul, "/": div, "//": floordiv, "%": mod, "**": power}


# ------------------------------------------------------------------------------- the walk
def evaluate(expr: Expr, env: Mapping[str, Value], literals: Mapping[int, Value] | None = None) -> Value:
    """The value of `expr` with names bound by `env` (then `pi`, `e`). Exact where possible.
    `literals` maps `id(node)` of some `Num` (or literal `a/b`) nodes to the value they stand for (the chain
    rules re-evaluate a step with the givens its literals were read from re-assigned).
    QuantError: "error" (unknown name), "dimension", "math", "bound"."""
    return _eval(expr, env, literals or {})


def _lookup(name: str, env: Mapping[str, Value]) -> Value:
    v = env.get(name)
    if v is not None:
        return v
    if name in CONSTANTS:
        return Value(CONSTANTS[name])
    raise QuantError(f"unknown name {name!r}")


def _eval(root: Expr, env: Mapping[str, Value], literals: Mapping[int, Value]) -> Value:
    """Post-order walk with an explicit stack: no Python recursion, whatever the tree's shape."""
    values: list[Value] = []
    todo: list[tuple[Expr, bool]] = [(root, False)]
    while todo:
        node, ready = todo.pop()
        t = type(node)
        if literals and id(node) in literals:
            values.append(literals[id(node)])
        elif t is Num:
            values.append(Value(node.value))  # type: ignore[attr-defined]
        elif t is Name:
            values.append(_lookup(node.id, env))  # type: ignore[attr-defined]
        elif not ready:
            todo.append((node, True))
            todo.extend((c, False) for c in reversed(node.children()))
        elif t is BinOp:
            b = values.pop()
            values.append(_BINARY[node.op](values.pop(), b))  # type: ignore[attr-defined]
        elif t is Unary:
            v = values.pop()
            values.append(neg(v) if node.op == "-" else v)  # type: ignore[attr-defined]
        elif t is Call:
            n = len(node.args)  # type: ignore[attr-defined]
            args = values[-n:]
            del values[-n:]
            values.append(_IMPL[node.func](args))  # type: ignore[attr-defined]
        else:  # pragma: no cover
            raise QuantError(f"not an expression node: {t.__name__}")
    return values[0]


__all__ = ["evaluate", "add", "sub", "mul", "div", "floordiv", "mod", "neg", "power", "settle",
           "MAX_EXACT_BITS", "CONSTANTS"]
