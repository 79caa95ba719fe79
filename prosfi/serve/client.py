"""A client for `prosfi serve` that survives: several URLs, sharding, retries, idempotency keys.

Standalone on purpose (httpx, the standard library and `prosfi.retry` only, no other prosfi import), so any
layer — the TRL remote reward, the verl and OpenRLHF adapters, a user's script — can use it.

- `await client.score(completions, problems=...)` shards the batch across the URLs (contiguous slices),
  sends each shard with its own `Idempotency-Key` (kept across its retries, so the server scores it once),
  retries connection errors, timeouts, 429 and 5xx with exponential back-off and jitter (`prosfi.retry.Backoff`,
  shared with `prosfi eval --endpoint`), moving to the next URL each time. A shard that still fails comes back
  *masked* (`reward: None, masked: True, failure_kind: "unavailable" | "overloaded"`), never as a wrong answer;
  other 4xx raise `ClientError` (the request is wrong; retrying will not help).
- It never blocks an event loop (httpx.AsyncClient); `score_sync` is for synchronous callers (verl's
  `compute_score`): it runs on the client's own loop thread.
- It is fork-safe: a forked child (verl's `prime` process pool, any fork pool) that inherits a client the
  parent has used gets a fresh loop thread and fresh connections of its own on first use (the parent's
  thread did not survive the fork, and its sockets are the parent's).
"""

from __future__ import annotations

import asyncio
import os
import threading
import uuid
import weakref
from collections import Counter
from collections.abc import Sequence
from typing import Any

import httpx

from prosfi.retry import Backoff

URL_ENV, TOKEN_ENV = "PROSFI_SERVE_URL", "PROSFI_SERVE_TOKEN"
RETRY_STATUS = frozenset({429, 500, 502, 503, 504})


class ClientError(ValueError):
    """The server refused the request as malformed (4xx other than 429): `.status`, `.body`."""

    def __init__(self, status: int, body: Any) -> None:
        msg = body.get("error") if isinstance(body, dict) else body
        super().__init__(f"prosfi serve answered {status}: {msg}")
        self.status, self.body = status, body


def urls_from(value: str | Sequence[str] | None) -> list[str]:
    if value is None:
        value = os.environ.get(URL_ENV, "")
    items = value.split(",") if isinstance(value, str) else list(value)
    urls = [u.strip().rstrip("/") for u in items if u and u.strip()]
    if not urls:
        raise ValueError(f"no prosfi serve URL: pass urls=... or set ${URL_ENV} (comma-separated)")
    return urls


