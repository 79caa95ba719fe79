"""Quantity steps: the `<steps>` array read into `QuantityStep`s, and a step's claimed value.

A step is `{"id": "s1", "expr": "g1 - g2 - g3", "value": 9, "unit": "", "name": "eggs_for_sale"}` or
`{"id": "s2", "op": "kinetic_energy", "args": ["g1", "g2"], "value": 50, "unit": "J"}`. The array's
skeleton (JSON, objects, ids, duplicates) is read by `trace.schema.read_step_array`, the same reader the
logic steps use; here only the quantity fields.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from prosfi.quant import QuantError, parse_quantity
from prosfi.quant.units import Value, make_value, parse_number
from prosfi.trace.schema import read_step_array


@dataclass(frozen=True)
class QuantityStep:
    id: str
    expr: str | None
    op: str | None
    args: tuple[str, ...]
    value: Any  # int | float | str (a number as written)
    unit: str = ""
    name: str = ""

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"id": self.id}
        if self.expr is not None:
            out["expr"] = self.expr
        else:
            out["op"], out["args"] = self.op, list(self.args)
        out.update(value=self.value, unit=self.unit)
        if self.name:
            out["name"] = self.name
        return out

    @property
    def refs(self) -> tuple[str, ...]:
        return self.args



def parse_steps(text: str, given_ids: Sequence[str] = ()) -> tuple[tuple[QuantityStep, ...], list[str]]:
    """Steps from the inner text of `<steps>` (code fence tolerated), plus schema errors."""
    return read_step_array(text, given_ids, "a given", _read_step)


def _read_step(raw: dict, sid: str, where: str, errors: list[str]) -> QuantityStep | None:
    expr, op, args = raw.get("expr"), raw.get("op"), raw.get("args", [])
    if (expr is None) == (op is None):
        errors.append(f"{where}: give exactly one of 'expr' (an expression) and 'op' (a primitive with 'args')")
        return None
    if expr is not None and (not isinstance(expr, str) or not expr.strip()):
        errors.append(f"{where}: 'expr' must be a non-empty string")
        return None
    if op is not None:
        if not isinstance(op, str) or not op.strip():
            errors.append(f"{where}: 'op' must be a non-empty string")
            return None
        if not isinstance(args, list) or not all(isinstance(a, str) for a in args):
            errors.append(f"{where}: 'args' must be a list of ids (strings)")
            return None
    value = raw.get("value")
    if isinstance(value, bool) or not isinstance(value, (int, float, str)):
        errors.append(f"{where}: 'value' must be a number")
        return None
    if isinstance(value, str):
        try:
            parse_number(value.strip())
        except QuantError:
            errors.append(f"{where}: 'value' must be a number (put the unit in 'unit'), not {value[:30]!r}")
            return None
    unit = raw.get("unit", "")
    unit = "" if unit is None else unit
    if not isinstance(unit, str):
        errors.append(f"{where}: 'unit' must be a string ('' for a plain number)")
        return None
    name = raw.get("name", "")
    if not isinstance(name, str):
        errors.append(f"{where}: 'name' must be a string")
        return None
    return QuantityStep(sid, expr.strip() if expr is not None else None, op.strip() if op is not None else None,
                        tuple(a.strip() for a in args) if op is not None else (), value, unit.strip(), name)


def claimed_value(step: QuantityStep) -> Value:
    """The step's stated value and unit as a Value (QuantError when it does not read)."""
    return _claimed(step.value if not isinstance(step.value, float) else ("f", step.value), step.unit)


@functools.lru_cache(maxsize=65536)
def _claimed(value: Any, unit: str) -> Value:
    if isinstance(value, tuple):  # ("f", float): keyed apart from an equal int (1.0 vs 1 hash alike)
        value = value[1]
    number = parse_number(value.strip()) if isinstance(value, str) else parse_quantity(value).mag
    return make_value(number, unit)


__all__ = ["QuantityStep", "claimed_value", "parse_steps"]
