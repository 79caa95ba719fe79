"""The worker pool: hard timeouts by killing, crashed and killed workers, order, teardown.

Uses the fault-injection backend (prosfi.verify.testing) so each failure is deterministic; one
pool serves the whole module.
"""

from __future__ import annotations

import os
import signal
import threading
import time

import pytest

from prosfi.logic import Pred
from prosfi.verify.backend import Check
from prosfi.verify.config import VerifierConfig
from prosfi.verify.pool import PoolError, WorkerPool
from prosfi.verdict import Status

FAULT = "prosfi.verify.testing:FaultBackend"
HARD_MS = 1000
A, B = Pred("A"), Pred("B")


def item(conclusion: str | Pred, premise: Pred = A):
    concl = conclusion if isinstance(conclusion, Pred) else Pred(conclusion)
    return (None, Check((("h1", premise),), concl))


OK, NO = item(A), item(B)  # A ⊢ A is valid; A ⊢ B is unknown for the fault backend
HANG, CRASH, RAISE = item("Hang"), item("Crash"), item("Raise")


@pytest.fixture(scope="module")
def pool():
    p = WorkerPool([FAULT], VerifierConfig(backends=(FAULT,), workers=2), n_workers=2, hard_limit_ms=HARD_MS)
    yield p
    p.close()


def statuses(verdicts):
    return [v.status for v in verdicts]


def test_answers_every_check_in_order(pool):
    tasks = [[OK, NO, OK], [NO], [OK] * 50 + [NO] * 50]
    results = pool.run(tasks, 100)
    assert [len(r) for r in results] == [3, 1, 100]
    assert statuses(results[0]) == [Status.VALID, Status.UNKNOWN, Status.VALID]
    assert statuses(results[2]) == [Status.VALID] * 50 + [Status.UNKNOWN] * 50


def test_hard_timeout_kills_the_worker_and_the_next_check_works(pool):
    killed_before = pool.counters["killed_timeout"]
    start = time.monotonic()
    (verdicts,) = pool.run([[OK, HANG, OK, NO]], 100)
    elapsed = time.monotonic() - start
    assert statuses(verdicts) == [Status.VALID, Status.UNKNOWN, Status.VALID, Status.UNKNOWN]
    assert "timeout" in verdicts[1].detail and "killed" in verdicts[1].detail
    assert pool.counters["killed_timeout"] == killed_before + 1
    assert elapsed < 30  # the hung check sleeps for an hour: only the kill can end it this soon
    (after,) = pool.run([[OK, NO]], 100)
    assert statuses(after) == [Status.VALID, Status.UNKNOWN]


def test_crash_mid_batch_still_one_verdict_per_input(pool):
    batch = [OK, OK, CRASH, OK, NO, OK]
    (verdicts,) = pool.run([batch], 100)
    assert statuses(verdicts) == [Status.VALID, Status.VALID, Status.UNKNOWN, Status.VALID,
                                  Status.UNKNOWN, Status.VALID]
    assert "worker died" in verdicts[2].detail


def test_backend_exception_is_unknown_and_the_worker_survives(pool):
    died = pool.counters["died"]
    (verdicts,) = pool.run([[RAISE, OK]], 100)
    assert statuses(verdicts) == [Status.UNKNOWN, Status.VALID]
    assert "injected failure" in verdicts[0].detail
    assert pool.counters["died"] == died


def test_worker_killed_from_outside_mid_batch(pool):
    batch = [OK, OK, HANG, OK, NO, OK]
    box = {}
    runner = threading.Thread(target=lambda: box.setdefault("r", pool.run([batch], 100)))
    runner.start()
    deadline = time.monotonic() + 20
    while not pool.busy_pids() and time.monotonic() < deadline:
        time.sleep(0.01)
    pids = pool.busy_pids()
    assert pids, "the batch never started"
    os.kill(pids[0], signal.SIGKILL)
    runner.join(60)
    (verdicts,) = box["r"]
    assert len(verdicts) == len(batch)
    expected = [Status.VALID, Status.VALID, Status.UNKNOWN, Status.VALID, Status.UNKNOWN, Status.VALID]
    for got, want in zip(statuses(verdicts), expected):
        assert got in (want, Status.UNKNOWN)  # the check it was running when killed becomes unknown
    assert verdicts[2].status is Status.UNKNOWN


