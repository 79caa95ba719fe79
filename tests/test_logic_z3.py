"""Z3 rendering end to end: parses where a wrong precedence or scope would flip the verdict."""

from __future__ import annotations

import itertools

import pytest
import z3
from hypothesis import given, settings
from hypothesis import strategies as st

from prosfi.logic import And, Iff, Implies, Not, Or, Pred, SignatureError, Xor, check_signature, parse
from prosfi.logic.render_z3 import Z3Renderer, escape, to_smtlib
from prosfi.logic.signature import Signature, Symbol


def z3_verdict(premises: list[str], conclusion: str) -> str:
    """valid / invalid by the object path, after checking the SMT-LIB path agrees."""
    fs = [parse(p) for p in premises]
    goal = parse(conclusion)
    sig = check_signature([*fs, goal])
    ctx = z3.Context()
    render = Z3Renderer(sig, ctx=ctx)
    solver = z3.Solver(ctx=ctx)
    solver.set("timeout", 5000)
    solver.add(*[render.formula(f) for f in fs])
    solver.add(z3.Not(render.formula(goal)))
    by_objects = solver.check()
    text_solver = z3.Solver(ctx=z3.Context())
    text_solver.set("timeout", 5000)
    text_solver.from_string(to_smtlib(fs, goal, sig))
    by_text = text_solver.check()
    assert str(by_objects) == str(by_text), (premises, conclusion)
    return {"unsat": "valid", "sat": "invalid"}.get(str(by_objects), "unknown")


@pytest.mark.parametrize("premises, conclusion, verdict", [
    # ¬ binds tighter than ∧: `¬ P a ∧ Q a` gives Q a; as ¬(P a ∧ Q a) it would not
    (["¬ P a ∧ Q a"], "Q a", "valid"),
    (["¬ (P a ∧ Q a)"], "Q a", "invalid"),
    # → is right-associative: with ¬A, A → (B → C) says nothing; (A → B) → C gives C
    (["A → B → C", "¬ A"], "C", "invalid"),
    (["(A → B) → C", "¬ A"], "C", "valid"),
    # ∧ binds tighter than ∨
    (["A ∨ B ∧ C"], "C", "invalid"),
    (["(A ∨ B) ∧ C"], "C", "valid"),
    # ∧ binds tighter than ↔
    (["A ↔ B ∧ C"], "C", "invalid"),
    (["(A ↔ B) ∧ C"], "C", "valid"),
    # binder bodies extend right
    (["∀ x, P x → Q x", "P c"], "Q c", "valid"),
    (["A ∧ ∀ x, P x ∨ Q x", "¬ P c"], "Q c", "valid"),
    # shadowing: the inner x is a new variable
    (["∀ x, R x → ∃ x, S x", "R c"], "S c", "invalid"),
    (["∀ x, R x → ∃ x, S x", "R c"], "∃ y, S y", "valid"),
    (["∀ x, ∀ y, L x y"], "L a b", "valid"),
    (["∀ x, ∃ y, L x y"], "∃ y, ∀ x, L x y", "invalid"),
    (["∃ y, ∀ x, L x y"], "∀ x, ∃ y, L x y", "valid"),
    # equality, ≠
    (["a = b", "P a"], "P b", "valid"),
    (["a ≠ b"], "¬ a = b", "valid"),
    (["¬ a = b"], "b ≠ a", "valid"),
    (["f a = b", "∀ x, P (f x)"], "P b", "valid"),
    (["P a"], "a = b", "invalid"),
    # Xor', Not, True, False
    (["Xor' A B", "A"], "¬ B", "valid"),
    (["Xor' A B"], "A ∨ B", "valid"),
    (["Xor' A B"], "A ∧ B", "invalid"),
    (["Not A", "A ∨ B"], "B", "valid"),
    ([], "True", "valid"),
    (["False"], "A", "valid"),
    ([], "False", "invalid"),
    # ASCII forms agree with Unicode
    (["forall x, P x -> Q x", "P c /\\ R c"], "Q c \\/ S c", "valid"),
    # Knights & Knaves: Zoey says Oliver is a knave; Oliver says Zoey is a knight or he is.
    (["Knight zoey ↔ ¬ Knight oliver", "Knight oliver ↔ (Knight zoey ∨ Knight oliver)"],
     "Knight oliver ∧ ¬ Knight zoey", "valid"),
    (["Knight zoey ↔ ¬ Knight oliver"], "Knight oliver", "invalid"),
    # 300 nested negations: an even count is the identity
    (["P a"], "¬" * 300 + "P a", "valid"),
    (["P a"], "¬" * 301 + "P a", "invalid"),
    # the domain is non-empty
    (["∀ x, P x"], "∃ x, P x", "valid"),
])
def test_verdicts(premises, conclusion, verdict):
    assert z3_verdict(premises, conclusion) == verdict


