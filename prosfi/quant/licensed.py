"""The numbers a quantity chain may use that no given states (docs/quantity.md, "Chain rules"): a policy
must not be able to invent the data it computes from, neither as a literal nor through arithmetic.

Two tables, both matched against the problem's own words (whole words, never a prefix or a possessive):

- `ALLOWED_CONSTANTS`: the literals a step may write without citing a given. `0`, `1`, `2`, `0.5` always
  (complements `1 - x`, squares, `sqrt(2 * a * d)`); unit factors and calendar facts (7, 12, 24, 52, 60, 100,
  365, 1000, 1440, 3600, 86400) only where the problem names *both* things they convert (`CONSTANT_CONTEXT`:
  60 needs hours and minutes, or minutes and seconds): a bare 60 in a problem about eggs is an invented number.
  A word that is itself the number counts alone: "dozen" (12), "weekday" (5, Monday to Friday). World facts
  are licensed the same way, by a pair of words naming both sides: 5280 with "mile" and "feet", 30 with "June"
  (a month name, capitalised) and "day", legs with the animal and "legs", 4 with "month" and "week" (not a unit
  factor, a month is 4.35 weeks, but GSM8K's convention: its answers assume it). A 2 (always a literal) is a
  multiple only with its pair ("chickens" and "legs"). Coins are not listed: their chains compute plain numbers
  where GSM8K's answers are cents or dollars.
- `MULTIPLE_WORDS`: the pure multiples a step may apply to a value (`s1 * 2`, `s1 + s1`, `s1 / 2`, `g1 + g1 +
  g1`) only where a word states them ("twice", "double", "half", "triple"). The chain rules find such a
  multiple by dependence (a step that is c times a given or an earlier step, whatever expression produced it),
  so a count nobody stated cannot enter through repeated addition or a chain of doublings either.
  A licensed unit factor is a licensed multiple too (`s1 * 60` for hours to minutes).

Here, in the bottom layer, so data (gold builders) and domains (the chain rules) read one list.
Keys are exact Fractions (`60 in ALLOWED_CONSTANTS` works for ints too); values say why.
"""

from __future__ import annotations

import functools
import itertools
import re
from fractions import Fraction

ALLOWED_CONSTANTS: dict[Fraction, str] = {
    Fraction(0): "zero",
    Fraction(1): "one (complements such as 1 - x)",
    Fraction(2): "two (squares, formulas such as sqrt(2 * a * d); as a multiple it needs a word, see below)",
    Fraction(1, 2): "one half (written 0.5; formulas such as 0.5 * m * v**2)",
    Fraction(3): "feet per yard; wheels of a tricycle",
    Fraction(4): "quarts per gallon; legs of a four-legged animal; weeks in a month "
                 "(GSM8K's convention: its answers read a month as 4 weeks)",
    Fraction(5): "weekdays per week (Monday to Friday)",
    Fraction(6): "legs of an insect",
    Fraction(7): "days per week",
    Fraction(8): "legs of a spider",
    Fraction(10): "years per decade",
    Fraction(12): "months per year; a dozen; inches per foot",
    Fraction(16): "ounces per pound",
    Fraction(24): "hours per day",
    Fraction(28): "days in February (not a leap year)",
    Fraction(30): "days in April, June, September, November",
    Fraction(31): "days in January, March, May, July, August, October, December",
    Fraction(52): "weeks per year",
    Fraction(60): "minutes per hour, seconds per minute",
    Fraction(100): "percent; cents per dollar; centimetres per metre; years per century",
    Fraction(365): "days per year",
    Fraction(1000): "metric prefixes (grams per kilogram, metres per kilometre); a thousand",
    Fraction(2000): "pounds per (short) ton",
    Fraction(5280): "feet per mile",
    Fraction(1440): "minutes per day",
    Fraction(3600): "seconds per hour",
    Fraction(86400): "seconds per day",
}

# literals needing no context (0, 1, 2, 1/2); a CONSTANT_CONTEXT entry for one of them licenses it only as a
# multiple or unit factor
ALWAYS = frozenset({Fraction(0), Fraction(1), Fraction(2), Fraction(1, 2)})

