"""The interface every prover backend implements: render from the AST, run, interpret.

A backend module does those three things and nothing else (STYLE.md). The cascade and the
worker pool (prosfi.verify.pool / prosfi.verify.verifier) decide *where* a backend runs:

- `in_worker = True` (Z3, Prover9): the backend object is built inside each pool worker
  process and called there; the pool enforces the wall-clock limit by killing the worker.
- `in_worker = False` (Lean REPL pool, LeanDojo): the backend owns its own processes and its
  own hard timeouts, and is called from the parent, through `check_many`, with every check of
  a batch still undecided.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass
from typing import TYPE_CHECKING, Callable, ClassVar, Sequence

from prosfi.logic.ast import Formula
from prosfi.verdict import Verdict

if TYPE_CHECKING:  # pragma: no cover
    from prosfi.logic.signature import Signature
    from prosfi.verify.config import VerifierConfig


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
        """None when the backend can run here, else a one-line reason that says what to install or
        set (an explicitly requested backend fails with it; an optional one is reported and skipped)."""
        return None

    @classmethod
    def unavailable_for(cls, config: "VerifierConfig") -> str | None:
        """`unavailable` under the verifier's configuration (override when settings decide it,
        e.g. where the Lean project is)."""
        return cls.unavailable()

    @abstractmethod
    def check(self, check: Check, signature: "Signature", timeout_ms: int) -> Verdict:
        """Decide one entailment soundly: valid on a proof, invalid on a countermodel, else unknown."""

    @classmethod
    def from_config(cls, config: "VerifierConfig") -> "Backend":
        """Build the backend from the verifier's configuration (override to read its fields)."""
        return cls()

    def session(self, signature: "Signature", timeout_ms: int) -> Callable[[Check], Verdict]:
        """A checker for a run of checks that share `signature`, called one check at a time (the
        pool needs each verdict as soon as it exists). Override to keep solver state between them."""
        return lambda check: self.check(check, signature, timeout_ms)

    def check_group(self, checks: Sequence[Check], signature: "Signature", timeout_ms: int) -> list[Verdict]:
        """Checks that share a signature (one problem). Override `session` to solve incrementally."""
        run = self.session(signature, timeout_ms)
        return [run(c) for c in checks]

    def check_many(self, items: Sequence[tuple["Signature", Check]], timeout_ms: int) -> list[Verdict]:
        """Checks of many problems at once, one verdict per item in order. The verifier hands a
        backend that runs in the parent every undecided check of a batch in one call; override
        to spread them over your own processes (the Lean REPL pool). Default: one `check_group`
        per signature."""
        by_signature: dict = {}
        for k, (signature, _) in enumerate(items):
            by_signature.setdefault(signature, []).append(k)
        out: list[Verdict | None] = [None] * len(items)
        for signature, ks in by_signature.items():
            for k, verdict in zip(ks, self.check_group([items[k][1] for k in ks], signature, timeout_ms)):
                out[k] = verdict
        return out  # type: ignore[return-value]

    def close(self) -> None:
        """Release processes or solvers. Called once when the owner shuts down."""
