"""Lean 4 backend: whole-theorem rendering, a warm REPL pool, the `lean` and `lean_dojo` backends.

`lean_project/` (a Lake project with Aesop and the REPL) must be built on the machine:
`cd lean_project && lake build`. See docs/lean.md.

Names are imported lazily, so `VerifierConfig` can carry a `LeanConfig` without loading the
backend, the pool or the renderer.
"""

from __future__ import annotations

import importlib
from typing import Any

_EXPORTS = {
    "LeanBackend": "prosfi.verify.lean.backend",
    "LeanDojoBackend": "prosfi.verify.lean.backend",
    "LeanConfig": "prosfi.verify.lean.config",
    "ReplPool": "prosfi.verify.lean.pool",
}


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'prosfi.verify.lean' has no attribute {name!r}")
    return getattr(importlib.import_module(module), name)


def __dir__() -> list[str]:
    return sorted([*globals(), *_EXPORTS])


__all__ = list(_EXPORTS)
