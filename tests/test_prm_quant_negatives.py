"""Quantity CSP negatives (`prosfi prm negatives` on quantity problems), re-checked by an evaluator written
here (Python's `ast` over exact Fractions for the magnitudes, a separate Pint registry for the units, the
physics formulas typed from their textbook forms): every rejected step is valid (stated value = recomputed),
has the chosen step's unit dimension, and is off the gold path (its value is no gold step's value)."""

from __future__ import annotations

import ast
import itertools
import json
import math
from fractions import Fraction
from pathlib import Path

import pint
import pytest

from prosfi.cli import main
from prosfi.domains import domain_for
from prosfi.eval.sources import load_source
from prosfi.prm.negatives import csp_pairs

FIXTURES = Path(__file__).parent / "fixtures"
GSM8K = FIXTURES / "gsm8k_test_sample.jsonl"

U = pint.UnitRegistry()
U.define("USD = [currency]")
U.define("cent = 0.01 * USD")
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
    """Numbers, names, + - * / **, unary minus and sqrt: the grammar the CSP twins use."""
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
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "sqrt" and len(node.args) == 1:
        return _eval(node.args[0], env) ** 0.5
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


# ------------------------------------------------------------------ values a valid order of the gold could compute
# Written here on its own (Python `ast` over the gold expressions with every earlier step inlined, pint floats,
# the physics formulas typed from their textbook forms below): a rejected step whose value is one of these is a
# correct step of another order of the solution, not a negative.
FORMULA_TEXT = {
    "average_speed": "{0} / {1}", "distance": "{0} * {1}", "time_from_distance_speed": "{0} / {1}",
    "acceleration": "({1} - {0}) / {2}", "final_velocity": "{0} + {1} * {2}",
    "displacement_const_accel": "{0} * {2} + {1} * {2} ** 2 / 2",
    "final_velocity_from_distance": "({0} ** 2 + 2 * {1} * {2}) ** 0.5",
    "kinetic_energy": "{0} * {1} ** 2 / 2", "potential_energy": "{0} * {1} * {2}", "work": "{0} * {1}",
    "power": "{0} / {1}", "mechanical_power": "{0} * {1}", "efficiency": "{0} / {1}", "momentum": "{0} * {1}",
    "impulse": "{0} * {1}", "ohm_voltage": "{0} * {1}", "ohm_current": "{0} / {1}", "resistance": "{0} / {1}",
    "electric_power": "{0} * {1}", "electric_energy": "{0} * {1}", "charge": "{0} * {1}",
    "ideal_gas_pressure": "{0} * R_GAS * {1} / {2}", "ideal_gas_volume": "{0} * R_GAS * {1} / {2}",
    "ideal_gas_temperature": "{0} * {1} / ({2} * R_GAS)", "ideal_gas_amount": "{0} * {1} / (R_GAS * {2})",
    "newton_force": "{0} * {1}", "weight": "{0} * {1}", "density": "{0} / {1}", "mass_from_density": "{0} * {1}",
    "pressure": "{0} / {1}", "spring_force": "{0} * {1}",
}
MAX_CHILDREN = 12


def _step_text(step: dict, texts: dict) -> str:
    """A gold step as an expression over the givens: earlier steps inlined, primitives written out."""
    def name(n: str) -> str:
        return f"({texts[n]})" if n in texts else n

    if "expr" in step:
        tree = ast.parse(step["expr"], mode="eval")
        for node in ast.walk(tree):
            if isinstance(node, ast.Name) and node.id in texts:
                node.id = f"__{node.id}__"
        text = ast.unparse(tree)
        for n, t in texts.items():
            text = text.replace(f"__{n}__", f"({t})")
        return text
    args = [name(a) for a in step["args"]]
    if step["op"] == "series_resistance":
        return " + ".join(args)
    if step["op"] == "parallel_resistance":
        return "1 / (" + " + ".join(f"1 / {a}" for a in args) + ")"
    return FORMULA_TEXT[step["op"]].format(*args)


