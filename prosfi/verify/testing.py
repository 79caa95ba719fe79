"""Fault-injection backends for exercising the pool and the cascade (tests, debugging).

They are selected like any custom backend, by path: `--backends prosfi.verify.testing:FaultBackend`.
Their answers are trivially sound: `valid` only when the conclusion is literally one of the
premises, otherwise `unknown`. The conclusion's predicate name picks a fault:
  Hang     sleep far past any time limit (only the pool's kill can end the check)
  Slow     take the whole time limit, then `unknown` (a hard check that ends at its own timeout)
  Crash    the worker process exits abruptly (os._exit)
  Raise    the backend raises an exception
"""

from __future__ import annotations

import os
import time
from typing import TYPE_CHECKING

from prosfi.logic.ast import Pred
from prosfi.verify.backend import Backend, Check
from prosfi.verdict import Status, Verdict, unknown

if TYPE_CHECKING:  # pragma: no cover
    from prosfi.logic.signature import Signature


class FaultBackend(Backend):
    name = "fault"
    in_worker = True

    def check(self, check: Check, signature: "Signature", timeout_ms: int) -> Verdict:
        concl = check.conclusion
        fault = concl.name if isinstance(concl, Pred) else None
        if fault == "Hang":
            time.sleep(3600)
        elif fault == "Slow":
            time.sleep(timeout_ms / 1000.0)
            return unknown(f"fault: slow, no answer within {timeout_ms} ms", self.name)
        elif fault == "Crash":
            os._exit(3)
        elif fault == "Raise":
            raise RuntimeError("injected failure")
        if any(f == concl for _, f in check.premises):
            return Verdict(Status.VALID, self.name, 0.0, "conclusion is a premise")
        return unknown("fault: not a premise", self.name)


class ParentBackend(FaultBackend):
    """The same answers, but run from the parent like the Lean backend (in_worker = False)."""

    name = "parent-fault"
    in_worker = False

    def __init__(self) -> None:
        self.calls = 0
        self.batches: list[int] = []  # checks per `check_many` call (the verifier's batching)

    def check_many(self, items, timeout_ms):
        self.batches.append(len(items))
        return super().check_many(items, timeout_ms)

    def check_group(self, checks, signature, timeout_ms):
        self.calls += len(checks)
        return [self._answer(c) for c in checks]

    def check(self, check, signature, timeout_ms):
        return self.check_group([check], signature, timeout_ms)[0]

    def _answer(self, check: Check) -> Verdict:
        if any(f == check.conclusion for _, f in check.premises):
            return Verdict(Status.VALID, self.name, 0.0, "conclusion is a premise")
        return unknown("parent-fault: not a premise", self.name)


class MissingBackend(FaultBackend):
    """A backend that is never installed: the verifier must report it once and skip it."""

    name = "missing"

    @classmethod
    def unavailable(cls) -> str | None:
        return "not installed here (test double)"


__all__ = ["FaultBackend", "ParentBackend", "MissingBackend"]
