"""The PrimeIntellect `verifiers` taskset (skipped where `verifiers` is not installed): tasks carry prosfi
problems and prompts; the reward is `prosfi score`'s, in-process and through a server; metrics recorded."""

from __future__ import annotations

import asyncio

import pytest

pytest.importorskip("verifiers.v1")

from serve_support import server, settings

from prosfi.data.gold import gold_completion
from prosfi.integrations.verifiers import ProsfiTaskConfig, ProsfiTaskset, ProsfiTasksetConfig


class _Trace:
    def __init__(self, reply: str) -> None:
        self.last_reply, self.metrics = reply, {}

    def record_metric(self, name: str, value: float) -> None:
        self.metrics[name] = value


def test_taskset_rewards_in_process_and_remote(monkeypatch):
    from prosfi.data.problem import Problem

    monkeypatch.delenv("PROSFI_SERVE_URL", raising=False)
    tasks = list(ProsfiTaskset(ProsfiTasksetConfig(data=["kk:2"], count=2)))
    assert len(tasks) == 2 and tasks[0].data.prompt and tasks[0].data.problem["id"].startswith("kk-2")
    gold = gold_completion(Problem.from_dict(tasks[0].data.problem))
    trace = _Trace(gold)
    assert asyncio.run(tasks[0].prosfi(trace)) == 1.0 and trace.metrics["prosfi/chain_valid"] == 1.0
    assert asyncio.run(tasks[0].prosfi(_Trace("no tags"))) == 0.0
    with server(settings()) as (url, app):
        remote = ProsfiTaskset(ProsfiTasksetConfig(data=["kk:2"], count=2, task=ProsfiTaskConfig(serve_url=url)))
        task = next(iter(remote))
        assert asyncio.run(task.prosfi(_Trace(gold))) == 1.0 and app.state.engine.scored == 1
