"""check_quantity: verdicts, reasons, tolerance and primitives."""

from fractions import Fraction

import pytest

from prosfi.quant import (
    PRIMITIVES,
    QuantError,
    Tolerance,
    apply_primitive,
    check_quantity,
    close_enough,
    parse_quantity,
)
from prosfi.verdict import Status

DT = {"d": "120 km", "t": "1.5 h"}


def status(*args, **kw):
    return check_quantity(*args, **kw).status.value


def test_contract_example_and_unit_conversion():
    v = check_quantity(DT, expr="d / t", claim="80 km/h")
    assert v.status is Status.VALID and v.backend == "quant"
    assert status(DT, expr="d / t", claim="22.2222222 m/s") == "valid"
    assert status({"v": "3 m/s"}, expr="v", claim="10.8 km/h") == "valid"


def test_wrong_value_names_the_expected_value_in_the_claim_unit():
    v = check_quantity(DT, expr="d / t", claim="81 km/h")
    assert v.status is Status.INVALID and v.detail == "wrong value: expected 80 km/h, got 81 km/h"


def test_wrong_unit():
    v = check_quantity({"x": "3 m"}, expr="x", claim="3 m/s")
    assert v.status is Status.INVALID and v.detail.startswith("wrong unit")
    v = check_quantity({"x": "$3"}, expr="x * 2", claim="6")
    assert v.status is Status.INVALID and "wrong unit" in v.detail


def test_dimension_error_inside_the_expression_is_invalid():
    for expr in ("d + t", "exp(d)", "2 ** t", "sqrt(d) + d", "min(d, t)", "d % t"):
        v = check_quantity(DT, expr=expr, claim="1")
        assert v.status is Status.INVALID and v.detail.startswith("dimension error inside the expression"), expr


def test_math_errors_are_invalid():
    for expr in ("1 / (d - d)", "sqrt(-1)", "log(0)", "(-8) ** (1/3)", "0 ** -1", "asin(2)"):
        v = check_quantity(DT, expr=expr, claim="1")
        assert v.status is Status.INVALID and v.detail.startswith("math error"), expr


def test_malformed_input_is_an_error_and_never_raises():
    cases = [dict(expr="d.__class__", claim="1"), dict(expr="foo(d)", claim="1"), dict(expr="q + 1", claim="1"),
             dict(expr="d / t", claim="80 parsecs per fortnight!"), dict(expr="d", op="add", claim="1"),
             dict(claim="1"), dict(op="no_such_primitive", args=["d"], claim="1"), dict(op="add", args=["d"], claim="1"),
             dict(op="add", args="d", claim="1"), dict(expr=42, claim="1"), dict(expr="d", claim=None)]
    for kw in cases:
        assert status(DT, **kw) == "error", kw
    assert status({"x y": "1"}, expr="1", claim="1") == "error"
    assert status({"x": "3 quatloos"}, expr="x", claim="3") == "error"
    assert status("not a mapping", expr="1", claim="1") == "error"


def test_exact_comparison_and_tolerance():
    assert status({}, expr="1/3", claim="0.333333") == "valid"  # within 1e-5
    assert status({}, expr="1/3", claim="0.3333") == "invalid"
    assert status({}, expr="1/3", claim="0.3333", tol=Tolerance(rel=1e-3)) == "valid"
    assert status({}, expr="0", claim="0") == "valid"
    assert status({}, expr="0", claim="1e-20") == "invalid"  # purely relative: 0 needs 0
    assert status({}, expr="0", claim="1e-20", tol=Tolerance(abs_eps=1e-12)) == "valid"  # an explicit floor
    # tiny SI values compare relative to their own size: 0 C or 8x off is not an elementary charge
    assert status({}, expr="1.602e-19", claim="1.602e-19") == "valid"
    assert status({}, expr="1.602e-19", claim="0") == "invalid"
    assert status({}, expr="1.602e-19", claim="1.2816e-18") == "invalid"
    assert status({}, expr="0", claim="0.001") == "invalid"


