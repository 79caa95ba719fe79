"""TRL reward functions over verified step chains, metrics, the audit log and `prosfi score`.

Imports of the scoring path are lazy so `import prosfi.rewards` stays cheap for the CLI table.
"""

from __future__ import annotations

from prosfi.rewards.config import ALL_MODES, REWARD_MODES, RewardConfig

_LAZY = {
    "ScoreResult": "prosfi.rewards.score",
    "score_batch": "prosfi.rewards.score",
    "ascore_batch": "prosfi.rewards.score",
    "score_completion": "prosfi.rewards.score",
    "make_reward_funcs": "prosfi.rewards.funcs",
    "ProsfiReward": "prosfi.rewards.funcs",
    "AsyncProsfiReward": "prosfi.rewards.funcs",
    "AuditLog": "prosfi.rewards.audit",
    "read_audit": "prosfi.rewards.audit",
    "batch_metrics": "prosfi.rewards.metrics",
}


def __getattr__(name: str):
    if name in _LAZY:
        import importlib

        return getattr(importlib.import_module(_LAZY[name]), name)
    raise AttributeError(f"module 'prosfi.rewards' has no attribute {name!r}")


__all__ = [  # noqa: RUF022 - grouped: eager names, then the lazy ones
    "ALL_MODES", "REWARD_MODES", "RewardConfig", "AsyncProsfiReward", "AuditLog", "ProsfiReward", "ScoreResult",
    "ascore_batch", "batch_metrics", "make_reward_funcs", "read_audit", "score_batch", "score_completion",
]
