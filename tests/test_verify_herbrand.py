"""The in-process settlement after the truth tables: Herbrand proofs (`prosfi.verify.herbrand`) and
countermodels over wider domains (`truth_table.countermodel`). Every `valid` must be one Z3 proves
(unsat), every `invalid` one Z3 cannot prove; through the `Verifier` the fast path and the plain
path (no truth tables: the backends decide everything) give the same verdict on every check,
invalid and unknown ones included, and a check nothing in-process settles still times out to
`unknown`."""

from __future__ import annotations

import random
from collections import Counter

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from prosfi.logic import check_signature, parse
from prosfi.logic.ast import And, Const, Eq, Exists, Forall, Iff, Implies, Not, Or, Pred, Var, Xor
from prosfi.verify import herbrand, truth_table
from prosfi.verify.backend import Check
from prosfi.verdict import Entailment, Status
from prosfi.verify.verifier import Verifier
from prosfi.verify.z3_backend import Z3Backend

V, I, U = Status.VALID, Status.INVALID, Status.UNKNOWN


def _parsed(premises: list[str], conclusion: str):
    ps = [parse(p) for p in premises]
    c = parse(conclusion)
    return ps, c, check_signature([*ps, c])


@pytest.fixture(scope="module")
def z3_backend():
    backend = Z3Backend()
    yield backend
    backend.close()


def _z3(z3_backend, premises, conclusion, signature):
    named = tuple((f"h{i}", p) for i, p in enumerate(premises))
    return z3_backend.check(Check(named, conclusion), signature, 5000).status


# ------------------------------------------------------------------ unit cases
# Each is out of the plain truth tables' reach (they answer None) and was Z3's work before.
PROVED = [
    (["∀ x, ∃ y, R x y", "∀ x y, R x y → P y"], "∃ z, P z"),  # seriality: a Skolem function term
    (["∃ x, ∀ y, R x y"], "∀ y, ∃ x, R x y"),  # ∃∀ ⊢ ∀∃: two Skolem constants
    (["a = b", "P a", "∀ x, P x → Q x"], "Q b"),  # congruence
    (["∀ x y, R x y → S y x", "∃ x, R a x", "∀ x y, S x y → P y"], "P a"),  # an ∃ witness
    (["a = b", "b = c", "P a"], "P c"),  # transitivity
    (["∀ x, P x ↔ ¬ Q x", "∃ x, P x"], "∃ x, ¬ Q x"),  # ↔ in both polarities
    (["¬ ∃ x, P x"], "∀ x, ¬ P x"),  # a negated ∃
]
REFUTED = [
    (["∀ x, ∃ y, R x y", "∀ x y, R x y → P y"], "P a"),  # needs a second element
    (["∀ y, ∃ x, R x y"], "∃ x, ∀ y, R x y"),  # two anonymous elements
    (["a = b", "P a", "∀ x, P x → Q x"], "Q c"),  # a and b identified, c apart
    (["∀ x y, R x y → S y x", "∃ x, R a x", "∀ x y, S x y → P y"], "∃ x, S a x"),
    (["P a ∨ P b"], "a = b"),  # constants on one element are a choice, not a rule
]


@pytest.mark.parametrize("premises, conclusion", PROVED)
def test_herbrand_proves_what_z3_proves(premises, conclusion, z3_backend):
    ps, c, sig = _parsed(premises, conclusion)
    assert truth_table.decide(ps, c, sig) is None  # the tables leave it
    v = herbrand.prove(ps, c, sig)
    assert v is not None and v.status is V and v.backend == herbrand.NAME, v
    assert truth_table.countermodel(ps, c, sig) is None
    assert _z3(z3_backend, ps, c, sig) is V


@pytest.mark.parametrize("premises, conclusion", REFUTED)
def test_wider_domains_refute_what_z3_refutes(premises, conclusion, z3_backend):
    ps, c, sig = _parsed(premises, conclusion)
    assert herbrand.prove(ps, c, sig) is None  # never `valid` on an invalid step
    v = truth_table.countermodel(ps, c, sig)
    assert v is not None and v.status is I and v.detail.startswith("countermodel: domain {"), v
    assert _z3(z3_backend, ps, c, sig) is I


