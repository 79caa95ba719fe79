"""TRL reward functions: `f(prompts, completions, **kwargs) -> list[float | None]`.

The problem of each completion comes from the dataset column `problem` (a JSON string of
`Problem.to_dict()`, or a dict). Trainer services (`log_metric`, `log_extra`, `trainer_state`)
are optional keywords, so the same callable runs in a test or a notebook. The async variant
awaits `Verifier.acheck_many`, so TRL's event loop is not blocked while provers run.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable, Sequence
from dataclasses import replace
from typing import Any

from prosfi.chain import ChainConfig
from prosfi.data.problem import Problem
from prosfi.rewards.audit import AuditLog, audit_step
from prosfi.rewards.config import RewardConfig
from prosfi.rewards.formats import DEFAULT_FORMAT, CompletionFormat, format_for
from prosfi.rewards.metrics import EXTRA_COLUMN, batch_metrics, cache_hit_rate, summaries
from prosfi.rewards.score import ScoreResult, Scoring, score_batch
from prosfi.trace.extract import completion_text

log = logging.getLogger(__name__)

PROBLEM_COLUMN = "problem"


class ProsfiReward:
    """A synchronous TRL reward function for one mode; `__name__` is what TRL logs it under."""

    def __init__(self, reward_config: RewardConfig, chain_config: ChainConfig, verifier=None,
                 audit: AuditLog | None = None) -> None:
        self.reward_config, self.chain_config = reward_config, chain_config
        self.verifier, self.audit = verifier, audit
        self.mode = reward_config.mode
        self.__name__ = f"{self.mode}_reward"

    def __repr__(self) -> str:
        return f"<{self.__name__} ({type(self).__name__})>"

    def close(self) -> None:
        """Close the audit log (the verifier belongs to the caller)."""
        if self.audit is not None:
            self.audit.close()

    def __call__(self, prompts=None, completions=None, **kwargs) -> list[float | None]:
        scoring, texts = self._start(completions, kwargs)
        before = self._stats()
        chains = scoring.chains.check(self.verifier) if scoring.pending else []
        return self._finish(scoring, chains, texts, before, kwargs)

    # -------------------------------------------------------------- shared by both variants
    def _start(self, completions, kwargs) -> tuple[Scoring, list[str]]:
        if completions is None:
            raise ValueError(f"{self.__name__}: no completions given")
        column = kwargs.get(PROBLEM_COLUMN)
        if column is None:
            raise ValueError(f"{self.__name__}: the dataset has no {PROBLEM_COLUMN!r} column (one Problem per row, "
                             "json.dumps(problem.to_dict())); build rows with prosfi's data tools")
        if len(column) != len(completions):
            raise ValueError(f"{self.__name__}: {len(column)} problems for {len(completions)} completions")
        problems = _problems(column)
        texts = []
        for c in completions:
            try:
                texts.append(completion_text(c))
            except TypeError as exc:
                log.warning("%s: %s", self.__name__, exc)
                texts.append(None)  # scored as a format failure with a reason
        return Scoring(problems, texts, self.verifier, self.reward_config, self.chain_config), texts

    def _stats(self) -> dict | None:
        try:
            return dict(self.verifier.stats()) if self.verifier is not None else None
        except Exception:  # noqa: BLE001 - stats are for logging only
            return None

    def _finish(self, scoring: Scoring, chains, texts, before, kwargs) -> list[float | None]:
        results: list[ScoreResult] = scoring.finish(chains)
        if self.audit is not None:
            try:
                self.audit.write(results, [t if t is not None else "" for t in texts],
                                 step=audit_step(kwargs.get("trainer_state")))
            except OSError as exc:
                log.warning("%s: audit log write failed: %r", self.__name__, exc)
        log_metric, log_extra = kwargs.get("log_metric"), kwargs.get("log_extra")
        if log_metric is not None:
            metrics = batch_metrics(results, self.mode, scoring.chains.verify_ms,
                                    cache_hit_rate(before, self._stats()))
            for name, value in metrics.items():
                log_metric(name, value)
        if log_extra is not None:
            log_extra(EXTRA_COLUMN, summaries(results))
        return [r.reward for r in results]


class AsyncProsfiReward(ProsfiReward):
    """The same reward as an `async def __call__`: TRL gathers it on its event loop; verification
    runs in the verifier's worker pool through `acheck_many`."""

    async def __call__(self, prompts=None, completions=None, **kwargs) -> list[float | None]:
        scoring, texts = self._start(completions, kwargs)
        before = self._stats()
        chains = await scoring.chains.acheck(self.verifier) if scoring.pending else []
        return self._finish(scoring, chains, texts, before, kwargs)


