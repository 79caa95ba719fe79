"""Quantities: units (Pint), a bounded expression grammar, exact evaluation, primitives, givens.

    from prosfi.quant import check_quantity
    check_quantity({"d": "120 km", "t": "1.5 h"}, expr="d / t", claim="80 km/h").status  # valid

A bottom layer beside `prosfi.logic`: imports nothing from prosfi but `prosfi.verdict`.
The unit registry is built on first use (`ureg`, ~0.3 s), never at import. See docs/quantity.md.
"""

from __future__ import annotations

from typing import Any

from prosfi.quant.check import check_quantity, compute
from prosfi.quant.errors import QuantError
from prosfi.quant.evaluate import evaluate
from prosfi.quant.expr import FUNCTIONS, Expr, parse_expr
from prosfi.quant.givens import Given, extract_givens
from prosfi.quant.primitives import PRIMITIVES, Primitive, apply_primitive
from prosfi.quant.tolerance import Tolerance, close_enough
from prosfi.quant.units import Value, format_value, parse_quantity, parse_unit, registry


def __getattr__(name: str) -> Any:
    if name == "ureg":  # built lazily: importing prosfi.quant must stay cheap
        return registry()
    raise AttributeError(f"module 'prosfi.quant' has no attribute {name!r}")


__all__ = ["QuantError", "ureg", "parse_unit", "parse_quantity", "Value", "parse_expr", "Expr", "FUNCTIONS",
           "evaluate", "PRIMITIVES", "Primitive", "apply_primitive", "Tolerance", "close_enough",
           "check_quantity", "compute", "Given", "extract_givens", "format_value"]
