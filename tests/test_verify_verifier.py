"""The Verifier: cascade order, skipped backends, errors, cache, input order, threads and asyncio."""

from __future__ import annotations

import asyncio
import threading
import warnings

import pytest

from prosfi.verify.config import VerifierConfig
from prosfi.verify.registry import resolve
from prosfi.verdict import Entailment, Status
from prosfi.verify.verifier import Verifier

FAULT = "prosfi.verify.testing:FaultBackend"
PARENT = "prosfi.verify.testing:ParentBackend"
MISSING = "prosfi.verify.testing:MissingBackend"

MP = Entailment({"h1": "∀ x, Kind x → Nice x", "h2": "Kind candy"}, "Nice candy")
AFFIRM = Entailment({"h1": "∀ x, Kind x → Nice x", "h2": "Nice candy"}, "Kind candy")
SAME = Entailment({"h1": "Nice candy"}, "Nice candy")
KK = {"h1": "Knight zoey ↔ ¬ Knight oliver", "h2": "Knight oliver ↔ (Knight zoey ∨ Knight oliver)"}
INFINITE = Entailment({"h1": "∀ x, ∃ y, R x y", "h2": "∀ x y z, R x y → R y z → R x z",
                       "h3": "∀ x, ¬ R x x"}, "P a")


@pytest.fixture(scope="module")
def pooled():
    """The module's one pool: default backends, two workers. Without the Herbrand stage, which
    would prove the quantified checks meant for the pool in this process."""
    with Verifier(workers=2, timeout_ms=1000, herbrand=False) as v:
        yield v


# ---------------------------------------------------------------- cascade
def test_cascade_order_decides_who_answers():
    first_fault = Verifier(backends=(FAULT, "z3"), workers=0, truth_table=False)
    first_z3 = Verifier(backends=("z3", FAULT), workers=0, truth_table=False)
    with first_fault, first_z3:
        same, mp = first_fault.check_many([SAME, MP])
        assert (same.status, same.backend) == (Status.VALID, "fault")
        assert (mp.status, mp.backend) == (Status.VALID, "z3")  # fault could not: z3 was asked next
        assert first_z3.check(SAME).backend == "z3"


def test_invalid_stops_the_cascade_and_unknown_collects_every_reason():
    with Verifier(backends=("z3", PARENT), workers=0, truth_table=False, timeout_ms=300) as v:
        invalid, hard = v.check_many([AFFIRM, INFINITE])
        parent = v._parent_backend(1)
        assert invalid.status is Status.INVALID and invalid.backend == "z3"
        assert parent.calls == 1  # only the undecided INFINITE reached the parent backend
        assert hard.status is Status.UNKNOWN
        assert hard.detail.index("z3:") < hard.detail.index("parent-fault:")


def test_parent_backend_before_worker_backends():
    with Verifier(backends=(PARENT, "z3"), workers=0, truth_table=False) as v:
        same, mp = v.check_many([SAME, MP])
        assert same.backend == "parent-fault" and mp.backend == "z3"


def test_missing_optional_backend_is_reported_once_and_skipped():
    with pytest.warns(RuntimeWarning, match="not installed here") as record:
        v = Verifier(backends=(MISSING + "?", "z3"), workers=0)
    assert len([w for w in record if "not installed here" in str(w.message)]) == 1
    with v, warnings.catch_warnings():
        warnings.simplefilter("error")  # checking must not warn again
        verdicts = v.check_many([MP, AFFIRM, MP])
        assert [x.status for x in verdicts] == [Status.VALID, Status.INVALID, Status.VALID]
        assert v.stats()["skipped_backends"] == {MISSING: "not installed here (test double)"}


def test_only_missing_optional_backends_give_unknown_never_invalid():
    with pytest.warns(RuntimeWarning):
        v = Verifier(backends=(MISSING + "?",), workers=0, truth_table=False)
    with v:
        verdict = v.check(AFFIRM)
        assert verdict.status is Status.UNKNOWN and "not installed" in verdict.detail


