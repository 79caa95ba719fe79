"""The scorer behind every route: one verifier, preloaded problems, a queue that merges concurrent requests.

Requests wait in an asyncio queue; one task drains it, merges what arrived within `batch_window_ms`
(same reward mode and chain settings) into one verifier pass, and runs the pass in a thread, so the
event loop never blocks on parsing or provers. Up to `passes` passes run at once and share the worker
pool job by job (plus `spare_workers` started while every worker is busy), so an easy request never
waits for a hard one to finish. Each request has a deadline, `queue_timeout_s` after it arrived: past
it the request is answered masked (`queue_timeout`) wherever it is, queued or being scored. Records come from `prosfi.rewards.records` — exactly the
lines `prosfi score` writes. Infrastructure failures are not rewards: a request that waited longer than
`queue_timeout_s`, a completion whose check was lost with a dead verifier worker, a verifier that broke,
come back *masked* (`reward: null`, `masked: true`, `failure_kind`, `failure_reason`) and are counted.
Per-check time limits are the verifier pool's: they start when a worker starts the check.
"""

from __future__ import annotations

import asyncio
import dataclasses
import logging
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from prosfi.chain import ChainConfig
from prosfi.data.problem import Problem
from prosfi.rewards.config import RewardConfig
from prosfi.rewards.records import Entry, read_completion, score_entries
from prosfi.serve.config import ServeSettings
from prosfi.serve.contracts import Outcome
from prosfi.serve.metrics import Metrics
from prosfi.serve.replies import ReplyStore

log = logging.getLogger(__name__)

# step reasons that mean the verifier lost the check (prosfi.verify.pool), not that the step is unprovable
INFRA_MARKERS = ("worker died", "verifier closed", "cannot send the check", "worker did not start",
                 "internal error:")


class Overloaded(RuntimeError):
    """More completions waiting than `max_queue`: the route answers 429 (retry later)."""


@dataclass
class _Job:
    key: tuple
    entries: list[Entry]
    problems: Mapping[str, Problem]
    reward_config: RewardConfig
    chain_config: ChainConfig
    enqueued: float
    future: asyncio.Future = field(repr=False)
    answered: bool = False


def _infra_reason(record: dict) -> str | None:
    for step in record.get("steps") or ():
        reason = step.get("reason") or ""
        if step.get("verdict") == "unknown" and any(m in reason for m in INFRA_MARKERS):
            return reason
    return None


