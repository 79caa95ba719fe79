"""The Lean 4 formula parser: precedence, binders, resolution, limits and malformed input."""

from __future__ import annotations

import logging

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
    parse,
)

A, B, C, D = Pred("A"), Pred("B"), Pred("C"), Pred("D")
a, b, c = Const("a"), Const("b"), Const("c")
x, y = Var("x"), Var("y")


def P(*args):
    return Pred("P", args)


def Q(*args):
    return Pred("Q", args)


@pytest.mark.parametrize("text, expected", [
    # ¬ takes its argument at precedence 40: tighter than every binary connective, looser than =
    ("¬ P a ∧ Q a", And(Not(P(a)), Q(a))),
    ("¬P a", Not(P(a))),
    ("¬ A ∨ B", Or(Not(A), B)),
    ("¬ a = b", Not(Eq(a, b))),
    ("¬¬A", Not(Not(A))),
    ("¬(A ∧ B)", Not(And(A, B))),
    # ∧ 35 > ∨ 30 > → 25 > ↔ 20; ∧ ∨ → associate to the right
    ("A ∨ B ∧ C", Or(A, And(B, C))),
    ("A ∧ B ∨ C", Or(And(A, B), C)),
    ("A → B → C", Implies(A, Implies(B, C))),
    ("(A → B) → C", Implies(Implies(A, B), C)),
    ("A ∧ B ∧ C", And(A, And(B, C))),
    ("A ∨ B ∨ C", Or(A, Or(B, C))),
    ("A ↔ B ∧ C", Iff(A, And(B, C))),
    ("A → B ↔ C", Iff(Implies(A, B), C)),
    ("A ↔ B → C", Iff(A, Implies(B, C))),
    ("A ∨ B → C ∧ D", Implies(Or(A, B), And(C, D))),
    ("(A ↔ B) ↔ C", Iff(Iff(A, B), C)),
    # = and ≠ bind tighter than the connectives
    ("a = b ∧ b = c", And(Eq(a, b), Eq(b, c))),
    ("a ≠ b", Not(Eq(a, b))),
    ("a ≠ b → P a", Implies(Not(Eq(a, b)), P(a))),
    ("f a = b", Eq(Fn("f", (a,)), b)),
    # Lean's connective functions
    ("Xor' A B", Xor(A, B)),
    ("Xor' (P a) (¬ B) ∧ C", And(Xor(P(a), Not(B)), C)),
    ("Not A", Not(A)),
    ("Not (P a) ∨ B", Or(Not(P(a)), B)),
    ("True ∧ ¬False", And(Top(), Not(Bottom()))),
    ("And A B", And(A, B)),
    ("Iff A (Or B C)", Iff(A, Or(B, C))),
    ("Eq a b", Eq(a, b)),
    ("Ne a b", Not(Eq(a, b))),
    # application by juxtaposition; parenthesised sub-terms
    ("P (f a)", P(Fn("f", (a,)))),
    ("R a (g b c)", Pred("R", (a, Fn("g", (b, c))))),
    ("((P a))", P(a)),
    ("(P) a", None),  # head must be a name: a parse error, checked below
])
def test_precedence_and_associativity(text, expected):
    if expected is None:
        with pytest.raises(FormulaError):
            parse(text)
    else:
        assert parse(text) == expected


@pytest.mark.parametrize("text, expected", [
    ("∀ x, P x → Q x", Forall("x", Implies(P(x), Q(x)))),
    ("A ∧ ∀ x, P x ∨ Q x", And(A, Forall("x", Or(P(x), Q(x))))),
    ("(∀ x, P x) → Q a", Implies(Forall("x", P(x)), Q(a))),
    ("¬ ∀ x, P x ∧ Q x", Not(Forall("x", And(P(x), Q(x))))),
    ("∃ x, P x", Exists("x", P(x))),
    ("∀ x y, R x y", Forall("x", Forall("y", Pred("R", (x, y))))),
    ("∀ (x : T), P x", Forall("x", P(x), "T")),
    ("∀ x : T, P x", Forall("x", P(x), "T")),
    ("∀ x y : T, R x y", Forall("x", Forall("y", Pred("R", (x, y)), "T"), "T")),
    ("∃ (x y : Person), R x y", Exists("x", Exists("y", Pred("R", (x, y)), "Person"), "Person")),
    ("∀ (x : T) (y : S), R x y", Forall("x", Forall("y", Pred("R", (x, y)), "S"), "T")),
    ("∀ x (y : S), R x y", Forall("x", Forall("y", Pred("R", (x, y)), "S"))),
    # shadowing: the inner binder wins; outside every binder `x` is a constant
    ("∀ x, P x ∧ ∃ x, Q x", Forall("x", And(P(x), Exists("x", Q(x))))),
    ("(∀ x, P x) ∧ Q x", And(Forall("x", P(x)), Q(Const("x")))),
    ("∀ x, ∀ x, P x", Forall("x", Forall("x", P(x)))),
    # ASCII forms
    ("forall x, P x -> Q x", Forall("x", Implies(P(x), Q(x)))),
    ("exists x, P x /\\ Q x", Exists("x", And(P(x), Q(x)))),
    ("A \\/ B <-> C", Iff(Or(A, B), C)),
    ("forallx", Pred("forallx")),
    ("existsy ∧ A", And(Pred("existsy"), A)),
])
def test_binders_scope_and_ascii(text, expected):
    assert parse(text) == expected