def test_missing_backend_asked_for_by_name_is_a_clear_error():
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # an error, not a warning and a verifier that answers unknown
        with pytest.raises(ValueError, match=r"backend '.*MissingBackend' was asked for but cannot run "
                           r"here: not installed here \(test double\).*MissingBackend\?'"):
            Verifier(backends=("z3", MISSING), workers=0)


def test_auto_means_every_builtin_that_can_run_here():
    from prosfi.verify.registry import AUTO

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # lean is reported when it is missing
        specs, skipped = resolve(("auto",))
        with Verifier(backends="auto", workers=0) as v:
            assert v.check(MP).status is Status.VALID
    names = [s.name for s in specs]
    assert names[:2] == ["z3", "prover9"]  # core dependencies: always present
    assert sorted(names + list(skipped)) == sorted(AUTO)  # each either used or skipped with a reason
    assert all(reason for reason in skipped.values())
    for bad in (("auto", "z3"), ("z3", "z3?")):
        with pytest.raises(ValueError, match="VerifierConfig.backends"):
            VerifierConfig(backends=bad)


def test_parent_backend_gets_every_undecided_check_of_a_batch_in_one_call():
    problems = [Entailment({"h1": f"P{k} c{k}"}, f"P{k} c{k}") for k in range(3)]
    with Verifier(backends=("z3", PARENT), workers=0, truth_table=False, timeout_ms=300) as v:
        verdicts = v.check_many([*problems, INFINITE, MP])
        parent = v._parent_backend(1)
    assert [x.backend for x in verdicts] == ["z3"] * 3 + [None, "z3"]
    assert parent.batches == [1]  # only INFINITE was left undecided
    with Verifier(backends=(PARENT, "z3"), workers=0, truth_table=False) as v:
        verdicts = v.check_many([*problems, MP])
        parent = v._parent_backend(0)
    assert [x.backend for x in verdicts] == ["parent-fault"] * 3 + ["z3"]
    assert parent.batches == [4]  # four problems, one call


def test_unknown_backend_name_is_a_clear_error():
    with pytest.raises(ValueError, match="unknown verifier backend 'z4'"):
        Verifier(backends=("z4",), workers=0)
    with pytest.raises(ValueError, match="cannot load"):
        resolve(("prosfi.verify.testing:NoSuchBackend",))
    with pytest.raises(ValueError, match="timeout_ms"):
        VerifierConfig(timeout_ms=0)


# ---------------------------------------------------------------- errors
def test_unparsable_clashing_and_oversized_input_are_errors():
    with Verifier(workers=0, max_formula_chars=200) as v:
        verdicts = v.check_many([
            Entailment({"h1": "∀ x, Kind x →"}, "Nice candy"),
            Entailment({"h1": "Likes ann bob", "h2": "Likes ann"}, "Likes bob ann"),
            Entailment({"h1": "Kind candy"}, "Kind"),
            Entailment({"h1": "A ∧ " * 100 + "A"}, "A"),
            Entailment({"h1": 3}, "A"),  # type: ignore[dict-item]
            Entailment({"h1": "A"}, "#eval IO.println 1"),
        ])
    assert all(x.status is Status.ERROR for x in verdicts)
    assert verdicts[0].detail.startswith("premise h1:")
    assert "`Likes`" in verdicts[1].detail and "`Kind`" in verdicts[2].detail
    assert "200" in verdicts[3].detail
    assert verdicts[5].detail.startswith("conclusion:")


