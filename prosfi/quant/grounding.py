"""The numbers a quantity step may write as literals without citing a given (docs/quantity.md,
"Chain rules (grounding)"). Every other literal must be the number of one of the problem's givens:
a policy must not be able to invent the data it computes from.

Two kinds of constants:
- always allowed: 0, 1, 2 (complements `1 - x`, halving, doubling, squares) and 0.5 (one half);
- unit factors and calendar facts (7, 12, 24, 52, 60, 100, 365, 1000, 3600), allowed only when the
  problem names what they convert (60 needs "hour", "minute", …; 100 needs "percent", "%", "cent", …):
  a bare 60 in a problem about eggs is an invented number, not minutes per hour.
Small integers from 3 up are not constants: the question states them (Q1's givens extraction reads
"three", "a dozen", "twice"), and allowing them would let a chain build any answer (`g4 * 9`).

Here, in the bottom layer, so data (gold builders) and domains (the chain rules) read one list.
Keys are exact Fractions (`60 in ALLOWED_CONSTANTS` works for ints too); values say why.
"""

from __future__ import annotations

import re
from fractions import Fraction

ALLOWED_CONSTANTS: dict[Fraction, str] = {
    Fraction(0): "zero",
    Fraction(1): "one (complements such as 1 - x, one more)",
    Fraction(2): "two (halves, doubles, squares)",
    Fraction(1, 2): "one half (written 0.5)",
    Fraction(7): "days per week",
    Fraction(12): "months per year; a dozen; inches per foot",
    Fraction(24): "hours per day",
    Fraction(52): "weeks per year",
    Fraction(60): "minutes per hour, seconds per minute",
    Fraction(100): "percent; cents per dollar; centimetres per metre",
    Fraction(365): "days per year",
    Fraction(1000): "metric prefixes (grams per kilogram, metres per kilometre); a thousand",
    Fraction(3600): "seconds per hour",
}

# constant -> words (case-insensitive prefixes) one of which the problem must contain for it to be allowed
CONSTANT_CONTEXT: dict[Fraction, tuple[str, ...]] = {
    Fraction(7): ("week", "day"),
    Fraction(12): ("month", "year", "dozen", "inch", "foot", "feet", "ft"),
    Fraction(24): ("day", "hour", "hr"),
    Fraction(52): ("week", "year"),
    Fraction(60): ("hour", "minute", "min", "second", "sec", "hr", "h"),
    Fraction(100): ("percent", "%", "cent", "centi", "cm", "meter", "metre", "dollar", "$", "usd"),
    Fraction(365): ("year", "day"),
    Fraction(1000): ("kilo", "thousand", "gram", "meter", "metre", "liter", "litre", "milli", "km", "kg", "ml",
                     "mg", "mm", "k"),
    Fraction(3600): ("hour", "second", "hr", "h", "s"),
}


def _mentions(text: str, words: tuple[str, ...]) -> bool:
    low = text.lower()
    for w in words:
        if not w[0].isalpha():
            if w in low:
                return True
        elif len(w) <= 2:  # a unit symbol: a whole token ("h", "km/h", "5 s")
            if re.search(rf"(?<![a-z]){re.escape(w)}(?![a-z])", low):
                return True
        elif re.search(rf"(?<![a-z]){re.escape(w)}", low):
            return True
    return False


def allowed_constant(value: Fraction, context: str | None = None) -> str | None:
    """Why `value` may be written as a literal in a problem whose text (question, units) is `context`,
    or None when it must come from a given. Without a context, unit factors are not checked."""
    value = Fraction(value)
    why = ALLOWED_CONSTANTS.get(value)
    if why is None:
        return None
    words = CONSTANT_CONTEXT.get(value)
    if words and context is not None and not _mentions(context, words):
        return None
    return why


__all__ = ["ALLOWED_CONSTANTS", "CONSTANT_CONTEXT", "allowed_constant"]