def test_herbrand_never_answers_invalid_and_declines_function_symbols():
    # satisfiable ground instances prove nothing: no answer, not `invalid`
    assert herbrand.prove(*_parsed(["∀ x, ∃ y, R x y"], "∃ x, R x x")) is None
    # the check's own function symbols: an infinite Herbrand universe from the start
    assert herbrand.prove(*_parsed(["∀ x, P x"], "P (f a)")) is None
    assert truth_table.countermodel(*_parsed(["∀ x, P x → P (f x)", "P a"], "P b")) is None


def test_budgets_make_both_decline():
    ps, c, sig = _parsed(["∀ x y z, R x y ∧ R y z → R x z", "∃ x, ∀ y, R x y"], "∀ y, ∃ x, R x y")
    assert herbrand.prove(ps, c, sig) is not None
    assert herbrand.prove(ps, c, sig, max_nodes=1) is None
    assert herbrand.prove(ps, c, sig, max_atoms=2) is None
    ps, c, sig = _parsed(["∀ y, ∃ x, R x y"], "∃ x, ∀ y, R x y")
    assert truth_table.countermodel(ps, c, sig) is not None
    assert truth_table.countermodel(ps, c, sig, max_atoms=1) is None


def test_nested_biconditionals_stay_within_the_budget():
    """↔ copies both sides into negation normal form (4^depth nodes): 30 nested ones must hit the
    node budget and decline, not build 10^18 nodes."""
    f = "P a"
    for k in range(30):
        f = f"(Q{k} a ↔ {f})"
    ps, c, sig = _parsed([f"∀ x, ∃ y, R x y ∧ {f}"], "∃ z, P z")
    assert herbrand.prove(ps, c, sig) is None


# ------------------------------------------------------------------ property: Z3 agrees
CONSTS = ("a", "b", "c")
VARS = ("x", "y", "z")


@st.composite
def _formula(draw, bound: tuple[str, ...], depth: int, consts: tuple[str, ...]):
    def term():
        return draw(st.sampled_from([Const(c) for c in consts] + [Var(v) for v in bound]))

    if depth <= 0 or draw(st.integers(0, 3)) == 0:
        if not consts and not bound:  # no term to apply a predicate to
            return Pred("p")
        kind = draw(st.sampled_from(["P", "Q", "R", "R", "eq", "p"]))
        if kind == "p":
            return Pred("p")
        if kind == "R":
            return Pred("R", (term(), term()))
        if kind == "eq":
            return Eq(term(), term())
        return Pred(kind, (term(),))
    op = draw(st.sampled_from(["not", "and", "or", "imp", "iff", "xor", "all", "ex", "all", "ex"]))
    if op == "not":
        return Not(draw(_formula(bound, depth - 1, consts)))
    if op in ("all", "ex"):
        var = draw(st.sampled_from(VARS))
        inner = draw(_formula(tuple({*bound, var}), depth - 1, consts))
        return (Forall if op == "all" else Exists)(var, inner)
    left, right = draw(_formula(bound, depth - 1, consts)), draw(_formula(bound, depth - 1, consts))
    return {"and": And, "or": Or, "imp": Implies, "iff": Iff, "xor": Xor}[op](left, right)


@st.composite
def _check(draw):
    consts = CONSTS[:draw(st.sampled_from([0, 1, 1, 2, 3]))]
    premises = []
    for _ in range(draw(st.integers(1, 3))):
        prefix = draw(st.sampled_from(["", "∀", "∃", "∀∃", "∃∀", "∀∀"]))
        bound = tuple(VARS[:len(prefix)])
        f = draw(_formula(bound, draw(st.integers(0, 2)), consts))
        for q, var in reversed(list(zip(prefix, bound))):
            f = (Forall if q == "∀" else Exists)(var, f)
        premises.append(f)
    conclusion = draw(_formula((), draw(st.sampled_from([0, 1, 2])), consts))
    return premises, conclusion