# ---------------------------------------------------------------- cache
def test_alpha_and_premise_renamed_duplicates_hit_the_cache():
    with Verifier(workers=0) as v:
        first = v.check(MP)
        renamed = v.check_many([
            Entailment({"a": "Kind candy", "b": "∀ y, Kind y → Nice y"}, "Nice candy"),
            Entailment({"s1": "∀ (z : Thing), Kind z → Nice z", "s2": "Kind candy"}, "Nice candy"),
        ])
        other = v.check(Entailment({"h1": "∀ x, Kind x → Nice x", "h2": "Kind candy"}, "Nice rex"))
        stats = v.stats()
    assert not first.cached and all(x.cached and x.status is Status.VALID for x in renamed)
    assert not other.cached and other.status is Status.INVALID
    assert stats["cache_hits"] == 2 and stats["checks"] == 4


def test_unknown_is_not_cached_but_decided_verdicts_are():
    with Verifier(backends=("z3",), workers=0, timeout_ms=200) as v:
        v.check_many([INFINITE, AFFIRM])
        again = v.check_many([INFINITE, AFFIRM])
    assert not again[0].cached and again[0].status is Status.UNKNOWN
    assert again[1].cached and again[1].status is Status.INVALID


def test_duplicates_within_one_batch_are_checked_once():
    with Verifier(workers=0, cache_size=0, truth_table=False) as v:  # the table would answer each copy
        verdicts = v.check_many([MP, MP, AFFIRM, MP])
        assert [x.status for x in verdicts] == [Status.VALID, Status.VALID, Status.INVALID, Status.VALID]
        assert [x.cached for x in verdicts] == [False, True, False, True]


# ---------------------------------------------------------------- pooled: order, threads, asyncio
def _mixed(n: int) -> tuple[list[Entailment], list[Status]]:
    # (MP's conclusion made quantified, so the in-process truth table leaves it to the pool)
    mp_exists = Entailment(MP.premises, "∃ x, Nice x ∧ Kind candy")
    cases = [(mp_exists, Status.VALID), (AFFIRM, Status.INVALID),
             (Entailment(KK, "Knight oliver"), Status.VALID), (Entailment(KK, "Knight zoey"), Status.INVALID),
             (Entailment({"h1": "P a ∧"}, "A"), Status.ERROR)]
    out, want = [], []
    for k in range(n):
        e, s = cases[(k * 7) % len(cases)]
        # distinct constants make distinct checks, so the pool (not the cache) answers most
        text = {name: f.replace("candy", f"candy{k}") for name, f in e.premises.items()}
        out.append(Entailment(text, e.conclusion.replace("candy", f"candy{k}"), str(k)))
        want.append(s)
    return out, want


def test_results_in_input_order_through_the_pool(pooled):
    entailments, want = _mixed(120)
    got = pooled.check_many(entailments)
    assert [x.status for x in got] == want
    assert pooled.stats()["pool"]["workers_started"] >= 1


def test_check_many_from_a_thread(pooled):
    entailments, want = _mixed(30)
    box = {}
    t = threading.Thread(target=lambda: box.setdefault("r", pooled.check_many(entailments)), daemon=True)
    t.start()
    t.join(60)
    assert [x.status for x in box["r"]] == want


def test_acheck_many_from_an_event_loop(pooled):
    entailments, want = _mixed(40)

    async def main():
        ticks = 0

        async def ticker():
            nonlocal ticks
            while True:
                ticks += 1
                await asyncio.sleep(0)

        task = asyncio.create_task(ticker())
        verdicts = await pooled.acheck_many(entailments)
        task.cancel()
        return verdicts, ticks

    verdicts, ticks = asyncio.run(main())
    assert [x.status for x in verdicts] == want
    assert ticks > 1  # the loop kept running while the checks ran


def test_stats_count_statuses(pooled):
    before = pooled.stats()
    pooled.check_many([MP, AFFIRM, Entailment({"h1": "("}, "A")])
    after = pooled.stats()
    for status, extra in (("valid", 1), ("invalid", 1), ("error", 1)):
        assert after["status"][status] == before["status"][status] + extra
    assert after["checks"] == before["checks"] + 3
    assert 0.0 <= after["hit_rate"] <= 1.0
