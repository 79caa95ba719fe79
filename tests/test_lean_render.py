"""Whole-theorem rendering for Lean: golden files, names, and the parts the REPL depends on.

Golden files live in tests/golden/lean_theorems/: NAME.json (a step check in `prosfi check`'s
input format) and NAME.lean (the exact REPL command). Regenerate after an intended change with
PROSFI_UPDATE_GOLDEN=1 and review the diff.
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

import pytest

from prosfi.logic.ast import Const, Exists, Forall, Not, Pred, Var
from prosfi.logic.parser import parse
from prosfi.logic.signature import check_signature
from prosfi.verify.backend import Check
from prosfi.verify.lean.config import LeanConfig
from prosfi.verify.lean.render import (
    STEP_THEOREM,
    axioms_used,
    render_command,
    render_statement,
    render_step,
    tactic_cascade,
)

GOLDEN = Path(__file__).parent / "golden" / "lean_theorems"
UPDATE = os.environ.get("PROSFI_UPDATE_GOLDEN") == "1"


def _check(rec: dict) -> tuple[Check, object]:
    premises = tuple((k, parse(v)) for k, v in rec["premises"].items())
    conclusion = parse(rec["conclusion"])
    return Check(premises, conclusion), check_signature([f for _, f in premises] + [conclusion])


def _compare(name: str, text: str) -> None:
    path = GOLDEN / f"{name}.lean"
    if UPDATE:
        path.write_text(text + "\n", encoding="utf-8")
    assert path.exists(), f"missing golden file {path}; run with PROSFI_UPDATE_GOLDEN=1"
    assert text + "\n" == path.read_text(encoding="utf-8")


CASES = sorted(p.stem for p in GOLDEN.glob("*.json"))


@pytest.mark.parametrize("name", CASES)
def test_golden_step_theorems(name):
    check, signature = _check(json.loads((GOLDEN / f"{name}.json").read_text(encoding="utf-8")))
    _compare(name, render_step(check, signature, LeanConfig()))


def test_golden_cases_cover_the_fragment():
    assert {"modus_ponens", "binary_nested", "xor", "equality_functions", "shadowing_propositional",
            "domain_clash"} <= set(CASES)


def test_golden_keyword_and_unicode_names():
    # The parser refuses keywords as identifiers, but problems built from data or by hand can
    # still carry such names: they must come out escaped, never as Lean syntax.
    premises = (
        ("h1", Forall("x", Pred("end", (Var("x"),)))),
        ("h2", Pred("café", (Const("open"),))),
        ("theorem", Exists("y", Not(Pred("end", (Var("y"),))))),
    )
    conclusion = Pred("end", (Const("open"),))
    signature = check_signature([f for _, f in premises] + [conclusion])
    text = render_step(Check(premises, conclusion), signature, LeanConfig())
    _compare("keyword_names", text)
    assert "«end»" in text and "«open»" in text and "«café»" in text
    assert re.search(r"\(hyp3 :", text), "a keyword premise id becomes a plain hypothesis name"


def test_xor_is_rendered_without_mathlib():
    check, signature = _check({"premises": {"h1": "Xor' A B"}, "conclusion": "A ∨ B"})
    text = render_step(check, signature, LeanConfig())
    assert "Xor'" not in text and "¬(A ↔ B)" in text


def test_symbol_named_like_the_domain_is_renamed():
    check, signature = _check({"premises": {"h1": "P U"}, "conclusion": "P U"})
    text = render_step(check, signature, LeanConfig())
    assert "(U_1 : U)" in text and "(h1 : P U_1)" in text and ":\n    P U_1 :=" in text


def test_binders_are_typed_over_the_domain_whatever_sort_was_written():
    check, signature = _check({"premises": {"h1": "∀ (p : Person), Q p"}, "conclusion": "∀ x, Q x"})
    text = render_step(check, signature, LeanConfig())
    assert "Person" not in text and "∀ (p : U), Q p" in text


def test_options_and_cascade_come_from_the_config():
    check, signature = _check({"premises": {"h1": "A"}, "conclusion": "A"})
    config = LeanConfig(max_heartbeats=1234, tactics=("assumption",))
    text = render_step(check, signature, config)
    assert text.startswith("set_option maxHeartbeats 1234 in\nset_option autoImplicit false in\n")
    assert text.rstrip().endswith("(assumption; done)")
    assert tactic_cascade(("a", "b")).startswith("first\n")


def test_direct_command_indents_the_proof_and_prints_axioms():
    premises = (("h1", parse("A")),)
    statement = render_statement(premises, parse("A"), check_signature([parse("A")]), "prosfi_direct")
    text = render_command(statement, "intro\n  · exact h1", 50, print_axioms=True)
    assert "theorem prosfi_direct (U : Type) [Nonempty U] (A : Prop) (h1 : A) :\n    A := by\n  intro\n    · exact h1" in text
    assert text.endswith("\n\n#print axioms prosfi_direct")
    assert statement.hypotheses == {"h1": "h1"} and STEP_THEOREM not in text


def test_axioms_report_is_read():
    msgs = [{"severity": "info", "data": "'t' depends on axioms: [propext, Classical.choice, Quot.sound]"}]
    assert axioms_used(msgs) == ["propext", "Classical.choice", "Quot.sound"]
    assert axioms_used([{"data": "'t' does not depend on any axioms"}]) == []
    assert axioms_used([{"data": "something else"}]) is None
    forged = [{"data": "'prosfi_direct' depends on axioms: [propext]"},
              {"data": "'prosfi_direct' depends on axioms: [propext, sorryAx]"}]
    assert "sorryAx" in axioms_used(forged)  # an extra clean-looking report cannot hide the real one


# ------------------------------------------------------------------ property: names never capture
def _formulas(depth: int = 3):
    from hypothesis import strategies as st

    from prosfi.logic.ast import And, Eq, Fn, Iff, Implies, Or, Xor

    consts = ["a", "U", "h1", "prosfi_step"]
    var_names = ["x", "y", "U", "h1", "a"]

    def terms(bound: tuple[str, ...]):
        base = st.sampled_from(consts).map(Const)
        if bound:
            base = base | st.sampled_from(bound).map(Var)
        return st.one_of(base, base.map(lambda t: Fn("f", (t,))))

    def formula(bound: tuple[str, ...], d: int):
        atoms = st.one_of(
            terms(bound).map(lambda t: Pred("P", (t,))),
            st.tuples(terms(bound), terms(bound)).map(lambda ts: Pred("Q", ts)),
            st.just(Pred("R")),
            st.tuples(terms(bound), terms(bound)).map(lambda ts: Eq(*ts)),
        )
        if d == 0:
            return atoms
        sub = formula(bound, d - 1)
        binder = st.sampled_from(var_names).flatmap(
            lambda v: st.tuples(st.just(v), formula(bound + (v,), d - 1), st.sampled_from([Forall, Exists])))
        return st.one_of(
            atoms,
            sub.map(Not),
            st.tuples(st.sampled_from([And, Or, Implies, Iff, Xor]), sub, sub).map(lambda t: t[0](t[1], t[2])),
            binder.map(lambda t: t[2](t[0], t[1])),
        )

    return formula((), depth)


def _rename_symbols(f, back: dict):
    from prosfi.logic.ast import And, Eq, Fn, Iff, Implies, Or, Xor

    def term(t):
        if type(t) is Const:
            return Const(back.get(t.name, t.name))
        if type(t) is Fn:
            return Fn(back.get(t.name, t.name), tuple(term(a) for a in t.args))
        return t

    kind = type(f)
    if kind is Xor:  # rendered as ¬(A ↔ B): compare with that
        return Not(Iff(_rename_symbols(f.left, back), _rename_symbols(f.right, back)))
    if kind is Pred:
        return Pred(back.get(f.name, f.name), tuple(term(a) for a in f.args))
    if kind is Eq:
        return Eq(term(f.left), term(f.right))
    if kind is Not:
        return Not(_rename_symbols(f.body, back))
    if kind in (And, Or, Implies, Iff, Xor):
        return kind(_rename_symbols(f.left, back), _rename_symbols(f.right, back))
    if kind in (Forall, Exists):
        return kind(f.var, _rename_symbols(f.body, back), f.sort)
    return f


def test_rendered_formulas_mean_what_the_ast_means():
    """Every hypothesis and claim, parsed back and with symbols renamed back, is alpha-equal to
    the AST it came from: renaming the domain-clashing symbol `U`, bound variables named like a
    symbol, the domain, a hypothesis or the theorem, never captures or changes a reference."""
    from hypothesis import given, settings
    from hypothesis import strategies as st

    from prosfi.logic.printer import canonical

    @settings(max_examples=150, deadline=None)
    @given(st.lists(_formulas(), min_size=1, max_size=3), _formulas())
    def check(premises, claim):
        named = tuple((f"h{i}", f) for i, f in enumerate(premises, 1))
        signature = check_signature([f for _, f in named] + [claim])
        statement = render_statement(named, claim, signature, STEP_THEOREM)
        back = {lean: sym for sym, lean in statement.symbols.items()}
        assert "U" not in back, "a symbol must never be written as the domain's name"
        for pid, f in named:
            assert canonical(_rename_symbols(parse(statement.formulas[pid]), back)) == canonical(_rename_symbols(f, {}))
        assert canonical(_rename_symbols(parse(statement.claim), back)) == canonical(_rename_symbols(claim, {}))
        assert len(set(statement.hypotheses.values())) == len(named)
        assert not set(statement.hypotheses.values()) & set(statement.symbols.values())

    check()
