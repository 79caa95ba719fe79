"""SciBench's public JSON: LaTeX units read into Pint units, 10^k scale prefixes folded into the value,
symbolic units skipped with the reason, SciBench's 5% tolerance carried by each problem."""

from __future__ import annotations

import os
from fractions import Fraction
from pathlib import Path

import pytest

from prosfi.cli import main
from prosfi.data.scibench import UnitError, latex_unit, load_scibench, plain_question

SAMPLE = Path(__file__).parent / "fixtures" / "scibench_sample.json"  # written for these tests, public format


@pytest.mark.parametrize("latex,scale,unit", [
    (r"$\mathrm{~m} / \mathrm{s}^2$", 1, "m / s**2"),
    (r"$10^3 \mathrm{~N} / \mathrm{C}$", 1000, "N / C"),
    (r"$10^{-19} \mathrm{~J}$", Fraction(1, 10**19), "J"),
    (r"$\mathrm{~m} \cdot \mathrm{s}^{-1}$", 1, "m * s**-1"),
    (r"$\mathrm{~J} \mathrm{~K}^{-1} \mathrm{~mol}^{-1}$", 1, "J * K**-1 * mol**-1"),
    (r"$^{\circ} \mathrm{C}$", 1, "degC"),
    (r"$\%$", 1, "percent"),
    # units as they occur in SciBench's atkins.json
    (r"$\mathrm{atm}$ ", 1, "atm"),
    (r"$\text{kJ}$ ", 1, "kJ"),
    (r"$\mathrm{dm}^3 \mathrm{~mol}^{-1}$ ", 1, "dm**3 * mol**-1"),
    (r"$\mathrm{K} \mathrm{MPa}^{-1}$", 1, "K * MPa**-1"),
    ("", 1, ""),
])
def test_latex_units(latex, scale, unit):
    assert latex_unit(latex) == (Fraction(scale), unit)


@pytest.mark.parametrize("latex", [r"$m l^2$", r"$u_1$", r"$\sqrt{\frac{b}{a+g}}$", r"$\mathrm{~blorps}$"])
def test_symbolic_or_unknown_units_are_refused(latex):
    with pytest.raises(UnitError):
        latex_unit(latex)


def test_records_load_scaled_with_tolerance_and_skips(tmp_path):
    skipped: list = []
    problems = load_scibench(SAMPLE, skipped=skipped)
    assert [i for i, _ in skipped] == [3, 5]
    assert "symbolic" in skipped[0][1] and "not a number" in skipped[1][1]
    by_id = {p.id: p for p in problems}
    assert by_id["scibench-scibench_sample-0001"].answer == {"value": "2500", "unit": "N / C"}
    assert Fraction(by_id["scibench-scibench_sample-0004"].answer["value"]) == Fraction(36, 10**20)
    first = by_id["scibench-scibench_sample-0000"]
    assert first.extra["tolerance"] == {"rel": 0.05} and first.question.startswith("A cart of mass 2.0 kg moves at")
    assert [(Fraction(g["value"]), g["unit"]) for g in first.givens][:2] == [(2, "kg"), (3, "m/s")]
    for p in problems:
        p.validate()


def test_plain_question_reads_scientific_notation():
    assert plain_question(r"a mass of $7 \times 10^4 \mathrm{~kg}$ at $250 \mathrm{~km} / \mathrm{h}$") == \
        "a mass of 7e4 kg at 250 km/h"


def test_cli_and_eval_spec(tmp_path, capsys):
    out = tmp_path / "sb.jsonl"
    assert main(["data", "scibench", "--file", str(SAMPLE), "-o", str(out)]) == 0
    err = capsys.readouterr().err
    assert "wrote 5 SciBench problems" in err and "skipped 2" in err
    from prosfi.eval.sources import load_source

    src = load_source(f"scibench:{SAMPLE}")
    assert len(src.problems) == 5 and len(src.skipped) == 2


# --------------------------------------------------------------------------- the unit spellings of fund/class
UNITS = Path(__file__).parent / "fixtures" / "scibench_units.json"  # SciBench's unit strings; see .SOURCE.md


