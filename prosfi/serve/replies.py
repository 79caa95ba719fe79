"""Answers remembered by `Idempotency-Key`, bounded by bytes: a retried request gets the first answer.

An answer is kept as the exact response bytes (what was sent), so what it costs is what it weighs: the store
holds at most `max_bytes` of answers and `max_entries` keys, forgetting the oldest first; an answer larger
than `max_bytes` on its own is sent but not remembered (its retry is scored again). A key whose first
request is still running is not stored twice: the retry waits for it. A failed first attempt is forgotten,
so its retry runs. `RayReplyStore` (prosfi.serve.ray_app) keeps the same contract across replicas.
"""

from __future__ import annotations

import asyncio
from collections import OrderedDict
from collections.abc import Awaitable, Callable

Make = Callable[[], Awaitable[bytes]]


class ReplyStore:
    """In-process store: one per app (one per replica unless a shared store replaces it)."""

    def __init__(self, max_bytes: int, max_entries: int, metrics=None) -> None:
        self.max_bytes, self.max_entries, self.metrics = max_bytes, max_entries, metrics
        self._done: OrderedDict[str, bytes] = OrderedDict()
        self._running: dict[str, asyncio.Future] = {}
        self.bytes = 0

    def __len__(self) -> int:
        return len(self._done)

    async def once(self, key: str | None, make: Make) -> bytes:
        if not key:
            return await make()
        done = self._done.get(key)
        if done is not None:
            self._replayed()
            return done
        fut = self._running.get(key)
        if fut is not None:
            self._replayed()
            await asyncio.wait({fut})  # raises only if *this* request is cancelled
            if not fut.cancelled() and fut.exception() is None:
                return fut.result()
            return await self.once(key, make)  # the first attempt failed: run it here
        fut = asyncio.get_running_loop().create_future()
        self._running[key] = fut
        try:
            body = await make()
        except BaseException:
            fut.cancel()
            raise
        finally:
            if self._running.get(key) is fut:
                del self._running[key]
        self.remember(key, body)
        fut.set_result(body)
        return body

    def remember(self, key: str, body: bytes) -> None:
        if len(body) > self.max_bytes or self.max_entries < 1:
            return
        old = self._done.pop(key, None)
        if old is not None:
            self.bytes -= len(old)
        self._done[key] = body
        self.bytes += len(body)
        while self._done and (self.bytes > self.max_bytes or len(self._done) > self.max_entries):
            _, dropped = self._done.popitem(last=False)
            self.bytes -= len(dropped)
        self._gauge()

    def _replayed(self) -> None:
        if self.metrics is not None:
            self.metrics.deduplicated.inc()

    def _gauge(self) -> None:
        if self.metrics is not None:
            self.metrics.idempotency_bytes.set(self.bytes)
            self.metrics.idempotency_keys.set(len(self._done))


__all__ = ["Make", "ReplyStore"]
