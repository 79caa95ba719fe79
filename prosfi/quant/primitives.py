"""Named primitives: the `op` form of a step ({"op": "kinetic_energy", "args": ["g1", "g2"]}).

Each primitive declares the dimension of every parameter and of its result; `apply_primitive`
checks the arguments (a wrong dimension is a QuantError of kind "dimension": the step is
`invalid`), computes with the evaluator's exact arithmetic and checks the result's dimension.
Dimension specs: a Pint dimensionality text ("[length] / [time]", "dimensionless"), "any" (the
same dimension as every other "any" parameter of the call) or "free" (anything).

Percent parameters take the dimensionless fraction: "25%" is read as 1/4, so
percent_of(25%, 80) == 20. Physical constants used inside a primitive (R in the gas law) are
listed in its doc; everything else comes in as an argument (g is an argument of weight).
Names are stable once committed: generators and recipes refer to them.
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction
from typing import Callable, Sequence

from prosfi.quant.errors import QuantError
from prosfi.quant.evaluate import add, div, mul, power, sub
from prosfi.quant.units import Value, dims_text, unit_info

ANY = "any"
FREE = "free"
GAS_CONSTANT = Fraction("8.314462618")  # J/(mol K), CODATA 2018 (exact by SI definition to 10 digits)


@dataclass(frozen=True)
class Primitive:
    name: str
    params: tuple[tuple[str, str], ...]  # (parameter name, dimension spec)
    out: str  # dimension spec of the result
    doc: str
    domain: str
    fn: Callable[..., Value]
    variadic: bool = False  # the last parameter repeats (1 or more times)
    unit: str = ""  # the unit the result is shown in ("" = the evaluator's default)

    @property
    def arity(self) -> str:
        n = len(self.params)
        return f"{n - 1}+" if self.variadic and n > 1 else (f"{n}+" if self.variadic else str(n))


def _spec(unit: str) -> str:
    if unit in (ANY, FREE):
        return unit
    return dims_text(unit_info(unit).dims)


_R = None


def gas_constant() -> Value:
    global _R
    if _R is None:
        info = unit_info("J/(mol*K)")
        _R = Value(GAS_CONSTANT * info.scale, info.dims, "J/(mol*K)")
    return _R


def _one() -> Value:
    return Value(Fraction(1))


def _half(v: Value) -> Value:
    return mul(Value(Fraction(1, 2)), v)


def _sum(values: Sequence[Value]) -> Value:
    total = values[0]
    for v in values[1:]:
        total = add(total, v)
    return total


def _percent(v: Value) -> Value:
    return Value(v.mag, v.dims, "percent")


def _parallel(rs: Sequence[Value]) -> Value:
    inv = _sum([div(_one(), r) for r in rs])
    return div(_one(), inv)


def _convert(value: Value, target: Value) -> Value:
    if value.dims != target.dims:
        raise QuantError(f"dimension error: cannot convert {dims_text(value.dims)} to "
                         f"{target.unit or dims_text(target.dims)}", "dimension")
    return Value(value.mag, value.dims, target.unit)


_TABLE: list[tuple] = [
    # name, params [(name, unit-or-spec)], out, domain, doc, fn, variadic
    ("add", [("a", ANY), ("b", ANY)], ANY, "arithmetic", "a + b", add),
    ("subtract", [("a", ANY), ("b", ANY)], ANY, "arithmetic", "a - b", sub),
    ("multiply", [("a", FREE), ("b", FREE)], FREE, "arithmetic", "a * b", mul),
    ("divide", [("a", FREE), ("b", FREE)], FREE, "arithmetic", "a / b", div),
    ("pow", [("base", FREE), ("exponent", "")], FREE, "arithmetic", "base ** exponent", power),
    ("square_root", [("x", FREE)], FREE, "arithmetic", "sqrt(x)", lambda x: power(x, Value(Fraction(1, 2)))),
    ("sum", [("values", ANY)], ANY, "arithmetic", "values[0] + values[1] + …", lambda *v: _sum(v), True),
    ("average", [("values", ANY)], ANY, "rate", "(values[0] + … + values[n-1]) / n",
     lambda *v: div(_sum(v), Value(Fraction(len(v)))), True),
    ("percent_of", [("percent", ""), ("whole", FREE)], FREE, "percent", "percent * whole (25% of 80 = 20)",
     mul),
    ("percent_ratio", [("part", ANY), ("whole", ANY)], "", "percent", "part / whole, shown in percent",
     lambda p, w: _percent(div(p, w))),
    ("percent_change", [("old", ANY), ("new", ANY)], "", "percent", "(new - old) / old, shown in percent",
     lambda o, n: _percent(div(sub(n, o), o))),
    ("increase_by_percent", [("value", FREE), ("percent", "")], FREE, "percent", "value * (1 + percent)",
     lambda v, p: mul(v, add(_one(), p))),
    ("decrease_by_percent", [("value", FREE), ("percent", "")], FREE, "percent", "value * (1 - percent)",
     lambda v, p: mul(v, sub(_one(), p))),
    ("rate", [("amount", FREE), ("time", "s")], FREE, "rate", "amount / time", div),
    ("unit_price", [("total_cost", "USD"), ("quantity", FREE)], FREE, "rate", "total_cost / quantity", div),
    ("total_cost", [("unit_price", FREE), ("quantity", FREE)], "USD", "rate", "unit_price * quantity", mul),
    ("convert", [("value", FREE), ("unit", FREE)], FREE, "conversion",
     "value shown in the unit of `unit` (same dimension; the number changes, the quantity does not)",
     _convert),
    ("average_speed", [("distance", "m"), ("time", "s")], "m/s", "kinematics", "distance / time", div),
    ("distance", [("speed", "m/s"), ("time", "s")], "m", "kinematics", "speed * time", mul),
    ("time_from_distance_speed", [("distance", "m"), ("speed", "m/s")], "s", "kinematics", "distance / speed",
     div),
    ("acceleration", [("initial_velocity", "m/s"), ("final_velocity", "m/s"), ("time", "s")], "m/s**2",
     "kinematics", "(final_velocity - initial_velocity) / time", lambda u, v, t: div(sub(v, u), t)),
    ("final_velocity", [("initial_velocity", "m/s"), ("acceleration", "m/s**2"), ("time", "s")], "m/s",
     "kinematics", "initial_velocity + acceleration * time", lambda u, a, t: add(u, mul(a, t))),
    ("displacement_const_accel", [("initial_velocity", "m/s"), ("acceleration", "m/s**2"), ("time", "s")],
     "m", "kinematics", "initial_velocity * time + acceleration * time**2 / 2",
     lambda u, a, t: add(mul(u, t), _half(mul(a, mul(t, t))))),
    ("final_velocity_from_distance", [("initial_velocity", "m/s"), ("acceleration", "m/s**2"),
                                      ("distance", "m")], "m/s", "kinematics",
     "sqrt(initial_velocity**2 + 2 * acceleration * distance)",
     lambda u, a, d: power(add(mul(u, u), mul(Value(Fraction(2)), mul(a, d))), Value(Fraction(1, 2)))),
    ("kinetic_energy", [("mass", "kg"), ("velocity", "m/s")], "J", "energy", "mass * velocity**2 / 2",
     lambda m, v: _half(mul(m, mul(v, v)))),
    ("potential_energy", [("mass", "kg"), ("gravity", "m/s**2"), ("height", "m")], "J", "energy",
     "mass * gravity * height", lambda m, g, h: mul(m, mul(g, h))),
    ("work", [("force", "N"), ("distance", "m")], "J", "energy", "force * distance", mul),
    ("power", [("work", "J"), ("time", "s")], "W", "energy", "work / time", div),
    ("mechanical_power", [("force", "N"), ("velocity", "m/s")], "W", "energy", "force * velocity", mul),
    ("efficiency", [("useful", ANY), ("total", ANY)], "", "energy", "useful / total, shown in percent",
     lambda u, t: _percent(div(u, t))),
    ("momentum", [("mass", "kg"), ("velocity", "m/s")], "kg*m/s", "momentum", "mass * velocity", mul),
    ("impulse", [("force", "N"), ("time", "s")], "N*s", "momentum", "force * time", mul),
    ("ohm_voltage", [("current", "A"), ("resistance", "ohm")], "V", "circuits", "current * resistance", mul),
    ("ohm_current", [("voltage", "V"), ("resistance", "ohm")], "A", "circuits", "voltage / resistance", div),
    ("resistance", [("voltage", "V"), ("current", "A")], "ohm", "circuits", "voltage / current", div),
    ("electric_power", [("voltage", "V"), ("current", "A")], "W", "circuits", "voltage * current", mul),
    ("electric_energy", [("power", "W"), ("time", "s")], "J", "circuits", "power * time", mul),
    ("charge", [("current", "A"), ("time", "s")], "C", "circuits", "current * time", mul),
    ("series_resistance", [("resistances", "ohm")], "ohm", "circuits", "r1 + r2 + …", lambda *r: _sum(r),
     True),
    ("parallel_resistance", [("resistances", "ohm")], "ohm", "circuits", "1 / (1/r1 + 1/r2 + …)",
     lambda *r: _parallel(r), True),
    ("ideal_gas_pressure", [("amount", "mol"), ("temperature", "K"), ("volume", "m**3")], "Pa", "gas",
     "amount * R * temperature / volume (R = 8.314462618 J/(mol K))",
     lambda n, t, v: div(mul(n, mul(gas_constant(), t)), v)),
    ("ideal_gas_volume", [("amount", "mol"), ("temperature", "K"), ("pressure", "Pa")], "m**3", "gas",
     "amount * R * temperature / pressure (R = 8.314462618 J/(mol K))",
     lambda n, t, p: div(mul(n, mul(gas_constant(), t)), p)),
    ("ideal_gas_temperature", [("pressure", "Pa"), ("volume", "m**3"), ("amount", "mol")], "K", "gas",
     "pressure * volume / (amount * R) (R = 8.314462618 J/(mol K))",
     lambda p, v, n: div(mul(p, v), mul(n, gas_constant()))),
    ("ideal_gas_amount", [("pressure", "Pa"), ("volume", "m**3"), ("temperature", "K")], "mol", "gas",
     "pressure * volume / (R * temperature) (R = 8.314462618 J/(mol K))",
     lambda p, v, t: div(mul(p, v), mul(gas_constant(), t))),
    ("newton_force", [("mass", "kg"), ("acceleration", "m/s**2")], "N", "force", "mass * acceleration", mul),
    ("weight", [("mass", "kg"), ("gravity", "m/s**2")], "N", "force", "mass * gravity", mul),
    ("density", [("mass", "kg"), ("volume", "m**3")], "kg/m**3", "force", "mass / volume", div),
    ("mass_from_density", [("density", "kg/m**3"), ("volume", "m**3")], "kg", "force", "density * volume",
     mul),
    ("pressure", [("force", "N"), ("area", "m**2")], "Pa", "force", "force / area", div),
    ("spring_force", [("spring_constant", "N/m"), ("extension", "m")], "N", "force",
     "spring_constant * extension", mul),
    ("wave_speed", [("frequency", "Hz"), ("wavelength", "m")], "m/s", "waves", "frequency * wavelength", mul),
    ("frequency", [("period", "s")], "Hz", "waves", "1 / period", lambda t: div(_one(), t)),
    ("area_rectangle", [("length", "m"), ("width", "m")], "m**2", "geometry", "length * width", mul),
    ("volume_box", [("length", "m"), ("width", "m"), ("height", "m")], "m**3", "geometry",
     "length * width * height", lambda a, b, c: mul(a, mul(b, c))),
]


def _build() -> dict[str, Primitive]:
    out = {}
    for row in _TABLE:
        name, params, outu, domain, doc, fn = row[:6]
        variadic = len(row) > 6 and row[6]
        unit = outu if outu not in (ANY, FREE, "") else ""
        out[name] = Primitive(name, tuple((p, _spec(u)) for p, u in params), _spec(outu), doc, domain, fn,
                              variadic, unit)
    return out


class _Lazy(dict):
    """PRIMITIVES, built on first access (the dimension specs need the unit registry)."""

    def _fill(self):
        if not dict.__len__(self):
            dict.update(self, _build())

    def __getitem__(self, k):
        self._fill()
        return dict.__getitem__(self, k)

    def __contains__(self, k):
        self._fill()
        return dict.__contains__(self, k)

    def __iter__(self):
        self._fill()
        return dict.__iter__(self)

    def __len__(self):
        self._fill()
        return dict.__len__(self)

    def get(self, k, default=None):
        self._fill()
        return dict.get(self, k, default)

    def keys(self):
        self._fill()
        return dict.keys(self)

    def values(self):
        self._fill()
        return dict.values(self)

    def items(self):
        self._fill()
        return dict.items(self)


PRIMITIVES: dict[str, Primitive] = _Lazy()
def _check_dims(prim: Primitive, args: Sequence[Value]) -> None:
    specs = [s for _, s in prim.params]
    if prim.variadic:
        specs = specs[:-1] + [specs[-1]] * (len(args) - len(specs) + 1)
    names = [p for p, _ in prim.params]
    if prim.variadic:
        names = names[:-1] + [f"{names[-1]}[{i}]" for i in range(len(args) - len(names) + 1)]
    any_dims = None
    for name, spec, v in zip(names, specs, args):
        if spec == FREE:
            continue
        if spec == ANY:
            if any_dims is None:
                any_dims = v.dims
            elif v.dims != any_dims:
                raise QuantError(f"dimension error: {prim.name}: {name} is {dims_text(v.dims)}, the other "
                                 f"argument(s) {dims_text(any_dims)}", "dimension")
            continue
        if dims_text(v.dims) != spec:
            raise QuantError(f"dimension error: {prim.name}: {name} must be {spec}, got {dims_text(v.dims)}",
                             "dimension")


def apply_primitive(name: str, args: Sequence[Value]) -> Value:
    """The primitive's value on `args`; QuantError: "error" (unknown name, arity), "dimension",
    "math", "bound"."""
    prim = PRIMITIVES.get(name) if isinstance(name, str) else None
    if prim is None:
        raise QuantError(f"unknown primitive {name!r}")
    n = len(prim.params)
    if (len(args) < n) if prim.variadic else (len(args) != n):
        raise QuantError(f"{name} takes {prim.arity} argument(s), got {len(args)}")
    if prim.variadic and len(args) > 64:
        raise QuantError(f"{name}: more than 64 arguments", "bound")
    _check_dims(prim, args)
    result = prim.fn(*args)
    if prim.out not in (ANY, FREE) and dims_text(result.dims) != prim.out:  # pragma: no cover - table bug
        raise QuantError(f"{name}: result is {dims_text(result.dims)}, declared {prim.out}")
    if prim.unit and not result.unit:
        result = Value(result.mag, result.dims, prim.unit)
    return result




def primitives_table() -> str:
    """The Markdown table of PRIMITIVES that docs/quantity.md carries (a test keeps them in sync)."""
    rows = ["| primitive | domain | arguments | result | computes |", "|---|---|---|---|---|"]
    for p in PRIMITIVES.values():
        params = ", ".join(f"{n}{'…' if p.variadic and i == len(p.params) - 1 else ''}: {spec}"
                           for i, (n, spec) in enumerate(p.params))
        out = p.out + (f" (shown in {p.unit})" if p.unit else "")
        rows.append(f"| `{p.name}` | {p.domain} | {params} | {out} | {p.doc} |")
    return "\n".join(rows)


__all__ = ["Primitive", "PRIMITIVES", "apply_primitive", "primitives_table", "GAS_CONSTANT", "ANY", "FREE"]