@pytest.mark.parametrize("latex,scale,unit", [
    (" m", 1, "m"), (" km", 1, "km"), (" J", 1, "J"), ("N ", 1, "N"), ("$N$ ", 1, "N"), (" $C$", 1, "C"),
    ("$e$ ", 1, "e"), (" $10^6$ m", 10**6, "m"), ("$m/s^2$", 1, "m/s**2"), ("$\\mathrm{MeV}$", 1, "MeV"),
    (" seconds", 1, "seconds"), (" years", 1, "years"), ("$ \\text { days }$ ", 1, "days"),
    ("$10^7 \\mathrm{yr}$ ", 10**7, "yr"), ("$\\mathrm{MC}$", 1, "MC"), ("$\\mathrm{fC} $ ", 1, "fC"),
    ("$\\mu C$ ", 1, "uC"), (" $\\mu \\mathrm{C}$", 1, "uC"), ("$ \\mu \\mathrm{C}$", 1, "uC"),
    ("$\\mu \\mathrm{C} / \\mathrm{m}$", 1, "uC / m"), (" $\\mathrm{~N} \\hat{\\mathrm{i}}$", 1, "N"),
    ("$10^{10} \\text { electrons; }$", 10**10, ""), ("$\\mathrm{rad} \\cdot \\mathrm{s}^{-1}$ ", 1, "rad * s**-1"),
    (" $^{\\circ}$", 1, "degree"), ("$10^{42}$", 10**42, ""), (" ", 1, ""),
])
def test_plain_units_are_units_not_symbols(latex, scale, unit):
    assert latex_unit(latex) == (Fraction(scale), unit)


def test_degree_signs_in_questions_are_units():
    from prosfi.quant import extract_givens

    question = plain_question("at $30^{\\circ}$ north, $25^{\\circ} \\mathrm{C}$ and $20{ }^{\\circ} \\mathrm{C}$, $42^{\\circ} \\mathrm{N}$")
    assert question == "at 30° north, 25°C and 20°C, 42° N"
    assert [(g.value, g.unit) for g in extract_givens(question)] == [("30", "degree"), ("25", "degC"), ("20", "degC"),
                                                                     ("42", "degree")]


def test_micro_is_the_prefix_not_atomic_mass_units():
    from prosfi.quant import parse_quantity

    _, unit = latex_unit("$\\mu \\mathrm{C}$")
    assert parse_quantity({"value": "1", "unit": unit}).mag == Fraction(1, 10**6)  # not 1 u * 1 C
    question = plain_question("charges $q_1=$ $26.0 \\mu \\mathrm{C}$ and $3.0 \\mu C$, $40.0 \\mu \\mathrm{m}$ apart")
    assert question == "charges q_1= 26.0 μC and 3.0 μC, 40.0 μm apart"
    from prosfi.quant import extract_givens

    assert [(g.value, g.unit) for g in extract_givens(question)][-3:] == [("26", "uC"), ("3", "uC"), ("40", "um")]


@pytest.mark.parametrize("latex", [" $L$", " $H$", "$R$", "$h$", " $m l^2$", " $c^2 d$", " $\\omega R$",
                                   " $K \\varepsilon_0 r^3$", " $u_1$", " $\\frac{k}{a}$", " $\\rho_s G M$"])
def test_variables_are_still_symbolic(latex):
    with pytest.raises(UnitError, match="symbolic"):
        latex_unit(latex)


def test_the_unit_spellings_load():
    skipped: list = []
    problems = load_scibench(UNITS, skipped=skipped)
    assert len(problems) == 24 and [i for i, _ in skipped] == list(range(24, 32))
    assert all("symbolic" in why for _, why in skipped[:-1]) and "not a number" in skipped[-1][1]
    for p in problems:
        p.validate()
    by_unit = {p.extra["unit_latex"]: p for p in problems}
    assert by_unit["$10^{10} \\text { electrons; }$"].answer == {"value": "20000000000", "unit": ""}
    assert by_unit["$10^{-19} \\mathrm{C}$"].answer == {"value": "3.2e-19", "unit": "C"}
    charges = by_unit["$\\mu \\mathrm{C}$"]
    assert [(g["value"], g["unit"]) for g in charges.givens] == [("6", "uC"), ("-4", "uC")]