# constant -> alternatives; each alternative is a tuple of words that must *all* appear in the problem
# A 2 is always a literal (`ALWAYS`), but as a multiple or unit factor only where a pair below names it.
CONSTANT_CONTEXT: dict[Fraction, tuple[tuple[str, ...], ...]] = {
    Fraction(2): (("two-legged", "leg"),),
    Fraction(3): (("yard", "foot"), ("tricycle", "wheel")),
    Fraction(4): (("gallon", "quart"), ("four-legged", "leg"), ("month", "week")),
    Fraction(5): (("weekday",),),
    Fraction(6): (("insect", "leg"),),
    Fraction(7): (("week", "day"),),
    Fraction(8): (("spider", "leg"),),
    Fraction(10): (("decade", "year"),),
    Fraction(12): (("month", "year"), ("dozen",), ("inch", "foot")),
    Fraction(16): (("pound", "ounce"),),
    Fraction(24): (("day", "hour"),),
    Fraction(28): (("February", "day"),),
    Fraction(30): (("30-day month", "day"),),
    Fraction(31): (("31-day month", "day"),),
    Fraction(52): (("week", "year"),),
    Fraction(60): (("hour", "minute"), ("minute", "second")),
    Fraction(100): (("percent",), ("cent",), ("centimetre",), ("century", "year")),
    Fraction(365): (("year", "day"),),
    Fraction(1000): (("thousand",), ("kilo",), ("milli",)),
    Fraction(2000): (("ton", "pound"),),
    Fraction(5280): (("mile", "foot"),),
    Fraction(1440): (("day", "minute"),),
    Fraction(3600): (("hour", "second"),),
    Fraction(86400): (("day", "second"),),
}

# a concept -> the whole words (any case; a plural "s"/"es" and "ly" are read too) and the unit symbols that
# name it; a symbol counts only right after a number ("5 h", "30mph") or in a unit field, so the possessive in
# "Janet's" is no "s" (seconds)
CONCEPT_WORDS: dict[str, tuple[tuple[str, ...], tuple[str, ...]]] = {
    "week": (("week", "weekly", "fortnight"), ("wk",)),
    "day": (("day", "daily", "night", "nightly", "every morning", "each morning", "every evening", "each evening"),
            ("d",)),
    "hour": (("hour", "hourly", "mph", "hr"), ("h", "hr", "hrs", "mph", "kph", "kmh")),
    "minute": (("minute", "min"), ("min", "mins")),
    "second": (("second", "sec"), ("s", "sec", "secs")),
    "month": (("month", "monthly"), ()),
    "year": (("year", "yearly", "annual", "annually"), ("yr", "yrs")),
    "dozen": (("dozen",), ()),
    "weekday": (("weekday",), ()),  # Monday to Friday: the word states the 5, as "dozen" states 12
    "inch": (("inch", "inches"), ("in",)),
    "foot": (("foot", "feet"), ("ft",)),
    "percent": (("percent", "percentage", "per cent"), ("%",)),
    "cent": (("cent",), ("¢",)),
    "centimetre": (("centimeter", "centimetre"), ("cm",)),
    "thousand": (("thousand",), ("k",)),
    "kilo": (("kilogram", "kilometer", "kilometre", "kilowatt", "kilo", "kilos", "kilojoule", "kiloliter",
              "kilolitre"), ("kg", "km", "kw", "kwh", "kj", "kl", "kpa", "kn", "kv")),
    "milli": (("milliliter", "millilitre", "milligram", "millimeter", "millimetre", "millisecond"),
              ("ml", "mg", "mm", "ms", "ma", "mv")),
    "yard": (("yard",), ("yd", "yds")),
    "mile": (("mile",), ("mi",)),
    "pound": (("pound",), ("lb", "lbs")),
    "ounce": (("ounce",), ("oz",)),
    "ton": (("ton",), ()),
    "gallon": (("gallon",), ("gal",)),
    "quart": (("quart",), ("qt",)),
    "decade": (("decade",), ()),
    "century": (("century", "centuries"), ()),
    "leg": (("leg",), ()),
    "four-legged": (("dog", "puppy", "puppies", "cat", "kitten", "horse", "pony", "ponies", "cow", "sheep", "goat",
                     "pig", "lamb", "donkey", "rabbit"), ()),
    "two-legged": (("chicken", "hen", "rooster", "duck", "goose", "geese", "bird", "ostrich", "turkey", "parrot",
                    "penguin"), ()),
    "spider": (("spider",), ()),
    "tricycle": (("tricycle",), ()),
    "wheel": (("wheel", "tire", "tyre"), ()),
    "insect": (("insect", "ant", "bee", "beetle", "ladybug"), ()),
}
# Month names are read case-sensitively (capitalised as names are: "may" is a verb, "march" one too) and
# "May" not at a sentence's start ("May I ..."); each names how many days it has.
MONTH_WORDS: dict[str, tuple[str, ...]] = {
    "February": ("February",),
    "30-day month": ("April", "June", "September", "November"),
    "31-day month": ("January", "March", "May", "July", "August", "October", "December"),
}

