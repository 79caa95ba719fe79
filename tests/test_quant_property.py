"""Property tests: the parser never crashes or accepts anything outside the grammar, and verdicts
agree with an independent evaluation (sympy for the value, a separate Pint registry for units and
dimensions — none of prosfi.quant's evaluator) on thousands of generated checks, with 0 false valid."""

from __future__ import annotations

import math
import os
import re

import pint
import pytest
import sympy
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from prosfi.quant import FUNCTIONS, QuantError, check_quantity, parse_expr
from prosfi.quant.expr import BinOp, Call, Name, Num, Unary
from prosfi.verdict import Status, Verdict

# ----------------------------------------------------------------------------- the oracle
ORACLE = pint.UnitRegistry()  # float magnitudes, default definitions: independent of prosfi's registry
ORACLE.define("USD = [currency]")
UNITS = ["", "m", "km", "s", "h", "min", "kg", "g", "m/s", "km/h", "USD", "J", "N", "m**2"]
REL = 1e-5


def oracle_quantity(value: str, unit: str):
    """(sympy exact SI magnitude, a Pint quantity of magnitude 1 in SI base units) of a given."""
    q = ORACLE.Quantity(1.0, unit or "dimensionless").to_base_units()
    return sympy.Rational(value) * sympy.Rational(repr(q.magnitude)), ORACLE.Quantity(1.0, q.units)


class OracleError(Exception):
    def __init__(self, kind: str):
        self.kind = kind


ONE = ORACLE.Quantity(1.0)


def oracle_eval(tree, env):
    """Evaluate a generated tree: sympy for the value, Pint quantity algebra for the unit."""
    kind = tree[0]
    if kind == "num":
        return sympy.Rational(tree[1]), ONE
    if kind == "name":
        return env[tree[1]]
    if kind == "neg":
        v, d = oracle_eval(tree[1], env)
        return -v, d
    if kind == "call":
        args = [oracle_eval(a, env) for a in tree[2]]
        f = tree[1]
        if f == "sqrt":
            v, d = args[0]
            if v < 0:
                raise OracleError("math")
            return sympy.sqrt(v), d ** 0.5
        if f == "abs":
            return sympy.Abs(args[0][0]), args[0][1]
        if f in ("min", "max"):
            if any(d.dimensionality != args[0][1].dimensionality for _, d in args):
                raise OracleError("dimension")
            pick = sympy.Min if f == "min" else sympy.Max
            return pick(*[v for v, _ in args]), args[0][1]
        raise AssertionError(f)
    op, a, b = tree[1], oracle_eval(tree[2], env), oracle_eval(tree[3], env)
    (x, dx), (y, dy) = a, b
    if op in "+-":
        try:
            dx + dy  # Pint decides whether the dimensions agree
        except pint.DimensionalityError:
            raise OracleError("dimension") from None
        return (x + y if op == "+" else x - y), dx
    if op == "*":
        return x * y, dx * dy
    if op == "/":
        if y == 0:
            raise OracleError("math")
        return x / y, dx / dy
    if op == "**":  # the exponent is a small integer literal
        n = int(y)
        if x == 0 and n < 0:
            raise OracleError("math")
        return x ** n, dx ** n
    raise AssertionError(op)


def render(tree) -> str:
    kind = tree[0]
    if kind in ("num", "name"):
        return tree[1]
    if kind == "neg":
        return f"(-({render(tree[1])}))"
    if kind == "call":
        return f"{tree[1]}({', '.join(render(a) for a in tree[2])})"
    return f"({render(tree[2])} {tree[1]} {render(tree[3])})"


NAMES = ["a", "b", "c", "d"]
numbers = st.one_of(st.integers(0, 200).map(str),
                    st.tuples(st.integers(0, 99), st.integers(1, 99)).map(lambda t: f"{t[0]}.{t[1]:02d}"))
leaves = st.one_of(numbers.map(lambda n: ("num", n)), st.sampled_from(NAMES).map(lambda n: ("name", n)))


def _extend(children):
    return st.one_of(
        st.tuples(st.just("bin"), st.sampled_from("+-*/"), children, children),
        st.tuples(st.just("bin"), st.just("**"), children, st.sampled_from(["0", "1", "2", "3"]).map(lambda n: ("num", n))),
        st.tuples(st.just("neg"), children),
        st.tuples(st.just("call"), st.sampled_from(["sqrt", "abs"]), st.tuples(children)),
        st.tuples(st.just("call"), st.sampled_from(["min", "max"]), st.tuples(children, children)),
    )


trees = st.recursive(leaves, _extend, max_leaves=6)
quantities = st.fixed_dictionaries({n: st.tuples(st.integers(1, 500).map(str), st.sampled_from(UNITS)) for n in NAMES})
claims = st.one_of(st.just(("exact", None)), st.sampled_from([("scale", 1 + 1e-3), ("scale", 0.9), ("scale", -1.0),
                                                               ("scale", 1.1), ("scale", 1 + 1e-7)]),
                   st.tuples(st.just("unit"), st.sampled_from(UNITS)))


