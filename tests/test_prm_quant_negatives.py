"""Quantity CSP negatives (`prosfi prm negatives` on quantity problems), re-checked by an evaluator written
here (Python's `ast` over exact Fractions for the magnitudes, a separate Pint registry for the units, the
physics formulas typed from their textbook forms): every rejected step is valid (stated value = recomputed),
has the chosen step's unit dimension, and is off the gold path (its value is no gold step's value)."""

from __future__ import annotations

import ast
import json
import math
from fractions import Fraction
from pathlib import Path

import pint
import pytest

from prosfi.cli import main
from prosfi.domains import domain_for
from prosfi.eval.sources import load_source
from prosfi.prm.negatives import domain_pairs

FIXTURES = Path(__file__).parent / "fixtures"
GSM8K = FIXTURES / "gsm8k_test_sample.jsonl"

U = pint.UnitRegistry()
U.define("USD = [currency]")
R_GAS = 8.314462618 * U("J/(mol*K)")

# textbook formulas, written independently of prosfi.quant.primitives
FORMULAS = {
    "average_speed": lambda d, t: d / t, "distance": lambda v, t: v * t, "time_from_distance_speed": lambda d, v: d / v,
    "acceleration": lambda u, v, t: (v - u) / t, "final_velocity": lambda u, a, t: u + a * t,
    "displacement_const_accel": lambda u, a, t: u * t + a * t ** 2 / 2,
    "final_velocity_from_distance": lambda u, a, d: (u ** 2 + 2 * a * d) ** 0.5,
    "kinetic_energy": lambda m, v: m * v ** 2 / 2, "potential_energy": lambda m, g, h: m * g * h,
    "work": lambda f, d: f * d, "power": lambda w, t: w / t, "mechanical_power": lambda f, v: f * v,
    "efficiency": lambda a, b: a / b, "momentum": lambda m, v: m * v, "impulse": lambda f, t: f * t,
    "ohm_voltage": lambda i, r: i * r, "ohm_current": lambda v, r: v / r, "resistance": lambda v, i: v / i,
    "electric_power": lambda v, i: v * i, "electric_energy": lambda p, t: p * t, "charge": lambda i, t: i * t,
    "series_resistance": lambda *r: sum(r[1:], r[0]), "parallel_resistance": lambda *r: 1 / sum((1 / x for x in r[1:]), 1 / r[0]),
    "ideal_gas_pressure": lambda n, t, v: n * R_GAS * t / v, "ideal_gas_volume": lambda n, t, p: n * R_GAS * t / p,
    "ideal_gas_temperature": lambda p, v, n: p * v / (n * R_GAS), "ideal_gas_amount": lambda p, v, t: p * v / (R_GAS * t),
    "newton_force": lambda m, a: m * a, "weight": lambda m, g: m * g, "density": lambda m, v: m / v,
    "mass_from_density": lambda d, v: d * v, "pressure": lambda f, a: f / a, "spring_force": lambda k, x: k * x,
}


def _unit(text: str):
    return U(text.replace("percent", "0.01") or "1")


def _quantity(value, unit: str):
    mag = Fraction(str(value))
    if unit == "degC":
        return U.Quantity(float(mag), U.degC).to(U.K)
    return float(mag) * _unit(unit) if mag.denominator != 1 or abs(mag) > 2 ** 53 else int(mag) * _unit(unit)


def _eval(node, env):
    """Numbers, names, + - * / ** and unary minus: the grammar the CSP twins use."""
    if isinstance(node, ast.Expression):
        return _eval(node.body, env)
    if isinstance(node, ast.Constant) and isinstance(node.value, (int, float)):
        return node.value
    if isinstance(node, ast.Name):
        return env[node.id]
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        return -_eval(node.operand, env)
    if isinstance(node, ast.BinOp):
        a, b = _eval(node.left, env), _eval(node.right, env)
        ops = {ast.Add: lambda: a + b, ast.Sub: lambda: a - b, ast.Mult: lambda: a * b, ast.Div: lambda: a / b,
               ast.Pow: lambda: a ** b}
        return ops[type(node.op)]()
    raise AssertionError(f"outside the twins' grammar: {ast.dump(node)}")


def _compute(step: dict, env: dict):
    if "expr" in step:
        return _eval(ast.parse(step["expr"], mode="eval"), env)
    return FORMULAS[step["op"]](*[env[a] for a in step["args"]])


def _as_quantity(x):
    return x if isinstance(x, pint.Quantity) else x * U.dimensionless


def _close(true, claim) -> bool:
    true, claim = _as_quantity(true), _as_quantity(claim)
    if true.dimensionality != claim.dimensionality:
        return False
    t = true.to_base_units().magnitude
    c = claim.to_base_units().magnitude
    return abs(float(t) - float(c)) <= 1e-5 * max(abs(float(t)), 1e-12)