# a pure multiple -> the words that state it (whole words, as above)
MULTIPLE_WORDS: dict[Fraction, tuple[str, ...]] = {
    Fraction(2): ("twice", "double", "doubled", "doubles", "doubling", "both", "pair", "twin", "round trip",
                  "round-trip", "back and forth", "there and back", "perimeter"),
    Fraction(1, 2): ("half", "halves", "halved", "halve", "halfway", "halving", "every other", "every second",
                     "average", "mean"),
    Fraction(3): ("triple", "tripled", "triples", "tripling", "thrice"),
    Fraction(4): ("quadruple", "quadrupled", "quadruples"),
}
# a constant added to a value -> the words that state it
OFFSET_WORDS: dict[Fraction, tuple[str, ...]] = {
    Fraction(1): ("one more", "one less", "one fewer", "one extra", "plus one", "himself", "herself", "itself",
                  "themselves", "myself", "yourself"),
}
# Number words ("two", "three", "a third") are not here: the givens extraction reads them as givens, which a
# chain cites by id; a count of 3 written as `g1 + g1 + g1` is not licensed by a "three" about something else.
MAX_FACTORS = 3  # a multiple against an earlier value may combine at most this many licensed factors


def _word_pattern(word: str) -> str:
    if not word[0].isalnum():
        return re.escape(word)
    return rf"(?<![a-z0-9]){re.escape(word)}(?:s|es|ly)?(?![a-z0-9])"


def _symbol_pattern(symbol: str) -> str:
    """A unit symbol right after a number ("5 h", "30mph", "2.5 km/h", "$3/h"), or at a unit field's start."""
    return rf"(?:\d\s?|\d\s?[a-z]+/|\|\s?){re.escape(symbol)}(?![a-z0-9])"


# a month name is a month where time words frame it ("in June", "the month of June", "June 5", "from May to
# June"); elsewhere it may be a person ("June has 30 stickers" licenses no 30 days)
_MONTH_BEFORE = re.compile(r"(?:\b(?:in|of|during|until|till|since|through|throughout|by|on|before|after|last|next|"
                           r"this|every|each|early|late|mid|from|to|between|and|or|whole|entire|month)|-)\s*$",
                           re.IGNORECASE)
_MONTH_AFTER = re.compile(r"^(?:\s*\d|\s*,\s*\d|\s+(?:and|or|to|through|till|until)\s+[A-Z][a-z]+)")


def _names_month(context: str, name: str) -> bool:
    """Does the text name the month `name` (case-sensitively, framed by time words: "in June", "June 5"; "May"
    not where a sentence, a line or a quote starts: "May I ...")?"""
    for m in re.finditer(rf"(?<![A-Za-z0-9]){name}(?![A-Za-z0-9'’])", context):
        before = context[:m.start()].rstrip(" \t")
        if name == "May" and (not before or before[-1] in ".!?:;\n\"“'‘"):
            continue
        if _MONTH_BEFORE.search(before[-40:]) or _MONTH_AFTER.match(context[m.end():m.end() + 40]):
            return True
    return False