def _unit_for_dims(dims, prefer: str) -> str | None:
    """A unit text in UNITS with these dimensions (the claim's unit), or None."""
    cands = [u for u in UNITS if ORACLE.Quantity(1.0, u or "dimensionless").dimensionality == dims]
    if not cands:
        return None
    return prefer if prefer in cands else cands[len(prefer) % len(cands)]


EXAMPLES = int(os.environ.get("PROSFI_QUANT_PROPERTY_EXAMPLES", "400"))
PER_EXAMPLE = 6  # checks per generated example: EXAMPLES * PER_EXAMPLE = 2,400 checks by default


@settings(max_examples=EXAMPLES, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(qs=quantities, cases=st.lists(st.tuples(trees, claims), min_size=PER_EXAMPLE, max_size=PER_EXAMPLE))
def test_verdicts_agree_with_an_independent_sympy_pint_evaluation(qs, cases):
    for tree, claim in cases:
        _agree(tree, qs, claim)


def _agree(tree, qs, claim):
    env = {n: oracle_quantity(v, u) for n, (v, u) in qs.items()}
    text = render(tree)
    quants = {n: f"{v} {u}".strip() for n, (v, u) in qs.items()}
    try:
        true, q = oracle_eval(tree, env)
        dims = q.dimensionality
        if not true.is_real or (true.is_number and not sympy.Abs(true).is_finite):
            raise OracleError("math")
    except OracleError as exc:
        v = check_quantity(quants, expr=text, claim="1")
        assert v.status is not Status.VALID, (text, quants, v)
        if v.status is Status.UNKNOWN or (exc.kind == "math" and "sqrt" in text):
            return  # a size bound refused first, or float noise made an exact zero divisor tiny
        assert v.status is Status.INVALID, (text, quants, v)
        assert v.detail.startswith("dimension error" if exc.kind == "dimension" else "math error"), (text, v.detail)
        return
    true_f = float(true)
    if not math.isfinite(true_f) or abs(true_f) > 1e30 or ("sqrt" in text and abs(true_f) < 1e-9):
        return  # out of range, or a cancellation float evaluation cannot see as an exact zero
    how, arg = claim
    unit = _unit_for_dims(dims, arg if how == "unit" else "")
    if how == "unit":
        unit = arg
    if unit is None:
        return  # no unit in the list for this dimension: nothing to claim it in
    scale = ORACLE.Quantity(1.0, unit or "dimensionless").to_base_units().magnitude
    claim_si = true * (sympy.Rational(repr(arg)) if how == "scale" else 1)
    claim_value = claim_si / sympy.Rational(repr(scale))
    number = str(sympy.N(claim_value, 25))
    claim_text = f"{number} {unit}".strip()
    v = check_quantity(quants, expr=text, claim=claim_text)
    claim_dims = ORACLE.Quantity(1.0, unit or "dimensionless").dimensionality
    read_back = sympy.Rational(number) * sympy.Rational(repr(scale))
    expect_valid = claim_dims == dims and abs(true - read_back) <= REL * max(abs(true), sympy.Rational(1, 10 ** 12))
    if v.status is Status.UNKNOWN:
        return
    assert v.status is (Status.VALID if expect_valid else Status.INVALID), (text, quants, claim_text, v)
    if not expect_valid:
        assert v.detail.startswith("wrong unit" if claim_dims != dims else "wrong value"), v.detail


# ----------------------------------------------------------------------------- the parser
ALPHABET = "0123456789abcdefgxyz_ .,+-*/%()[]{}'\"=<>!:;@&|^~#\\\n\t×÷eE"
GRAMMAR_CHARS = re.compile(r"[0-9A-Za-z_ \t\n.+\-*/%(),^×÷−·⋅]*")


@settings(max_examples=1500, deadline=None, derandomize=True)
@given(text=st.text(alphabet=ALPHABET, max_size=60) | st.text(max_size=30))
def test_parser_never_crashes_and_accepts_only_the_grammar(text):
    try:
        expr = parse_expr(text)
    except QuantError as exc:
        assert exc.kind in ("error", "bound")
        return
    assert GRAMMAR_CHARS.fullmatch(text), text
    for node in expr.walk():
        assert type(node) in (Num, Name, Unary, BinOp, Call)
        if isinstance(node, Call):
            assert node.func in FUNCTIONS
        if isinstance(node, Name):
            assert "__" not in node.id
    assert parse_expr(str(expr)) == expr  # the printed form reads back to the same tree


@settings(max_examples=800, deadline=None, derandomize=True)
@given(text=st.text(alphabet=ALPHABET, max_size=40), claim=st.text(max_size=15),
       q=st.dictionaries(st.text(max_size=4), st.text(max_size=10), max_size=3))
def test_check_quantity_never_raises(text, claim, q):
    v = check_quantity(q, expr=text, claim=claim)
    assert isinstance(v, Verdict) and v.status in tuple(Status) and v.backend == "quant"
    assert v.status is not Status.VALID or check_quantity(q, expr=text, claim=claim).status is Status.VALID


@pytest.mark.parametrize("text", ["1 +* 2", "a..b", "1e", ".e1", "1.2.3", "1e+", "sqrt(1,)", "(,)"])
def test_near_misses_are_errors(text):
    with pytest.raises(QuantError):
        parse_expr(text)


# ----------------------------------------------------------------------------- primitives
R_GAS_Q = ORACLE.Quantity(8.314462618, "J/(mol*K)")
ORACLE_PRIMITIVES = {  # name: (argument units to draw from, the formula over Pint quantities)
    "average_speed": ([["m", "km", "mi"], ["s", "min", "h"]], lambda d, t: d / t),
    "distance": ([["m/s", "km/h"], ["s", "h"]], lambda v, t: v * t),
    "time_from_distance_speed": ([["m", "km"], ["m/s", "km/h"]], lambda d, v: d / v),
    "acceleration": ([["m/s"], ["m/s", "km/h"], ["s"]], lambda u, v, t: (v - u) / t),
    "final_velocity": ([["m/s"], ["m/s**2"], ["s", "min"]], lambda u, a, t: u + a * t),
    "displacement_const_accel": ([["m/s"], ["m/s**2"], ["s"]], lambda u, a, t: u * t + a * t ** 2 / 2),
    "kinetic_energy": ([["kg", "g"], ["m/s", "km/h"]], lambda m, v: m * v ** 2 / 2),
    "potential_energy": ([["kg"], ["m/s**2"], ["m", "cm"]], lambda m, g, h: m * g * h),
    "work": ([["N"], ["m", "km"]], lambda f, d: f * d),
    "power": ([["J", "kJ"], ["s", "min"]], lambda w, t: w / t),
    "momentum": ([["kg", "g"], ["m/s"]], lambda m, v: m * v),
    "impulse": ([["N"], ["s", "ms"]], lambda f, t: f * t),
    "ohm_voltage": ([["A", "mA"], ["ohm", "kohm"]], lambda i, r: i * r),
    "ohm_current": ([["V", "kV"], ["ohm"]], lambda v, r: v / r),
    "resistance": ([["V"], ["A", "mA"]], lambda v, i: v / i),
    "electric_power": ([["V"], ["A"]], lambda v, i: v * i),
    "parallel_resistance": ([["ohm"], ["ohm", "kohm"]], lambda a, b: 1 / (1 / a + 1 / b)),
    "ideal_gas_pressure": ([["mol"], ["K"], ["m**3", "L"]], lambda n, t, v: n * R_GAS_Q * t / v),
    "ideal_gas_volume": ([["mol"], ["K"], ["Pa", "kPa"]], lambda n, t, p: n * R_GAS_Q * t / p),
    "newton_force": ([["kg"], ["m/s**2"]], lambda m, a: m * a),
    "density": ([["kg", "g"], ["m**3", "L"]], lambda m, v: m / v),
    "pressure": ([["N"], ["m**2"]], lambda f, a: f / a),
}


@settings(max_examples=300, deadline=None, derandomize=True)
@given(name=st.sampled_from(sorted(ORACLE_PRIMITIVES)), data=st.data())
def test_primitives_agree_with_independent_formulas(name, data):
    units, formula = ORACLE_PRIMITIVES[name]
    args = [(data.draw(st.integers(1, 400)), data.draw(st.sampled_from(us))) for us in units]
    qs = {f"x{i}": f"{v} {u}" for i, (v, u) in enumerate(args)}
    true = formula(*[ORACLE.Quantity(float(v), u) for v, u in args]).to_base_units()
    unit = f"{true.units:~}".replace(" ", "")
    good = check_quantity(qs, op=name, args=list(qs), claim=f"{true.magnitude!r} {unit}")
    assert good.status is Status.VALID, (name, qs, true, good.detail)
    off = true.magnitude * 1.001 if true.magnitude else 1.0
    bad = check_quantity(qs, op=name, args=list(qs), claim=f"{off!r} {unit}")
    assert bad.status is Status.INVALID and bad.detail.startswith("wrong value"), (name, bad.detail)
    wrong_dims = check_quantity(qs, op=name, args=list(qs), claim=f"{true.magnitude!r} {unit}*s")
    assert wrong_dims.status is Status.INVALID and wrong_dims.detail.startswith("wrong unit")