class Engine:
    """Owns the verifier (and so its worker pool) for the app's lifetime: `await start()`, `await close()`."""

    def __init__(self, settings: ServeSettings, problems: Mapping[str, Problem] | None = None,
                 metrics: Metrics | None = None) -> None:
        self.settings, self.config = settings, settings.serve
        self.problems: dict[str, Problem] = dict(problems or {})
        self.metrics = metrics or Metrics()
        self.verifier = None
        self._queue: asyncio.Queue[_Job] | None = None
        self._task: asyncio.Task | None = None
        self._waiting = 0
        self.replies = ReplyStore(self.config.idempotency_bytes, self.config.idempotency_size, self.metrics)
        self.scored = 0  # completions scored (each once): what the dedup tests count

    # ------------------------------------------------------------------ lifecycle
    async def start(self) -> None:
        from prosfi.verify.verifier import Verifier

        if self.settings.data and not self.problems:
            self.problems = await asyncio.to_thread(load_problems, self.settings)
        vcfg = self.settings.verifier
        if vcfg.spare_workers < self.config.spare_workers:
            vcfg = dataclasses.replace(vcfg, spare_workers=self.config.spare_workers)
        self.verifier = Verifier(vcfg)
        self._passes = asyncio.Semaphore(self.config.passes)
        self._running: set[asyncio.Task] = set()
        self._queue = asyncio.Queue()
        self._task = asyncio.create_task(self._drain(), name="prosfi-scorer")

    async def close(self) -> None:
        for task in list(getattr(self, "_running", ())):
            task.cancel()
        if self._task is not None:
            self._task.cancel()
            try:
                await self._task
            except asyncio.CancelledError:
                pass
            except Exception:
                log.warning("scorer task failed at shutdown", exc_info=True)
        if self.verifier is not None:
            await asyncio.to_thread(self.verifier.close)

    # ------------------------------------------------------------------ idempotency
    async def once(self, key: str | None, make):
        """`await make()` (the answer's bytes) once per idempotency key, through `self.replies`."""
        return await self.replies.once(key, make)

    # ------------------------------------------------------------------ scoring
    def entries(self, completions: Sequence[Any], problems: Mapping[str, Problem], mode: str) -> list[Entry]:
        """Entries for `read_completion` (line numbers = 1-based positions, as in a completions JSONL)."""
        return [read_completion(rec, k + 1, problems, mode) for k, rec in enumerate(completions)]

    def problem_map(self, extra: Sequence[Problem] = ()) -> Mapping[str, Problem]:
        if not extra:
            return self.problems
        return {**self.problems, **{p.id: p for p in extra}}

    async def score(self, entries: list[Entry], problems: Mapping[str, Problem], reward_config: RewardConfig,
                    chain_config: ChainConfig) -> list[Outcome]:
        if not entries:
            return []
        assert self._queue is not None, "Engine.start() first"
        if self._waiting + len(entries) > self.config.max_queue:
            self.metrics.rejected.labels("overloaded").inc()
            raise Overloaded(f"{self._waiting} completions already waiting (max_queue {self.config.max_queue})")
        loop = asyncio.get_running_loop()
        key = (repr(reward_config), repr(chain_config))
        job = _Job(key, entries, problems, reward_config, chain_config, loop.time(), loop.create_future())
        self._waiting += len(entries)
        self.metrics.queue_depth.set(self._waiting)
        self._queue.put_nowait(job)
        left = job.enqueued + self.config.queue_timeout_s - loop.time()
        try:
            return await asyncio.wait_for(asyncio.shield(job.future), timeout=max(0.0, left))
        except asyncio.TimeoutError:
            if not job.answered:  # the deadline, not the pass, answers it (the pass's result is dropped)
                self._answer(job, self._masked(job, "queue_timeout", (
                    f"no answer within queue_timeout_s ({self.config.queue_timeout_s:g} s) of arrival")))
            return job.future.result()

    async def _drain(self) -> None:
        assert self._queue is not None
        loop = asyncio.get_running_loop()
        held: list[_Job] = []
        while True:
            first = held.pop(0) if held else await self._queue.get()
            if self.config.batch_window_ms > 0 and not held:
                await asyncio.sleep(self.config.batch_window_ms / 1000)
            waiting = held
            while not self._queue.empty():
                waiting.append(self._queue.get_nowait())
            group, n, rest = [first], len(first.entries), []
            for job in waiting:
                if job.key == first.key and n + len(job.entries) <= self.config.max_pass:
                    group.append(job)
                    n += len(job.entries)
                else:
                    rest.append(job)
            held = rest
            now = loop.time()
            live = []
            for job in group:
                if job.answered:  # its deadline passed while it was queued: answered already
                    continue
                if now - job.enqueued > self.config.queue_timeout_s:
                    waited = now - job.enqueued
                    self._answer(job, self._masked(job, "queue_timeout",
                                                   f"waited {waited:.1f} s in the service's queue (queue_timeout_s "
                                                   f"{self.config.queue_timeout_s:g})"))
                else:
                    live.append(job)
            if live:
                await self._passes.acquire()  # at most `passes` at once; the next ones start as these end
                task = asyncio.create_task(self._guarded_pass(live), name="prosfi-pass")
                self._running.add(task)
                task.add_done_callback(self._running.discard)

    async def _guarded_pass(self, live: list[_Job]) -> None:
        try:
            live = [job for job in live if not job.answered]  # answered by its deadline meanwhile
            if live:
                await self._pass(live)
        except Exception as exc:
            log.exception("scoring pass failed")
            for job in live:
                self._answer(job, self._masked(job, "verifier_error", f"{type(exc).__name__}: {exc}"[:300]))
        finally:
            self._passes.release()

    def _masked(self, job: _Job, kind: str, why: str) -> list[Outcome]:
        self.metrics.masked.labels(kind).inc(len(job.entries))
        return [Outcome(rec if rec is not None else {"problem_id": pid, "reward": None}, masked=kind,
                        failure_reason=why) for pid, rec, _ in job.entries]

    def _answer(self, job: _Job, outcomes: list[Outcome]) -> None:
        if job.answered:
            return
        job.answered = True
        self._waiting -= len(job.entries)
        self.metrics.queue_depth.set(self._waiting)
        if not job.future.done():
            job.future.set_result(outcomes)

    async def _pass(self, jobs: list[_Job]) -> None:
        # one batch over every job: keys (job index, problem id) keep two requests' problems apart
        batch: list[Entry] = []
        problems: dict[tuple, Problem] = {}
        for j, job in enumerate(jobs):
            for pid, err, text in job.entries:
                if err is None:
                    problems[(j, pid)] = job.problems[pid]
                batch.append(((j, pid), err, text))
        first = jobs[0]
        before = self._stats()
        records, _, _ = await asyncio.to_thread(score_entries, batch, problems, self.verifier,
                                                     first.reward_config, first.chain_config)
        self.metrics.passes.inc()
        outcomes = []
        for (_, err, _), rec in zip(batch, records):
            out = Outcome(rec)
            why = _infra_reason(rec) if err is None else None
            if why is not None:
                out.masked, out.failure_reason = "worker_died" if "died" in why else "verifier_error", why
                self.metrics.masked.labels(out.masked).inc()
            elif err is None:
                self.scored += 1
                self.metrics.completions.labels(first.reward_config.mode).inc()
            for step in rec.get("steps") or ():
                self.metrics.verdicts.labels(step.get("verdict", "?")).inc()
            outcomes.append(out)
        self._observe(before)
        k = 0
        for job in jobs:
            self._answer(job, outcomes[k:k + len(job.entries)])
            k += len(job.entries)

    def _stats(self) -> dict:
        try:
            return dict(self.verifier.stats()) if self.verifier is not None else {}
        except Exception:  # noqa: BLE001 - stats are for metrics only
            return {}

    def _observe(self, before: dict) -> None:
        after = self._stats()
        if not after:
            return
        self.metrics.checks.inc(max(0, after.get("checks", 0) - before.get("checks", 0)))
        self.metrics.cache_hit_rate.set(after.get("hit_rate", 0.0))
        pool = after.get("pool") or {}
        self.metrics.worker_restarts.set(pool.get("died", 0) + pool.get("killed_timeout", 0))

    async def check(self, lines: list[str]) -> list[dict]:
        """`prosfi check` records for check lines, in a thread (the verifier's pool does the work)."""
        from prosfi.verify.lines import check_lines

        assert self.verifier is not None, "Engine.start() first"
        before = self._stats()
        records = await asyncio.to_thread(lambda: list(check_lines(lines, self.verifier)))
        for rec in records:
            self.metrics.verdicts.labels(rec["verdict"]).inc()
        self._observe(before)
        return records


def load_problems(settings: ServeSettings) -> dict[str, Problem]:
    """The preloaded problems of `settings.data` (the `prosfi eval --data` specs), by id."""
    from prosfi.eval.sources import DEFAULT_SEED, all_problems, load_sources

    seed = DEFAULT_SEED if settings.data_seed is None else settings.data_seed
    sources = load_sources(list(settings.data), count=settings.count, limit=settings.limit, seed=seed)
    return {p.id: p for p in all_problems(sources)}


def chain_config(overrides: Mapping[str, Any] | None) -> ChainConfig:
    """ChainConfig with a request's overrides, which `prosfi.serve.schemas.ChainOverrides` has checked (keys,
    JSON types); ValueError (`chain: ...`) for a value the dataclass refuses."""
    try:
        return ChainConfig(**dict(overrides or {}))
    except (TypeError, ValueError) as exc:
        raise ValueError(f"chain: {exc}") from None


__all__ = ["INFRA_MARKERS", "Engine", "Outcome", "Overloaded", "chain_config", "load_problems"]
