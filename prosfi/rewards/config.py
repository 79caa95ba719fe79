"""Reward levels and modes (one dataclass, TRL style: every field has help, checked early)."""

from __future__ import annotations

from dataclasses import dataclass, field

from prosfi.rewards.formats import DEFAULT_FORMAT, mode_names, modes_of

# the modes of the steps format: what `prosfi score`, `prosfi serve` and a recipe's reward_url take
REWARD_MODES = modes_of(DEFAULT_FORMAT)
ALL_MODES = mode_names()  # every mode at import (prosfi.rewards.formats maps each to its format)


@dataclass
class RewardConfig:
    mode: str = field(
        default="prosfi",
        metadata={"help": "prosfi: gated on a fully verified chain; outcome: answer only (steps ignored); "
                  "step_fraction: right answer scaled by the verified-step fraction (ablation); format: "
                  "layout only; direct_lean: the Lean engineer's direct proof reward."},
    )
    format_failure: float = field(
        default=0.0, metadata={"help": "Malformed completion (layout, tag-stuffing, step schema)."}
    )
    wrong_answer: float = field(default=0.1, metadata={"help": "Well-formed, answer wrong or unreadable."})
    right_unverified: float = field(
        default=0.3, metadata={"help": "Right answer, chain not fully verified or not reaching the answer."}
    )
    right_verified: float = field(
        default=1.0, metadata={"help": "Right answer established by a fully verified chain (outcome: any "
                               "right answer)."}
    )
    format_ok: float = field(default=1.0, metadata={"help": "Mode `format`: a well-formed completion."})
    max_completion_chars: int = field(
        default=32_000,
        metadata={"help": "Completions longer than this are a format failure, unread (bounds parsing cost)."},
    )

    def __post_init__(self) -> None:
        modes = mode_names()  # read now: a format registered at run time adds its modes
        if self.mode not in modes:
            raise ValueError(f"RewardConfig.mode: {self.mode!r} is not one of {', '.join(modes)}")
        levels = ("format_failure", "wrong_answer", "right_unverified", "right_verified")
        values = [float(getattr(self, name)) for name in levels]
        for (a, va), (b, vb) in zip(zip(levels, values), zip(levels[1:], values[1:])):
            if va > vb:
                raise ValueError(f"RewardConfig.{a} ({va}) must not exceed RewardConfig.{b} ({vb}): the levels "
                                 "order what the policy learns to prefer")
        if self.max_completion_chars < 1:
            raise ValueError("RewardConfig.max_completion_chars must be >= 1")


__all__ = ["ALL_MODES", "REWARD_MODES", "RewardConfig"]
