"""Lean 4 backend: whole-theorem rendering, a warm REPL pool, the `lean` and `lean_dojo` backends.

`lean_project/` (a Lake project with Aesop and the REPL) must be built on the machine:
`cd lean_project && lake build`. See the README's Lean section.
"""

from prosfi.verify.lean.backend import LeanBackend, LeanDojoBackend
from prosfi.verify.lean.config import LeanConfig
from prosfi.verify.lean.pool import ReplPool

__all__ = ["LeanBackend", "LeanConfig", "LeanDojoBackend", "ReplPool"]
