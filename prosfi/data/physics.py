"""Physics word problems with units, generated offline over `prosfi.quant.PRIMITIVES` (docs/quantity.md "Data").

Kinematics, energy, momentum, circuits and the ideal gas law. Givens are stated in the units people write
(km/h, g, minutes, degC, L, cm^2, kWh) while answers are asked in SI or another unit, so every chain
converts on the way; conversion is implicit in the checked steps (a step never merely converts).
Difficulty is chain length: easy 1-2 steps, medium 3-4, hard 5-6. Seeded and deterministic: the same
(difficulty, count, seed) gives the same problems, byte for byte. Every problem carries its gold chain
(`extra["gold_steps"]`), computed by the same evaluator the verifier uses.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from prosfi.data.problem import Problem, problem_id
from prosfi.quant.units import json_number

DIFFICULTIES = ("easy", "medium", "hard")
DIFFICULTY_STEPS = {"easy": (1, 2), "medium": (3, 4), "hard": (5, 6), "demo": (1, 1)}
# "demo": the CPU demo's task (recipes/demo/cpu_quant.yaml), one kinetic-energy step over a few small values
# (mass 1-6 kg at 2 m/s: the energy is 2, 4, ..., 12 J), so a 2-layer model can learn the value table in a
# minute; names vary so that thousands of problems are distinct.
DEMO_MASSES = ("1", "2", "3", "4", "5", "6")
DEMO_SPEEDS = ("2",)
DEMO_COLORS = ("red", "blue", "green", "gray", "black", "white", "pink", "brown")
DEMO_OBJECTS = ("cart", "ball", "sled", "box", "drum", "kart", "puck", "cube")
DEMO_OWNERS = ("ann", "bob", "cat", "dan", "eve", "fay", "gus", "hal")


@dataclass
class _Spec:
    """One drawn problem: question text with givens {0} {1} ..., the givens (value, unit, surface text),
    the steps (op name or expression over g1.. / s1..; args; unit the value is shown in), the target name."""

    question: str
    givens: list[tuple[str, str, str]]
    steps: list[tuple[str, Any, str]]  # ("op:kinetic_energy", ["g1", "g2"], "J") or ("expr", "s1 / g2", "W")
    target: str
    topic: str


def _pick(rng: random.Random, lo: float, hi: float, step: float) -> str:
    n = round((hi - lo) / step)
    x = lo + step * rng.randint(0, n)
    text = f"{x:.4f}".rstrip("0").rstrip(".")
    return text


# ------------------------------------------------------------------ easy: 1-2 steps
def _kinetic(rng):
    m, v = _pick(rng, 800, 2000, 50), _pick(rng, 18, 108, 9)
    return _Spec("A car of mass {0} travels at {1}. What is its kinetic energy, in joules?",
                 [(m, "kg", f"{m} kg"), (v, "km/h", f"{v} km/h")],
                 [("op:kinetic_energy", ["g1", "g2"], "J")], "kinetic_energy", "energy")


def _momentum(rng):
    m, v = _pick(rng, 50, 500, 10), _pick(rng, 2, 30, 0.5)
    return _Spec("A ball of {0} is thrown at {1}. What is its momentum, in kg*m/s?",
                 [(m, "g", f"{m} g"), (v, "m/s", f"{v} m/s")],
                 [("op:momentum", ["g1", "g2"], "kg*m/s")], "momentum", "momentum")


def _ohm_power(rng):
    v, r = _pick(rng, 6, 240, 6), _pick(rng, 2, 100, 2)
    return _Spec("A heater element of resistance {1} is connected to a {0} supply. What power does it draw, in "
                 "watts?",
                 [(v, "V", f"{v} V"), (r, "ohm", f"{r} ohm")],
                 [("op:ohm_current", ["g1", "g2"], "A"), ("op:electric_power", ["g1", "s1"], "W")],
                 "power", "circuits")


def _avg_speed(rng):
    d, t = _pick(rng, 1, 50, 0.5), _pick(rng, 10, 90, 5)
    return _Spec("A cyclist rides {0} in {1}. What is her average speed, in m/s?",
                 [(d, "km", f"{d} km"), (t, "min", f"{t} minutes")],
                 [("op:average_speed", ["g1", "g2"], "m/s")], "average_speed", "kinematics")


def _weight(rng):
    m = _pick(rng, 200, 5000, 50)
    return _Spec("A parcel has a mass of {0}. Taking g = {1}, what is its weight, in newtons?",
                 [(m, "g", f"{m} g"), ("9.8", "m/s**2", "9.8 m/s^2")],
                 [("op:weight", ["g1", "g2"], "N")], "weight", "energy")


def _gas_pressure(rng):
    n, t, v = _pick(rng, 0.5, 4, 0.25), _pick(rng, 0, 100, 1), _pick(rng, 5, 50, 1)
    return _Spec("{0} of an ideal gas are held at {1} in a {2} container. What is the pressure, in kPa?",
                 [(n, "mol", f"{n} mol"), (t, "degC", f"{t} degC"), (v, "L", f"{v} L")],
                 [("op:ideal_gas_pressure", ["g1", "g2", "g3"], "kPa")], "pressure", "gas")


# ------------------------------------------------------------------ medium: 3-4 steps
def _accel_power(rng):
    m, u, a, t, t2 = (_pick(rng, 500, 1500, 50), _pick(rng, 18, 54, 9), _pick(rng, 0.5, 3, 0.5),
                      _pick(rng, 4, 12, 1), _pick(rng, 10, 40, 5))
    return _Spec("A cart of mass {0} moving at {1} accelerates at {2} for {3}. Its kinetic energy at that moment "
                 "was supplied over {4}. What average power is that, in kW?",
                 [(m, "kg", f"{m} kg"), (u, "km/h", f"{u} km/h"), (a, "m/s**2", f"{a} m/s^2"),
                  (t, "s", f"{t} s"), (t2, "s", f"{t2} s")],
                 [("op:final_velocity", ["g2", "g3", "g4"], "m/s"), ("op:kinetic_energy", ["g1", "s1"], "J"),
                  ("op:power", ["s2", "g5"], "kW")], "power", "kinematics")


def _series_energy(rng):
    v, r1, r2, t = _pick(rng, 6, 48, 6), _pick(rng, 2, 40, 2), _pick(rng, 2, 40, 2), _pick(rng, 5, 60, 5)
    return _Spec("Two resistors of {1} and {2} are connected in series to a {0} battery for {3}. How much energy "
                 "do they dissipate, in kJ?",
                 [(v, "V", f"{v} V"), (r1, "ohm", f"{r1} ohm"), (r2, "ohm", f"{r2} ohm"), (t, "min", f"{t} minutes")],
                 [("op:series_resistance", ["g2", "g3"], "ohm"), ("op:ohm_current", ["g1", "s1"], "A"),
                  ("op:electric_power", ["g1", "s2"], "W"), ("op:electric_energy", ["s3", "g4"], "kJ")],
                 "energy", "circuits")


def _gas_force(rng):
    mass, molar, t, v, area = (_pick(rng, 4, 64, 2), rng.choice(["2", "4", "28", "32", "44"]),
                               _pick(rng, 0, 80, 5), _pick(rng, 5, 40, 1), _pick(rng, 10, 200, 10))
    return _Spec("A {3} tank holds {0} of a gas of molar mass {1} at {2}. What force does the gas exert on a "
                 "{4} valve, in newtons?",
                 [(mass, "g", f"{mass} g"), (molar, "g/mol", f"{molar} g/mol"), (t, "degC", f"{t} degC"),
                  (v, "L", f"{v} L"), (area, "cm**2", f"{area} cm^2")],
                 [("expr", "g1 / g2", "mol"), ("op:ideal_gas_pressure", ["s1", "g3", "g4"], "kPa"),
                  ("expr", "s2 * g5", "N")], "force", "gas")


def _drop_momentum(rng):
    m, h = _pick(rng, 100, 2000, 50), _pick(rng, 1, 40, 0.5)
    return _Spec("A stone of {0} falls from rest through a height of {1} (g = {2}). What is its momentum when it "
                 "lands, in kg*m/s?",
                 [(m, "g", f"{m} g"), (h, "m", f"{h} m"), ("9.8", "m/s**2", "9.8 m/s^2")],
                 [("op:potential_energy", ["g1", "g3", "g2"], "J"), ("expr", "sqrt(2 * s1 / g1)", "m/s"),
                  ("op:momentum", ["g1", "s2"], "kg*m/s")], "momentum", "momentum")


# ------------------------------------------------------------------ hard: 5-6 steps
def _engine_input(rng):
    m, u, a, t, eff = (_pick(rng, 800, 1600, 50), _pick(rng, 18, 54, 9), _pick(rng, 0.5, 2.5, 0.5),
                       _pick(rng, 4, 10, 1), _pick(rng, 20, 40, 5))
    return _Spec("A car of mass {0} at {1} accelerates at {2} for {3}. Its engine is {4} efficient. What average "
                 "power does the engine draw from its fuel over that time, in kW?",
                 [(m, "kg", f"{m} kg"), (u, "km/h", f"{u} km/h"), (a, "m/s**2", f"{a} m/s^2"), (t, "s", f"{t} s"),
                  (eff, "percent", f"{eff}%")],
                 [("op:final_velocity", ["g2", "g3", "g4"], "m/s"), ("op:kinetic_energy", ["g1", "s1"], "J"),
                  ("op:kinetic_energy", ["g1", "g2"], "J"), ("expr", "s2 - s3", "J"),
                  ("op:power", ["s4", "g4"], "W"), ("expr", "s5 / g5", "kW")], "power", "energy")


def _circuit_cost(rng):
    v, r1, r2, r3, hours, price = (_pick(rng, 12, 240, 12), _pick(rng, 10, 100, 10), _pick(rng, 10, 100, 10),
                                   _pick(rng, 5, 50, 5), _pick(rng, 1, 12, 1), _pick(rng, 0.1, 0.4, 0.05))
    return _Spec("Resistors of {1} and {2} in parallel are wired in series with a {3} resistor across a {0} "
                 "supply, for {4}. Electricity costs {5}. What does the energy cost, in dollars?",
                 [(v, "V", f"{v} V"), (r1, "ohm", f"{r1} ohm"), (r2, "ohm", f"{r2} ohm"), (r3, "ohm", f"{r3} ohm"),
                  (hours, "h", f"{hours} hours"), (price, "USD/kWh", f"${price} per kWh")],
                 [("op:parallel_resistance", ["g2", "g3"], "ohm"), ("expr", "s1 + g4", "ohm"),
                  ("op:ohm_current", ["g1", "s2"], "A"), ("op:electric_power", ["g1", "s3"], "W"),
                  ("op:electric_energy", ["s4", "g5"], "kWh"), ("expr", "s5 * g6", "USD")], "cost", "circuits")


def _gas_heating(rng):
    mass, molar, t1, t2, v, area = (_pick(rng, 4, 64, 2), rng.choice(["2", "4", "28", "32", "44"]),
                                    _pick(rng, 0, 40, 5), _pick(rng, 50, 150, 5), _pick(rng, 5, 40, 1),
                                    _pick(rng, 10, 200, 10))
    return _Spec("A sealed {4} tank holds {0} of a gas of molar mass {1}. It is heated from {2} to {3}. By how "
                 "much does the force on a {5} hatch grow, in newtons?",
                 [(mass, "g", f"{mass} g"), (molar, "g/mol", f"{molar} g/mol"), (t1, "degC", f"{t1} degC"),
                  (t2, "degC", f"{t2} degC"), (v, "L", f"{v} L"), (area, "cm**2", f"{area} cm^2")],
                 [("expr", "g1 / g2", "mol"), ("op:ideal_gas_pressure", ["s1", "g3", "g5"], "kPa"),
                  ("op:ideal_gas_pressure", ["s1", "g4", "g5"], "kPa"), ("expr", "s3 - s2", "kPa"),
                  ("expr", "s4 * g6", "N")], "force_increase", "gas")


def _braking_power(rng):
    m, u, v, t = (_pick(rng, 800, 2000, 100), _pick(rng, 54, 108, 9), _pick(rng, 9, 36, 9), _pick(rng, 3, 10, 1))
    return _Spec("A truck of mass {0} slows steadily from {1} to {2} in {3}. What average power do the brakes "
                 "absorb, in kW?",
                 [(m, "kg", f"{m} kg"), (u, "km/h", f"{u} km/h"), (v, "km/h", f"{v} km/h"), (t, "s", f"{t} s")],
                 [("op:acceleration", ["g2", "g3", "g4"], "m/s**2"), ("op:newton_force", ["g1", "s1"], "N"),
                  ("op:displacement_const_accel", ["g2", "s1", "g4"], "m"), ("expr", "-(s2 * s3)", "J"),
                  ("op:power", ["s4", "g4"], "kW")], "power", "kinematics")


def _demo(rng):
    m, v = rng.choice(DEMO_MASSES), rng.choice(DEMO_SPEEDS)
    color, obj, owner = rng.choice(DEMO_COLORS), rng.choice(DEMO_OBJECTS), rng.choice(DEMO_OWNERS)
    return _Spec(f"The {color} {obj} of {owner} has a mass of {{0}} and moves at {{1}}. What is its kinetic "
                 "energy, in J?",
                 [(m, "kg", f"{m} kg"), (v, "m/s", f"{v} m/s")],
                 [("op:kinetic_energy", ["g1", "g2"], "J")], "kinetic_energy", "energy")


TEMPLATES: dict[str, list[Callable[[random.Random], _Spec]]] = {
    "demo": [_demo],
    "easy": [_kinetic, _momentum, _ohm_power, _avg_speed, _weight, _gas_pressure],
    "medium": [_accel_power, _series_energy, _gas_force, _drop_momentum],
    "hard": [_engine_input, _circuit_cost, _gas_heating, _braking_power],
}


def _number(x) -> str:
    from prosfi.quant.units import format_number

    return format_number(x, 10)


def build(spec: _Spec, pid: str, difficulty: str) -> Problem:
    """A drawn spec -> a Problem with givens (spans in the question) and its computed gold chain."""
    from prosfi.quant import apply_primitive, evaluate, parse_expr, parse_quantity

    question = spec.question.format(*(g[2] for g in spec.givens))
    givens, env, pos = [], {}, 0
    for i, (value, unit, text) in enumerate(spec.givens):
        start = question.index(text, pos) if text in question[pos:] else question.index(text)
        gid = f"g{i + 1}"
        givens.append({"id": gid, "value": value, "unit": unit, "text": text, "start": start,
                       "end": start + len(text)})
        env[gid] = parse_quantity({"value": value, "unit": unit})
        pos = start + len(text)
    steps = []
    for j, (kind, payload, unit) in enumerate(spec.steps):
        sid = f"s{j + 1}"
        if kind == "expr":
            v = evaluate(parse_expr(payload), env)
            step: dict[str, Any] = {"id": sid, "expr": payload}
        else:
            op = kind.split(":", 1)[1]
            v = apply_primitive(op, [env[a] for a in payload])
            step = {"id": sid, "op": op, "args": list(payload)}
        env[sid] = v
        step.update(value=json_number(float(_number(v.magnitude_in(unit)))), unit=unit)
        steps.append(step)
    last = env[f"s{len(spec.steps)}"]
    answer_unit = spec.steps[-1][2]
    return Problem(
        id=pid, kind="quantity", premises=[], source="physics", question=question, givens=givens,
        target={"name": spec.target, "unit": answer_unit},
        answer={"value": _number(last.magnitude_in(answer_unit)), "unit": answer_unit},
        difficulty=difficulty, extra={"gold_steps": steps, "topic": spec.topic},
    )


def generate(difficulty: str, count: int, seed: int = 0) -> list[Problem]:
    """`count` problems of one difficulty, templates in turn; ids `physics-<difficulty>-s<seed>-NNNN`, so an id
    names one problem: two draws with different seeds never share an id (`problem_id`)."""
    if difficulty not in TEMPLATES:
        raise ValueError(f"physics difficulty {difficulty!r}: choose from {', '.join(DIFFICULTIES)} (or demo)")
    if count < 0:
        raise ValueError("count must be >= 0")
    templates = TEMPLATES[difficulty]
    out = []
    for i in range(count):
        rng = random.Random(f"physics-{seed}-{difficulty}-{i}")
        spec = templates[i % len(templates)](rng)
        out.append(build(spec, problem_id("physics", difficulty, seed, i), difficulty))
    return out