def _flat(node):
    """('sum', [(sign, node)]) | ('prod', [(exponent, node)]) | ('atom', node, [children])."""
    if isinstance(node, ast.Expression):
        return _flat(node.body)
    if isinstance(node, ast.BinOp) and isinstance(node.op, (ast.Add, ast.Sub)):
        out = []
        for side, sign in ((node.left, 1), (node.right, 1 if isinstance(node.op, ast.Add) else -1)):
            f = _flat(side)
            out += [(sign * s, c) for s, c in f[1]] if f[0] == "sum" else [(sign, f)]
        return ("sum", out)
    if isinstance(node, ast.BinOp) and isinstance(node.op, (ast.Mult, ast.Div)):
        out = []
        for side, e in ((node.left, 1), (node.right, 1 if isinstance(node.op, ast.Mult) else -1)):
            f = _flat(side)
            out += [(e * x, c) for x, c in f[1]] if f[0] == "prod" else [(e, f)]
        return ("prod", out)
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        f = _flat(node.operand)
        return ("sum", [(-s, c) for s, c in f[1]]) if f[0] == "sum" else ("sum", [(-1, f)])
    kids = [node.left, node.right] if isinstance(node, ast.BinOp) else list(getattr(node, "args", []))
    return ("atom", node, [_flat(k) for k in kids])


def _value(f, env):
    if f[0] == "sum":
        return sum((s * _value(c, env) for s, c in f[1][1:]), f[1][0][0] * _value(f[1][0][1], env))
    if f[0] == "prod":
        v = 1
        for e, c in f[1]:
            v = v * _value(c, env) if e == 1 else v / _value(c, env)
        return v
    return _eval(ast.Expression(f[1]), env)


def _subsets(n: int):
    """Every non-empty subset of n parts; of more than MAX_CHILDREN, those of one or two parts and their
    complements."""
    if n <= MAX_CHILDREN:
        for mask in range(1, 2 ** n):
            yield [i for i in range(n) if mask >> i & 1]
        return
    for k in (1, 2):
        for idx in itertools.combinations(range(n), k):
            yield list(idx)
            yield [i for i in range(n) if i not in idx]


def _reach(f, env, out: list, narrow: bool = False) -> None:
    try:
        out.append(_value(f, env))
    except (pint.DimensionalityError, ZeroDivisionError, KeyError):
        return
    if f[0] == "atom":
        for c in f[2]:
            _reach(c, env, out, narrow)
        return
    kids = f[1]
    vals = []
    for _, c in kids:
        _reach(c, env, out, narrow)
        vals.append(_value(c, env))
    for idx in _subsets(len(kids)):
        try:
            if f[0] == "sum":
                v = sum((kids[i][0] * vals[i] for i in idx[1:]), kids[idx[0]][0] * vals[idx[0]])
                out += [v] if narrow else [v, -v]
            else:
                v = 1
                for i in idx:
                    v = v * vals[i] if kids[i][0] == 1 else v / vals[i]
                out += [v] if narrow else [v, 1 / v]
                if narrow:
                    continue
                # (a + b) * c = a * c + b * c: each term of a sum factor times the other factors
                for j in idx:
                    if kids[j][1][0] == "sum" and kids[j][0] == 1:
                        rest = v / vals[j]
                        out += [s * _value(t, env) * rest for s, t in kids[j][1][1]]
        except (pint.DimensionalityError, ZeroDivisionError):
            continue


def reachable_values(givens: list, gold: list, narrow: bool = False) -> list:
    """Every value a valid order of the gold chain computes (see above), as pint quantities or floats;
    `narrow`: only sub-sums and sub-products of the full tree (no negation, reciprocal or distribution)."""
    env = {g["id"]: _quantity(g["value"], g.get("unit", "")) for g in givens}
    env["R_GAS"] = R_GAS
    texts: dict[str, str] = {}
    out: list = list(env.values())
    for s in gold:
        texts[s["id"]] = _step_text(s, texts)
        _reach(_flat(ast.parse(texts[s["id"]], mode="eval")), env, out, narrow)
    return out


def other_order_value(pair: dict, reach: list) -> bool:
    """Is the rejected step's value one a valid order of the gold computes?"""
    rej = _as_quantity(_quantity(pair["rejected"]["value"], pair["rejected"].get("unit", "")))
    for v in reach:
        v = _as_quantity(v)
        if v.dimensionality == rej.dimensionality and _close(v, rej):
            return True
    return False