def test_symbols_that_look_like_smt_or_z3_builtins_are_plain_symbols():
    # `distinct`, `ite`, `Int`, `U` (our sort's name) and `assert` are ordinary names to us
    premises = ["distinct U ite", "∀ x, distinct x ite → Int x", "assert"]
    assert z3_verdict(premises, "Int U") == "valid"
    assert z3_verdict(premises, "Int ite") == "invalid"
    assert z3_verdict(["P café", "café = α₁"], "P α₁") == "valid"


def test_escape_is_injective_and_ascii():
    names = ["a", "a_", "é", "e", "$e9$", "x'", "x_27", "α", "αβ", "P"]
    escaped = [escape(n) for n in names if "$" not in n]
    assert len(set(escaped)) == len(escaped)
    assert all(e.isascii() for e in escaped)


def test_smtlib_quotes_every_identifier():
    fs = [parse("∀ x, Kind x → f x = bob")]
    sig = check_signature(fs)
    text = to_smtlib(fs, parse("Kind bob"), sig)
    assert "(declare-sort U 0)" in text and text.rstrip().endswith("(check-sat)")
    for name in ("|P_Kind|", "|F_f|", "|C_bob|", "|V_x|"):
        assert name in text


def test_renderer_refuses_symbols_outside_its_signature():
    sig = Signature([Symbol("P", "pred", 1), Symbol("a", "const", 0)])
    render = Z3Renderer(sig, ctx=z3.Context())
    render.formula(parse("P a"))
    with pytest.raises(SignatureError, match="`Q`"):
        render.formula(parse("Q a"))
    with pytest.raises(SignatureError, match="`P`"):
        render.formula(parse("P a a"))


ATOMS = [Pred("A"), Pred("B"), Pred("C")]
props = st.recursive(
    st.sampled_from(ATOMS),
    lambda sub: st.one_of(
        sub.map(Not),
        *[st.tuples(sub, sub).map(lambda lr, k=k: k(*lr)) for k in (And, Or, Implies, Iff, Xor)],
    ),
    max_leaves=8,
)


def _truth(f, row):
    kind = type(f)
    if kind is Pred:
        return row[f.name]
    if kind is Not:
        return not _truth(f.body, row)
    l, r = _truth(f.left, row), _truth(f.right, row)
    return {And: l and r, Or: l or r, Implies: (not l) or r, Iff: l == r, Xor: l != r}[kind]


@settings(max_examples=80, deadline=None)
@given(props, props)
def test_z3_agrees_with_truth_tables(premise, conclusion):
    rows = [dict(zip("ABC", bits)) for bits in itertools.product([False, True], repeat=3)]
    entailed = all(_truth(conclusion, r) for r in rows if _truth(premise, r))
    sig = Signature([Symbol(n, "pred", 0) for n in "ABC"])
    ctx = z3.Context()
    render = Z3Renderer(sig, ctx=ctx)
    solver = z3.Solver(ctx=ctx)
    solver.add(render.formula(premise), z3.Not(render.formula(conclusion)))
    assert (solver.check() == z3.unsat) == entailed


def test_objects_match_the_high_level_z3_api():
    """The renderer's C-API calls build exactly what z3.ForAll, z3.And, … would."""
    f = parse("∀ x, ∃ y, (Kind x ∧ R x (f y) → x ≠ y ∨ ¬ A) ↔ Xor' (Kind y) True")
    ctx = z3.Context()
    render = Z3Renderer(check_signature([f]), ctx=ctx)
    U = render.domain
    x, y = z3.Const("V_x", U), z3.Const("V_y", U)
    kind = z3.Function("P_Kind", U, z3.BoolSort(ctx))
    r = z3.Function("P_R", U, U, z3.BoolSort(ctx))
    fn = z3.Function("F_f", U, U)
    a = z3.Bool("P_A", ctx)
    expected = z3.ForAll([x], z3.Exists([y], z3.Implies(z3.And(kind(x), r(x, fn(y))), z3.Or(z3.Not(x == y), z3.Not(a)))
                                         == z3.Xor(kind(y), z3.BoolVal(True, ctx))))
    assert render.formula(f).eq(expected)
