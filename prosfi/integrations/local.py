"""Scoring for the adapters: in this process (one lazily built Verifier per process) or through
`prosfi serve` (a ProsfiClient) when $PROSFI_SERVE_URL is set. Both give the `prosfi score` records.

The in-process verifier is the one process-wide object here, on purpose: verl and OpenRLHF call a plain
function many times, and starting a worker pool per call would cost more than the checks. It is built on
first use from $PROSFI_VERIFIER_WORKERS (default 1) and closed at interpreter exit. Both it and the client
belong to the process that built them: a forked child (verl's `prime` process pool) builds its own, never
touches the parent's worker pipes or client thread.
"""

from __future__ import annotations

import atexit
import os
import threading
from collections.abc import Sequence
from typing import Any

from prosfi.chain import ChainConfig
from prosfi.data.problem import Problem
from prosfi.rewards.config import RewardConfig
from prosfi.rewards.records import read_completion, score_entries
from prosfi.serve.client import TOKEN_ENV, URL_ENV, ProsfiClient

MODE_ENV, WORKERS_ENV = "PROSFI_REWARD", "PROSFI_VERIFIER_WORKERS"

_lock = threading.Lock()
_state: dict[str, Any] = {}


def _forget_in_child() -> None:
    """After fork: the parent's verifier (its workers answer the parent) and client (its loop thread did
    not survive the fork) are not this process's; drop them without closing what the parent still uses."""
    global _lock
    _lock = threading.Lock()
    v = _state.pop("verifier", None)
    if v is not None:
        v._finalizer.detach()  # the workers are the parent's: never stop them from here
        pool = v._resources.get("pool")
        if pool is not None:
            pool._finalizer.detach()
    _state.pop("client", None)
    _state.pop("client_for", None)


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_forget_in_child)


def _verifier():
    with _lock:
        v = _state.get("verifier")
        if v is None:
            from prosfi.verify.verifier import Verifier

            v = _state["verifier"] = Verifier(workers=int(os.environ.get(WORKERS_ENV, "1")))
            atexit.register(v.close)
        return v


def _client() -> ProsfiClient:
    url = os.environ.get(URL_ENV)
    with _lock:
        c = _state.get("client")
        if c is None or _state.get("client_for") != (url, os.environ.get(TOKEN_ENV)):
            c = _state["client"] = ProsfiClient(url)
            _state["client_for"] = (url, os.environ.get(TOKEN_ENV))
            atexit.register(c.close)
        return c


def remote() -> bool:
    return bool(os.environ.get(URL_ENV))


def score_problems(problems: Sequence[Problem | str], texts: Sequence[str], mode: str | None = None) -> list[dict]:
    """One `prosfi score` record per (problem, text). A str problem is an id preloaded in the service."""
    mode = mode or os.environ.get(MODE_ENV, "prosfi")
    comps = [{"problem_id": p if isinstance(p, str) else p.id, "completion": t} for p, t in zip(problems, texts)]
    if remote():
        sent = {p.id: p.to_dict() for p in problems if isinstance(p, Problem)}
        return _client().score_sync(comps, list(sent.values()), reward=mode)
    if any(isinstance(p, str) for p in problems):
        raise ValueError("a problem id needs a service with preloaded problems: set PROSFI_SERVE_URL "
                         "(prosfi serve --data ...), or pass the problem itself")
    # per completion its own index as the key: two problems may share an id across a batch
    mapping = {str(i): p for i, p in enumerate(problems)}
    entries = [read_completion({"problem_id": str(i), "completion": t}, i + 1, mapping, mode)
               for i, t in enumerate(texts)]
    records, _, _ = score_entries(entries, mapping, _verifier(), RewardConfig(mode=mode), ChainConfig())
    return records


__all__ = ["MODE_ENV", "WORKERS_ENV", "remote", "score_problems"]