def _pairs_and_gold(spec: str, count: int = 12):
    src = load_source(spec, count=count)
    stats: dict = {}
    pairs, gold = [], {}
    for p in src.problems:
        steps = domain_for(p).gold_steps(p) or []
        gold[p.id] = [_quantity(s["value"], s.get("unit", "")) for s in steps]
        pairs += csp_pairs(p, None, per_kind=3, stats=stats)
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
    """A primitive swap changes the primitive; in the generated templates every swap the generator could make
    (`distance(u, t)` for a displacement) is a value inside the gold formula, so none is left there: the swap
    family is exercised on a hand-made problem below."""
    pairs, _, _ = physics
    swaps = [p for p in pairs if p["kind"] == "wrong_principle" and "op" in p["chosen"]]
    assert all(p["rejected"]["op"] != p["chosen"]["op"] for p in swaps)
    operands = [p for p in pairs if p["kind"] == "wrong_operand" and "op" in p["chosen"]]
    assert operands and all(p["rejected"]["op"] == p["chosen"]["op"] for p in operands)


def _energy_problem():
    """A car's kinetic energy, with a height and g stated too: the potential energy m g h is a wrong principle
    (no order of the gold computes it), the swap `kinetic_energy(v, m)` is refused by the dimensions."""
    from prosfi.data.problem import Problem

    givens = [{"id": "g1", "value": "850", "unit": "kg"}, {"id": "g2", "value": "54", "unit": "km/h"},
              {"id": "g3", "value": "9.8", "unit": "m/s**2"}, {"id": "g4", "value": "12", "unit": "m"}]
    return Problem.from_dict({
        "id": "hand-energy-0000", "kind": "quantity", "source": "physics", "premises": [],
        "question": "A car of mass 850 kg travels at 54 km/h on a road 12 m above a lake (g = 9.8 m/s^2). "
                    "What is its kinetic energy, in joules?",
        "givens": givens, "target": {"name": "kinetic_energy", "unit": "J"},
        "answer": {"value": "95625", "unit": "J"},
        "gold_steps": [{"id": "s1", "op": "kinetic_energy", "args": ["g1", "g2"], "value": 95625, "unit": "J"}]})


def test_primitive_swap_to_a_wrong_principle_is_kept():
    p = _energy_problem()
    pairs = csp_pairs(p, None, per_kind=3)
    swaps = [q for q in pairs if q["kind"] == "wrong_principle" and q["rejected"].get("op") == "potential_energy"]
    assert swaps and all(q["rejected"]["unit"] == "J" for q in swaps)
    reach = reachable_values(p.givens, domain_for(p).gold_steps(p))
    assert not any(other_order_value(q, reach) for q in pairs)


PAIRS_FIXTURE = FIXTURES / "gsm8k_quant_pairs.jsonl"


@pytest.fixture(scope="module")
def written():
    return _pairs_and_gold(f"gsm8k:{PAIRS_FIXTURE}")


@pytest.mark.parametrize("which", ["physics", "gsm8k", "written"])
def test_no_rejected_step_is_a_correct_step_of_another_order(which, request):
    """Re-checked with the evaluator written here: no rejected value is a value some valid order of the gold
    computes (a gold step, a sub-sum or sub-product of the gold's full expression tree, a distributed term)."""
    pairs, _, _ = request.getfixturevalue(which)
    src = {p.id: p for p in load_source(_SPEC[which], count=12).problems}
    bad = []
    for pair in pairs:
        p = src[pair["problem_id"]]
        if other_order_value(pair, reachable_values(p.givens, domain_for(p).gold_steps(p))):
            bad.append((pair["problem_id"], pair["chosen"], pair["rejected"]))
    assert pairs and not bad, bad[:3]


_SPEC = {"physics": "physics:easy,medium,hard", "gsm8k": f"gsm8k:{GSM8K}", "written": f"gsm8k:{PAIRS_FIXTURE}"}


