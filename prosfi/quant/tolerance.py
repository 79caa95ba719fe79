"""Tolerance: when a claimed value counts as the true one.

valid iff the dimensions agree and |true - claim| <= rel * max(|true|, abs_eps), compared in SI base
units (so 3 m/s == 10.8 km/h). The tolerance is relative to the true value's own magnitude: `abs_eps` is 0
by default, because any absolute floor in SI units is huge for some quantity (1e-12 accepted `0 C` for an
elementary charge, 1.6e-19 C); a true value of exactly 0 then needs a claim of exactly 0. With `sigfigs`, a claim also counts when it is the true value rounded
to that many significant figures in the claim's own unit (textbook-rounded answers: 9.81 for
9.80665). Exact values compare exactly (Fractions), so the tolerance is the only slack.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from fractions import Fraction

from prosfi.quant.errors import QuantError
from prosfi.quant.units import DIMENSIONLESS, Value, default_unit, dims_text, format_value


@dataclass(frozen=True)
class Tolerance:
    rel: float = field(default=1e-5, metadata={"help": "relative tolerance: |true - claim| <= rel * "
                                                       "max(|true|, abs_eps)"})
    abs_eps: float = field(default=0.0, metadata={"help": "floor of the scale in SI base units (0: purely "
                                                          "relative); with a floor, a true value of 0 accepts "
                                                          "|claim| <= rel * abs_eps"})
    sigfigs: int | None = field(default=None, metadata={
        "help": "also accept the true value rounded to this many significant figures (in the claim's unit)"})

    def __post_init__(self):
        if not (self.rel >= 0 and math.isfinite(self.rel)):
            raise ValueError(f"Tolerance.rel must be a finite number >= 0, got {self.rel!r}")
        if not (self.abs_eps >= 0 and math.isfinite(self.abs_eps)):
            raise ValueError(f"Tolerance.abs_eps must be a finite number >= 0, got {self.abs_eps!r}")
        if self.sigfigs is not None and not (isinstance(self.sigfigs, int) and 1 <= self.sigfigs <= 15):
            raise ValueError(f"Tolerance.sigfigs must be an int in 1..15 or None, got {self.sigfigs!r}")


def _unit_name(v: Value) -> str:
    if v.unit:
        return v.unit
    return default_unit(v.dims) or "no unit"


def relative_ok(t, c, tol: Tolerance) -> bool:
    if isinstance(t, Fraction) and isinstance(c, Fraction):
        scale = max(abs(t), Fraction(tol.abs_eps))
        return abs(t - c) <= Fraction(tol.rel) * scale
    try:
        tf, cf = float(t), float(c)
    except OverflowError:
        return False
    return abs(tf - cf) <= tol.rel * max(abs(tf), tol.abs_eps)


def _sigfig_ok(true: Value, claim: Value, n: int) -> bool:
    try:
        t = float(true.magnitude_in(claim.unit or None))
        c = float(claim.magnitude_in(claim.unit or None))
    except (OverflowError, QuantError):
        return False
    if c == 0 or not math.isfinite(t):
        return t == c
    half = 0.5 * 10.0 ** (math.floor(math.log10(abs(c))) - n + 1)
    return abs(t - c) <= half * (1 + 1e-9)


def close_enough(true: Value, claim: Value, tol: Tolerance = Tolerance()) -> tuple[bool, str]:
    """(ok, reason): reason is "" when ok, else "wrong unit: …" or "wrong value: expected …"."""
    if true.dims != claim.dims:
        want = ("a plain number" if true.dims == DIMENSIONLESS
                else f"{dims_text(true.dims)} (e.g. {_unit_name(true)})")
        got = ("a plain number" if claim.dims == DIMENSIONLESS
               else f"{_unit_name(claim)} ({dims_text(claim.dims)})")
        return False, f"wrong unit: expected {want}, got {got}"
    if relative_ok(true.mag, claim.mag, tol):
        return True, ""
    if tol.sigfigs is not None and _sigfig_ok(true, claim, tol.sigfigs):
        return True, ""
    try:
        expected = format_value(true, claim.unit if claim.unit else None)
    except QuantError:
        expected = format_value(true)
    return False, f"wrong value: expected {expected}, got {format_value(claim)}"


__all__ = ["Tolerance", "close_enough"]
