"""The in-process truth tables (`prosfi.verify.truth_table`), above all the universal-instance `valid`
path: a ground conclusion proved from the ground instances of ∀-premises over the check's
constants, with premises of any other shape dropped. Every `valid` it gives must be one Z3 proves
(unsat); every `invalid` must be one Z3 cannot refute."""

from __future__ import annotations

from collections import Counter

import pytest
from hypothesis import HealthCheck, given, settings
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
from prosfi.verify import truth_table
from prosfi.verify.backend import Check
from prosfi.verdict import Status
from prosfi.verify.z3_backend import Z3Backend


def decide(premises: list[str], conclusion: str, max_atoms: int = 16):
    ps = [parse(p) for p in premises]
    c = parse(conclusion)
    return truth_table.decide(ps, c, check_signature([*ps, c]), max_atoms)


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
    assert v.backend == truth_table.NAME


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
    (["∃ x, Kind x"], "Kind bob"),  # not even valid: ∃ over the constants would say it is
    (["∀ x, ∃ y, R x y", "∀ x, ¬ R x bob"], "R bob amy"),  # nor this one
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

    assert 7 ** 4 + 1 <= truth_table.MAX_INSTANCES < 7 ** 5
    assert status([block(5), consts], "q") is None
    assert status([block(4), consts], "q") is V


# ------------------------------------------------------------------ property: Z3 agrees
# Symbols with fixed arities (so any mix type-checks): at most 3 + 3 + 9 + 1 = 16 atoms over
# three constants, within the default `truth_table_max_atoms`.
CONSTS = ["a", "b", "c"]
VARS = ["x", "y"]


@st.composite
def _body(draw, bound: tuple[str, ...], depth: int, quantifiers: bool, equality: bool, consts=tuple(CONSTS)):
    def term():
        choices = [Const(c) for c in consts] + [Var(v) for v in bound]
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
        return Not(draw(_body(bound, depth - 1, quantifiers, equality, consts)))
    if op in ("all", "ex"):
        var = draw(st.sampled_from(VARS))
        inner = draw(_body(tuple({*bound, var}), depth - 1, quantifiers, equality, consts))
        return (Forall if op == "all" else Exists)(var, inner)
    left = draw(_body(bound, depth - 1, quantifiers, equality, consts))
    right = draw(_body(bound, depth - 1, quantifiers, equality, consts))
    return {"and": And, "or": Or, "imp": Implies, "iff": Iff, "xor": Xor}[op](left, right)


@st.composite
def _premise(draw, consts):
    shape = draw(st.sampled_from(["universal", "universal", "ground", "other", "other"]))
    equality = draw(st.integers(0, 5)) == 0
    if shape == "other":  # outside the used shape: ∃, quantifiers under connectives, equality
        kind = draw(st.sampled_from(["exists", "forall-exists", "under", "equality", "any"]))
        if kind == "exists":
            var = draw(st.sampled_from(VARS))
            return Exists(var, draw(_body((var,), draw(st.integers(0, 2)), False, equality, consts)))
        if kind == "forall-exists":
            return Forall("x", Exists("y", draw(_body(("x", "y"), draw(st.integers(0, 2)), False, equality, consts))))
        if kind == "under":
            var = draw(st.sampled_from(VARS))
            quantified = draw(st.sampled_from([Forall, Exists]))(var, draw(_body((var,), 1, False, equality, consts)))
            other = draw(_body((), 1, False, equality, consts))
            op = draw(st.sampled_from([Or, Implies, Iff, Not]))
            return Not(quantified) if op is Not else op(quantified, other)
        if kind == "equality":
            eq = Eq(Const(draw(st.sampled_from(consts))), Const(draw(st.sampled_from(consts))))
            return draw(st.sampled_from([eq, Not(eq), Forall("x", Eq(Var("x"), Const(consts[0])))]))
        return draw(_body((), 3, True, equality, consts))
    block = [] if shape == "ground" else draw(st.lists(st.sampled_from(VARS), min_size=1, max_size=2))
    f = draw(_body(tuple(block), 3, False, equality, consts))
    for var in reversed(block):
        f = Forall(var, f)
    return f


@st.composite
def _check(draw):
    # few constants make ∃ over the constants (wrongly) look like a disjunction worth testing
    consts = tuple(CONSTS[:draw(st.sampled_from([1, 1, 2, 3]))])
    premises = draw(st.lists(_premise(consts), min_size=1, max_size=4))
    quantified = draw(st.integers(0, 7)) == 0
    # often a literal or a single connective: random deep conclusions are seldom entailed
    depth = draw(st.sampled_from([0, 0, 1, 2]))
    conclusion = draw(_body((), depth, quantified, draw(st.integers(0, 7)) == 0, consts))
    return premises, conclusion


@pytest.fixture(scope="module")
def z3_backend():
    backend = Z3Backend()
    yield backend
    backend.close()


def test_z3_agrees_with_every_truth_table_verdict(z3_backend):
    """Random small checks of the covered shape and outside it: whenever the table says `valid`,
    Z3 proves it (unsat; never sat, never unknown); whenever it says `invalid`, Z3 never proves
    it. The run must also reach the universal-instance path, with premises dropped, often."""
    seen: Counter = Counter()

    @settings(max_examples=500, deadline=None, database=None,
              suppress_health_check=[HealthCheck.too_slow])
    @given(_check())
    def run(check):
        premises, conclusion = check
        signature = check_signature([*premises, conclusion])
        verdict = truth_table.decide(premises, conclusion, signature)
        if verdict is None:
            seen["left to the provers"] += 1
            return
        named = tuple((f"h{i}", p) for i, p in enumerate(premises))
        z3 = z3_backend.check(Check(named, conclusion), signature, 5000)
        if verdict.status is V:
            assert z3.status is V, (premises, conclusion, verdict, z3)
            if any(type(p) in (Forall, Exists) for p in premises):
                seen["valid, quantified premises"] += 1
                if any(truth_table._universal_block(p) is None for p in premises):
                    seen["valid, a premise dropped"] += 1
        else:
            assert verdict.status is I
            assert z3.status is not V, (premises, conclusion, verdict, z3)
            seen["invalid"] += 1

    run()
    # about 100 and 20 expected out of 500: far from these floors
    assert seen["valid, quantified premises"] >= 10 and seen["valid, a premise dropped"] >= 1, seen