def test_resolution_roles():
    f = parse("∀ x, R x (f x c) → P (g x)")
    assert f == Forall("x", Implies(Pred("R", (x, Fn("f", (x, c)))), P(Fn("g", (x,)))))
    assert parse("A") == Pred("A")  # a bare identifier in formula position is a nullary predicate


@pytest.mark.parametrize("text", [
    "Kind wendy", "Grüße café", "P α β₁", "Ωmega x'", "is_good x_1", "P ℕ", "日本 x", "Happy Zoë",
])
def test_unicode_identifiers(text):
    head, *args = text.split()
    assert parse(text) == Pred(head, tuple(Const(arg) for arg in args))


@pytest.mark.parametrize("text, fragment", [
    ("", "empty"),
    ("   ", "empty"),
    ("A ↔ B ↔ C", "not associative"),
    ("a = b = c", "not associative"),
    ("(P a", "ends too early"),
    ("P a)", "unexpected"),
    ("A ∧", "ends too early"),
    ("∧ A", "unexpected"),
    ("sorry", "keyword"),
    ("P sorry", "keyword"),
    ("theorem t : A", "keyword"),
    ("fun x => P x", "keyword"),
    ("∀ (x : Prop), x", "keyword"),
    ("#eval 1", "'#'"),
    ("P a) (assert false", "unexpected"),
    ("P(a). formulas(goals).", "'.'"),
    ("P a ∧ (check-sat)", ""),
    ("λ x, P x", "λ"),
    ("~A", "'~'"),
    ("A && B", "'&'"),
    ("P 1", "'1'"),
    ("Xor A B", "Xor'"),
    ("∀ P, P a", "second-order"),
    ("∀ x, x", "second-order"),
    ("∀ f, P (f a)", "second-order"),
    ("P (A ∧ B)", "term"),
    ("P True", "not a term"),
    ("Not A B", "takes 1 argument"),
    ("Xor' A", "takes 2 arguments"),
    ("∀ True, A", "cannot be bound"),
    ("∀ (x : T) : S, P x", "two types"),
    ("A\x00", "character"),
    ("P a\n#print axioms", "'#'"),
    ("∀ {x : T}, P x", "'{'"),
])
def test_malformed_input_is_a_formula_error(text, fragment):
    with pytest.raises(FormulaError) as info:
        parse(text)
    assert fragment in str(info.value)


def test_deep_nesting_and_size_limits():
    f = parse("¬" * 300 + "P a")
    depth = 0
    while isinstance(f, Not):
        f, depth = f.body, depth + 1
    assert depth == 300 and f == P(a)
    assert parse("(" * 2000 + "A" + ")" * 2000) == A  # parentheses add no depth
    with pytest.raises(FormulaError, match="nested"):
        parse("¬" * 5000 + "A")
    with pytest.raises(FormulaError, match="nested"):
        parse("A ∧ " * 1000 + "A")
    with pytest.raises(FormulaError, match="limit is 10000"):
        parse("A ∧ " * 3000 + "A")
    assert parse("A ∧ B", max_chars=5) == And(A, B)
    with pytest.raises(FormulaError, match="limit is 4"):
        parse("A ∧ B", max_chars=4)
    with pytest.raises(FormulaError, match="limit is 3"):
        parse("¬¬¬¬A", max_depth=3)
    with pytest.raises(FormulaError):
        parse(None)  # type: ignore[arg-type]


def test_grammar_is_conflict_free(caplog):
    """Every precedence decision is in the grammar, not in Lark's shift-by-default resolution."""
    from importlib import resources

    from lark import Lark, logger

    grammar = resources.files("prosfi.logic").joinpath("formula.lark").read_text(encoding="utf-8")
    logger.setLevel(logging.DEBUG)
    try:
        with caplog.at_level(logging.DEBUG, logger="lark"):
            Lark(grammar, parser="lalr", debug=True)
    finally:
        logger.setLevel(logging.WARNING)
    assert not [r for r in caplog.records if "conflict" in r.getMessage().lower()]


_TOKENS = ["A", "B", "P", "x", "y", "a", "f", "∀", "∃", "forall", ",", "(", ")", ":", "T", "¬", "∧", "∨",
           "→", "↔", "->", "<->", "/\\", "\\/", "=", "≠", "Xor'", "Not", "True", "False", "sorry", "#", ".",
           "λ", "|", "0", "'", "∀ x,", "(x : T)"]


@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from(_TOKENS), max_size=25), st.text(max_size=20))
def test_random_text_only_ever_raises_formula_error(tokens, noise):
    for text in (" ".join(tokens), "".join(tokens), noise, " ".join(tokens) + noise):
        try:
            parse(text)
        except FormulaError as e:
            assert "internal error" not in str(e)
