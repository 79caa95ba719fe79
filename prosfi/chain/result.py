"""What a chain check returns, in every domain: one `StepResult` a step and the `ChainResult` of the
chain. Both the logic chain check (`prosfi.chain.check`) and each domain's own (the quantity domain's
`QuantityChainCheck`) build them, and the rewards, eval and PRM layers read only these.
"""

from __future__ import annotations

from dataclasses import dataclass

from prosfi.verdict import Status

REJECTED = "rejected"  # a guard made the step not count; not a prover verdict
_VALID = Status.VALID.value


@dataclass(frozen=True)
class StepResult:
    id: str
    verdict: str  # valid | invalid | unknown | error | rejected
    reason: str = ""
    backend: str | None = None
    ms: float = 0.0

    @property
    def verified(self) -> bool:
        return self.verdict == _VALID

    def to_json(self) -> dict:
        return {"id": self.id, "verdict": self.verdict, "reason": self.reason}


@dataclass(frozen=True)
class ChainResult:
    steps: tuple[StepResult, ...]
    all_verified: bool  # at least min_steps steps, every one verified
    established: bool  # the chain (or, for Uncertain, the countermodels) establishes the claim
    reason: str = ""  # why the chain is not valid; empty when it is
    failed: bool = False  # checking itself broke (the reason says how); scored as a format failure
    credited: int | None = None  # steps that earn step_fraction credit (None: the verified ones)

    @property
    def chain_valid(self) -> bool:
        return self.all_verified and self.established

    @property
    def verified_fraction(self) -> float:
        if not self.steps:
            return 1.0 if self.established else 0.0
        return sum(s.verified for s in self.steps) / len(self.steps)


__all__ = ["REJECTED", "ChainResult", "StepResult"]
