"""The in-process truth tables (`prosfi.verify.ground`), above all the universal-instance `valid`
path: a ground conclusion proved from the ground instances of ∀-premises over the check's
constants, with premises of any other shape dropped. Every `valid` it gives must be one Z3 proves
(unsat); every `invalid` must be one Z3 cannot refute."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, find, given, settings
from hypothesis import strategies as st

from prosfi.logic import check_signature, parse
from prosfi.logic.ast import (
    And,
    Bottom,
    Const,
    Eq,
    Exists,
    Forall,
    Iff,
    Implies,
    Not,
    Or,
    Pred,
    Top,
    Var,
    Xor,
)
from prosfi.verify import ground
from prosfi.verify.backend import Check
from prosfi.verify.verdict import Status
from prosfi.verify.z3_backend import Z3Backend


def decide(premises: list[str], conclusion: str, max_atoms: int = 16):
    ps = [parse(p) for p in premises]
    c = parse(conclusion)
    return ground.decide(ps, c, check_signature([*ps, c]), max_atoms)


def status(premises: list[str], conclusion: str, max_atoms: int = 16):
    v = decide(premises, conclusion, max_atoms)
    return None if v is None else v.status


V, I = Status.VALID, Status.INVALID


# ------------------------------------------------------------------ unit cases
@pytest.mark.parametrize("premises, conclusion", [
    (["∀ x, Kind x → Nice x", "Kind candy"], "Nice candy"),  # modus ponens
    (["∀ x, A x → B x", "∀ x, B x → C x", "∀ x, C x → D x", "A bob"], "D bob"),  # a chain
    (["∀ x, A x → B x", "∀ x, B x → C x", "A bob", "A amy"], "C amy ∧ C bob"),
    (["∀ x, Kind x ∧ Calm x → Nice x", "Kind bob", "Calm bob"], "Nice bob"),
    (["∀ x, Kind x → ¬ Nice x", "Nice bob"], "¬ Kind bob"),  # modus tollens
    (["∀ x, Kind x ∨ Calm x", "¬ Kind bob"], "Calm bob"),
    (["∀ x y, Likes x y → Likes y x", "Likes amy bob"], "Likes bob amy"),  # binary, ∀ x y
    (["∀ x, ∀ y, Parent x y → Older x y", "Parent amy bob"], "Older amy bob"),  # nested ∀
    (["∀ x y z, R x y → R y z → R x z", "R a b", "R b c"], "R a c"),  # three variables
    (["∀ x, Kind x → q", "Kind bob"], "q"),  # a propositional conclusion
    (["∀ x, P x"], "q ∨ ¬ q"),
    (["∀ x, P x ∧ ¬ P x"], "q"),  # an unsatisfiable premise entails anything
    (["∀ x, P x → q", "∀ x, P x"], "q"),  # no constants: one anonymous element (non-empty domain)
])
def test_universal_instances_prove_valid(premises, conclusion):
    v = decide(premises, conclusion)
    assert v is not None and v.status is V, v
    assert v.backend == ground.NAME


@pytest.mark.parametrize("premises, conclusion", [
    # a premise with ∃ (or a quantifier under a connective, or equality) is dropped, not used
    (["∃ x, Mean x", "∀ x, Kind x → Nice x", "Kind bob"], "Nice bob"),
    (["∀ x, ∃ y, R x y", "∀ x, Kind x → Nice x", "Kind bob"], "Nice bob"),
    (["(∀ x, Mean x) ∨ q", "∀ x, Kind x → Nice x", "Kind bob"], "Nice bob"),
    (["bob = amy", "∀ x, Kind x → Nice x", "Kind bob"], "Nice bob"),
    (["∀ x, x = x → Kind x", "∀ x, Kind x → Nice x", "Kind bob"], "Nice bob"),
])
def test_premises_of_other_shapes_are_ignored(premises, conclusion):
    assert status(premises, conclusion) is V


@pytest.mark.parametrize("premises, conclusion", [
    # each needs the ∃ (or other dropped) premise: never claimed valid by this path; the exact
    # table over the constants finds no countermodel either, so the provers decide
    (["∃ x, Kind x", "∀ x, Kind x → q"], "q"),
    (["∃ x, Kind x ∧ Mean x", "∀ x, Mean x → q", "Kind bob"], "q"),
    (["∀ x, (∃ y, R x y) → Nice x", "R bob amy"], "Nice bob"),
    (["(∀ x, Kind x) ∨ q", "∀ x, Kind x → q"], "q"),
    (["¬ ∃ x, Kind x ∧ ¬ Nice x", "Kind bob"], "Nice bob"),
    (["bob = amy", "Kind amy"], "Kind bob"),
    (["∀ x, x = bob", "Kind amy"], "Kind bob"),
])
def test_needing_a_dropped_premise_is_left_to_the_provers(premises, conclusion):
    assert status(premises, conclusion) is None


@pytest.mark.parametrize("premises, conclusion", [
    (["∀ x, Kind x → Nice x", "Nice candy"], "Kind candy"),  # affirming the consequent
    (["∀ x, Kind x → Nice x", "Kind bob"], "Nice amy"),
    (["∀ x y, Likes x y", "Kind bob"], "Nice bob"),
])
def test_countermodels_are_still_invalid(premises, conclusion):
    v = decide(premises, conclusion)
    assert v is not None and v.status is I and v.detail.startswith("countermodel"), v


@pytest.mark.parametrize("premises, conclusion", [
    (["∀ x, Kind x → Nice x", "Kind bob"], "∀ x, Nice x"),  # a quantified conclusion
    (["∀ x, Kind x → Nice x", "Kind bob"], "∃ x, Nice x"),
    (["∀ x, Kind x → Nice x", "Kind bob", "bob = amy"], "amy = bob"),  # equality in the conclusion
])
def test_only_ground_equality_free_conclusions(premises, conclusion):
    assert status(premises, conclusion) is None


def test_a_row_falsifying_only_the_used_premises_is_not_a_countermodel():
    # Used premise alone (∀ x, Kind x → q over {bob}) admits ¬Kind bob, ¬q: no `invalid` may come
    # of that, the ∃ premise (a witness outside the constants) makes the check valid.
    v = decide(["∃ x, Kind x ∧ ¬ Named x", "∀ x, Kind x → q", "Named bob"], "q")
    assert v is None or v.status is V


def test_work_is_bounded():
    # too many atoms for the table: nothing at all
    assert status(["∀ x, Kind x → Nice x", "Kind bob"], "Nice bob", max_atoms=1) is None
    # too many ground instances: left to the provers, although the table could be built
    consts = " ∧ ".join(f"P c{i}" for i in range(7))

    def block(n):
        xs = [f"x{i}" for i in range(n)]
        return f"∀ {' '.join(xs)}, " + " → ".join(f"P {x}" for x in xs) + " → q"

    assert 7 ** 4 + 1 <= ground.MAX_INSTANCES < 7 ** 5
    assert status([block(5), consts], "q") is None
    assert status([block(4), consts], "q") is V


# ------------------------------------------------------------------ property: Z3 agrees
# Symbols with fixed arities (so any mix type-checks): at most 3 + 3 + 9 + 1 = 16 atoms over
# three constants, within the default `truth_table_max_atoms`.
CONSTS = ["a", "b", "c"]
VARS = ["x", "y"]


@st.composite
def _body(draw, bound: tuple[str, ...], depth: int, quantifiers: bool, equality: bool):
    def term():
        choices = [Const(c) for c in CONSTS] + [Var(v) for v in bound]
        return draw(st.sampled_from(choices))

    leaf_kinds = ["P", "Q", "R", "p"] + (["eq"] if equality else [])
    if depth <= 0 or draw(st.integers(0, 3)) == 0:
        kind = draw(st.sampled_from(leaf_kinds + ["top"]))
        if kind == "top":
            return draw(st.sampled_from([Top(), Bottom()]))
        if kind == "p":
            return Pred("p")
        if kind == "R":
            return Pred("R", (term(), term()))
        if kind == "eq":
            return Eq(term(), term())
        return Pred(kind, (term(),))
    op = draw(st.sampled_from(["not", "and", "or", "imp", "iff", "xor"] + (["all", "ex"] if quantifiers else [])))
    if op == "not":
        return Not(draw(_body(bound, depth - 1, quantifiers, equality)))
    if op in ("all", "ex"):
        var = draw(st.sampled_from(VARS))
        inner = draw(_body(tuple({*bound, var}), depth - 1, quantifiers, equality))
        return (Forall if op == "all" else Exists)(var, inner)
    left = draw(_body(bound, depth - 1, quantifiers, equality))
    right = draw(_body(bound, depth - 1, quantifiers, equality))
    return {"and": And, "or": Or, "imp": Implies, "iff": Iff, "xor": Xor}[op](left, right)


@st.composite
def _premise(draw):
    shape = draw(st.sampled_from(["universal", "universal", "universal", "ground", "other"]))
    equality = draw(st.integers(0, 5)) == 0
    if shape == "other":  # anything: ∃, quantifiers under connectives, equality
        return draw(_body((), 3, True, equality))
    block = [] if shape == "ground" else draw(st.lists(st.sampled_from(VARS), min_size=1, max_size=2))
    f = draw(_body(tuple(block), 3, False, equality))
    for var in reversed(block):
        f = Forall(var, f)
    return f


@st.composite
def _check(draw):
    premises = draw(st.lists(_premise(), min_size=1, max_size=4))
    quantified = draw(st.integers(0, 7)) == 0
    conclusion = draw(_body((), 2, quantified, draw(st.integers(0, 7)) == 0))
    return premises, conclusion


@pytest.fixture(scope="module")
def z3_backend():
    backend = Z3Backend()
    yield backend
    backend.close()


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture,
                                                                   HealthCheck.too_slow])
@given(_check())
def test_z3_agrees_with_every_truth_table_verdict(z3_backend, check):
    premises, conclusion = check
    signature = check_signature([*premises, conclusion])
    verdict = ground.decide(premises, conclusion, signature)
    if verdict is None:
        return
    z3 = z3_backend.check(Check(tuple((f"h{i}", p) for i, p in enumerate(premises)), conclusion), signature, 5000)
    if verdict.status is V:
        assert z3.status is V, (premises, conclusion, verdict, z3)  # never sat, never unknown
    else:
        assert verdict.status is I
        assert z3.status is not V, (premises, conclusion, verdict, z3)


def test_the_property_reaches_the_new_path():
    """The generator above does produce checks this path proves that no ground table could:
    a ∀-premise used and another premise (∃, nested, equality) dropped."""

    def interesting(check):
        premises, conclusion = check
        v = ground.decide(premises, conclusion, check_signature([*premises, conclusion]))
        return (v is not None and v.status is V and any(type(p) is Forall for p in premises)
                and any(ground._universal_block(p) is None for p in premises))

    premises, conclusion = find(_check(), interesting, settings=settings(max_examples=5000, database=None))
    assert interesting((premises, conclusion))