def test_the_other_order_check_is_not_vacuous():
    """The check above flags what it should on hand-made twins, and passes a wrong one."""
    src = {p.id: p for p in load_source(f"gsm8k:{PAIRS_FIXTURE}").problems}
    boxes, shop = src["gsm8k-gsm8k_quant_pairs-0000"], src["gsm8k-gsm8k_quant_pairs-0002"]
    reach = reachable_values(boxes.givens, domain_for(boxes).gold_steps(boxes))
    assert other_order_value({"rejected": {"value": 15, "unit": ""}}, reach)       # 120 / 8: the rate first
    assert not other_order_value({"rejected": {"value": 960, "unit": ""}}, reach)  # 120 * 8: wrong
    reach = reachable_values(shop.givens, domain_for(shop).gold_steps(shop))
    assert other_order_value({"rejected": {"value": 38, "unit": "USD"}}, reach)    # 50 - 12 first
    assert other_order_value({"rejected": {"value": 40, "unit": "USD"}}, reach)    # 50 - 10, the pens first
    assert not other_order_value({"rejected": {"value": 8, "unit": ""}}, reach)    # 4 * 2: notebooks times pens
    assert not other_order_value({"rejected": {"value": 38, "unit": ""}}, reach)   # 38 plain is not $38
    assert not other_order_value({"rejected": {"value": 72, "unit": "USD"}}, reach)


def test_rate_first_and_reordered_sums_are_not_negatives(written):
    pairs, _, _ = written
    by = {}
    for q in pairs:
        by.setdefault(q["problem_id"], []).append(Fraction(str(q["rejected"]["value"])))
    assert 15 not in by["gsm8k-gsm8k_quant_pairs-0000"]          # 120 / 8 boxes an hour
    assert -10 not in by["gsm8k-gsm8k_quant_pairs-0002"]         # $12 - $22 = -(the pens' $10)
    assert by["gsm8k-gsm8k_quant_pairs-0000"] and by["gsm8k-gsm8k_quant_pairs-0002"]  # wrong twins are still made


@pytest.mark.parametrize("which", ["physics", "gsm8k", "written"])
def test_chosen_and_rejected_carry_the_same_unit_label(which, request):
    """The pair differs in what it computes, never in a unit label: a twin built from a percent given in a
    plain chain is shown plain (`10.2`, not `1020 percent`)."""
    pairs, _, _ = request.getfixturevalue(which)
    assert not [(p["chosen"], p["rejected"]) for p in pairs if p["chosen"]["unit"] != p["rejected"]["unit"]]
    if which == "written":
        pct = [p for p in pairs if p["problem_id"].endswith("0001") and "g2" in p["rejected"].get("expr", "")
               and "+" in p["rejected"]["expr"]]
        assert pct and all(p["rejected"]["unit"] == "" for p in pct)
        assert any(p["rejected"]["value"] == 10.2 for p in pct)


def test_reachable_values_expand_primitive_formulas():
    """prosfi's own enumeration (`prosfi.domains.quantity.perturbations.reachable_values`) sees inside a
    primitive: `u * t` is a value of a constant-acceleration displacement `u t + a t^2 / 2`."""
    from prosfi.domains.quantity.perturbations import reachable_values as prosfi_reachable
    from prosfi.quant import parse_quantity

    p = next(p for p in load_source("physics:hard", count=12).problems
             if any(s.get("op") == "displacement_const_accel" for s in domain_for(p).gold_steps(p)))
    gold = domain_for(p).gold_steps(p)
    step = next(s for s in gold if s.get("op") == "displacement_const_accel")
    u = parse_quantity({"value": next(g["value"] for g in p.givens if g["id"] == step["args"][0]),
                        "unit": next(g["unit"] for g in p.givens if g["id"] == step["args"][0])})
    t = parse_quantity({"value": next(g["value"] for g in p.givens if g["id"] == step["args"][2]),
                        "unit": next(g["unit"] for g in p.givens if g["id"] == step["args"][2])})
    values = prosfi_reachable(p, gold, domain_for(p).as_step)
    assert any(v.dims == (1,) + (0,) * 7 and abs(float(v.mag) - float(u.mag * t.mag)) < 1e-9 * float(u.mag * t.mag)
               for v in values)


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
