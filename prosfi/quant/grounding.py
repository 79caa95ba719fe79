"""The numbers a quantity step may write as literals without citing a given (docs/quantity.md,
"Chain rules (grounding)"). Every other literal must be the number of one of the problem's givens:
a policy must not be able to invent the data it computes from.

Here, in the bottom layer, so data (gold builders) and domains (the chain rules) read one list.
Keys are exact Fractions (`60 in ALLOWED_CONSTANTS` works for ints too); values say why.
"""

from __future__ import annotations

from fractions import Fraction

SMALL_INTEGERS = range(0, 11)  # counting, halving, doubling, complements (1 - x), "one more"

ALLOWED_CONSTANTS: dict[Fraction, str] = {
    **{Fraction(n): "small integer (counting, halves, doubles, complements such as 1 - x)" for n in SMALL_INTEGERS},
    Fraction(1, 2): "one half (written 0.5)",
    Fraction(12): "months per year; a dozen",
    Fraction(24): "hours per day",
    Fraction(7): "days per week",
    Fraction(52): "weeks per year",
    Fraction(365): "days per year",
    Fraction(60): "minutes per hour, seconds per minute",
    Fraction(100): "percent; cents per dollar; centimetres per metre",
    Fraction(1000): "metric prefixes (grams per kilogram, metres per kilometre)",
    Fraction(3600): "seconds per hour",
}


def allowed_constant(value: Fraction) -> str | None:
    """Why `value` may be written as a literal, or None when it must come from a given."""
    return ALLOWED_CONSTANTS.get(Fraction(value))


__all__ = ["ALLOWED_CONSTANTS", "SMALL_INTEGERS", "allowed_constant"]
