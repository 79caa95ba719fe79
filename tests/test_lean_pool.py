"""Process management of the Lean REPL pool, driven by tests/standin_repl.py.

The stand-in speaks the REPL's JSON protocol but is not Lean: its answers come from markers
in the command text. These tests check plumbing only (timeouts, crashes, respawns, recycling,
memory caps, ordering, one outcome per command, threads), never verdicts.
"""

from __future__ import annotations

import os
import sys
import threading
from pathlib import Path

import pytest

from prosfi.verify.lean.config import LeanConfig
from prosfi.verify.lean.pool import MAX_START_FAILURES, ReplPool
from prosfi.verify.lean.repl import ReplProcess, judge

STANDIN = str(Path(__file__).with_name("standin_repl.py").resolve())


def standin_config(*extra: str, **kw) -> LeanConfig:
    kw.setdefault("workers", 2)
    return LeanConfig(repl_command=(sys.executable, STANDIN, *extra), **kw)


def _pid_of(outcome) -> int:
    data = next(m["data"] for m in outcome.messages if str(m.get("data", "")).startswith("standin pid="))
    return int(data.split()[1].split("=")[1])


def test_judge_applies_the_pass_rule():
    assert judge({"env": 1}).ok
    assert judge({"env": 1, "messages": [{"severity": "warning", "data": "unused variable"}]}).ok
    assert judge({"env": 1, "messages": [{"severity": "error", "data": "unsolved goals"}]}).kind == "error"
    assert judge({"env": 1, "sorries": [{"goal": "⊢ P"}]}).kind == "sorry"
    assert judge({"env": 1, "messages": [{"severity": "warning", "data": "declaration uses 'sorry'"}]}).kind == "sorry"
    assert judge({"message": "Unknown environment."}).kind == "repl_error"


def test_header_is_sent_once_and_checks_use_its_env(tmp_path):
    config = standin_config("--log", str(tmp_path), workers=1)
    with ReplPool(config) as pool:
        outcomes = pool.run_many([f"theorem t{i}" for i in range(5)], timeout_s=20)
        assert all(o.ok for o in outcomes)
        assert pool.stats.started == 1
    events = (tmp_path / "standin.log").read_text().split("\n")
    assert sum(e.endswith(" start") for e in events) == 1
    assert sum(e.endswith(" cmd") for e in events) == 5


def test_outcomes_keep_order_and_count_with_failures_mixed_in():
    cmds = ["ok0", "standin_error", "ok2", "standin_sorry", "standin_crash", "ok5", "standin_garbage", "ok7",
            "standin_noise"]
    with ReplPool(standin_config(workers=3)) as pool:
        outcomes = pool.run_many(cmds, timeout_s=20)
    assert [o.kind for o in outcomes] == ["ok", "error", "ok", "sorry", "crash", "ok", "crash", "ok", "ok"]


def test_timeout_kills_and_the_next_check_respawns():
    with ReplPool(standin_config(workers=1)) as pool:
        first = pool.run("ok", timeout_s=20)
        hung = pool.run("standin_hang", timeout_s=0.5)
        assert hung.kind == "timeout" and not hung.ok
        assert pool.live_pids() == []  # the hung process is gone
        again = pool.run("ok", timeout_s=20)
        assert again.ok and _pid_of(again) != _pid_of(first)
        assert pool.stats.timeouts == 1 and pool.stats.started == 2


def test_crash_is_an_outcome_and_the_process_is_replaced():
    with ReplPool(standin_config(workers=1)) as pool:
        before = pool.run("ok", timeout_s=20)
        crashed = pool.run("standin_crash", timeout_s=20)
        after = pool.run("ok", timeout_s=20)
    assert crashed.kind == "crash" and "died" in crashed.detail
    assert after.ok and _pid_of(after) != _pid_of(before)


def test_recycled_after_k_checks():
    with ReplPool(standin_config(workers=1, max_checks_per_process=3)) as pool:
        outcomes = pool.run_many([f"c{i}" for i in range(7)], timeout_s=20)
        pids = [_pid_of(o) for o in outcomes]
        assert pool.stats.recycled_checks == 2
    assert pids[0] == pids[1] == pids[2] != pids[3]
    assert pids[3] == pids[4] == pids[5] != pids[6]


