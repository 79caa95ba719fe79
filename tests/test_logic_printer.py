"""`pretty` round-trips through the parser; `canonical` identifies exactly alpha-equivalent formulas."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from prosfi.logic import (
    And,
    Bottom,
    Const,
    Eq,
    Exists,
    Fn,
    Forall,
    FormulaError,
    Iff,
    Implies,
    Not,
    Or,
    Pred,
    Top,
    Var,
    Xor,
    canonical,
    parse,
    pretty,
)

CONSTS = ["a", "bob", "café", "α₁"]
VARS = ["x", "y", "z'"]  # disjoint from constant names, so a parse cannot capture one
PREDS = {"P": 1, "Q": 1, "R": 2, "A": 0, "B": 0}
FUNCS = {"f": 1, "g": 2}
SORTS = [None, None, "T", "Person"]


@st.composite
def terms(draw, bound: tuple[str, ...], depth: int):
    choices = ["const"] + (["var"] if bound else []) + (["fn"] if depth > 0 else [])
    kind = draw(st.sampled_from(choices))
    if kind == "const":
        return Const(draw(st.sampled_from(CONSTS)))
    if kind == "var":
        return Var(draw(st.sampled_from(bound)))
    name = draw(st.sampled_from(sorted(FUNCS)))
    return Fn(name, tuple(draw(terms(bound, depth - 1)) for _ in range(FUNCS[name])))


@st.composite
def formulas(draw, bound: tuple[str, ...] = (), depth: int = 4):
    leaves = ["pred", "eq", "top", "bottom"]
    kind = draw(st.sampled_from(leaves if depth == 0 else leaves + ["not", "bin", "bin", "quant", "quant"]))
    if kind == "pred":
        name = draw(st.sampled_from(sorted(PREDS)))
        return Pred(name, tuple(draw(terms(bound, 1)) for _ in range(PREDS[name])))
    if kind == "eq":
        return Eq(draw(terms(bound, 1)), draw(terms(bound, 1)))
    if kind == "top":
        return Top()
    if kind == "bottom":
        return Bottom()
    if kind == "not":
        return Not(draw(formulas(bound, depth - 1)))
    if kind == "bin":
        op = draw(st.sampled_from([And, Or, Implies, Iff, Xor]))
        return op(draw(formulas(bound, depth - 1)), draw(formulas(bound, depth - 1)))
    var = draw(st.sampled_from(VARS))
    q = draw(st.sampled_from([Forall, Exists]))
    return q(var, draw(formulas(bound + (var,), depth - 1)), draw(st.sampled_from(SORTS)))


@settings(max_examples=400, deadline=None)
@given(formulas())
def test_pretty_round_trips(f):
    text = pretty(f)
    assert parse(text) == f, text
    assert pretty(parse(text)) == text


@pytest.mark.parametrize("f, text", [
    (And(Not(Pred("P", (Const("a"),))), Pred("Q", (Const("a"),))), "¬P a ∧ Q a"),
    (Not(And(Pred("A"), Pred("B"))), "¬(A ∧ B)"),
    (Implies(Implies(Pred("A"), Pred("B")), Pred("C")), "(A → B) → C"),
    (Implies(Pred("A"), Implies(Pred("B"), Pred("C"))), "A → B → C"),
    (Or(And(Pred("A"), Forall("x", Pred("P", (Var("x"),)))), Pred("C")), "(A ∧ ∀ x, P x) ∨ C"),
    (And(Pred("A"), Forall("x", Or(Pred("P", (Var("x"),)), Pred("C")))), "A ∧ ∀ x, P x ∨ C"),
    (Iff(Iff(Pred("A"), Pred("B")), Pred("C")), "(A ↔ B) ↔ C"),
    (Not(Eq(Const("a"), Const("b"))), "a ≠ b"),
    (Xor(Not(Pred("A")), Pred("B")), "Xor' (¬A) B"),
    (Forall("x", Forall("y", Pred("R", (Var("x"), Var("y")))), "T"), "∀ (x : T), ∀ y, R x y"),
    (Forall("x", Forall("y", Pred("R", (Var("x"), Var("y"))), "T"), "T"), "∀ (x y : T), R x y"),
    (Pred("P", (Fn("f", (Fn("f", (Const("a"),)),)),)), "P (f (f a))"),
])
def test_pretty_uses_minimal_parentheses(f, text):
    assert pretty(f) == text
    assert parse(text) == f


@pytest.mark.parametrize("left, right, same", [
    ("∀ x, P x", "∀ y, P y", True),
    ("∀ x, P x", "∀ (z : T), P z", True),
    ("∀ x, ∃ y, R x y", "∀ y, ∃ x, R y x", True),
    ("∀ x, ∃ y, R x y", "∀ x, ∃ y, R y x", False),
    ("∀ x, P x ∧ ∀ x, Q x", "∀ y, P y ∧ ∀ z, Q z", True),
    ("∀ x, P x ∧ ∀ y, Q x", "∀ x, P x ∧ ∀ x, Q x", False),
    ("(∀ x, P x) ∧ Q x", "(∀ y, P y) ∧ Q y", False),  # the outer x, y are constants
    ("A ∧ B", "B ∧ A", False),
    ("a ≠ b", "¬ a = b", True),
    ("Xor' A B", "Xor' B A", False),
    ("P a", "P a", True),
])
def test_canonical_is_alpha_equivalence(left, right, same):
    assert (canonical(parse(left)) == canonical(parse(right))) is same


@settings(max_examples=200, deadline=None)
@given(formulas())
def test_canonical_is_stable_under_renaming_bound_variables(f):
    renamed = _rename(f, {v: v + "_r" for v in VARS})
    assert canonical(renamed) == canonical(f)
    assert canonical(parse(pretty(f))) == canonical(f)


def _rename(f, m):
    kind = type(f)
    if kind in (Forall, Exists):
        return kind(m[f.var], _rename(f.body, m), None)
    if kind is Pred:
        return Pred(f.name, tuple(_rename_t(a, m) for a in f.args))
    if kind is Eq:
        return Eq(_rename_t(f.left, m), _rename_t(f.right, m))
    if kind is Not:
        return Not(_rename(f.body, m))
    if kind in (And, Or, Implies, Iff, Xor):
        return kind(_rename(f.left, m), _rename(f.right, m))
    return f


def _rename_t(t, m):
    if type(t) is Var:
        return Var(m[t.name])
    if type(t) is Fn:
        return Fn(t.name, tuple(_rename_t(a, m) for a in t.args))
    return t


def test_deep_formulas_print_and_key():
    deep = parse("¬" * 300 + "P a")
    assert parse(pretty(deep)) == deep
    assert canonical(deep).count("¬") == 300
    with pytest.raises(FormulaError):
        parse(pretty(deep), max_depth=100)
