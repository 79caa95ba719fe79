"""Per-batch metrics for TRL's `log_metric` and the per-completion summary for `log_extra`.

TRL gathers logged keys across ranks in sorted order, so a reward function must log the same
key set on every call: `metric_names(mode)` is that set, fixed per mode.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from prosfi.rewards.score import ScoreResult

ANSWER_METRICS = ("prosfi/format_rate", "prosfi/answer_accuracy", "prosfi/mean_steps")
CHAIN_METRICS = ("prosfi/chain_valid_rate", "prosfi/verified_step_fraction", "prosfi/unknown_fraction",
                 "prosfi/verify_ms", "prosfi/cache_hit_rate")
EXTRA_COLUMN = "verdicts"


def metric_names(mode: str) -> tuple[str, ...]:
    return ANSWER_METRICS + (CHAIN_METRICS if mode in ("prosfi", "step_fraction") else ())


def batch_metrics(results: Sequence[ScoreResult], mode: str, verify_ms: float = 0.0,
                  cache_hit_rate: float = 0.0) -> dict[str, float]:
    """The `metric_names(mode)` values for one batch (0.0 for an empty batch, never NaN)."""
    scored = [r for r in results if r.reward is not None]
    n = len(scored) or 1
    formatted = [r for r in scored if r.format_ok]
    steps = [s for r in formatted for s in r.steps]
    m = {
        "prosfi/format_rate": len(formatted) / n,
        "prosfi/answer_accuracy": sum(r.answer_correct for r in scored) / n,
        "prosfi/mean_steps": len(steps) / (len(formatted) or 1),
        "prosfi/chain_valid_rate": sum(r.chain_valid for r in scored) / n,
        "prosfi/verified_step_fraction": sum(s.verified for s in steps) / (len(steps) or 1),
        "prosfi/unknown_fraction": sum(s.verdict == "unknown" for s in steps) / (len(steps) or 1),
        "prosfi/verify_ms": float(verify_ms),
        "prosfi/cache_hit_rate": float(cache_hit_rate),
    }
    return {k: float(m[k]) for k in metric_names(mode)}


def cache_hit_rate(before: Mapping | None, after: Mapping | None) -> float:
    """Verdict-cache hit rate over one batch from two `Verifier.stats()` snapshots (`checks`,
    `cache_hits` counters); falls back to the verifier's cumulative `hit_rate`."""
    if not after:
        return 0.0
    before = before or {}
    checks, hits = after.get("checks"), after.get("cache_hits")
    if isinstance(checks, (int, float)) and isinstance(hits, (int, float)):
        d_checks = checks - before.get("checks", 0)
        d_hits = hits - before.get("cache_hits", 0)
        return d_hits / d_checks if d_checks > 0 else 0.0
    rate = after.get("hit_rate", after.get("cache_hit_rate"))
    return float(rate) if isinstance(rate, (int, float)) else 0.0


def summaries(results: Sequence[ScoreResult]) -> list[str]:
    return [r.summary() for r in results]


__all__ = ["EXTRA_COLUMN", "batch_metrics", "cache_hit_rate", "metric_names", "summaries"]
