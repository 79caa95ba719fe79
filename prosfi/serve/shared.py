"""What Ray Serve replicas share: the idempotency store and the metrics (`prosfi serve --ray`).

One Ray actor (`SharedState`, named per deployment) holds the answers remembered by Idempotency-Key —
bounded by bytes exactly like the in-process `ReplyStore` — and the latest metrics text of every
replica. A replica's `RayReplyStore` claims a key there before scoring, so a key sent to several replicas
is scored once; its `/metrics` answers the sum over the replicas (`merge_metrics`), so any scrape sees the
whole service. The actor is async: claims and polls never wait for each other.
"""

from __future__ import annotations

import asyncio
import time
from collections import OrderedDict

from prosfi.serve.replies import Make

ACTOR_NAME = "prosfi-shared"
POLL_S = 0.05
ALIVE_S = 5.0  # a replica whose metrics are older than this is taken for dead (it pushes every second)
# gauges that are rates or levels of one replica: the merged value is their mean, not their sum
MEAN_GAUGES = frozenset({"prosfi_cache_hit_rate"})


class SharedState:
    """The actor's class (wrapped with `ray.remote` at deployment)."""

    def __init__(self, max_bytes: int, max_entries: int) -> None:
        self.max_bytes, self.max_entries = max_bytes, max_entries
        self.done: OrderedDict[str, bytes] = OrderedDict()
        self.running: dict[str, tuple[str, float]] = {}  # key -> (replica scoring it, since when)
        self.bytes = 0
        self.replays = 0
        self.metrics: dict[str, tuple[float, str]] = {}  # replica id -> (when, its metrics text)

    # ------------------------------------------------------------------ idempotency
    async def claim(self, key: str, replica: str, stale_s: float) -> tuple[str, bytes | None]:
        """("done", answer) | ("run", None): score it (and `finish`) | ("wait", None): it is being scored.
        A key held by a replica that stopped pushing its metrics (dead, replaced) is handed to the next."""
        body = self.done.get(key)
        if body is not None:
            self.replays += 1
            return "done", body
        held = self.running.get(key)
        now = time.monotonic()
        if held is not None and now - held[1] < stale_s and self._alive(held[0], now):
            return "wait", None
        self.running[key] = (replica, now)
        return "run", None

    def _alive(self, replica: str, now: float) -> bool:
        seen = self.metrics.get(replica)
        return seen is not None and now - seen[0] < ALIVE_S

    async def finish(self, key: str, body: bytes) -> None:
        self.running.pop(key, None)
        if len(body) > self.max_bytes or self.max_entries < 1:
            return
        old = self.done.pop(key, None)
        if old is not None:
            self.bytes -= len(old)
        self.done[key] = body
        self.bytes += len(body)
        while self.done and (self.bytes > self.max_bytes or len(self.done) > self.max_entries):
            _, dropped = self.done.popitem(last=False)
            self.bytes -= len(dropped)

    async def fail(self, key: str) -> None:
        self.running.pop(key, None)

    async def store_stats(self) -> dict:
        return {"bytes": self.bytes, "keys": len(self.done), "replays": self.replays, "running": len(self.running)}

    # ------------------------------------------------------------------ metrics
    async def push_metrics(self, replica: str, text: str) -> None:
        self.metrics[replica] = (time.monotonic(), text)

    async def all_metrics(self, max_age_s: float) -> list[str]:
        now = time.monotonic()
        for replica, (when, _) in list(self.metrics.items()):
            if now - when > max_age_s:  # a replica that is gone
                del self.metrics[replica]
        return [text for _, text in self.metrics.values()]


class RayReplyStore:
    """`ReplyStore`'s contract across replicas, through the `SharedState` actor."""

    def __init__(self, actor, replica: str, stale_s: float, metrics=None) -> None:
        self.actor, self.replica, self.stale_s, self.metrics = actor, replica, stale_s, metrics
        self.bytes = 0  # this replica keeps nothing itself

    async def once(self, key: str | None, make: Make) -> bytes:
        if not key:
            return await make()
        waited = False
        while True:
            state, body = await self.actor.claim.remote(key, self.replica, self.stale_s)
            if state == "done":
                if self.metrics is not None:
                    self.metrics.deduplicated.inc()
                return body
            if state == "run":
                break
            if not waited and self.metrics is not None:
                self.metrics.deduplicated.inc()
            waited = True
            await asyncio.sleep(POLL_S)
        try:
            body = await make()
        except BaseException:
            await self.actor.fail.remote(key)
            raise
        await self.actor.finish.remote(key, body)
        return body


def merge_metrics(texts: list[str]) -> str:
    """Prometheus texts of several replicas as one: counters, histograms and gauges summed per name and
    labels (the rates in MEAN_GAUGES averaged)."""
    from prometheus_client.parser import text_string_to_metric_families

    families: dict[str, tuple[str, str]] = {}
    values: OrderedDict[tuple, list[float]] = OrderedDict()
    for text in texts:
        for fam in text_string_to_metric_families(text):
            families.setdefault(fam.name, (fam.type, fam.documentation))
            for s in fam.samples:
                key = (fam.name, s.name, tuple(sorted(s.labels.items())))
                values.setdefault(key, []).append(s.value)
    out: list[str] = []
    seen: set[str] = set()
    for (fam, name, labels), vs in values.items():
        if fam not in seen:
            seen.add(fam)
            kind, doc = families[fam]
            out.append(f"# HELP {fam} {doc}")
            out.append(f"# TYPE {fam} {kind}")
        value = sum(vs) / len(vs) if fam in MEAN_GAUGES else sum(vs)
        lab = ",".join(f'{k}="{_escape(v)}"' for k, v in labels)
        out.append(f"{name}{{{lab}}} {value!r}" if lab else f"{name} {value!r}")
    return "\n".join(out) + "\n"


def _escape(v: str) -> str:
    return v.replace("\\", "\\\\").replace("\n", "\\n").replace('"', '\\"')


__all__ = ["ACTOR_NAME", "MEAN_GAUGES", "RayReplyStore", "SharedState", "merge_metrics"]