def test_sigfig_mode_accepts_textbook_rounding_only():
    tol = Tolerance(sigfigs=3)
    assert status({"g": "9.80665 m/s**2", "m": "2 kg"}, expr="m * g", claim="19.6 N", tol=tol) == "valid"
    assert status({"g": "9.80665 m/s**2", "m": "2 kg"}, expr="m * g", claim="19.6 N") == "invalid"
    assert status({"g": "9.80665 m/s**2", "m": "2 kg"}, expr="m * g", claim="19.7 N", tol=tol) == "invalid"
    assert status({"v": "3 m/s"}, expr="v", claim="10.8 km/h", tol=tol) == "valid"


def test_tolerance_validates_its_fields():
    for bad in (dict(rel=-1), dict(rel=float("nan")), dict(abs_eps=-1), dict(sigfigs=0), dict(sigfigs=2.5)):
        with pytest.raises(ValueError):
            Tolerance(**bad)


def test_close_enough_reasons():
    ok, why = close_enough(parse_quantity("3 m/s"), parse_quantity("10.8 km/h"))
    assert ok and why == ""
    ok, why = close_enough(parse_quantity("3 m"), parse_quantity("3 s"))
    assert not ok and why.startswith("wrong unit")


def test_primitives_carry_unit_semantics():
    assert len(PRIMITIVES) >= 30
    q = {"m": "2 kg", "v": "3 m/s", "a": "4 m/s**2", "t": "2 s", "h": "10 m", "g": "9.8 m/s**2",
         "I": "2 A", "R": "5 ohm", "V": "10 V", "n": "1 mol", "T": "300 K", "Vol": "0.0249434 m**3",
         "p": "25%", "x": "80", "F": "6 N"}
    expect = [("kinetic_energy", ["m", "v"], "9 J"), ("potential_energy", ["m", "g", "h"], "196 J"),
              ("momentum", ["m", "v"], "6 kg*m/s"), ("final_velocity", ["v", "a", "t"], "11 m/s"),
              ("displacement_const_accel", ["v", "a", "t"], "14 m"), ("ohm_voltage", ["I", "R"], "10 V"),
              ("ohm_current", ["V", "R"], "2 A"), ("electric_power", ["V", "I"], "20 W"),
              ("series_resistance", ["R", "R", "R"], "15 ohm"), ("parallel_resistance", ["R", "R"], "2.5 ohm"),
              ("ideal_gas_pressure", ["n", "T", "Vol"], "100000 Pa"), ("percent_of", ["p", "x"], "20"),
              ("increase_by_percent", ["x", "p"], "100"), ("decrease_by_percent", ["x", "p"], "60"),
              ("newton_force", ["m", "a"], "8 N"), ("work", ["F", "h"], "60 J"), ("impulse", ["F", "t"], "12 N*s"),
              ("average", ["x", "x", "x"], "80"), ("convert", ["v", "km/h"], "10.8 km/h")]
    for op, args, claim in expect:
        v = check_quantity(q, op=op, args=args, claim=claim, tol=Tolerance(rel=1e-4))
        assert v.status is Status.VALID, (op, v.detail)


def test_primitive_argument_dimensions_are_checked():
    v = check_quantity({"m": "2 kg", "v": "3 m"}, op="kinetic_energy", args=["m", "v"], claim="9 J")
    assert v.status is Status.INVALID and "velocity must be [length] / [time]" in v.detail
    with pytest.raises(QuantError) as info:
        apply_primitive("add", [parse_quantity("1 m"), parse_quantity("1 s")])
    assert info.value.kind == "dimension"
    with pytest.raises(QuantError) as info:
        apply_primitive("kinetic_energy", [parse_quantity("1 kg")])
    assert info.value.kind == "error"