def _recheck(pair: dict, gold_values: list) -> tuple[bool, str]:
    """(ok, why not) for one pair under the independent evaluator."""
    env = {g["id"]: _quantity(g["value"], g.get("unit", "")) for g in pair["givens"]}
    for s in pair["prefix"]:
        env[s["id"]] = _quantity(s["value"], s.get("unit", ""))
    chosen, rejected = pair["chosen"], pair["rejected"]
    for name, step in (("chosen", chosen), ("rejected", rejected)):
        true = _compute(step, env)
        if not _close(true, _quantity(step["value"], step.get("unit", ""))):
            return False, f"{name} stated {step['value']} {step.get('unit')} but computes {true}"
    if _as_quantity(_quantity(rejected["value"], rejected["unit"])).dimensionality != \
            _as_quantity(_quantity(chosen["value"], chosen["unit"])).dimensionality:
        return False, "rejected has another dimension than chosen"
    rej = _quantity(rejected["value"], rejected["unit"])
    if any(_close(g, rej) for g in gold_values if _as_quantity(g).dimensionality == _as_quantity(rej).dimensionality):
        return False, "rejected value is a gold step's value"
    if {k: rejected.get(k) for k in ("expr", "op", "args")} == {k: chosen.get(k) for k in ("expr", "op", "args")}:
        return False, "rejected is the chosen step"
    return True, ""


def _pairs_and_gold(spec: str, count: int = 12):
    src = load_source(spec, count=count)
    stats: dict = {}
    pairs, gold = [], {}
    for p in src.problems:
        steps = domain_for(p).gold_steps(p) or []
        gold[p.id] = [_quantity(s["value"], s.get("unit", "")) for s in steps]
        pairs += domain_pairs(p, None, per_kind=3, stats=stats)
    return pairs, gold, stats


@pytest.fixture(scope="module")
def physics():
    return _pairs_and_gold("physics:easy,medium,hard", count=12)


@pytest.fixture(scope="module")
def gsm8k():
    return _pairs_and_gold(f"gsm8k:{GSM8K}")


@pytest.mark.parametrize("which", ["physics", "gsm8k"])
def test_every_negative_rechecks_independently(which, request):
    pairs, gold, _ = request.getfixturevalue(which)
    assert pairs
    bad = [(p["problem_id"], p["kind"], why) for p in pairs for ok, why in [_recheck(p, gold[p["problem_id"]])] if not ok]
    assert not bad, bad[:5]


@pytest.mark.parametrize("which", ["physics", "gsm8k"])
def test_both_kinds_present(which, request):
    pairs, _, _ = request.getfixturevalue(which)
    kinds = {p["kind"] for p in pairs}
    assert {"wrong_operand", "wrong_principle"} <= kinds


def test_physics_wrong_principle_swaps_primitives(physics):
    pairs, _, _ = physics
    swaps = [p for p in pairs if p["kind"] == "wrong_principle" and "op" in p["chosen"]]
    assert swaps and all(p["rejected"]["op"] != p["chosen"]["op"] for p in swaps)
    operands = [p for p in pairs if p["kind"] == "wrong_operand" and "op" in p["chosen"]]
    assert operands and all(p["rejected"]["op"] == p["chosen"]["op"] for p in operands)


def test_pair_records_carry_the_contract(gsm8k):
    pairs, _, _ = gsm8k
    for p in pairs:
        assert {"problem_id", "kind", "givens", "prefix", "chosen", "rejected", "margin"} <= set(p)
        for step in [p["chosen"], p["rejected"], *p["prefix"]]:
            assert ("expr" in step or "op" in step) and "value" in step and "unit" in step
        assert p["margin"] > 0


def test_wrong_operand_cites_a_same_dimension_value(physics):
    """The swapped operand is another given or earlier result of the same dimension as the one it replaces."""
    pairs, _, _ = physics
    checked = 0
    for p in pairs:
        if p["kind"] != "wrong_operand" or "op" not in p["chosen"]:
            continue
        env = {g["id"]: _quantity(g["value"], g["unit"]) for g in p["givens"]}
        env.update({s["id"]: _quantity(s["value"], s["unit"]) for s in p["prefix"]})
        for a, b in zip(p["chosen"]["args"], p["rejected"]["args"]):
            if a != b:
                assert _as_quantity(env[a]).dimensionality == _as_quantity(env[b]).dimensionality
                checked += 1
    assert checked


def test_cli_writes_quantity_pairs(tmp_path):
    out = tmp_path / "pairs.jsonl"
    assert main(["prm", "negatives", "--data", f"gsm8k:{GSM8K}", "-o", str(out), "--no-progress"]) == 0
    rows = [json.loads(line) for line in out.read_text().splitlines()]
    assert rows and {r["kind"] for r in rows} == {"wrong_operand", "wrong_principle"}
    assert all(r["givens"] for r in rows)


def test_formulas_table_is_not_prosfi():
    """Sanity of the independent table itself on a hand case: KE of 2 kg at 3 m/s is 9 J."""
    assert math.isclose(FORMULAS["kinetic_energy"](2 * U.kg, 3 * U("m/s")).to("J").magnitude, 9.0)
