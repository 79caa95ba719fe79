"""Worker processes with a hard wall-clock limit per check, enforced by killing the worker.

Why processes and kills: Z3's own timeout is not honoured everywhere, Prover9 is a subprocess,
and `signal.alarm` only works in the main thread (TRL calls reward functions from a daemon
thread). So a worker that has not answered its current check within the limit is killed with
SIGKILL and replaced; that check becomes `unknown`, and the rest of its batch is retried one
check at a time so one hard check cannot poison its group. A worker that crashes is handled the
same way. Every task gets exactly one verdict per check, in order.

`run` may be called from several threads at once (the service runs concurrent passes): each call works
with the workers it holds. A worker is held for one job (a chunk of checks) at a time; when it finishes
one while another call is waiting, it is handed to the caller that has waited longest, so a small pass
waits at most for one job of a large one, never for the whole pass. With `spare` > 0 the pool may start
that many workers beyond `n_workers` while every worker is busy and a call waits, so an easy check does
not even wait for that job (the spares stay for later contention).

Workers are plain subprocesses (`python -m prosfi.verify.worker`), never forks of the caller:
forking a process that runs torch or threads is unsafe, and multiprocessing's spawn/forkserver
would re-import the caller's `__main__` (a training script) in every worker. The pool is torn
down by `close()`, or by a finalizer when it is garbage-collected or the interpreter exits.
"""

from __future__ import annotations

import logging
import os
import socket
import subprocess
import sys
import threading
import time
import weakref
from collections import deque
from dataclasses import dataclass, field
from multiprocessing.connection import Connection
from multiprocessing.connection import wait as mp_wait
from typing import TYPE_CHECKING, Any, Sequence

from prosfi.verify.backend import Check
from prosfi.verdict import Status, Verdict, unknown

if TYPE_CHECKING:  # pragma: no cover
    from prosfi.logic.signature import Signature
    from prosfi.verify.config import VerifierConfig

log = logging.getLogger(__name__)

STARTUP_TIMEOUT_S = 60.0
MAX_START_FAILURES = 3


class PoolError(RuntimeError):
    """The pool cannot run at all (workers fail to start): a setup problem, not a step's fault."""


@dataclass
class _Job:
    task: int
    idxs: list[int]  # check indices within the task, in the order the worker answers them
    retry: bool = False  # a single check re-run after its batch's worker was killed


@dataclass
class _Worker:
    proc: Any
    conn: Any
    started: float
    ready: bool = False
    job: _Job | None = None
    batch_id: int = 0
    answered: int = 0
    last_progress: float = 0.0
    pid: int | None = field(default=None)
    owner: object | None = None  # the `run` call that holds this worker
    served: int = 0  # jobs done for its current owner (a worker is handed on only after one)


