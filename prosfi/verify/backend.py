"""The interface every prover backend implements: render from the AST, run, interpret.

A backend module does those three things and nothing else (STYLE.md). The cascade and the
worker pool (prosfi.verify.pool / prosfi.verify.verifier) decide *where* a backend runs:

- `in_worker = True` (Z3, Prover9): the backend object is built inside each pool worker
  process and called there; the pool enforces the wall-clock limit by killing the worker.
- `in_worker = False` (Lean REPL pool, LeanDojo): the backend owns its own processes and its
  own hard timeouts, and is called from the parent for the checks still undecided.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass
from typing import TYPE_CHECKING, ClassVar, Sequence

from prosfi.logic.ast import Formula
from prosfi.verify.verdict import Verdict

if TYPE_CHECKING:  # pragma: no cover
    from prosfi.logic.signature import Signature


@dataclass(frozen=True)
class Check:
    """One parsed, type-checked entailment: named premises ⊢ conclusion."""

    premises: tuple[tuple[str, Formula], ...]
    conclusion: Formula


class Backend(ABC):
    name: ClassVar[str]
    in_worker: ClassVar[bool] = True

    @classmethod
    def unavailable(cls) -> str | None:
        """None when the backend can run here, else a one-line reason (reported once, then skipped)."""
        return None

    @abstractmethod
    def check(self, check: Check, signature: "Signature", timeout_ms: int) -> Verdict:
        """Decide one entailment soundly: valid on a proof, invalid on a countermodel, else unknown."""

    def check_group(self, checks: Sequence[Check], signature: "Signature", timeout_ms: int) -> list[Verdict]:
        """Checks that share a signature (one problem). Override to solve incrementally."""
        return [self.check(c, signature, timeout_ms) for c in checks]

    def close(self) -> None:
        """Release processes or solvers. Called once when the owner shuts down."""