def test_recycled_above_the_memory_cap():
    with ReplPool(standin_config(workers=1, max_rss_mb=150)) as pool:
        small = pool.run("ok", timeout_s=20)
        leaky = pool.run("standin_leak_200", timeout_s=20)
        assert leaky.ok  # the check itself stands
        assert pool.stats.recycled_memory == 1 and pool.live_pids() == []
        after = pool.run("ok", timeout_s=20)
    assert _pid_of(after) != _pid_of(small) == _pid_of(leaky)


def test_header_failure_is_an_outcome_and_the_pool_gives_up():
    with ReplPool(standin_config("--header-fails", workers=1)) as pool:
        outcomes = pool.run_many(["a"] * (MAX_START_FAILURES + 2), timeout_s=20)
        assert all(o.kind == "start_failed" for o in outcomes)
        assert "unknown module prefix" in outcomes[0].detail
        assert pool.stats.start_failures == MAX_START_FAILURES  # then it stops trying
        assert "gave up" in outcomes[-1].detail


def test_missing_command_is_a_start_failure_not_an_exception():
    config = LeanConfig(repl_command=("/nonexistent/repl",), workers=1)
    with ReplPool(config) as pool:
        outcome = pool.run("x", timeout_s=5)
    assert outcome.kind == "start_failed" and "cannot start" in outcome.detail
    assert config.unavailable() and "not found" in config.unavailable()


def test_many_threads_share_the_pool_and_each_gets_its_own_answers():
    results: dict[int, list] = {}
    with ReplPool(standin_config(workers=2)) as pool:
        def worker(k: int) -> None:
            cmds = [f"t{k}_{i}" + (" standin_error" if i % 3 == 0 else "") for i in range(6)]
            results[k] = [o.kind for o in pool.run_many(cmds, timeout_s=20)]

        threads = [threading.Thread(target=worker, args=(k,)) for k in range(4)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(timeout=60)
        assert pool.stats.started <= 2
        assert pool.stats.checks == 24
    expected = ["error" if i % 3 == 0 else "ok" for i in range(6)]
    assert results == {k: expected for k in range(4)}


def test_close_kills_every_process_and_later_checks_fail_cleanly():
    pool = ReplPool(standin_config(workers=2))
    pool.run_many(["a", "b", "c"], timeout_s=20)
    pids = pool.live_pids()
    assert pids
    pool.close()
    for pid in pids:
        with pytest.raises(ProcessLookupError):
            os.kill(pid, 0)
    assert pool.run("a", timeout_s=5).kind == "start_failed"
    pool.close()  # twice is fine


def test_unknown_environment_is_a_repl_error():
    proc = ReplProcess([sys.executable, STANDIN], None, "import Aesop", start_timeout_s=20)
    try:
        assert proc.header_env == 0
        assert judge(proc.request({"cmd": "x", "env": 7}, 20)).kind == "repl_error"
        assert proc.run("x", 20).ok
    finally:
        proc.kill()


def _gone(pid: int) -> bool:
    """True when the process no longer exists (or is a zombie waiting for init to reap it)."""
    try:
        with open(f"/proc/{pid}/status") as fh:
            return any(line.startswith("State:") and "Z" in line.split()[1] for line in fh)
    except FileNotFoundError:
        return True


def test_timeout_kills_the_repl_under_a_wrapper_like_lake():
    # `lake env repl` runs the REPL as a child of lake: killing lake alone would leak the REPL.
    import time

    config = LeanConfig(repl_command=("bash", "-c", f"'{sys.executable}' '{STANDIN}'; exit 0"), workers=1)
    with ReplPool(config) as pool:
        child = _pid_of(pool.run("ok", timeout_s=20))
        assert child not in pool.live_pids()  # the pool's process is bash; the REPL is its child
        assert pool.run("standin_hang", timeout_s=0.5).kind == "timeout"
        for _ in range(50):
            if _gone(child):
                break
            time.sleep(0.1)
        assert _gone(child)
