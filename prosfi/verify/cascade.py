"""The cascade: ask backends in order until one decides.

The first `valid` wins (any sound prover's proof is enough); `invalid` stops the cascade too,
because backends only say invalid with a countermodel, and then no sound prover can prove the
step. Everything else (unknown, a backend that raised or answered `error` on input the parent
already parsed and type-checked) is `unknown`, with every backend's reason kept in the detail.
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Callable, Sequence

from prosfi.verify.backend import Backend, Check
from prosfi.verdict import Status, Verdict, unknown

if TYPE_CHECKING:  # pragma: no cover
    from prosfi.logic.signature import Signature

DECISIVE = (Status.VALID, Status.INVALID)


def as_backend_answer(backend: Backend, verdict: Verdict) -> Verdict:
    """A backend's `error` means the backend failed on well-formed input: report it as unknown."""
    if verdict.status is Status.ERROR:
        return unknown(f"{backend.name}: {verdict.detail}", backend.name, verdict.ms)
    return verdict


def merge_unknown(details: Sequence[str], ms: float) -> Verdict:
    return unknown("; ".join(d for d in details if d) or "no backend decided", None, ms)


class Cascade:
    """In-worker backends in configured order, sharing per-signature sessions."""

    def __init__(self, backends: Sequence[Backend]):
        self.backends = list(backends)

    def session(
        self, signature: "Signature", timeout_ms: int, only: Sequence[int] | None = None
    ) -> Callable[[Check], Verdict]:
        """A checker for checks over `signature`; `only` picks backends by index (a cascade stage)."""
        sessions: list[Callable[[Check], Verdict] | None] = [None] * len(self.backends)
        order = range(len(self.backends)) if only is None else only

        def run(check: Check) -> Verdict:
            start = time.perf_counter()
            details: list[str] = []
            for i in order:
                backend = self.backends[i]
                try:
                    if sessions[i] is None:  # built on first use: Prover9 often never runs
                        sessions[i] = backend.session(signature, timeout_ms)
                    verdict = as_backend_answer(backend, sessions[i](check))
                except Exception as exc:  # a backend bug must not lose the batch
                    sessions[i] = None
                    verdict = unknown(f"{backend.name}: {type(exc).__name__}: {exc}"[:500], backend.name)
                if verdict.status in DECISIVE:
                    return Verdict(verdict.status, verdict.backend, _ms(start), verdict.detail)
                details.append(verdict.detail)
            return merge_unknown(details, _ms(start))

        return run

    def close(self) -> None:
        for backend in self.backends:
            try:
                backend.close()
            except Exception:  # pragma: no cover - closing is best effort
                pass


def _ms(start: float) -> float:
    return (time.perf_counter() - start) * 1000.0


__all__ = ["Cascade", "DECISIVE", "as_backend_answer", "merge_unknown"]
