"""check_quantity: one quantity check -> a Verdict (backend "quant"), never an exception.

    check_quantity({"d": "120 km", "t": "1.5 h"}, expr="d / t", claim="80 km/h")   -> valid
    check_quantity({"m": "2 kg", "v": "3 m/s"}, op="kinetic_energy", args=["m", "v"], claim="9 J")

Verdicts: `valid` (same dimension, value within the tolerance); `invalid` with the reason ("wrong
value: expected …", "wrong unit: …", "dimension error inside the expression: …", "math error: …");
`error` for malformed input (outside the grammar, unknown name, unit or primitive); `unknown` when
a bound refused the work (the result would be too large, the expression too long or too deep).
"""

from __future__ import annotations

import re
import time
from collections.abc import Mapping, Sequence
from typing import Any

from prosfi.quant.errors import QuantError
from prosfi.quant.evaluate import evaluate
from prosfi.quant.expr import parse_expr
from prosfi.quant.primitives import apply_primitive
from prosfi.quant.tolerance import Tolerance, close_enough
from prosfi.quant.units import Value, parse_quantity, unit_info
from prosfi.verdict import Status, Verdict

BACKEND = "quant"
MAX_QUANTITIES = 1000
_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_DEFAULT = Tolerance()


def _verdict(status: Status, detail: str, t0: float) -> Verdict:
    return Verdict(status, BACKEND, (time.perf_counter() - t0) * 1000.0, detail)


def _from_error(exc: QuantError, where: str, t0: float) -> Verdict:
    msg = str(exc)
    if exc.kind == "dimension":
        why = msg.removeprefix("dimension error: ")
        return _verdict(Status.INVALID, f"dimension error inside the {where}: {why}", t0)
    if exc.kind == "math":
        return _verdict(Status.INVALID, f"math error in the {where}: {msg}", t0)
    if exc.kind == "bound":
        return _verdict(Status.UNKNOWN, f"bound: {msg}", t0)
    return _verdict(Status.ERROR, f"{where}: {msg}", t0)


def bind(quantities: Mapping[str, Any]) -> dict[str, Value]:
    """{name: Value} from {name: "120 km" | Value | number | {"value", "unit"}}; QuantError names the
    bad one."""
    if not isinstance(quantities, Mapping):
        raise QuantError("`quantities` must be an object mapping names to quantities")
    if len(quantities) > MAX_QUANTITIES:
        raise QuantError(f"more than {MAX_QUANTITIES} quantities", "bound")
    env = {}
    for name, q in quantities.items():
        if not isinstance(name, str) or not _NAME.fullmatch(name) or "__" in name:
            raise QuantError(f"quantity name {str(name)[:40]!r} is not a name "
                             "([A-Za-z_][A-Za-z0-9_]*, no __)")
        try:
            env[name] = parse_quantity(q)
        except QuantError as exc:
            raise QuantError(f"quantity {name}: {exc}", exc.kind) from None
    return env


def compute(env: Mapping[str, Value], *, expr: str | None = None, op: str | None = None,
            args: Sequence[str] = ()) -> Value:
    """The value of `expr` or of primitive `op` on the named `args` (a QuantError otherwise)."""
    if (expr is None) == (op is None):
        raise QuantError("give exactly one of `expr` and `op`")
    if expr is not None:
        return evaluate(parse_expr(expr), env)
    if not isinstance(op, str):
        raise QuantError("`op` must be a string")
    if isinstance(args, (str, bytes)) or not isinstance(args, Sequence):
        raise QuantError("`args` must be a list of names")
    values = []
    for i, a in enumerate(args):
        if not isinstance(a, str):
            raise QuantError(f"args[{i}] must be a name (a string)")
        v = env.get(a)
        if v is None:
            if op == "convert" and i == len(args) - 1:  # the target unit of a conversion
                info = unit_info(a)
                v = Value(info.scale + info.offset, info.dims, info.text)
            else:
                raise QuantError(f"unknown name {a[:40]!r}")
        values.append(v)
    return apply_primitive(op, values)


def check_quantity(quantities: Mapping[str, Any], *, expr: str | None = None, op: str | None = None,
                   args: Sequence[str] = (), claim: Any, tol: Tolerance = _DEFAULT) -> Verdict:
    """Does `expr` (or `op(args)`) over `quantities` equal `claim`? A Verdict; never raises."""
    t0 = time.perf_counter()
    try:
        try:
            env = bind(quantities)
        except QuantError as exc:
            return _from_error(exc, "quantities", t0)
        try:
            true = compute(env, expr=expr, op=op, args=args)
        except QuantError as exc:
            return _from_error(exc, "expression" if expr is not None else f"primitive {op}", t0)
        try:
            claimed = parse_quantity(claim)
        except QuantError as exc:
            if exc.kind == "bound":
                return _verdict(Status.UNKNOWN, f"bound: claim: {exc}", t0)
            return _verdict(Status.ERROR, f"claim: {exc}", t0)
        ok, reason = close_enough(true, claimed, tol)
        return _verdict(Status.VALID if ok else Status.INVALID, reason, t0)
    except Exception as exc:  # a bug costs one verdict, never the batch
        return _verdict(Status.UNKNOWN, f"internal error: {type(exc).__name__}: {exc}"[:300], t0)


__all__ = ["check_quantity", "compute", "bind", "BACKEND"]
