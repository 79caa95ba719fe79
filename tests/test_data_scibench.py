"""SciBench's public JSON: LaTeX units read into Pint units, 10^k scale prefixes folded into the value,
symbolic units skipped with the reason, SciBench's 5% tolerance carried by each problem."""

from __future__ import annotations

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
