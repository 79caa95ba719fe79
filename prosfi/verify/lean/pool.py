"""A pool of warm Lean REPLs (Kimina Lean Server's design, without the server).

N long-lived processes each load the header once; a check borrows one process, runs one
command against the header environment and gives it back. Bounded everywhere:
- a wall-clock limit per check kills the process (respawned on its next use); the check is a
  `timeout` outcome, never an exception;
- a process is recycled after `max_checks_per_process` checks or above `max_rss_mb`;
- a batch returns exactly one outcome per command, in order.
Thread-safe: any number of threads may call `run`/`run_many`; at most N commands run at once.
"""

from __future__ import annotations

import logging
import queue
import threading
import time
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

from prosfi.verify.lean.config import LeanConfig
from prosfi.verify.lean.repl import ReplDied, ReplOutcome, ReplProcess, ReplTimeout

log = logging.getLogger(__name__)

# After this many start failures in a row the pool stops trying and answers at once.
MAX_START_FAILURES = 3


@dataclass
class PoolStats:
    """Counters for logs and tests (read them; the pool updates them under its lock)."""

    started: int = 0
    checks: int = 0
    timeouts: int = 0
    crashes: int = 0
    recycled_checks: int = 0
    recycled_memory: int = 0
    start_failures: int = 0
    pids: list[int] = field(default_factory=list)


@dataclass
class _Slot:
    proc: ReplProcess | None = None


class ReplPool:
    """`with ReplPool(config) as pool: pool.run_many(["theorem …", …], timeout_s=10)`."""

    def __init__(self, config: LeanConfig | None = None, size: int | None = None):
        self.config = config or LeanConfig()
        self.size = size or self.config.workers
        self.stats = PoolStats()
        self._lock = threading.Lock()
        self._slots: list[_Slot] = [_Slot() for _ in range(self.size)]
        self._free: queue.Queue[_Slot] = queue.Queue()
        for slot in self._slots:
            self._free.put(slot)
        self._executor = ThreadPoolExecutor(max_workers=self.size, thread_name_prefix="prosfi-lean")
        self._start_failures = 0
        self._broken: str | None = None
        self._closed = False
        project = self.config.project_dir()
        self._cwd: Path | None = project if project is not None and project.exists() else None

    # ------------------------------------------------------------------ checks
    def run(self, cmd: str, timeout_s: float) -> ReplOutcome:
        """Run one command on a free REPL (waits for one). Always returns an outcome."""
        if self._closed:
            return ReplOutcome(False, "start_failed", "the Lean REPL pool is closed")
        slot = self._free.get()
        try:
            return self._run_on(slot, cmd, timeout_s)
        finally:
            self._free.put(slot)

    def run_many(self, cmds: Sequence[str], timeout_s: float) -> list[ReplOutcome]:
        """One outcome per command, in the order given; up to `size` run in parallel."""
        if len(cmds) <= 1 or self.size == 1:
            return [self.run(c, timeout_s) for c in cmds]
        futures = [self._executor.submit(self.run, c, timeout_s) for c in cmds]
        return [f.result() for f in futures]

    def _run_on(self, slot: _Slot, cmd: str, timeout_s: float) -> ReplOutcome:
        started = time.monotonic()
        if slot.proc is None or not slot.proc.alive():
            failure = self._start(slot)
            if failure is not None:
                return ReplOutcome(False, "start_failed", failure, (time.monotonic() - started) * 1000)
        proc = slot.proc
        assert proc is not None
        try:
            outcome = proc.run(cmd, timeout_s)
        except ReplTimeout:
            self._discard(slot, "timeouts")
            return ReplOutcome(False, "timeout", f"no answer within {timeout_s:g} s; the REPL was killed "
                               "and will be respawned", (time.monotonic() - started) * 1000)
        except ReplDied as exc:
            self._discard(slot, "crashes")
            return ReplOutcome(False, "crash", f"the REPL died: {exc}", (time.monotonic() - started) * 1000)
        with self._lock:
            self.stats.checks += 1
        cfg = self.config
        if cfg.max_checks_per_process and proc.checks_done >= cfg.max_checks_per_process:
            self._discard(slot, "recycled_checks")
        elif cfg.max_rss_mb and proc.rss_bytes() > cfg.max_rss_mb * 1024 * 1024:
            self._discard(slot, "recycled_memory")
        return outcome

    # ------------------------------------------------------------------ processes
    def _start(self, slot: _Slot) -> str | None:
        with self._lock:
            if self._broken is not None:
                return self._broken
        try:
            proc = ReplProcess(self.config.command(), self._cwd, self.config.header, self.config.start_timeout_s)
        except ReplDied as exc:
            with self._lock:
                self.stats.start_failures += 1
                self._start_failures += 1
                if self._start_failures >= MAX_START_FAILURES and self._broken is None:
                    self._broken = f"{exc} (gave up after {self._start_failures} failed starts)"
                    log.warning("Lean REPL pool gave up: every further check is answered without Lean: %s",
                                self._broken)
            return str(exc)
        with self._lock:
            self._start_failures = 0
            self.stats.started += 1
            self.stats.pids.append(proc.pid)
            if self._closed:  # closed while we were starting
                proc.kill()
                return "the Lean REPL pool is closed"
        slot.proc = proc
        return None

    def _discard(self, slot: _Slot, reason: str) -> None:
        proc, slot.proc = slot.proc, None
        if proc is not None:
            proc.kill()
        with self._lock:
            setattr(self.stats, reason, getattr(self.stats, reason) + 1)

    def live_pids(self) -> list[int]:
        return [s.proc.pid for s in self._slots if s.proc is not None and s.proc.alive()]

    def close(self) -> None:
        """Kill every REPL and stop the threads. Safe to call twice."""
        with self._lock:
            self._closed = True
        self._executor.shutdown(wait=False, cancel_futures=True)
        for slot in self._slots:
            proc, slot.proc = slot.proc, None
            if proc is not None:
                proc.kill()

    def __enter__(self) -> ReplPool:  # noqa: PYI034 - py3.10 has no typing.Self
        return self

    def __exit__(self, *exc) -> None:
        self.close()


__all__ = ["MAX_START_FAILURES", "PoolStats", "ReplPool"]
