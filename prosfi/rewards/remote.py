"""The TRL reward functions with the scoring done by `prosfi serve` (recipe key `reward_url`).

Same `__name__` (`<mode>_reward`), same logged metrics (`prosfi.rewards.metrics`, plus
`prosfi/masked_rate`) and the same `log_extra` column as `prosfi.rewards.funcs`; always `async def`, so
TRL gathers it without blocking. A completion the service could not score (unreachable after retries,
overloaded, a dead worker, a queue timeout) gets `None`: TRL leaves it out instead of learning from a
reward the policy did not earn. Picklable (the client is built lazily), as AsyncGRPO requires.
"""

from __future__ import annotations

import json
import time
from collections.abc import Sequence
from typing import Any

from prosfi.chain.result import StepResult
from prosfi.rewards.config import REWARD_MODES
from prosfi.rewards.funcs import PROBLEM_COLUMN
from prosfi.rewards.metrics import EXTRA_COLUMN, batch_metrics, summaries
from prosfi.rewards.score import ScoreResult
from prosfi.trace.extract import completion_text

MASKED_METRIC = "prosfi/masked_rate"


def result_from_record(record: dict, mode: str) -> ScoreResult:
    """A ScoreResult rebuilt from a `prosfi score` record (for metrics and summaries)."""
    steps = tuple(StepResult(s.get("id", ""), s.get("verdict", "unknown"), s.get("reason", ""))
                  for s in record.get("steps") or ())
    return ScoreResult(record.get("problem_id"), record.get("mode", mode), record.get("reward"),
                       format_ok=bool(record.get("format_ok")), answer=record.get("answer"),
                       answer_correct=bool(record.get("answer_correct")),
                       chain_valid=bool(record.get("chain_valid")), steps=steps,
                       reason=record.get("failure_reason") or record.get("reason", ""))


class RemoteProsfiReward:
    """`async (prompts, completions, problem=..., **kw) -> list[float | None]` scored by `prosfi serve`."""

    def __init__(self, urls: str | Sequence[str], mode: str = "prosfi", chain: dict | None = None,
                 token: str | None = None, timeout_s: float = 180.0, retries: int = 5) -> None:
        if mode not in REWARD_MODES:
            raise ValueError(f"reward_url serves the modes {', '.join(REWARD_MODES)}, not {mode!r}")
        self.urls, self.mode, self.chain, self.token = urls, mode, dict(chain or {}), token
        self.timeout_s, self.retries = timeout_s, retries
        self.__name__ = f"{mode}_reward"
        self._client = None

    def __getstate__(self) -> dict:
        return {**self.__dict__, "_client": None}

    def __repr__(self) -> str:
        return f"<{self.__name__} (remote {self.urls})>"

    @property
    def client(self):
        if self._client is None:
            from prosfi.serve.client import ProsfiClient

            self._client = ProsfiClient(self.urls, token=self.token, timeout_s=self.timeout_s, retries=self.retries)
        return self._client

    def close(self) -> None:
        if self._client is not None:
            self._client.close()

    async def __call__(self, prompts=None, completions=None, **kwargs) -> list[float | None]:
        if completions is None:
            raise ValueError(f"{self.__name__}: no completions given")
        column = kwargs.get(PROBLEM_COLUMN)
        if column is None or len(column) != len(completions):
            raise ValueError(f"{self.__name__}: one {PROBLEM_COLUMN!r} per completion is needed "
                             f"(got {None if column is None else len(column)} for {len(completions)})")
        problems: dict[str, dict] = {}
        sent = []
        for value, completion in zip(column, completions):
            pid, problem = _problem(value)
            if problem is not None and pid is not None:
                problems.setdefault(pid, problem)
            try:
                text = completion_text(completion)
            except TypeError:
                text = None
            sent.append({"problem_id": pid, "completion": text})
        started = time.perf_counter()
        records = await self.client.score(sent, list(problems.values()), reward=self.mode, chain=self.chain or None)
        verify_ms = (time.perf_counter() - started) * 1000.0
        results = [result_from_record(r, self.mode) for r in records]
        log_metric, log_extra = kwargs.get("log_metric"), kwargs.get("log_extra")
        if log_metric is not None:
            for name, value in batch_metrics(results, self.mode, verify_ms).items():
                log_metric(name, value)
            log_metric(MASKED_METRIC, sum(bool(r.get("masked")) for r in records) / (len(records) or 1))
        if log_extra is not None:
            log_extra(EXTRA_COLUMN, summaries(results))
        return [None if r.get("masked") else r.get("reward") for r in records]


def _problem(value: Any) -> tuple[Any, dict | None]:
    """(problem id, the problem to send or None): a JSON string or object, a Problem, or a preloaded id."""
    if isinstance(value, str):
        try:
            value = json.loads(value)
        except ValueError:
            return value, None  # a problem preloaded in the service (`prosfi serve --data`)
    if hasattr(value, "to_dict"):
        value = value.to_dict()
    if isinstance(value, dict):
        pid = value.get("id")
        return (pid if isinstance(pid, str) or pid is None else str(pid)), value
    return None, None


def make_remote_reward_funcs(urls: str | Sequence[str], mode: str = "prosfi", chain: dict | None = None,
                             token: str | None = None) -> list[RemoteProsfiReward]:
    return [RemoteProsfiReward(urls, mode, chain, token)]


__all__ = ["MASKED_METRIC", "RemoteProsfiReward", "make_remote_reward_funcs", "result_from_record"]