def test_every_primitive_declares_its_dimensions():
    for name, p in PRIMITIVES.items():
        assert p.name == name and p.doc and p.domain and p.params
        for _, spec in p.params:
            assert spec in ("any", "free", "dimensionless") or spec.startswith("[") or spec.startswith("1 /"), (name, spec)


def test_percent_change_shows_percent():
    v = check_quantity({"a": "80", "b": "100"}, op="percent_change", args=["a", "b"], claim="25%")
    assert v.status is Status.VALID
    assert apply_primitive("percent_change", [parse_quantity(80), parse_quantity(100)]).mag == Fraction(1, 4)


# ------------------------------------------------------------------ `prosfi check` quantity lines
def test_prosfi_check_mixes_quantity_and_logic_lines(tmp_path, capsys):
    import json
    from pathlib import Path

    from prosfi.cli import main

    example = Path(__file__).resolve().parents[1] / "examples" / "quantity_checks.jsonl"
    hostile = ['{"id": "h1", "quantities": {"x": "3 m"}, "expr": "x", "op": "add", "claim": "1"}',
               '{"id": "h2", "premises": {}, "claim": "1"}', '{"id": "h3", "expr": "1"}',
               '{"id": "h4", "quantities": [1], "expr": "1", "claim": "1"}', '{"id": "h5", "claim": {"value": []}, "expr": "1"}',
               '{"id": "h6", "expr": "1", "claim": "1", "rel": "big"}', '{"id": "h7", "expr": "' + "(" * 3000 + '", "claim": "1"}',
               '{"id": "h8", "quantities": {"__class__": "1"}, "expr": "1", "claim": "1"}', '{"id": "h9", "op": 3, "claim": "1"}']
    steps = tmp_path / "mixed.jsonl"
    steps.write_text(example.read_text(encoding="utf-8") + "\n".join(hostile) + "\n", encoding="utf-8")
    assert main(["check", str(steps), "--workers", "0", "--backends", "z3"]) == 0
    out = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    got = {r["id"]: r["verdict"] for r in out}
    assert len(out) == 9 + len(hostile) and all(set(r) == {"id", "verdict", "backend", "ms", "detail"} for r in out)
    assert [got[k] for k in ("speed", "speed-si", "eggs", "energy", "logic")] == ["valid"] * 5
    assert [got[k] for k in ("wrong-value", "wrong-unit", "dimension")] == ["invalid"] * 3
    assert got["hostile"] == "unknown" and got["h7"] == "unknown"
    assert all(got[f"h{i}"] == "error" for i in (1, 2, 3, 4, 5, 6, 8, 9))
    assert next(r for r in out if r["id"] == "speed")["backend"] == "quant"


def test_prosfi_check_tolerance_flags(tmp_path, capsys):
    from prosfi.cli import main

    steps = tmp_path / "q.jsonl"
    steps.write_text('{"id": "g", "quantities": {"m": "2 kg", "g": "9.80665 m/s**2"}, "expr": "m * g", '
                     '"claim": "19.6 N"}\n', encoding="utf-8")
    assert main(["check", str(steps), "--workers", "0"]) == 0
    assert '"invalid"' in capsys.readouterr().out
    assert main(["check", str(steps), "--workers", "0", "--sigfigs", "3"]) == 0
    assert '"valid"' in capsys.readouterr().out
    assert main(["check", str(steps), "--workers", "0", "--rel-tol", "0.01"]) == 0
    assert '"valid"' in capsys.readouterr().out
    assert main(["check", str(steps), "--workers", "0", "--sigfigs", "0"]) == 2


def test_docs_primitives_table_is_in_sync():
    from pathlib import Path

    from prosfi.quant.primitives import primitives_table

    doc = (Path(__file__).resolve().parents[1] / "docs" / "quantity.md").read_text(encoding="utf-8")
    table = doc.split("<!-- primitives-table: begin -->\n", 1)[1].split("\n<!-- primitives-table: end -->", 1)[0]
    assert table.strip() == primitives_table().strip(), "regenerate the table: see docs/quantity.md, Primitives"