def test_close_tears_down_every_worker():
    p = WorkerPool([FAULT], VerifierConfig(backends=(FAULT,), workers=2), n_workers=2, hard_limit_ms=HARD_MS)
    p.run([[OK], [OK]], 100)
    procs = [w.proc for w in p._workers]
    assert procs
    p.close()
    assert all(proc.poll() is not None for proc in procs)
    with pytest.raises(RuntimeError):
        p.run([[OK]], 100)


def test_a_backend_that_cannot_be_built_is_a_clear_error():
    cfg = VerifierConfig(backends=("z3",), workers=1)
    p = WorkerPool(["prosfi.verify.testing:NoSuchBackend"], cfg, n_workers=1, hard_limit_ms=HARD_MS)
    with pytest.raises(PoolError, match="NoSuchBackend"):
        p.run([[OK]], 100)
    p.close()


def test_verifier_honours_its_hard_timeout():
    """End to end through Verifier: config -> pool hard limit -> `unknown`, then life goes on."""
    from prosfi.verdict import Entailment
    from prosfi.verify.verifier import Verifier

    with Verifier(backends=(FAULT,), workers=1, hard_timeout_ms=HARD_MS, truth_table=False) as v:
        start = time.monotonic()
        hung, fine = v.check_many([Entailment({"h1": "A"}, "Hang"), Entailment({"h1": "A"}, "A")])
        assert time.monotonic() - start < 30  # the hung check sleeps for an hour
        assert hung.status is Status.UNKNOWN and "timeout" in hung.detail
        assert fine.status is Status.VALID
        assert v.check(Entailment({"h1": "B"}, "B")).status is Status.VALID
        assert v.stats()["pool"]["killed_timeout"] == 1


def test_close_from_another_thread_never_waits_for_a_hung_check():
    p = WorkerPool([FAULT], VerifierConfig(backends=(FAULT,), workers=1), n_workers=1, hard_limit_ms=600_000)
    box = {}
    runner = threading.Thread(target=lambda: box.setdefault("r", p.run([[OK, HANG, OK]], 100)), daemon=True)
    runner.start()
    deadline = time.monotonic() + 20
    while not p.busy_pids() and time.monotonic() < deadline:
        time.sleep(0.01)
    time.sleep(0.2)  # let it reach the hung check
    p.close()
    runner.join(30)
    assert not runner.is_alive()
    (verdicts,) = box["r"]
    assert len(verdicts) == 3 and verdicts[1].status is Status.UNKNOWN
    assert verdicts[2].status in (Status.UNKNOWN, Status.VALID)


def test_concurrent_runs_share_the_workers_and_a_spare_serves_a_starved_caller():
    slow = item("Slow")
    cfg = VerifierConfig(backends=(FAULT,), workers=1)
    for spare in (0, 1):
        p = WorkerPool([FAULT], cfg, n_workers=1, hard_limit_ms=60_000, spare=spare)
        try:
            assert statuses(p.run([[OK]], 100)[0]) == [Status.VALID]  # the worker is up
            done: dict = {}

            def hard(pool=p, done=done):
                done["hard"] = (pool.run([[slow], [slow], [slow]], 700), time.monotonic())

            t = threading.Thread(target=hard)
            t.start()
            time.sleep(0.3)
            easy = p.run([[OK, NO]], 100)
            done["easy"] = time.monotonic()
            t.join(60)
            assert statuses(easy[0]) == [Status.VALID, Status.UNKNOWN]
            assert [statuses(r) for r in done["hard"][0]] == [[Status.UNKNOWN]] * 3
            assert done["easy"] < done["hard"][1]  # not behind the whole hard run
            assert len(p._workers) == 1 + spare
        finally:
            p.close()
