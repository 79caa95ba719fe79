"""Quantity check lines for `prosfi check`: read one, answer a batch in this process.

Line: {"id": "q1", "quantities": {"d": "120 km", "t": "1.5 h"}, "expr": "d / t", "claim": "80 km/h"}
  or  {"id": "q2", "quantities": {...}, "op": "average_speed", "args": ["d", "t"], "claim": "80 km/h"}
Optional per line: "rel" (relative tolerance), "sigfigs". `quantities` may be omitted (literals only).

Why in-process and not the worker pool: a quantity check has no external solver; every step of it
is bounded before it runs (expression length, depth and node count, literal digits, exact-number
bits with the result size estimated before a power is computed, float overflow caught), so the
worst case is milliseconds (tests/test_quant_bounds.py runs the hostile set) and the pool's
process start-up and messaging would cost more than the checks themselves.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Sequence

from prosfi.quant import PRIMITIVES, Tolerance, check_quantity
from prosfi.quant.units import registry
from prosfi.verdict import Verdict, error

QUANTITY_KEYS = ("quantities", "expr", "op", "args", "claim")


@dataclass(frozen=True)
class QuantityCheck:
    quantities: Any
    claim: Any
    expr: Any = None
    op: Any = None
    args: Any = ()
    tol: Tolerance = field(default_factory=Tolerance)
    id: str | None = None


def is_quantity_line(obj: dict) -> bool:
    return "claim" in obj or "quantities" in obj


def read_quantity(obj: dict, default: Tolerance) -> QuantityCheck | Verdict:
    """A QuantityCheck from a parsed line, or an `error` Verdict naming what is wrong."""
    if "premises" in obj or "conclusion" in obj:
        return error("a line is either a logic check (premises, conclusion) or a quantity check "
                     "(quantities, expr|op, claim), not both")
    if "claim" not in obj:
        return error("missing field(s): claim")
    if ("expr" in obj) == ("op" in obj):
        return error("a quantity check needs exactly one of `expr` and `op`")
    tol = default
    if "rel" in obj or "sigfigs" in obj:
        try:
            rel = obj.get("rel", default.rel)
            sig = obj.get("sigfigs", default.sigfigs)
            if isinstance(rel, bool) or not isinstance(rel, (int, float)):
                raise ValueError("`rel` must be a number")
            tol = Tolerance(rel=float(rel), abs_eps=default.abs_eps, sigfigs=sig)
        except ValueError as exc:
            return error(str(exc))
    ident = obj.get("id")
    return QuantityCheck(obj.get("quantities", {}), obj["claim"], obj.get("expr"), obj.get("op"),
                         obj.get("args", ()), tol, None if ident is None else str(ident))


def check_many(checks: Sequence[QuantityCheck]) -> list[Verdict]:
    """One verdict per check, in order (check_quantity never raises)."""
    if checks:
        registry()  # build the unit registry and the primitives before the first check's clock starts
        len(PRIMITIVES)
    return [check_quantity(c.quantities, expr=c.expr, op=c.op, args=c.args, claim=c.claim, tol=c.tol)
            for c in checks]


__all__ = ["QuantityCheck", "is_quantity_line", "read_quantity", "check_many", "QUANTITY_KEYS"]
