"""The `lean` and `lean_dojo` verifier backends: render a step theorem, check it, read the verdict.

Both own their processes and hard timeouts (`in_worker = False`): the verifier calls them from
the parent for the checks the cascade has not decided. A Lean tactic failure is not a
countermodel, so these backends answer `valid` or `unknown`, never `invalid`.
"""

from __future__ import annotations

import sys
import threading
from collections.abc import Sequence
from dataclasses import replace
from typing import TYPE_CHECKING

from prosfi.verify.backend import Backend, Check
from prosfi.verify.lean.config import LeanConfig
from prosfi.verify.lean.pool import ReplPool
from prosfi.verify.lean.render import render_step
from prosfi.verify.lean.repl import ReplOutcome
from prosfi.verdict import Status, Verdict, unknown

if TYPE_CHECKING:  # pragma: no cover
    from prosfi.logic.signature import Signature


def outcome_verdict(outcome: ReplOutcome, backend: str) -> Verdict:
    if outcome.ok:
        return Verdict(Status.VALID, backend, outcome.ms, "proved")
    return unknown(f"{backend} {outcome.kind}: {outcome.detail}"[:500], backend, outcome.ms)


class LeanBackend(Backend):
    """Step lemmas through the warm REPL pool. The pool starts on the first check."""

    name = "lean"
    in_worker = False

    def __init__(self, config: LeanConfig | None = None):
        self.config = config or LeanConfig()
        reason = self.config.unavailable()
        if reason:
            raise RuntimeError(f"the {self.name!r} verifier backend cannot run: {reason}")
        self._pool: ReplPool | None = None
        self._lock = threading.Lock()

    @classmethod
    def unavailable(cls) -> str | None:
        return LeanConfig().unavailable()

    @classmethod
    def unavailable_for(cls, config) -> str | None:
        """Whether Lean can run with the verifier's `lean` settings (its project, its REPL command)."""
        return cls.lean_config(config).unavailable()

    @staticmethod
    def lean_config(config) -> LeanConfig:
        """The verifier's `LeanConfig` (`config.lean`), or the defaults when it carries none."""
        lean = getattr(config, "lean", None)
        return lean if isinstance(lean, LeanConfig) else LeanConfig()

    @classmethod
    def from_config(cls, config) -> LeanBackend:
        """Built by the verifier: a `LeanConfig` in `config.lean` if the verifier carries one."""
        return cls(cls.lean_config(config))

    @property
    def pool(self) -> ReplPool:
        with self._lock:
            if self._pool is None:
                self._pool = self._make_pool()
            return self._pool

    def _make_pool(self) -> ReplPool:
        return ReplPool(self.config)

    def _timeout_s(self, timeout_ms: int) -> float:
        return self.config.timeout_s if self.config.timeout_s is not None else timeout_ms / 1000

    def check(self, check: Check, signature: Signature, timeout_ms: int) -> Verdict:
        return self.check_group([check], signature, timeout_ms)[0]

    def check_group(self, checks: Sequence[Check], signature: Signature, timeout_ms: int) -> list[Verdict]:
        """One verdict per check, in order; checks run in parallel over the pool."""
        return self.check_many([(signature, c) for c in checks], timeout_ms)

    def check_many(self, items: Sequence[tuple[Signature, Check]], timeout_ms: int) -> list[Verdict]:
        """Checks of many problems in one parallel batch (fills the pool better than one
        `check_group` call per signature). One verdict per check, in order."""
        verdicts: list[Verdict | None] = [None] * len(items)
        commands: list[tuple[int, str]] = []
        for i, (signature, c) in enumerate(items):
            try:
                commands.append((i, render_step(c, signature, self.config)))
            except Exception as exc:  # noqa: BLE001 - a renderer gap must not lose the batch
                verdicts[i] = unknown(f"{self.name}: cannot render: {type(exc).__name__}: {exc}"[:500], self.name)
        if commands:
            outcomes = self.pool.run_many([cmd for _, cmd in commands], self._timeout_s(timeout_ms))
            for (i, _), outcome in zip(commands, outcomes):
                verdicts[i] = outcome_verdict(outcome, self.name)
        return [v if v is not None else unknown(f"{self.name}: no answer", self.name) for v in verdicts]

    def close(self) -> None:
        with self._lock:
            if self._pool is not None:
                self._pool.close()
                self._pool = None


class LeanDojoBackend(LeanBackend):
    """The same theorems through LeanDojo (command mode on lean_project), one Dojo per worker.

    Rarely worth it: LeanDojo traces the whole repository first and re-elaborates the file
    prefix for every Dojo, so it is far slower than the REPL pool for thousands of tiny lemmas.
    The Dojo runs in a child process (`prosfi.verify.lean.dojo_worker`) that speaks the REPL
    protocol, so the pool's hard timeouts, respawns and recycling apply unchanged.
    """

    name = "lean_dojo"

    def __init__(self, config: LeanConfig | None = None):
        config = config or LeanConfig()
        reason = self.dojo_unavailable(config)
        if reason:
            raise RuntimeError(f"the 'lean_dojo' verifier backend cannot run: {reason}")
        self.config = config
        self._pool = None
        self._lock = threading.Lock()

    @classmethod
    def unavailable(cls) -> str | None:
        return cls.dojo_unavailable(LeanConfig())

    @classmethod
    def unavailable_for(cls, config) -> str | None:
        return cls.dojo_unavailable(cls.lean_config(config))

    @staticmethod
    def dojo_unavailable(config: LeanConfig) -> str | None:
        import importlib.util

        if importlib.util.find_spec("lean_dojo") is None:
            return "the lean_dojo package is not installed (pip install 'prosfi[lean]')"
        return config.unavailable()

    def _make_pool(self) -> ReplPool:
        project = self.config.project_dir()
        command = (sys.executable, "-m", "prosfi.verify.lean.dojo_worker", "--project", str(project))
        # One Dojo at a time: each runs a whole `lake env lean` on the traced file and is memory-hungry.
        return ReplPool(replace(self.config, repl_command=command), size=1)


__all__ = ["LeanBackend", "LeanDojoBackend", "outcome_verdict"]
