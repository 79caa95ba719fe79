"""Quantity answers: the `<answer>` read as one quantity, and graded against the gold in the gold's unit.

Reading (`read_answer`) accepts the ways people and models write one number: answer prefixes ("The answer
is:", "Final answer:", "Answer -"), markdown bold, `\\boxed{}`, inline math, LaTeX units and scientific
notation (`2.57 \\times 10^{11} \\mathrm{~J}`), `$18`, `$18.00`, `18 dollars`, `USD 18`, unit words
(`540 meters`, `5 miles per hour`), `25%`, and a trailing counting noun (`18 eggs`: a plain number). Two
numbers, a range or a hedge (`18 or 19`) stay unreadable.

Grading reads the claim once, **in the gold's unit**, with one tolerance (`answer_tolerance`, relative to the
gold's magnitude):
- a bare number is read in the gold's unit where that unit is plain, dimensionless (percent, degree, dozen)
  or a currency (`18` for 18 USD, `60` for 60 percent); for a physical unit a bare number is wrong;
- a claim with a unit converts (`10.8 km/h` for 3 m/s; `540 m` for 540 s is another dimension: wrong);
- a plain gold (no unit: GSM8K counts) compares the number as written, whatever unit word follows it
  (`540 meters`, `$18`, `18 eggs`, `18 pairs`); a percentage keeps its value (`25%` is 0.25).
`final_matches_gold` applies the same reading to a chain's recomputed final `Value`.
"""

from __future__ import annotations

import dataclasses
import functools
import re
from dataclasses import dataclass
from typing import Any

from prosfi.data.problem import Problem
from prosfi.quant import QuantError, Tolerance, close_enough, parse_quantity
from prosfi.quant.givens import UNIT_WORDS
from prosfi.quant.units import DIMENSIONLESS, Value, format_value, make_value, unit_info
from prosfi.trace.extract import clip

_CURRENCY: tuple | None = None  # the currency dimension, read on first use (unit_info builds the registry)
MAX_ANSWER_CHARS = 300


@dataclass(frozen=True)
class QuantityAnswer:
    """A read `<answer>`: `value` (a bare number is dimensionless until read in the target's unit), `bare`
    when no unit was written, `noun` the counting noun that followed the number (`18 eggs`), `amount` the
    amount of a rate written `$18 per hour` / `18 eggs a day` / `$3 each` (`value` is the rate, 18 USD/h,
    where the per-word is a unit), `reason` when unreadable."""

    value: Value | None = None
    bare: bool = False
    text: str = ""
    reason: str = ""
    noun: str = ""
    amount: QuantityAnswer | None = None  # `$18` of `$18 per hour`: what a plain or currency gold reads

    @property
    def ok(self) -> bool:
        return not self.reason and self.value is not None

    def render(self) -> str:
        return format_value(self.value) if self.value is not None else self.text


# ------------------------------------------------------------------------------------------ reading
_WORDS = {**UNIT_WORDS, "usd": "USD", "bucks": "USD", "percent": "percent", "pct": "percent",
          "degree": "degree", "degrees": "degree", "per": "/", "us": "", "u.s.": ""}
_PREFIX = re.compile(
    r"^(?:(?:so|thus|therefore|hence)\s*,?\s*)?(?:the\s+)?(?:final\s+)?(?:answer|result|ans)(?:\s+is)?\s*[:=\-–—]?\s*",
    re.IGNORECASE)
_ABOUT = re.compile(r"^(?:≈|~|=|\\approx|(?:approximately|approx\.|about|around|roughly|exactly)\s)\s*",
                    re.IGNORECASE)
_NAME_EQUALS = re.compile(r"^[A-Za-z][A-Za-z0-9_]{0,15}\s*=\s*(?=[-+−$\d.])")
_BOLD = re.compile(r"(?<![A-Za-z0-9)\]])\*\*|\*\*(?![-+(]?\d)")  # markdown bold, not the exponent of `s**-1`
_BOXED = re.compile(r"\\(?:boxed|fbox)\s*\{")
_LATEX_TEXT = re.compile(r"\\(?:mathrm|text|textrm|mbox|operatorname|rm)\s*\{\s*~?\s*([^{}]*)\}")
_FRAC = re.compile(r"\\d?frac\s*\{\s*([-+]?\d+(?:\.\d+)?)\s*\}\s*\{\s*(\d+(?:\.\d+)?)\s*\}")
_SCI = re.compile(r"(\d)\s*(?:\\times|×|x|\*|\\cdot|·)\s*10\s*(?:\^|\*\*)"
                  r"\s*\{?\s*\(?\s*([-+−]?\s*\d{1,3})\s*\)?\s*\}?")