def test_z3_agrees_with_every_herbrand_and_countermodel_verdict(z3_backend):
    """Random checks with ∃ and ∀∃ premises, quantified conclusions and equality: whenever the
    Herbrand path says `valid`, Z3 proves it; whenever a wider domain gives a countermodel, Z3 does
    not prove it. Both paths must be reached often, or the test proves nothing."""
    seen: Counter = Counter()

    @settings(max_examples=200, deadline=None, database=None,
              suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])
    @given(_check())
    def run(check):
        premises, conclusion = check
        signature = check_signature([*premises, conclusion])
        proved = herbrand.prove(premises, conclusion, signature)
        refuted = truth_table.countermodel(premises, conclusion, signature)
        assert proved is None or proved.status is V
        assert refuted is None or refuted.status is I
        assert proved is None or refuted is None, (premises, conclusion, proved, refuted)
        if proved is None and refuted is None:
            seen["left"] += 1
            return
        z3 = _z3(z3_backend, premises, conclusion, signature)
        if proved is not None:
            seen["proved"] += 1
            assert z3 is V, (premises, conclusion, proved, z3)
        else:
            seen["refuted"] += 1
            assert z3 is not V, (premises, conclusion, refuted, z3)

    run()
    assert seen["proved"] >= 5 and seen["refuted"] >= 5, seen


# ------------------------------------------------------------------ differential: the Verifier
def _mix(n: int, seed: int = 0) -> list[Entailment]:
    """Checks shaped like the hard mix's relational half (bench/bench_hard_mix.py), valid and
    invalid, each with its own vocabulary, plus ones only infinite models refute."""
    rng = random.Random(seed)
    out = []
    shapes = [
        ({"h1": "∀ x, ∃ y, R{k} x y", "h2": "∀ x y, R{k} x y → P{k} y"}, ["∃ z, P{k} z", "P{k} a"]),
        ({"h1": "∀ x y, R{k} x y → R{k} y x", "h2": "R{k} a b"}, ["R{k} b a", "R{k} a c"]),
        ({"h1": "∃ x, ∀ y, R{k} x y"}, ["∀ y, ∃ x, R{k} x y", "∀ y, R{k} y y"]),
        ({"h1": "∀ y, ∃ x, R{k} x y"}, ["∃ x, ∀ y, R{k} x y", "∃ x, R{k} x x ∨ ¬ R{k} x x"]),
        ({"h1": "a = b", "h2": "P{k} a", "h3": "∀ x, P{k} x → Q{k} x"}, ["Q{k} b", "Q{k} c"]),
        ({"h1": "∀ x y, R{k} x y → S{k} y x", "h2": "∃ x, R{k} a x", "h3": "∀ x y, S{k} x y → P{k} y"},
         ["P{k} a", "∃ x, S{k} a x"]),
    ]
    for k in range(n):
        premises, conclusions = shapes[k % len(shapes)]
        out.append(Entailment({h: t.format(k=k) for h, t in premises.items()},
                              rng.choice(conclusions).format(k=k), f"c{k}"))
    return out


# infinite models only (serial, irreflexive, transitive): no finite countermodel, no proof
_INFINITE = {"h1": "∀ x, ∃ y, Lt x y", "h2": "∀ x, ¬ Lt x x", "h3": "∀ x y z, Lt x y ∧ Lt y z → Lt x z"}


def test_fast_and_plain_paths_give_the_same_verdicts():
    """The same checks through the default verifier (truth tables, Herbrand, wider countermodels) and
    through the plain one (every check to Z3, then Prover9): identical statuses, invalid and unknown
    included; the fast path settles the mix in this process."""
    checks = _mix(36) + [Entailment(_INFINITE, "P a", "inf")]
    with Verifier(workers=0, timeout_ms=150) as fast, \
            Verifier(workers=0, timeout_ms=150, truth_table=False) as plain, \
            Verifier(workers=0, timeout_ms=150, herbrand=False) as tables:
        a, b, c = fast.check_many(checks), plain.check_many(checks), tables.check_many(checks)
        by = fast.stats()["decided_by"]
    assert [v.status for v in a] == [v.status for v in b] == [v.status for v in c]
    statuses = Counter(v.status for v in a)
    assert statuses[V] >= 10 and statuses[I] >= 10 and statuses[U] == 1, statuses
    assert a[-1].status is U and "timeout" in a[-1].detail  # the bounded backends still answer it
    assert by.get("z3", 0) == 0 and by["herbrand"] >= 5, by  # nothing of the mix left to Z3
    assert sum(v.backend == "z3" for v in c) >= 10  # without Herbrand, Z3 decides those


def test_a_timeout_is_still_unknown_through_the_pool():
    """Past the in-process stage, the worker's process-level timeout bounds the check as before."""
    with Verifier(workers=1, timeout_ms=200) as v:
        verdict = v.check(Entailment(_INFINITE, "Q b", "inf"))
    assert verdict.status is U and "timeout" in verdict.detail, verdict
