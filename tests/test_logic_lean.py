"""Lean 4 rendering against golden files, and the identifier sanitiser.

Golden cases live in tests/golden/lean/formulas.jsonl (input, options, expected Lean text).
After an intended change, rewrite them with PROSFI_UPDATE_GOLDEN=1 and review the diff.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from hypothesis import given, settings
from test_logic_printer import formulas  # well-scoped random ASTs

from prosfi.logic import Forall, Pred, Var, parse
from prosfi.logic.render_lean import is_lean_identifier, lean_name, to_lean

GOLDEN = Path(__file__).parent / "golden" / "lean" / "formulas.jsonl"


def _cases() -> list[dict]:
    return [json.loads(line) for line in GOLDEN.read_text(encoding="utf-8").splitlines() if line.strip()]


def _render(case: dict) -> str:
    options = {k: case[k] for k in ("domain", "mathlib_xor") if k in case}
    return to_lean(parse(case["input"]), case.get("names"), **options)


def test_golden_lean_output():
    cases = _cases()
    if os.environ.get("PROSFI_UPDATE_GOLDEN") == "1":
        for case in cases:
            case["lean"] = _render(case)
        GOLDEN.write_text("".join(json.dumps(c, ensure_ascii=False) + "\n" for c in cases), encoding="utf-8")
    mismatches = [(c["name"], _render(c), c["lean"]) for c in cases if _render(c) != c["lean"]]
    assert not mismatches


def test_lean_text_reads_back_as_the_same_formula():
    """Where no name needed escaping and no Xor' was rewritten, Lean's text is our own syntax."""
    for case in _cases():
        if "«" in case["lean"] or "names" in case or "Xor'" in case["input"] or "domain" in case:
            continue
        assert parse(case["lean"]) == parse(case["input"]), case["name"]


def test_core_xor_is_not_iff():
    assert to_lean(parse("Xor' A B")) == "¬(A ↔ B)"
    assert to_lean(parse("Xor' A B ∧ C")) == "¬(A ↔ B) ∧ C"
    assert parse(to_lean(parse("Xor' A (B → C)"))) == parse("¬ (A ↔ (B → C))")


@pytest.mark.parametrize("name, expected", [
    ("Kind", "Kind"), ("x'", "x'"), ("α₁", "α₁"), ("is_good?", "is_good?"), ("ℕ", "ℕ"),
    ("sorry", "«sorry»"), ("theorem", "«theorem»"), ("Type", "«Type»"), ("fun", "«fun»"),
    ("café", "«café»"), ("日本", "«日本»"), ("λx", "«λx»"), ("_", "«_»"), ("1a", "«1a»"),
])
def test_lean_name(name, expected):
    assert lean_name(name) == expected
    assert is_lean_identifier(name) is (expected == name)


@pytest.mark.parametrize("bad", ["a»b", "«a", "a\nb", ""])
def test_lean_name_refuses_what_guillemets_cannot_hold(bad):
    with pytest.raises(ValueError):
        lean_name(bad)


def test_bound_variables_never_capture_a_renamed_symbol():
    f = Forall("x", Pred("P", (Var("x"),)))
    out = to_lean(f, {"P": "x"})
    assert out == "∀ x_1, x x_1"
    g = parse("∀ x, ∀ x_1, R x x_1 c")
    assert to_lean(g, {"c": "x"}) == "∀ x_2 x_1, R x_2 x_1 x"


@settings(max_examples=150, deadline=None)
@given(formulas())
def test_lean_text_is_our_syntax_up_to_guillemets(f):
    """With Mathlib's Xor' kept, Lean's text differs from ours only by «» around names."""
    text = to_lean(f, mathlib_xor=True)
    assert parse(text.replace("«", "").replace("»", "")) == f, text