# senses of a licence word that license nothing (docs/quantity.md, "Licences are typed"): a leg of a trip has no
# feet, "both hands" doubles nothing counted, a "double-decker" is no doubling
_OTHER_SENSES = (
    re.compile(r"\blegs?\s+of\s+(?:the|a|an|his|her|their|its|this|that|our|my|your)?\s*(?:[a-z-]+\s+)?"
               r"(?:trip|journey|race|tour|flight|relay|route|ride|drive|voyage|trek|hike|competition|tournament)\b"),
    re.compile(r"\b(?:first|second|third|fourth|final|last|next|return|opening|closing)\s+legs?\b"),
    re.compile(r"\bboth\s+(?:hands|feet|arms|legs|eyes|ears|sides|ends|ways)\b"),
    re.compile(r"\b[a-z]+-(?:double|twice|triple|half|twin|pair)\b|\b(?:double|triple|half|twin|pair)-[a-z]+\b"),
)


def _one_sense(low: str) -> str:
    for pattern in _OTHER_SENSES:
        low = pattern.sub(" ", low)
    return low


# a one-letter unit symbol is read in its own case ("3 d" is days, "3D" is no unit); longer ones in any case
_CASED = frozenset({"d", "h", "s"})


@functools.lru_cache(maxsize=4096)
def concepts(context: str) -> frozenset[str]:
    """The concepts of `CONCEPT_WORDS` and `MONTH_WORDS` the text names (cached: a batch asks about the same
    problems)."""
    low = _one_sense(context.lower())
    found = set()
    for concept, (words, symbols) in CONCEPT_WORDS.items():
        if any(re.search(_word_pattern(w), low) for w in words) or \
                any(re.search(_symbol_pattern(s), context if s in _CASED else low, re.MULTILINE) for s in symbols):
            found.add(concept)
    for concept, names in MONTH_WORDS.items():
        if any(_names_month(context, n) for n in names):
            found.add(concept)
    return frozenset(found)


def mentions_word(context: str, words: tuple[str, ...]) -> bool:
    low = _one_sense(context.lower())
    return any(re.search(_word_pattern(w), low) for w in words)


def allowed_constant(value: Fraction, context: str | None = None) -> str | None:
    """Why `value` may be written as a literal in a problem whose text (question, then its unit fields each
    after a `|`) is `context`, or None when it must come from a given. Without a context, unit factors are
    not checked."""
    value = Fraction(value)
    why = ALLOWED_CONSTANTS.get(value)
    if why is None:
        return None
    if value not in ALWAYS and context is not None and not in_context(value, context):
        return None
    return why


def in_context(value: Fraction, context: str) -> bool:
    """Does the problem name every word of one of `value`'s `CONSTANT_CONTEXT` alternatives (a unit factor,
    a world fact, a multiple a pair of words states)?"""
    named = concepts(context)
    return any(all(c in named for c in alternative) for alternative in CONSTANT_CONTEXT.get(Fraction(value), ()))


def fact_words(value: Fraction, context: str) -> frozenset[str]:
    """The words of `value`'s context alternatives that hold in this problem (for 2 with "10 birds" and
    "legs": the two-legged animals and "leg"), lower-case: what a solution line names when it means the fact."""
    named = concepts(context)
    out: set[str] = set()
    for alternative in CONSTANT_CONTEXT.get(Fraction(value), ()):
        if all(c in named for c in alternative):
            for c in alternative:
                words = CONCEPT_WORDS[c][0] if c in CONCEPT_WORDS else MONTH_WORDS.get(c, ())
                out.update(w.lower() for w in words)
    return frozenset(out)


@functools.lru_cache(maxsize=4096)
def licensed_factors(context: str) -> frozenset[Fraction]:
    """The single factors a value may be scaled by in this problem: the multiples its words state and the
    unit factors it gives context for (each with its reciprocal)."""
    out = set()
    for value, words in MULTIPLE_WORDS.items():
        if mentions_word(context, words):
            out.update((value, 1 / value))
    for value in CONSTANT_CONTEXT:
        if in_context(value, context):
            out.update((value, 1 / value))
    return frozenset(out)


@functools.lru_cache(maxsize=4096)
def _word_multiples(context: str) -> frozenset[Fraction]:
    """One stated multiple f, as it reads: f, 1 + f, 1 - f ("half as many more") and their reciprocals."""
    out = set()
    for value, words in MULTIPLE_WORDS.items():
        if mentions_word(context, words):
            for m in (value, 1 + value, abs(1 - value)):
                if m:
                    out.update((m, 1 / m))
    out.discard(Fraction(1))
    return frozenset(out)


