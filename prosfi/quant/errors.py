"""QuantError: the one exception the quantity verifier raises, with a kind the verdict maps.

Kinds: "error" (outside the grammar, unknown name or unit: the input is malformed -> `error`),
"dimension" (m + s, exp of a length: a reasoning mistake -> `invalid`), "math" (division by zero,
sqrt of a negative, log of 0: the expression has no value -> `invalid`), "bound" (a size or depth
guard refused the work -> `unknown`).
"""

from __future__ import annotations

KINDS = ("error", "dimension", "math", "bound")


class QuantError(ValueError):
    def __init__(self, message: str, kind: str = "error"):
        if kind not in KINDS:
            raise ValueError(f"QuantError kind must be one of {KINDS}, got {kind!r}")
        super().__init__(message)
        self.kind = kind


__all__ = ["QuantError", "KINDS"]