def _problems(column: Sequence[Any]) -> list[Problem | None]:
    """Problems from the column, parsed once per distinct value in the batch (a GRPO group shares one)."""
    memo: dict[Any, Problem | None] = {}
    out: list[Problem | None] = []
    for value in column:
        key = value if isinstance(value, str) else id(value)
        if key not in memo:
            memo[key] = _problem(value)
        out.append(memo[key])
    return out


def _problem(value: Any) -> Problem | None:
    try:
        if isinstance(value, Problem):
            return value
        if isinstance(value, str):
            value = json.loads(value)
        return Problem.from_dict(value)
    except (ValueError, TypeError) as exc:
        log.warning("unreadable problem in the %r column: %s", PROBLEM_COLUMN, exc)
        return None


class StepsFormat(CompletionFormat):
    """The steps format (`<think>`, `<steps>`, `<answer>`): the domains' prompts, worked examples and gold
    traces; scored by `ProsfiReward` in the modes prosfi, outcome, step_fraction and format."""

    name = DEFAULT_FORMAT
    title = "steps"
    CHAIN_MODES = ("prosfi", "step_fraction")  # the modes whose reward checks the chain

    def reward_funcs(self, reward_config, chain_config=None, verifier=None, audit_path=None, *,
                     asynchronous=False, lean_config=None) -> list[Callable]:
        mode = reward_config.mode
        if mode in self.CHAIN_MODES and verifier is None:
            raise ValueError(f"reward mode {mode!r} needs a verifier: make_reward_funcs(..., verifier=Verifier(...))")
        audit = AuditLog(audit_path) if audit_path else None
        cls = AsyncProsfiReward if asynchronous else ProsfiReward
        return [cls(reward_config, chain_config or ChainConfig(), verifier, audit)]

    def score(self, problems, completions, verifier, reward_config, chain_config=None) -> list[ScoreResult]:
        """The chain is always checked: reward hit needs it, so a mode that would skip it (format, outcome,
        another format's) scores as prosfi."""
        if reward_config.mode not in self.CHAIN_MODES:
            reward_config = replace(reward_config, mode="prosfi")
        return score_batch(problems, completions, verifier, reward_config, chain_config)


def make_reward_funcs(mode: str = "prosfi", reward_config: RewardConfig | None = None,
                      chain_config: ChainConfig | None = None, verifier=None,
                      audit_path: str | None = None, *, asynchronous: bool = False,
                      lean_config: Any = None) -> list[Callable]:
    """The TRL reward functions for `mode` (one callable; its `__name__` is `<mode>_reward`), made by the
    completion format the mode selects (`prosfi.rewards.formats`).

    `verifier` (a `prosfi.verify.Verifier`) is needed by `prosfi` and `step_fraction`; its lifetime
    is the caller's. `audit_path` (may contain `{rank}`) gets one JSON line per scored completion.
    `asynchronous=True` returns the `async def` variant. `lean_config` reaches a format that runs Lean
    (direct_lean); a format's module is imported only when its mode is asked for.
    """
    fmt = format_for(mode)
    reward_config = replace(reward_config or RewardConfig(), mode=mode)
    return fmt.reward_funcs(reward_config, chain_config, verifier, audit_path, asynchronous=asynchronous,
                            lean_config=lean_config)


__all__ = ["PROBLEM_COLUMN", "AsyncProsfiReward", "ProsfiReward", "StepsFormat", "make_reward_funcs"]