@pytest.mark.parametrize("unit_latex,text,ok", [
    ("$10^{11} \\mathrm{~J}$", "2.57e11 J", True), ("$10^{11} \\mathrm{~J}$", "257 GJ", True),
    ("$10^{11} \\mathrm{~J}$", "6.14e10 cal", True), ("$10^{11} \\mathrm{~J}$", "2.6 \\times 10^{11} \\mathrm{~J}", True),
    ("$10^{11} \\mathrm{~J}$", "2.83e11 J", False), ("$10^{11} \\mathrm{~J}$", "2.57e11 N", False),
    ("$10^{11} \\mathrm{~J}$", "2.57e11", False),
    (" $10^{-19} \\mathrm{C}$", "3.2e-19 C", True), (" $10^{-19} \\mathrm{C}$", "2 e", True),
    (" $10^{-19} \\mathrm{C}$", "0 C", False), (" $10^{-19} \\mathrm{C}$", "2.56e-18 C", False),
    (" $10^{-19} \\mathrm{C}$", "3.52e-19 C", False),
    ("$\\mu C$ ", "0.32 μC", True), ("$\\mu C$ ", "3.2e-7 C", True), ("$\\mu C$ ", "0.32 mC", False),
    ("$ \\text { days }$ ", "76 days", True), ("$ \\text { days }$ ", "6.57e6 s", True),
    ("$ \\text { days }$ ", "76 s", False),
    (" $^{\\circ}$", "109", True), (" $^{\\circ}$", "1.90 rad", True), (" $^{\\circ}$", "120°", False),
    ("$10^{10} \\text { electrons; }$", "2.0 \\times 10^{10}", True), ("$10^{10} \\text { electrons; }$", "2e10 electrons", True),
    (" ", "0.18", True), (" ", "0.2", False),
])
def test_right_in_any_equivalent_unit_wrong_when_off_or_another_dimension(unit_latex, text, ok):
    """SciBench's 5% relative to the gold: 10% off is wrong, so is another dimension; no absolute floor."""
    from prosfi.domains.quantity.answer import grade_answer, read_answer

    p = {q.extra["unit_latex"]: q for q in load_scibench(UNITS)}[unit_latex.strip()]
    assert grade_answer(p, read_answer(text))[0] is ok


REAL = Path(os.environ.get("PROSFI_SCIBENCH_DIR", "/nonexistent"))


@pytest.mark.skipif(not (REAL / "fund.json").exists(), reason="set PROSFI_SCIBENCH_DIR to SciBench's dataset/original")
def test_real_fund_and_class_load():
    """Measurement on the public files (not shipped): every record with a numeric answer and a unit loads;
    only variables as units (`$m l^2$`, `$L$`) and a missing answer are skipped."""
    loaded, skipped = 0, []
    for name in ("fund", "class"):
        sk: list = []
        loaded += len(load_scibench(REAL / f"{name}.json", skipped=sk))
        skipped += sk
    assert all("symbolic" in why or "not a number" in why for _, why in skipped)
    assert loaded >= 101 and loaded + len(skipped) == 120
    coefficients = sum(len(load_scibench(REAL / f"{name}.json", symbolic="coefficient")) for name in ("fund", "class"))
    assert coefficients == 119  # all but the record with no numeric answer


def test_symbolic_units_as_coefficients_on_request():
    """`symbolic="coefficient"`: SciBench's own grading of a symbolic unit (the number that multiplies it)."""
    from prosfi.domains.quantity.answer import grade_answer, read_answer

    skipped: list = []
    problems = load_scibench(UNITS, skipped=skipped, symbolic="coefficient")
    assert len(problems) == 31 and [i for i, _ in skipped] == [31] and "not a number" in skipped[0][1]
    rod = next(p for p in problems if p.extra.get("unit_symbolic") == "$m l^2$")
    assert rod.answer == {"value": "0.33333333", "unit": ""} and rod.target["unit"] == ""
    assert rod.question.endswith("Give the answer as the number that multiplies $m l^2$.")
    assert grade_answer(rod, read_answer("1/3"))[0] and grade_answer(rod, read_answer("0.333"))[0]
    assert not grade_answer(rod, read_answer("0.5"))[0]
    plain = {p.id: p for p in load_scibench(UNITS)}
    assert all(p.to_dict() == plain[p.id].to_dict() for p in problems if p.id in plain)  # the rest unchanged
    with pytest.raises(ValueError, match="symbolic must be"):
        load_scibench(UNITS, symbolic="guess")


def test_the_cli_grades_a_symbolic_unit_as_a_coefficient_on_request(tmp_path):
    import json as _json

    from prosfi.cli import main

    path = tmp_path / "sym.json"
    path.write_text(_json.dumps([
        {"problem_text": "A rod of mass m and length l; its moment of inertia?", "answer_number": "0.33",
         "unit": "$m l^2$", "source": "class", "problemid": "1"},
        {"problem_text": "A 2 kg mass at 3 m/s: kinetic energy?", "answer_number": "9", "unit": " J",
         "source": "class", "problemid": "2"}]), encoding="utf-8")
    out = tmp_path / "out.jsonl"
    assert main(["data", "scibench", "--file", str(path), "-o", str(out)]) == 0
    assert len(out.read_text(encoding="utf-8").splitlines()) == 1  # the symbolic unit is skipped by default
    out2 = tmp_path / "out2.jsonl"
    assert main(["data", "scibench", "--symbolic", "coefficient", "--file", str(path), "-o", str(out2)]) == 0
    assert len(out2.read_text(encoding="utf-8").splitlines()) == 2
