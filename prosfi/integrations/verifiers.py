"""A PrimeIntellect `verifiers` (v1, `verifiers>=0.4`) taskset whose reward is prosfi's verified reward.

    import verifiers.v1 as vf
    from prosfi.integrations.verifiers import ProsfiTaskset, ProsfiTasksetConfig
    taskset = ProsfiTaskset(ProsfiTasksetConfig(data=["kk:2..6"], count=200))

Each task is one prosfi problem (the `--data` specs of `prosfi eval`) with prosfi's prompt; its `@reward`
`prosfi` scores the agent's last reply — through `prosfi serve` when `task.serve_url` (or $PROSFI_SERVE_URL)
is set, else in this process in a thread (verifiers runs every rollout on one event loop: nothing here blocks
it). The components are recorded as metrics. A completion the service could not score raises (a rollout
error, left out of training) instead of returning a reward the policy did not earn.
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import Iterator
from typing import Any, ClassVar

from pydantic import Field
from verifiers.v1.task import Task, TaskConfig, TaskData
from verifiers.v1.taskset import Taskset, TasksetConfig
from verifiers.v1.utils.decorators import reward

from prosfi.data.problem import Problem
from prosfi.serve.client import URL_ENV, ProsfiClient
from prosfi.serve.contracts import components
from prosfi.trace.extract import with_reasoning


class ProsfiTaskConfig(TaskConfig):
    serve_url: str | None = None
    """`prosfi serve` URL(s), comma-separated (default: $PROSFI_SERVE_URL; none: score in-process)."""
    token: str | None = None
    """Bearer token (default: $PROSFI_SERVE_TOKEN)."""
    mode: str = "prosfi"
    """Reward mode: prosfi, outcome, step_fraction or format."""


class ProsfiTasksetConfig(TasksetConfig):
    data: list[str] = Field(default_factory=lambda: ["kk:2..4"])
    """Problem sources, as `prosfi eval --data` (kk:2..8, fol:easy,hard, a problems JSONL, ...)."""
    count: int = 100
    """Generated problems per difficulty."""
    seed: int | None = None
    """Seed of generated problems (default: prosfi's evaluation seed)."""
    task: ProsfiTaskConfig = ProsfiTaskConfig()


class ProsfiData(TaskData):
    problem: dict[str, Any]
    """The prosfi problem (`Problem.to_dict()`)."""


class ProsfiTask(Task[ProsfiData, Any, ProsfiTaskConfig]):
    _clients: ClassVar[dict[tuple, ProsfiClient]] = {}  # one client per (urls, token), shared by a worker's tasks

    @reward(weight=1.0)
    async def prosfi(self, trace) -> float:
        record = await self.score_text(reply_text(trace))
        if record.get("masked"):
            raise RuntimeError(f"prosfi reward unavailable ({record.get('failure_kind')}): "
                               f"{record.get('failure_reason', '')}"[:300])
        for name, value in components(record).items():
            trace.record_metric(f"prosfi/{name}", value)
        return float(record["reward"] or 0.0)

    # not `score`: verifiers' `Task.score(trace, runtime)` is what a rollout calls to run the @reward hooks
    async def score_text(self, text: str) -> dict:
        """The `prosfi score` record of `text` for this task's problem."""
        problem = self.data.problem
        url = self.config.serve_url or os.environ.get(URL_ENV)
        comp = [{"problem_id": problem.get("id"), "completion": text}]
        if url:
            key = (url, self.config.token)
            client = self._clients.get(key)
            if client is None:
                client = self._clients[key] = ProsfiClient(url, token=self.config.token)
            return (await client.score(comp, [problem], reward=self.config.mode))[0]
        from prosfi.integrations.local import score_problems

        return (await asyncio.to_thread(score_problems, [Problem.from_dict(problem)], [text], self.config.mode))[0]


def reply_text(trace) -> str:
    """The agent's reply as prosfi reads it: `trace.last_reply`, with the last assistant message's
    `reasoning_content` (reasoning a vLLM reasoning parser took out of the text) as its `<think>` block."""
    text = trace.last_reply
    if getattr(trace, "root_reply", None) is None:
        messages = getattr(trace, "assistant_messages", None) or ()
        if messages:
            text = with_reasoning(getattr(messages[-1], "reasoning_content", None), text)
    return text


class ProsfiTaskset(Taskset[ProsfiTask, ProsfiTasksetConfig]):
    def load(self) -> Iterator[ProsfiTask]:
        from prosfi.domains import domain_for
        from prosfi.eval.sources import DEFAULT_SEED, all_problems, load_sources

        seed = DEFAULT_SEED if self.config.seed is None else self.config.seed
        for p in all_problems(load_sources(list(self.config.data), count=self.config.count, seed=seed)):
            domain = domain_for(p)  # a quantity problem gets the quantity prompt, not the logic one
            yield ProsfiTask(ProsfiData(id=p.id, name=p.id, prompt=domain.user_prompt(p),
                                        system_prompt=domain.system_prompt, problem=p.to_dict()), self.config.task)


__all__ = ["ProsfiData", "ProsfiTask", "ProsfiTaskConfig", "ProsfiTaskset", "ProsfiTasksetConfig", "reply_text"]