_WORDED = re.compile(r"(?P<q>[-+−]?\$?\s*[\d.,]+(?:[eE][-+]?\d+)?(?:\s*/\s*\d+)?\s*%?)\s+(?P<u>[A-Za-z .]+)")
_CONNECTIVES = {"or", "and", "to", "plus", "minus", "times", "than", "nor", "but", "versus", "vs", "between",
                "over", "under", "x", "per"}
_PER_TAIL = re.compile(r"(?P<q>.*?\d[^/]*?)(?:\s*/\s*|\s+(?:per|an?)\s+)(?P<per>[A-Za-z][A-Za-z'’-]*)"
                       r"|(?P<each>.*?\d.*?)\s+each", re.IGNORECASE)
_NOUN_TAIL = re.compile(r"(?P<q>.*?\d\.?)\s+(?P<words>[A-Za-z][A-Za-z'’-]*(?:\s+[A-Za-z][A-Za-z'’-]*){0,2})")


def _unbox(body: str) -> str | None:
    """The content of one `\\boxed{...}` (braces balanced); None for two boxes; the text itself for none."""
    found = list(_BOXED.finditer(body))
    if not found:
        return body
    if len(found) > 1:
        return None
    i, depth = found[0].end(), 1
    for j in range(i, len(body)):
        depth += {"{": 1, "}": -1}.get(body[j], 0)
        if depth == 0:
            return body[i:j]
    return None


def _strip_wrapping(body: str) -> str:
    """Prefixes, markdown emphasis, math delimiters and a final period, repeated until nothing changes."""
    prev = None
    while body != prev:
        prev = body
        body = _BOLD.sub("", body.strip()).replace("__", "").replace("`", "").strip()
        if len(body) > 1 and body[0] == body[-1] == "*":
            body = body[1:-1]
        for a, b in (("\\(", "\\)"), ("\\[", "\\]"), ("$$", "$$")):
            if body.startswith(a) and body.endswith(b) and len(body) > len(a) + len(b):
                body = body[len(a):-len(b)]
        if len(body) > 2 and body[0] == body[-1] == "$":
            body = body[1:-1]  # inline math `$18$`; a leading `$` alone is the currency sign
        body = _PREFIX.sub("", body, count=1)
        body = _NAME_EQUALS.sub("", body, count=1)
        body = _ABOUT.sub("", body)
        body = re.sub(r"\s*[.!;]+$", "", body)
    return body.strip()


def _plain_math(body: str) -> str:
    """LaTeX and typography to plain quantity text: `2.57 \\times 10^{11} \\mathrm{~J}` -> `2.57e11 J`."""
    t = body.replace("\\$", "\0")  # an escaped dollar is the currency sign; bare ones in pairs are math
    if t.count("$") >= 2:
        t = t.replace("$", " ")
    t = t.replace("\0", "$").replace("\\left", "").replace("\\right", "").replace("\\%", "%")
    t = re.sub(r"(\d)\\,(?=\d{3}\b)", r"\1", t)  # 1\,000
    t = _FRAC.sub(r"\1/\2", t)
    t = _SCI.sub(lambda m: f"{m.group(1)}e{m.group(2).replace(' ', '').replace('−', '-')}", t)
    t = re.sub(r"\\mu\s*(?:\\mathrm\s*\{\s*~?\s*|\\text\s*\{\s*)?", "u", t)
    t = re.sub(r"\^\s*\{?\s*\\circ\s*\}?", "°", t)
    t = _LATEX_TEXT.sub(r" \1 ", t)
    t = t.replace("\\cdot", "*").replace("\\times", "*").replace("\\Omega", "ohm")
    t = re.sub(r"\\[,;:! ]|~", " ", t)
    t = re.sub(r"\^\s*\{\s*([-+−]?\s*\d+)\s*\}", lambda m: "**" + m.group(1).replace(" ", ""), t)
    t = re.sub(r"°\s*([CF])\b", r"deg\1", t)
    t = t.replace("°", " degree")
    t = re.sub(r"[{}]", " ", t)
    t = re.sub(r"\s*\*\*\s*", "**", t)
    t = re.sub(r"\bper\s*cent\b", "percent", t, flags=re.IGNORECASE)
    t = re.sub(r"^(?:US\s*\$|USD\s*(?=[-+−\d.]))\s*", "$", t.strip())  # US$18, USD 18
    t = re.sub(r"^([-+−]?\s*[\d.,]+(?:[eE][-+]?\d+)?)\s*\$$", r"$\1", t)  # 18$
    t = re.sub(r"^\$\s*([-−])", r"\1$", t)  # $-5
    return re.sub(r"\s+", " ", t).strip()


