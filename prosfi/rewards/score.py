"""Score completions against problems: extract → read the answer → check the chain → reward.

`score_batch` is the whole path for many completions with one verifier round trip per round
(two rounds at most); `score_completion` is the same for one. A completion never raises: any
failure while scoring it becomes a reason and the format-failure reward (and a logged warning).
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass

from prosfi.chain import ChainBatch, ChainConfig, ChainResult, StepResult
from prosfi.data.problem import Problem
from prosfi.domains import Claim, Domain, domain_for
from prosfi.rewards.config import RewardConfig
from prosfi.trace.schema import ParsedTrace

log = logging.getLogger(__name__)

_MARK = {"valid": "✓", "unknown": "?"}


@dataclass
class ScoreResult:
    problem_id: str | None
    mode: str
    reward: float | None
    format_ok: bool = False
    answer: str | None = None
    answer_correct: bool = False
    chain_valid: bool = False
    steps: tuple[StepResult, ...] = ()
    reason: str = ""
    verified_fraction: float = 0.0

    def to_json(self) -> dict:
        """The `prosfi score` output record (docs/rewards.md, `prosfi score`)."""
        return {
            "problem_id": self.problem_id,
            "reward": self.reward,
            "format_ok": self.format_ok,
            "answer": self.answer,
            "answer_correct": self.answer_correct,
            "chain_valid": self.chain_valid,
            "steps": [s.to_json() for s in self.steps],
            "reason": self.reason,
            "mode": self.mode,
        }

    def summary(self, limit: int = 240) -> str:
        """One line for the completions table: `s1✓ s2✗(invalid) s3? → 0.30`."""
        if not self.format_ok:
            text = f"format✗ {self.reason}"
        else:
            marks = [f"{s.id}{_MARK.get(s.verdict, '✗')}" + ("" if s.verdict in _MARK else f"({s.verdict})")
                     for s in self.steps]
            text = " ".join(marks) or "no steps"
            text += f" | answer {self.answer}{'✓' if self.answer_correct else '✗'}"
        reward = "None" if self.reward is None else f"{self.reward:.2f}"
        text = text if len(text) <= limit else text[: limit - 1] + "…"
        return f"{text} → {reward}"


@dataclass
class _Pending:
    """A completion read far enough to know whether its chain must be checked."""

    index: int
    problem: Problem
    trace: ParsedTrace
    claim: Claim
    correct: bool
    domain: Domain


class Scoring:
    """One batch: read every completion, build its chain check, then turn chain results into rewards."""

    def __init__(self, problems: Sequence[Problem | None], texts: Sequence[str], verifier,
                 reward_config: RewardConfig, chain_config: ChainConfig) -> None:
        if len(problems) != len(texts):
            raise ValueError(f"{len(problems)} problems for {len(texts)} completions: pass one problem per completion")
        self.cfg, self.chain_cfg = reward_config, chain_config
        self.mode = reward_config.mode
        if self.mode in ("prosfi", "step_fraction") and verifier is None:
            raise ValueError(f"reward mode {self.mode!r} needs a verifier (prosfi.verify.Verifier)")
        self.results: list[ScoreResult | None] = [None] * len(texts)
        self.pending: list[_Pending] = []
        states: dict[str, object] = {}  # domain name -> its per-batch memo (parsed formulas, ...)
        checks: list = []
        for i, (problem, text) in enumerate(zip(problems, texts)):
            try:
                item = self._read(i, problem, text)
            except Exception as exc:
                log.warning("scoring completion %d failed: %r", i, exc, exc_info=True)
                self.results[i] = self._fail(problem, f"internal error while reading: {exc!r}"[:300])
                continue
            if isinstance(item, ScoreResult):
                self.results[i] = item
                continue
            self.pending.append(item)
            domain = item.domain
            if domain.name not in states:
                states[domain.name] = domain.batch_state()
            checks.append(domain.chain_check(item.problem, item.trace.trace.steps, item.claim, chain_config,
                                             states[domain.name], establish=item.correct))
        self.chains = ChainBatch(checks)

    def _fail(self, problem: Problem | None, reason: str, answer: str | None = None) -> ScoreResult:
        return ScoreResult(problem.id if problem else None, self.mode, self.cfg.format_failure, reason=reason,
                           answer=answer)

    def _read(self, i: int, problem: Problem | None, text: str) -> ScoreResult | _Pending:
        if problem is None:
            return ScoreResult(None, self.mode, None, reason="unknown problem")
        if not isinstance(text, str):
            return self._fail(problem, f"completion is {type(text).__name__}, not text")
        if len(text) > self.cfg.max_completion_chars:
            return self._fail(problem, f"completion longer than {self.cfg.max_completion_chars} characters")
        domain = domain_for(problem)
        trace = domain.parse_trace(problem, text)
        if not trace.ok:
            return self._fail(problem, trace.reason)
        claim = domain.parse_answer(problem, trace.trace.answer)
        correct = domain.answer_correct(problem, claim)
        item = _Pending(i, problem, trace, claim, correct, domain)
        if self.mode in ("format", "outcome"):
            return self._result(item, None)
        return item

    def finish(self, chain_results: Sequence[ChainResult]) -> list[ScoreResult]:
        for item, chain in zip(self.pending, chain_results):
            self.results[item.index] = self._result(item, chain)
        return list(self.results)  # type: ignore[arg-type]

    def _result(self, item: _Pending, chain: ChainResult | None) -> ScoreResult:
        cfg, claim = self.cfg, item.claim
        answer = claim.render() if claim.ok else item.trace.trace.answer
        if chain is not None and chain.failed:
            return self._fail(item.problem, chain.reason, answer)
        reason = "" if claim.ok else claim.reason
        if claim.ok and not item.correct:
            reason = f"wrong answer {answer}"
        result = ScoreResult(item.problem.id, self.mode, None, format_ok=True, answer=answer,
                             answer_correct=item.correct)
        if chain is not None:
            result.steps, result.chain_valid = chain.steps, chain.chain_valid
            result.verified_fraction = chain.verified_fraction
            if item.correct and chain.reason:
                reason = chain.reason
        if self.mode == "format":
            result.reward = cfg.format_ok
        elif not item.correct:
            result.reward = cfg.wrong_answer
        elif self.mode == "outcome" or chain is not None and chain.chain_valid:
            result.reward = cfg.right_verified
        elif self.mode == "step_fraction" and chain is not None:
            n = len(chain.steps)
            # a domain may withhold credit (quantity: none unless the chain computes the answer)
            verified = chain.credited if chain.credited is not None else sum(s.verified for s in chain.steps)
            # a chain that does not reach the answer is missing (at least) one verified step
            fraction = verified / (n + (0 if chain.established else 1)) if (n or chain.established) else 0.0
            result.reward = cfg.right_unverified + (cfg.right_verified - cfg.right_unverified) * fraction
        else:
            result.reward = cfg.right_unverified
        result.reason = reason
        return result


def score_batch(problems: Sequence[Problem | None], completions: Sequence[str], verifier,
                reward_config: RewardConfig | None = None, chain_config: ChainConfig | None = None,
                ) -> list[ScoreResult]:
    """Score completions (texts) against their problems (None = unknown problem) in one verifier pass."""
    scoring = Scoring(problems, completions, verifier, reward_config or RewardConfig(),
                       chain_config or ChainConfig())
    return scoring.finish(scoring.chains.check(verifier) if scoring.pending else [])


async def ascore_batch(problems: Sequence[Problem | None], completions: Sequence[str], verifier,
                       reward_config: RewardConfig | None = None, chain_config: ChainConfig | None = None,
                       ) -> list[ScoreResult]:
    """`score_batch` for an event loop: verification awaits `Verifier.acheck_many` (worker pool)."""
    scoring = Scoring(problems, completions, verifier, reward_config or RewardConfig(),
                       chain_config or ChainConfig())
    return scoring.finish(await scoring.chains.acheck(verifier) if scoring.pending else [])


def score_completion(problem: Problem, completion_text: str, verifier, reward_config: RewardConfig | None = None,
                     chain_config: ChainConfig | None = None) -> ScoreResult:
    """Score one completion (a pure function of its inputs and the verifier's answers)."""
    return score_batch([problem], [completion_text], verifier, reward_config, chain_config)[0]


__all__ = ["ScoreResult", "ascore_batch", "score_batch", "score_completion"]