def _shutdown(workers: list[_Worker]) -> None:
    """Stop every worker: ask politely, then kill. Safe to call twice and at interpreter exit."""
    for w in workers:
        try:
            w.conn.send(None)
        except Exception:
            pass
    deadline = time.monotonic() + 1.0
    for w in workers:
        try:
            w.proc.wait(max(0.01, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            w.proc.kill()
            w.proc.wait(2.0)
        except Exception:
            pass
        try:
            w.conn.close()
        except Exception:
            pass
    workers.clear()


class WorkerPool:
    """`run(tasks)` answers every check of every task; a task is a list of (signature, check)."""

    def __init__(
        self,
        backend_paths: Sequence[str],
        config: "VerifierConfig",
        n_workers: int,
        hard_limit_ms: int,
        spare: int = 0,
    ):
        if n_workers < 1:
            raise ValueError(f"WorkerPool needs at least one worker, got {n_workers}")
        self.backend_paths = list(backend_paths)
        self.config = config
        self.n_workers = n_workers
        self.spare = max(0, spare)
        self.hard_limit_s = hard_limit_ms / 1000.0
        self._workers: list[_Worker] = []
        self._cond = threading.Condition()  # guards worker ownership, spawning and the waiting line
        self._waiting: deque = deque()  # calls waiting for a worker, longest first
        self._next_batch = 0
        self._closed = False
        self.counters = {"workers_started": 0, "killed_timeout": 0, "died": 0, "retried": 0}
        self._finalizer = weakref.finalize(self, _shutdown, self._workers)

    # ------------------------------------------------------------------ lifecycle
    def close(self) -> None:
        """Stop every worker now. Does not wait for a `run` in another thread (which then
        answers its remaining checks `unknown`), so shutdown can never hang on a busy pool."""
        self._closed = True
        self._finalizer()

    def __enter__(self) -> "WorkerPool":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def _spawn(self) -> _Worker:
        ours, theirs = socket.socketpair()
        env = dict(os.environ)  # the caller's import path, so the worker finds what the caller finds
        env["PYTHONPATH"] = os.pathsep.join([p for p in sys.path if p] + [env.get("PYTHONPATH", "")])
        try:
            proc = subprocess.Popen(
                [sys.executable, "-m", "prosfi.verify.worker", str(theirs.fileno())],
                pass_fds=(theirs.fileno(),), stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                env=env, start_new_session=True,  # Ctrl-C in a terminal reaches the caller only
            )
        finally:
            theirs.close()
        conn = Connection(ours.detach())
        self.counters["workers_started"] += 1
        w = _Worker(proc, conn, time.monotonic())
        self._workers.append(w)
        try:
            conn.send(("init", list(sys.path), self.backend_paths, self.config))
        except OSError:  # died at once; the loop sees EOF and counts a start failure
            pass
        return w

    def _discard(self, w: _Worker) -> None:
        with self._cond:
            self._discard_locked(w)

    def _discard_locked(self, w: _Worker) -> None:
        try:
            if w.proc.poll() is None:
                w.proc.kill()
            w.proc.wait(2.0)
        except Exception:  # pragma: no cover
            pass
        try:
            w.conn.close()
        except Exception:  # pragma: no cover
            pass
        if w in self._workers:
            self._workers.remove(w)

    # ------------------------------------------------------------------ running
    def run(
        self,
        tasks: Sequence[Sequence[tuple["Signature", Check]]],
        timeout_ms: int,
        stage: Sequence[int] | None = None,
    ) -> list[list[Verdict]]:
        """Answer every check of every task with the backends `stage` (indices into
        backend_paths; default all, in order). Safe to call from several threads at once."""
        stage = tuple(range(len(self.backend_paths))) if stage is None else tuple(stage)
        if self._closed:
            raise RuntimeError("WorkerPool is closed")
        me = object()
        try:
            return self._run(tasks, timeout_ms, stage, me)
        except BaseException:  # a setup failure or an interrupt: leave no half-busy worker of ours
            for w in [w for w in self._workers if w.owner is me]:
                self._discard(w)
            raise
        finally:
            with self._cond:
                if me in self._waiting:
                    self._waiting.remove(me)
                for w in self._workers:
                    if w.owner is me:
                        self._release(w)
                self._cond.notify_all()

    # ------------------------------------------------------------------ sharing
    def _release(self, w: _Worker) -> None:
        """(under _cond) Give an idle worker to the longest-waiting call, or back to the pool."""
        w.owner = self._waiting.popleft() if self._waiting else None
        w.served = 0

    def _acquire(self, me: object, want: int) -> list[_Worker]:
        """(under _cond) Workers handed to `me`, free ones (when nobody waits longer), and new ones
        (up to n_workers, or n_workers + spare while every worker is busy): at most `want` more."""
        got = [w for w in self._workers if w.owner is me and w.job is None]
        for w in self._workers:
            if len(got) >= want:
                break
            if w.owner is None and (not self._waiting or self._waiting[0] is me):
                w.owner, w.served = me, 0
                got.append(w)
        limit = self.n_workers
        if not any(w.owner is me for w in self._workers) and all(w.owner is not None for w in self._workers):
            limit += self.spare  # every worker is busy for other calls and we have none
        while len(got) < want and len(self._workers) < limit and not self._closed:
            w = self._spawn()
            w.owner = me
            got.append(w)
        return got

    def _run(self, tasks, timeout_ms: int, stage: tuple[int, ...], me: object) -> list[list[Verdict]]:
        results: list[list[Verdict | None]] = [[None] * len(items) for items in tasks]
        pending: deque[_Job] = deque(
            _Job(t, list(range(len(items)))) for t, items in enumerate(tasks) if items)
        start_failures = 0

        def finish_killed(w: _Worker, why: str) -> None:
            """The worker is gone: its running check gets `why`, the rest are retried alone."""
            job = w.job
            if job is None:
                return
            left = job.idxs[w.answered:]
            if not w.ready:  # died before starting this job: nothing ran, so run it all again
                pending.appendleft(job)
                return
            elapsed = (time.monotonic() - w.last_progress) * 1000.0
            results[job.task][left[0]] = unknown(why, None, elapsed)
            for i in reversed(left[1:]):
                self.counters["retried"] += 1
                pending.appendleft(_Job(job.task, [i], retry=True))

        while True:
            if self._closed:  # closed from another thread: answer what is left and stop
                for task, verdicts in enumerate(results):
                    for i, v in enumerate(verdicts):
                        if v is None:
                            verdicts[i] = unknown("verifier closed before this check ran")
                return results  # type: ignore[return-value]
            to_send = []
            with self._cond:
                mine = [w for w in self._workers if w.owner is me]
                idle = [w for w in mine if w.ready and w.job is None]
                starved = bool(self._waiting) and self._waiting[0] is not me
                if starved and any(w.served for w in idle):  # a call with no worker waits: it gets
                    for w in [w for w in idle if w.served]:  # the idle ones we have used first
                        self._release(w)
                    idle = [w for w in idle if w.owner is me]
                    self._cond.notify_all()
                if pending:
                    starting = sum(1 for w in mine if not w.ready)
                    want = len(pending) - starting
                    if len(idle) < want:
                        idle = [w for w in self._acquire(me, want) if w.ready and w.job is None]
                while idle and pending:
                    to_send.append((idle.pop(), pending.popleft()))
                for w in idle:  # idle and not needed
                    self._release(w)
                    self._cond.notify_all()
                mine = [w for w in self._workers if w.owner is me]
                active = [w for w in mine if w.job is not None or not w.ready]
                if not pending and not to_send and not active:
                    break
                if not active and not to_send:  # work left but no worker: wait in line for one
                    if me not in self._waiting:
                        self._waiting.append(me)
                    self._cond.wait(0.05)
                    continue
                if me in self._waiting:
                    self._waiting.remove(me)
            for w, job in to_send:  # outside the lock: these workers are ours alone
                self._dispatch(w, job, tasks, timeout_ms, stage, pending, results)
            active = [w for w in self._workers if w.owner is me and (w.job is not None or not w.ready)]
            if not active:
                continue
            now = time.monotonic()
            deadline = min(self._deadline(w) for w in active)
            if pending:  # a worker may be handed to us meanwhile
                deadline = min(deadline, now + 0.05)
            mp_wait([w.conn for w in active], timeout=max(0.0, deadline - now))
            for w in active:
                dead = False
                try:
                    while w.conn.poll():
                        msg = w.conn.recv()
                        if not self._receive(w, msg, results):
                            dead = True
                            break
                except (EOFError, OSError):
                    dead = True
                if w.ready and w.job is None and not dead:
                    continue
                now = time.monotonic()
                if dead or w.proc.poll() is not None:
                    try:
                        code = w.proc.wait(1.0)
                    except subprocess.TimeoutExpired:
                        code = None
                    if not w.ready:
                        start_failures += 1
                        if start_failures >= MAX_START_FAILURES:
                            self._discard(w)
                            raise PoolError(f"verifier workers fail to start (exit code {code})")
                    self.counters["died"] += 1
                    log.warning("verifier worker %s died (exit code %s); replacing it", w.pid, code)
                    finish_killed(w, f"worker died (exit code {code})")
                    self._discard(w)
                elif now >= self._deadline(w):
                    if not w.ready:
                        start_failures += 1
                        if start_failures >= MAX_START_FAILURES:
                            self._discard(w)
                            raise PoolError(f"verifier workers did not start within {STARTUP_TIMEOUT_S} s")
                        finish_killed(w, "worker did not start")
                    else:
                        self.counters["killed_timeout"] += 1
                        log.info("verifier worker %s overran %.0f ms on one check; killed", w.pid,
                                 self.hard_limit_s * 1000)
                        finish_killed(w, f"timeout: no answer within {self.hard_limit_s * 1000:.0f} ms "
                                      "(worker killed)")
                    self._discard(w)
        return results  # type: ignore[return-value]

    def _deadline(self, w: _Worker) -> float:
        if not w.ready:
            return w.started + STARTUP_TIMEOUT_S
        return w.last_progress + self.hard_limit_s

    def _dispatch(self, w: _Worker, job: _Job, tasks, timeout_ms: int, stage, pending: deque,
                  results) -> None:
        items = tasks[job.task]
        w.served += 1
        self._next_batch += 1
        w.batch_id, w.job, w.answered = self._next_batch, job, 0
        try:
            w.conn.send((w.batch_id, [items[i] for i in job.idxs], timeout_ms, stage))
        except (OSError, EOFError):  # died while idle: nothing of this job ran
            w.job = None
            pending.appendleft(job)
            self.counters["died"] += 1
            self._discard(w)
            return
        except Exception as exc:  # cannot be pickled (nothing was written): answer, do not crash
            w.job = None
            for i in job.idxs:
                results[job.task][i] = unknown(f"cannot send the check to a worker: {type(exc).__name__}")
            return
        w.last_progress = time.monotonic()

    def _receive(self, w: _Worker, msg, results) -> bool:
        """Record one message; False when the worker reports it cannot run."""
        if msg[0] == "ready":
            w.ready, w.pid = True, msg[1]
            return True
        if msg[0] == "fatal":
            self._discard(w)
            raise PoolError(f"verifier worker failed to start: {msg[1]}")
        batch_id, index, status, backend, ms, detail = msg
        job = w.job
        if job is None or batch_id != w.batch_id or index != w.answered:  # pragma: no cover
            return True
        results[job.task][job.idxs[index]] = Verdict(Status(status), backend, ms, detail)
        w.answered += 1
        w.last_progress = time.monotonic()
        if w.answered == len(job.idxs):
            w.job = None
        return True

    def worker_pids(self) -> list[int]:
        """PIDs of running workers (for diagnostics and fault-injection tests)."""
        return [w.pid for w in self._workers if w.pid is not None]

    def busy_pids(self) -> list[int]:
        return [w.pid for w in self._workers if w.pid is not None and w.job is not None]


__all__ = ["WorkerPool", "PoolError"]