def _unit_words(body: str) -> str | None:
    """`540 meters` -> `540 m`, `5 miles per hour` -> `5 mi/h`, `18 US dollars` -> `18 USD`; None when a word
    after the number is not a unit word."""
    m = _WORDED.fullmatch(body)
    if m is None:
        return None
    out = []
    for word in m.group("u").split():
        mapped = _WORDS.get(word.lower())
        if mapped is None:
            return None
        if mapped:
            out.append(mapped)
    unit = re.sub(r"\s*/\s*", "/", " ".join(out)).strip()
    if not unit or unit.startswith("/") or unit.endswith("/"):
        return None
    return f"{m.group('q')} {unit}"


def read_answer(text: str) -> QuantityAnswer:
    """`18`, `$18`, `18 dollars`, `1,000`, `3.0 m/s`, `25%`, `The answer is: **18**`: one quantity; anything
    else has a reason (see the module doc)."""
    if not isinstance(text, str):
        return QuantityAnswer(reason=f"answer is not text ({type(text).__name__})")
    given = text.strip()
    if len(given) > MAX_ANSWER_CHARS:
        return QuantityAnswer(text=given[:MAX_ANSWER_CHARS],
                              reason=f"answer longer than {MAX_ANSWER_CHARS} characters")
    body = _strip_wrapping(given)
    inner = _unbox(body)
    if inner is None:
        return QuantityAnswer(text=given,
                              reason=f"answer {clip(given)!r} is not one quantity: not one \\boxed{{}}")
    return _read_body(_strip_wrapping(_plain_math(_strip_wrapping(inner))), given)


def _read_rate(body: str, given: str) -> QuantityAnswer | None:
    """`$18 per hour`, `$18/hour`, `18 eggs a day`, `$3 each`: an amount (currency or plain) per something."""
    m = _PER_TAIL.fullmatch(body)
    if m is None:
        return None
    amount = _read_body(m.group("q") or m.group("each"), given, rates=False)
    if not amount.ok or not (amount.value.dims == DIMENSIONLESS or amount.value.dims == _currency()):
        return None
    per = m.group("per")
    unit = None if per is None else _WORDS.get(per.lower(), per)
    try:
        info = unit_info(unit) if unit and unit != "/" else None
    except QuantError:
        info = None
    if info is None or info.dims == DIMENSIONLESS:  # `per egg`, `each`: no unit to divide by
        return QuantityAnswer(value=amount.value, text=given, noun=f"per {per}" if per else "each",
                              amount=amount)
    rate_unit = f"{amount.value.unit}/{unit}" if amount.value.unit else f"1/{unit}"
    return QuantityAnswer(value=make_value(amount.value.magnitude_in(), rate_unit), text=given, amount=amount)


def _read_body(body: str, given: str, rates: bool = True) -> QuantityAnswer:
    rate = _read_rate(body, given) if rates else None
    if rate is not None:
        return rate
    try:
        value = parse_quantity(body)
    except QuantError as exc:
        first = exc
    else:
        return QuantityAnswer(value=value, bare=not value.unit and value.dims == DIMENSIONLESS, text=given)
    worded = _unit_words(body)
    if worded is not None:
        try:
            return QuantityAnswer(value=parse_quantity(worded), text=given)
        except QuantError:
            pass
    noun = _NOUN_TAIL.fullmatch(body)
    if noun is not None and not {w.lower() for w in noun.group("words").split()} & _CONNECTIVES:
        try:
            value = parse_quantity(noun.group("q"))
        except QuantError:
            value = None
        if value is not None and not value.unit and value.dims == DIMENSIONLESS:
            return QuantityAnswer(value=value, text=given, noun=noun.group("words"))
    return QuantityAnswer(text=given, reason=f"answer {clip(given)!r} is not one quantity: {first}"[:200])


# ------------------------------------------------------------------------------------------ grading
def _currency() -> tuple:
    global _CURRENCY
    if _CURRENCY is None:
        _CURRENCY = unit_info("USD").dims
    return _CURRENCY


def _dims(unit: str) -> tuple | None:
    try:
        return unit_info(unit).dims if unit else DIMENSIONLESS
    except QuantError:
        return None


def plain_gold(unit: str) -> bool:
    """A gold with no unit at all (GSM8K counts, SciBench ratios)."""
    try:
        return not unit or not unit_info(unit).text
    except QuantError:
        return False


def _plain_unit(unit: str) -> bool:
    """A unit a bare number may stand for: none, dimensionless (percent, degree, dozen) or a currency."""
    dims = _dims(unit)
    return dims is not None and (dims == DIMENSIONLESS or dims == _currency())


_PERCENT = frozenset({"percent", "%", "pct"})