@functools.lru_cache(maxsize=4096)
def _unit_products(context: str) -> frozenset[Fraction]:
    """Products of at most `MAX_FACTORS` unit factors the problem gives context for (24 * 60 * 60), and 1."""
    units = sorted({c for c in CONSTANT_CONTEXT if in_context(c, context)} |
                   {1 / c for c in CONSTANT_CONTEXT if in_context(c, context)})
    out = {Fraction(1)}
    for n in range(1, MAX_FACTORS + 1):
        for combo in itertools.combinations(units, n):  # distinct factors: 7 * 7 converts nothing
            p = Fraction(1)
            for f in combo:
                p *= f
            out.add(p)
    return frozenset(out)


def is_licensed_multiple(value: float | Fraction, context: str) -> bool:
    """Is |value| a stated multiple: at most one word multiple (`MULTIPLE_WORDS`: f, 1 + f or 1 - f, or a
    reciprocal) times a product of at most `MAX_FACTORS` unit factors in context? 1 is not (equal is a
    restatement); "both" licenses x 2, not x 8."""
    try:
        x = abs(float(value))
    except (OverflowError, TypeError):
        return False
    if x == 0 or abs(x - 1) <= 1e-9:
        return False
    for w in (Fraction(1), *_word_multiples(context)):
        for u in _unit_products(context):
            if abs(float(w * u) - x) <= 1e-9 * x:
                return True
    return False


def is_licensed_offset(value: float | Fraction, context: str) -> bool:
    """May a step add `value` to its one input: a word states it (`OFFSET_WORDS`: "one more", "herself")."""
    return any(abs(float(value) - float(offset)) <= 1e-9 and mentions_word(context, words)
               for offset, words in OFFSET_WORDS.items())


def multiple_word(value: Fraction) -> str:
    """The words that would license `value` as a multiple, for a reason text."""
    words = MULTIPLE_WORDS.get(Fraction(value)) or MULTIPLE_WORDS.get(1 / Fraction(value)) if value else None
    return " / ".join(f'"{w}"' for w in words[:3]) if words else ""


def constants_table() -> str:
    """The documented table of both lists (docs/quantity.md keeps a copy; a test compares them)."""
    lines = ["| number | as a literal | licensed by |", "|---|---|---|"]
    for value, why in ALLOWED_CONSTANTS.items():
        need = CONSTANT_CONTEXT.get(value)
        ctx = " or ".join(" + ".join(alt) for alt in need) if need else ""
        if value in ALWAYS:
            ctx = f"always (as a multiple: {ctx})" if ctx else "always"
        lines.append(f"| {_show(value)} | {why} | {ctx} |")
    lines += ["", "| multiple | stated by the words |", "|---|---|"]
    for value, words in MULTIPLE_WORDS.items():
        lines.append(f"| × {_show(value)} | {', '.join(words)} |")
    lines += ["", "| offset | stated by the words (or a unit factor in context) |", "|---|---|"]
    for value, words in OFFSET_WORDS.items():
        lines.append(f"| + {_show(value)} | {', '.join(words)} |")
    lines += ["", "| context | words | unit symbols (after a number, or in a unit field) |", "|---|---|---|"]
    for concept, (words, symbols) in CONCEPT_WORDS.items():
        lines.append(f"| {concept} | {', '.join(words)} | {', '.join(f'`{s}`' for s in symbols) or '-'} |")
    for concept, names in MONTH_WORDS.items():
        lines.append(f"| {concept} | {', '.join(names)} (capitalised; May not at a sentence's start) | - |")
    return "\n".join(lines)


def _show(x: Fraction) -> str:
    return str(x.numerator) if x.denominator == 1 else f"{x.numerator}/{x.denominator}"


__all__ = [
    "ALLOWED_CONSTANTS",
    "ALWAYS",
    "CONCEPT_WORDS",
    "CONSTANT_CONTEXT",
    "MAX_FACTORS",
    "MONTH_WORDS",
    "MULTIPLE_WORDS",
    "OFFSET_WORDS",
    "allowed_constant",
    "concepts",
    "constants_table",
    "fact_words",
    "in_context",
    "is_licensed_multiple",
    "is_licensed_offset",
    "licensed_factors",
    "mentions_word",
    "multiple_word",
]
