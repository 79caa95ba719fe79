"""The server at training scale: the idempotency store is bounded by bytes, easy requests do not wait behind
hard ones, and the queue timeout bounds a request's latency."""

from __future__ import annotations

import asyncio
import json
import time

import httpx
import pytest
from serve_support import HANG, HANG_TEXT, logic_problems, server, settings

from prosfi.data.gold import gold_completion

pytestmark = pytest.mark.timeout(300)


def _metric(url: str, name: str) -> float:
    for line in httpx.get(url + "/metrics").text.splitlines():
        if line.startswith(name + " ") or line.startswith(name + "{}"):
            return float(line.split()[-1])
    return 0.0


def test_idempotency_store_is_bounded_by_bytes_and_still_replays_recent_keys():
    p = logic_problems()[0]
    comp = {"problem_id": p.id, "completion": gold_completion(p)}
    body = {"problems": [p.to_dict()], "completions": [comp] * 40}
    with server(settings(idempotency_bytes=100_000)) as (url, app):
        eng = app.state.engine
        sizes = []
        for k in range(30):
            r = httpx.post(url + "/score", json=body, headers={"Idempotency-Key": f"k{k}"}, timeout=60)
            assert r.status_code == 200
            sizes.append(len(r.content))
            assert eng.replies.bytes <= 100_000
        assert sum(sizes) > 3 * 100_000  # the answers would not have fitted
        kept = _metric(url, "prosfi_idempotency_bytes")
        assert 0 < kept <= 100_000 and kept == eng.replies.bytes
        scored = eng.scored
        again = httpx.post(url + "/score", json=body, headers={"Idempotency-Key": "k29"}, timeout=60)
        assert again.content == r.content and eng.scored == scored  # the newest is replayed, not rescored
        httpx.post(url + "/score", json=body, headers={"Idempotency-Key": "k0"}, timeout=60)
        assert eng.scored == scored + 40  # the oldest was forgotten: scored again
    with server(settings(idempotency_bytes=1000)) as (url, app):  # larger than the store: sent, not kept
        r = httpx.post(url + "/score", json=body, headers={"Idempotency-Key": "big"}, timeout=60)
        assert r.status_code == 200 and len(r.content) > 1000 and app.state.engine.replies.bytes == 0