def as_written(value: Value) -> Value:
    """For a plain gold: the number as shown in the value's own unit (`540 m` -> 540, `$18` -> 18, `18 pairs`
    -> 18, `30 degree` -> 30), as a plain number. A percentage keeps its value (`25%` is 0.25): percent is the
    factor 1/100 everywhere (a chain ending in 0.25 for "25 percent")."""
    if value.unit.strip() in _PERCENT:
        return value
    try:
        return Value(value.magnitude_in())
    except QuantError:
        return value


def read_in(claim: QuantityAnswer, unit: str) -> Value | None:
    """The claim's value read in `unit` (see the module doc): a bare number in `unit` where that unit is
    plain, dimensionless or a currency; for a plain `unit`, the number as written."""
    if not claim.ok:
        return None
    if claim.amount is not None and (plain_gold(unit) or _dims(unit) == _currency()):
        return read_in(claim.amount, unit)  # `$18 per hour` for an 18 USD gold (GSM8K's nominal rates)
    if plain_gold(unit):
        return claim.value if claim.bare or claim.noun else as_written(claim.value)
    if claim.bare and _plain_unit(unit):
        return make_value(claim.value.mag, unit)
    return claim.value


def matches(target: Value, target_unit: str, claim: QuantityAnswer, tol: Tolerance) -> tuple[bool, str]:
    """Does the claim state `target` (read in `target_unit`, value within tolerance, unit by dimension with
    conversion)?"""
    value = read_in(claim, target_unit)
    if value is None:
        return False, claim.reason or "no readable answer"
    return close_enough(target, value, tol)


_TOLERANCE_FIELDS = frozenset(f.name for f in dataclasses.fields(Tolerance))


def answer_tolerance(problem: Problem) -> Tolerance:
    """The problem's one answer tolerance (`extra["tolerance"]`: `rel`, `sigfigs`), relative to the gold's
    magnitude: no absolute floor unless the problem sets one, so a gold near 1e-19 C does not accept `0 C`."""
    raw = problem.extra.get("tolerance") if isinstance(problem.extra, dict) else None
    kwargs: dict[str, Any] = ({k: v for k, v in raw.items() if k in _TOLERANCE_FIELDS}
                              if isinstance(raw, dict) else {})
    if "abs_eps" in _TOLERANCE_FIELDS:
        kwargs.setdefault("abs_eps", 0.0)
    try:
        return Tolerance(**kwargs)
    except (TypeError, ValueError):
        return Tolerance(**({"abs_eps": 0.0} if "abs_eps" in _TOLERANCE_FIELDS else {}))


def gold_unit(problem: Problem) -> str:
    answer = problem.answer
    return str(answer.get("unit") or "") if isinstance(answer, dict) else ""


def gold_value(problem: Problem) -> Value | None:
    answer = problem.answer
    if not isinstance(answer, dict) or "value" not in answer:
        return None
    return _gold(answer["value"] if not isinstance(answer["value"], float) else ("f", answer["value"]),
                 str(answer.get("unit") or ""))


@functools.lru_cache(maxsize=65536)
def _gold(value: Any, unit: str) -> Value | None:
    try:
        return parse_quantity({"value": value[1] if isinstance(value, tuple) else value, "unit": unit})
    except (QuantError, TypeError, ValueError):
        return None


def grade_answer(problem: Problem, claim: QuantityAnswer) -> tuple[bool, str]:
    """(right, reason): the read `<answer>` against the problem's gold, in the gold's unit, one tolerance."""
    gold = gold_value(problem)
    if gold is None:
        return False, "the problem has no readable gold answer"
    return matches(gold, gold_unit(problem), claim, answer_tolerance(problem))


def final_matches_gold(problem: Problem, value: Value | None) -> tuple[bool, str]:
    """(right, reason): a chain's recomputed final value against the gold, in the gold's unit, with the
    problem's one tolerance. Same dimension: compared with conversion (a dimensionless 0.6 equals a 60
    percent gold; 60 does not). A plain gold compares the number in the value's own unit (540 m -> 540; a
    percentage keeps its value, 0.25). A
    currency gold reads a plain number (no unit at all) in its currency; a percent or other dimensionless
    unit stays another dimension there (25% is not $25)."""
    gold = gold_value(problem)
    if gold is None:
        return False, "the problem has no readable gold answer"
    if not isinstance(value, Value):
        return False, "no final value"
    unit = gold_unit(problem)
    if plain_gold(unit):
        if value.dims != DIMENSIONLESS or value.unit:
            value = as_written(value)
    elif value.dims == DIMENSIONLESS and not value.unit and gold.dims == _currency():
        value = make_value(value.mag, unit)
    return close_enough(gold, value, answer_tolerance(problem))


__all__ = ["MAX_ANSWER_CHARS", "QuantityAnswer", "answer_tolerance", "final_matches_gold", "gold_unit",
           "gold_value", "grade_answer", "matches", "read_answer", "read_in"]