class ProsfiClient:
    def __init__(self, urls: str | Sequence[str] | None = None, token: str | None = None, timeout_s: float = 180.0,
                 retries: int = 5, backoff_s: float = 0.2, max_backoff_s: float = 10.0,
                 shard_size: int | None = None) -> None:
        self.urls = urls_from(urls)
        self.token = token if token is not None else os.environ.get(TOKEN_ENV) or None
        self.timeout_s, self.retries = timeout_s, retries
        self.backoff_s, self.max_backoff_s = backoff_s, max_backoff_s
        self.shard_size = shard_size  # completions per request (default: the batch split evenly over the URLs)
        self.stats: Counter = Counter()  # requests, retries, masked, by kind
        self._clients: dict[int, tuple] = {}  # id(loop) -> (weakref to the loop, its AsyncClient)
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._lock = threading.Lock()
        self._pid = os.getpid()
        _LIVE.add(self)

    def _after_fork(self) -> None:
        """In a forked child: forget the parent's loop thread, connections and lock (never close them:
        they are the parent's)."""
        self._pid = os.getpid()
        self._lock = threading.Lock()
        self._loop, self._thread = None, None
        self._clients = {}

    def _own(self) -> None:
        if self._pid != os.getpid():  # forked without the at-fork hook (or before it ran)
            self._after_fork()

    # ------------------------------------------------------------------ plumbing
    def _http(self) -> httpx.AsyncClient:
        self._own()
        loop = asyncio.get_running_loop()
        held = self._clients.get(id(loop))
        client = held[1] if held is not None and held[0]() is loop else None  # an id can outlive its loop
        if client is None or client.is_closed:
            headers = {"Authorization": f"Bearer {self.token}"} if self.token else {}
            limits = httpx.Limits(max_connections=256, max_keepalive_connections=64)
            client = httpx.AsyncClient(headers=headers, timeout=self.timeout_s, limits=limits)
            self._clients[id(loop)] = (weakref.ref(loop), client)
        return client

    async def post(self, route: str, body: dict, shard: int = 0) -> tuple[dict | None, str | None, str]:
        """POST `body` to `route` with retries: (answer, None, "") or (None, failure_kind, reason)."""
        key = uuid.uuid4().hex
        kind, why = "unavailable", ""
        for attempt, wait in Backoff(self.retries, self.backoff_s, self.max_backoff_s).attempts():
            url = self.urls[(shard + attempt) % len(self.urls)]
            if attempt:
                self.stats["retries"] += 1
                await asyncio.sleep(wait)
            self.stats["requests"] += 1
            try:
                resp = await self._http().post(url + route, json=body, headers={"Idempotency-Key": key})
            except httpx.TransportError as exc:  # refused, reset, timed out: the server may come back
                kind, why = "unavailable", f"{url}: {type(exc).__name__}: {exc}"[:300]
                continue
            if resp.status_code in RETRY_STATUS:
                kind = "overloaded" if resp.status_code == 429 else "server_error"
                why = f"{url}: HTTP {resp.status_code}: {resp.text[:200]}"
                continue
            try:
                data = resp.json()
            except ValueError:
                data = resp.text[:300]
            if resp.status_code >= 400:
                raise ClientError(resp.status_code, data)
            return data, None, ""
        self.stats[f"masked_{kind}"] += 1
        return None, kind, why

    def _shards(self, n: int) -> list[tuple[int, int]]:
        size = self.shard_size or max(1, -(-n // len(self.urls)))
        return [(a, min(n, a + size)) for a in range(0, n, size)]

    # ------------------------------------------------------------------ API
    async def score(self, completions: Sequence[dict], problems: Sequence[dict] = (), reward: str | None = None,
                    chain: dict | None = None) -> list[dict]:
        """One `prosfi score` record per completion, in order (masked records where the service failed)."""
        by_id = {p["id"]: p for p in problems if isinstance(p, dict) and "id" in p}

        async def one(shard: int, a: int, b: int) -> list[dict]:
            part = list(completions[a:b])
            ids = {c.get("problem_id") for c in part if isinstance(c, dict)}
            body: dict[str, Any] = {"completions": part, "problems": [by_id[i] for i in ids if i in by_id]}
            if reward:
                body["reward"] = reward
            if chain:
                body["chain"] = chain
            data, kind, why = await self.post("/score", body, shard)
            if data is None:
                self.stats["masked"] += len(part)
                return [masked_record(c, kind, why) for c in part]
            results = data.get("results")
            if not isinstance(results, list) or len(results) != len(part):
                raise ClientError(200, f"expected {len(part)} results, got {type(results).__name__}")
            return results

        parts = await asyncio.gather(*(one(k, a, b) for k, (a, b) in enumerate(self._shards(len(completions)))))
        return [r for part in parts for r in part]

    async def aclose(self) -> None:
        loop = asyncio.get_running_loop()
        held = self._clients.pop(id(loop), None)
        if held is not None and held[0]() is loop:
            await held[1].aclose()

    # ------------------------------------------------------------------ sync callers
    def run_sync(self, coro):
        """Run a coroutine on the client's own loop thread and wait (for synchronous callers only)."""
        self._own()
        with self._lock:
            if self._loop is None:
                self._loop = asyncio.new_event_loop()
                self._thread = threading.Thread(target=self._loop.run_forever, name="prosfi-client", daemon=True)
                self._thread.start()
        return asyncio.run_coroutine_threadsafe(coro, self._loop).result()

    def score_sync(self, completions: Sequence[dict], problems: Sequence[dict] = (), reward: str | None = None,
                   chain: dict | None = None) -> list[dict]:
        return self.run_sync(self.score(completions, problems, reward, chain))

    def close(self) -> None:
        if self._pid != os.getpid():  # the parent's client, inherited by fork: nothing here is ours to close
            self._after_fork()
            return
        with self._lock:
            loop, thread, self._loop = self._loop, self._thread, None
        if loop is not None:
            asyncio.run_coroutine_threadsafe(self.aclose(), loop).result(10)
            loop.call_soon_threadsafe(loop.stop)
            if thread is not None:
                thread.join(10)
            loop.close()


_LIVE: "weakref.WeakSet[ProsfiClient]" = weakref.WeakSet()


def _reset_after_fork() -> None:
    for client in list(_LIVE):
        client._after_fork()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_reset_after_fork)


def masked_record(completion: Any, kind: str | None, why: str) -> dict:
    pid = completion.get("problem_id") if isinstance(completion, dict) else None
    return {"problem_id": pid, "reward": None, "masked": True, "failure_kind": kind or "unavailable",
            "failure_reason": why}


__all__ = ["TOKEN_ENV", "URL_ENV", "ClientError", "ProsfiClient", "masked_record", "urls_from"]
