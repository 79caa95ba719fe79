"""An independent faithfulness check of a GSM8K gold trace against its reference solution (issue #35).

The gold builder (`quant_gold.build_chain`) decides which given each number of a solution stands for; a wrong
decision ("two days" for the solution's "2 trains") still earns the top reward, since the chain rules only see
that the trace reaches the answer. This check does not use the builder's decisions. It reads the solution's
equations (`gsm8k.equations`) as a function of the givens on its own: each number of an equation is bound to
what the solution's words say it is, and the trace's answer must be that same function.

- **Owners.** A number of an equation may be an earlier result with that value, a given stating it (its written
  number, its value, a money amount in the other unit: `25` for "$0.25"), a fraction given's reciprocal (`/ 2`
  for "half"), complement or growth (`0.8`, `80` for "20 %", `1.15` for "15 %"), or a number nothing in the
  question states (a constant: it stays fixed). A pair `a / b` whose value is a fraction given or a result is one
  number. A listed constant (`quant.licensed`: 60 with hours and minutes, always 0, 1, 2, 1/2) that a given
  also states may be either.
- **The solution's words decide.** The words the solution writes after the number ("460 miles / 2 trains": `train`)
  are compared with the words the question writes with each given ("Two trains leave": `train`; "two days":
  `day`) and after each earlier result; where some owners match and others do not, only the matching ones stay.
  Where the words do not decide, every owner stays.
- **The solution's flow and roles.** "The N noun" is the earlier given of that value and noun; "twice" only
  multiplies (and, against a competing given or result, only in a line that says so); an average's bare divisor
  is the count; where readings remain, the most results used, the most same-noun twins and fractions used, then
  the latest of same-valued results (`_preferred`).
- **One function.** Every reading (one owner a number) gives a function of the givens; they are evaluated exactly
  at `POINTS` re-assignments where every given moves on its own (same-valued givens too: nothing ties them).
  The trace passes only if every reading the words leave is the same function and the trace computes it
  (its final value a fixed unit factor, 1, 100 or 1/100, of the reference's). Readings that disagree are a
  binding the text does not settle: the trace is dropped, never guessed.

`issue(problem, steps)` returns '' or the reason, `faithful: <class>: ...`, with the classes of `CLASSES`.
"""

from __future__ import annotations

import ast
import itertools
import random
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any

from prosfi.data.problem import Problem

POINTS = 3  # re-assignments of the givens the functions are compared at
MAX_READINGS = 256  # readings of the solution's numbers; more is refused as unsettled
CLASSES = {
    "unread": "the solution cannot be read as a function (no equation computes the answer, one does not hold, "
              "or it is outside plain arithmetic)",
    "ambiguous": "the solution's words leave numbers whose readings are different functions of the givens",
    "mismatch": "the trace computes another function of the givens than the solution",
    "trace": "the trace cannot be evaluated at the moved givens",
}
_SEED = 0x35_601D

# ------------------------------------------------------------------ words
_STOP = frozenset(["a", "an", "the", "of", "and", "or", "to", "in", "on", "at", "for", "from", "by", "with", "than", "then", "that", "this", "these", "those", "it", "its", "is", "are", "was", "were", "be", "been", "he", "she", "they", "we", "you", "his", "her", "their", "our", "my", "your", "each", "every", "per", "more", "less", "fewer", "total", "all", "so", "which", "who", "what", "how", "many", "much", "left", "remaining", "altogether", "together", "other", "another", "extra", "same", "about", "over", "into", "out", "up", "down", "as", "has", "have", "had", "will", "would", "can", "could", "also", "just", "only", "there", "here", "first", "second", "third", "next", "last", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten", "twelve", "half", "times", "time"])
_ABBREV = {"mph": ("mile", "hour"), "hr": ("hour",), "hrs": ("hour",), "h": ("hour",), "min": ("minute",),
           "mins": ("minute",), "sec": ("second",), "secs": ("second",), "lb": ("pound",), "lbs": ("pound",),
           "oz": ("ounce",), "ft": ("foot",), "yd": ("yard",), "yds": ("yard",), "mi": ("mile",), "km": ("kilometer",),
           "cm": ("centimeter",), "kg": ("kilogram",), "g": ("gram",), "l": ("liter",), "ml": ("milliliter",),
           "dollar": ("$",), "dollars": ("$",), "cent": ("cent",), "cents": ("cent",), "percent": ("%",),
           "feet": ("foot",), "people": ("person",), "children": ("child",), "men": ("man",), "women": ("woman",),
           "teeth": ("tooth",), "mice": ("mouse",), "geese": ("goose",)}
_WORD = re.compile(r"[A-Za-z][A-Za-z'’-]*")
_BREAK = re.compile(r"[.,;:?!()=<>+*/×÷\d\n\"]|\s[-x]\s")  # where the words that go with a number stop


def stem(word: str) -> str:
    """A word to a comparable singular ("trains" -> "train", "boxes" -> "box", "berries" -> "berry")."""
    w = word.lower().strip("'’-")
    w = re.sub(r"['’]s?$", "", w)
    if len(w) <= 3 or w.endswith(("ss", "us", "is")):
        return w
    if w.endswith("ies"):
        return w[:-3] + "y"
    if re.search(r"(?:s|x|z|ch|sh)es$", w):
        return w[:-2]
    return w.removesuffix("s")


def words_of(text: str, limit: int = 3) -> frozenset[str]:
    """The content words of `text` up to the first break (punctuation, another number, an operator), at most
    `limit` of them, stemmed and unabbreviated ("miles/hour" stops at the slash; "mph" is mile and hour)."""
    cut = _BREAK.search(text)
    text = text[:cut.start()] if cut else text
    out: set[str] = set()
    for w in _WORD.findall(text)[:limit + 2]:
        low = w.lower()
        if low in _ABBREV:
            out.update(_ABBREV[low])
        elif low not in _STOP and len(out) < limit:
            out.add(stem(low))
    return frozenset(out)


_MORE = r"more|fewer|less|longer|shorter|older|younger|taller|heavier|lighter|faster|slower|higher|lower|cheaper"
_TIMES_AFTER = re.compile(r"\s+times\s+(?:as|that|the|what|his|her|their|its|this|" + _MORE + r")\b", re.IGNORECASE)
_THAN_AFTER = re.compile(r"(?:\s+[A-Za-z'’-]+){0,2}?\s+(?:" + _MORE + r")\s+(?:[A-Za-z'’-]+\s+){0,2}?than\b", re.IGNORECASE)
_MULTIPLIER = re.compile(r"(?i)(?:twice|double[sd]?|triple[sd]?|thrice|quadruple[sd]?|(?:a |one )?half|halves)")
_NUMBER = re.compile(r"(\$\s?)?((?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?|\.\d+)(\s?%)?")


_SPELLED = {w: i for i, w in enumerate(["zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten", "eleven", "twelve", "thirteen", "fourteen", "fifteen", "sixteen", "seventeen", "eighteen", "nineteen", "twenty"])}
_SPELLED_RE = re.compile(r"(?i)\b(" + "|".join(_SPELLED) + r")\b")


_ORDINAL = frozenset(["first", "second", "third", "fourth", "fifth", "last", "next", "other", "remaining", "initial", "final"])


def word_before(text: str, start: int) -> frozenset[str]:
    """An ordinal right before a number ("his first 3 customers", "the last 3"): it tells two counts apart."""
    m = re.search(r"([A-Za-z]+)\s*$", text[max(0, start - 30):start])
    return frozenset({m.group(1).lower()}) if m and m.group(1).lower() in _ORDINAL else frozenset()


def said_none(line: str, value: Fraction) -> bool:
    """The line writes no words after `value` (a bare `20 * 2`)."""
    return not number_words(line, value, results=False)


def number_words(line: str, value: Fraction, results: bool = True) -> frozenset[str]:
    """What the solution line says `value` is: the words after each place the prose writes it, in digits or in
    words ("three times as long" -> long; annotations left out, their results kept unless `results` is False:
    the "$2" after `<<2*1=2>>` says what the result is, not what the operand 2 of `2 * $1` is), `$` where a dollar
    sign precedes it, `%` where a percent sign follows."""
    return frozenset().union(*number_places(line, value, results))


def _prose(line: str) -> tuple[str, set[int]]:
    """The line with its annotations blanked, and where each annotation's result is written right after it."""
    out, after, pos = [], set(), 0
    for m in re.finditer(r"<<[^<>]*>>", line):
        out.append(line[pos:m.start()] + " ")
        after.add(sum(map(len, out)))
        pos = m.end()
    out.append(line[pos:])
    return "".join(out), after


def number_places(line: str, value: Fraction, results: bool = True) -> list[frozenset[str]]:
    """`number_words` for each place the prose writes `value`, in the order they stand."""
    prose, after = _prose(line)
    places: list[tuple[int, frozenset[str], bool]] = []
    for m in _SPELLED_RE.finditer(prose):
        if _SPELLED[m.group(1).lower()] == value:
            places.append((m.start(), words_of(prose[m.end():], 2) | word_before(prose, m.start()), False))
    numbers = [m for m in _NUMBER.finditer(prose)
               if not (m.start() > 0 and (prose[m.start() - 1].isalnum() or prose[m.start() - 1] in "./"))]
    plain_too = any(not m.group(3) and Fraction(m.group(2).replace(",", "")) == value for m in numbers)
    for m in numbers:
        if not results and m.start(2) in after:
            continue
        n = Fraction(m.group(2).replace(",", ""))
        pct = bool(m.group(3))
        if n != value and not (pct and n / 100 == value):
            continue
        if pct and n == value and plain_too:  # "a 20% fee on the $20.00 ... .20*20": the 20 is the $20
            continue
        out = set(words_of(prose[m.end():].lstrip("/ "), 2) if prose[m.end():m.end() + 1] == "/" else
                  words_of(prose[m.end():], 2)) | word_before(prose, m.start())
        if m.group(1):
            out.add("$")
        if pct:
            out.add("%")
        places.append((m.start(), frozenset(out), True))
    if any(w for _, w, digits in places if digits):  # "460 miles / 2 trains ... for the two days": the digits
        places = [p for p in places if p[2]]
    return [w for _, w, _ in sorted(places, key=lambda p: p[0])]


def given_words(question: str, g: dict) -> frozenset[str]:
    """What the question says a given is: its own words ("two days" -> day, "4 miles per hour" -> mile, hour)
    and up to three words after it ("Two trains leave" -> train, leave); `$` for money, `%` for a percentage."""
    text = str(g.get("text") or "")
    out = set(words_of(re.sub(r"[\d.,/$%-]+", " ", text), 4))
    try:
        rest = question[int(g.get("end", 0)):]
    except (TypeError, ValueError):
        rest = ""
    out |= words_of(rest, 3)
    try:
        out |= word_before(question, int(g.get("start", 0)))
    except (TypeError, ValueError):
        pass
    unit = str(g.get("unit") or "")
    if unit in ("USD", "cent") or text.lstrip().startswith("$"):
        out.add("$")
    if unit in ("percent", "%") or "%" in text:
        out.add("%")
    return frozenset(out)


_FACTOR_WORD = re.compile(r"(?i)twice|double[sd]?|triple[sd]?|thrice|quadruple[sd]?")
_MULTIPLYING = re.compile(r"(?i)\b(?:twice|doubl\w*|tripl\w*|thrice|quadrupl\w*|times)\b")


def _noun(question: str, g: dict) -> str:
    """The first content word after a given's number ("2 of the lollipops": lollipop), `$` for money, or ''."""
    text = str(g.get("text") or "")
    if "$" in text or str(g.get("unit") or "") in ("USD", "cent"):
        return "$"
    try:
        start, end = int(g.get("start", 0)), int(g.get("end", 0))
    except (TypeError, ValueError):
        return ""
    rest = question[start:end + 40]
    spelled = _SPELLED_RE.match(rest)
    rest = rest[spelled.end():] if spelled else rest.lstrip("0123456789.,-")
    for w in _WORD.findall(re.split(r"[.,;:?!()\d]", rest, maxsplit=1)[0]):
        if w.lower() not in _STOP:
            return stem(w)
    return ""


def _definite_noun(question: str, g: dict) -> str:
    """The noun after a given written "the N noun" (a plain number after a definite article: "the five pies",
    "the 3 other people"), or ''."""
    try:
        start, end = int(g.get("start", 0)), int(g.get("end", 0))
    except (TypeError, ValueError):
        return ""
    text = str(g.get("text") or "")
    if not re.search(r"(?i)\b(?:the|those|these)\s+$", question[max(0, start - 8):start]) or "$" in text or \
            "%" in text or start >= end:
        return ""
    rest = question[start:end + 40]
    spelled = _SPELLED_RE.match(rest)
    rest = rest[spelled.end():] if spelled else rest.lstrip("0123456789.,")
    for w in _WORD.findall(re.split(r"[.,;:?!()\d]", rest, maxsplit=1)[0]):
        if w.lower() not in _STOP:
            return stem(w)
    return ""


# ------------------------------------------------------------------ the solution as a function
@dataclass
class _Lit:
    """One number of an equation: its position in the equation's literal list, value and owners."""

    pos: int
    value: Fraction
    owners: list[tuple] = field(default_factory=list)


@dataclass
class _Eq:
    tree: ast.AST
    lits: list[_Lit]
    result: Fraction


def _literal_nodes(tree: ast.AST, pair_ok, percent_of) -> list[tuple[Any, Fraction, bool]]:
    """The numbers of an expression in order: a Constant, or a pair `a / b` of constants that `pair_ok` takes as
    one number (its value); each with whether it is a whole (the 1 of `1 - 3/4`, the 100 of `100 - 20` where
    `percent_of(20)`: a percentage given states 20)."""
    out: list[tuple[Any, Fraction, bool]] = []

    def walk(node, whole=False):
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Div) and isinstance(node.left, ast.Constant) \
                and isinstance(node.right, ast.Constant) and node.right.value:
            v = Fraction(str(node.left.value)) / Fraction(str(node.right.value))
            if pair_ok(v):
                out.append((node, v, False))
                return
        if isinstance(node, ast.Constant):
            out.append((node, Fraction(str(node.value)), whole))
            return
        if isinstance(node, ast.BinOp) and isinstance(node.op, (ast.Add, ast.Sub)) and \
                isinstance(node.left, ast.Constant) and Fraction(str(node.left.value)) in (1, 100):
            try:
                part = _evaluate(node.right, {})
            except (ValueError, ZeroDivisionError, OverflowError):
                part = None
            # `1 - 3/4`, `1 + 0.15`, `100 - 20` for "20 %": the whole, not a given "one day" or "100 students"
            whole = part is not None and (0 < part < 1 if node.left.value == 1 else percent_of(part))
            walk(node.left, whole)
            walk(node.right)
            return
        for child in ast.iter_child_nodes(node):
            walk(child)

    walk(tree)
    return out


def _factor_nodes(tree: ast.AST) -> set[int]:
    """The ids of the constants that are an operand of `*` or `/`."""
    return {id(side) for node in ast.walk(tree) if isinstance(node, ast.BinOp) and isinstance(node.op, (ast.Mult, ast.Div))
            for side in (node.left, node.right) if isinstance(side, ast.Constant)}


def _evaluate(node: ast.AST, values: dict[int, Fraction]) -> Fraction:
    if id(node) in values:
        return values[id(node)]
    if isinstance(node, ast.Expression):
        return _evaluate(node.body, values)
    if isinstance(node, ast.Constant):
        return Fraction(str(node.value))
    if isinstance(node, ast.UnaryOp):
        v = _evaluate(node.operand, values)
        return -v if isinstance(node.op, ast.USub) else v
    if isinstance(node, ast.BinOp):
        a, b = _evaluate(node.left, values), _evaluate(node.right, values)
        if isinstance(node.op, ast.Add):
            return a + b
        if isinstance(node.op, ast.Sub):
            return a - b
        if isinstance(node.op, ast.Mult):
            return a * b
        if isinstance(node.op, ast.Div):
            return a / b
        if isinstance(node.op, ast.Pow) and b.denominator == 1 and abs(b) <= 16:
            return a ** int(b)
    raise ValueError("not plain arithmetic")


@dataclass
class Reading:
    """The solution read as functions of the givens: equations, each number with the owners its words leave."""

    eqs: list[_Eq]
    final: int
    nodes: list[list[Any]]  # per equation, the literal nodes (parallel to eqs[k].lits)
    money: bool = False  # the answer is in dollars or cents
    plain: frozenset = frozenset()  # the listed constants this problem licenses: plain numbers, never dollars


class _Givens:
    """The givens' values, the numbers each states, and the words that say what each is."""

    def __init__(self, problem: Problem):
        from prosfi.quant import QuantError, parse_quantity

        self.values: dict[str, Any] = {}
        self.numbers: dict[str, set[Fraction]] = {}
        self.words: dict[str, frozenset[str]] = {}
        self.money: dict[str, int] = {}
        self.times: set[str] = set()  # "three times as many": a multiplier
        self.difference: set[str] = set()  # "20 fewer cards than": a difference
        self.own: dict[str, frozenset[str]] = {}  # the words of a given's own text ("4 miles per hour": mile, hour)
        self.fraction: dict[str, Fraction] = {}  # dimensionless givens strictly between 0 and 1
        self.percent: dict[str, Fraction] = {}  # the N of an "N %" given
        self.cents: dict[str, Fraction] = {}  # a money given's amount in the other unit (10 for "$0.10")
        self.noun: dict[str, str] = {}  # the noun right after a given's number ("2 lollipops": lollipop)
        for g in problem.givens:
            gid = str(g.get("id"))
            try:
                v = parse_quantity({"value": g["value"], "unit": g.get("unit") or ""})
            except (QuantError, ValueError, TypeError, KeyError):  # a given the reader refuses is no given
                continue
            self.values[gid] = v
            self.money[gid] = 1 if str(g.get("unit") or "") in ("USD", "cent") else 0
            nums: set[Fraction] = set()
            if isinstance(v.mag, Fraction):
                nums.add(v.mag)
            try:
                written = Fraction(str(g["value"]).replace(",", ""))
                nums.add(written)
            except (ValueError, ZeroDivisionError):
                written = None
            unit = str(g.get("unit") or "")
            if unit in ("USD", "cent"):
                shown = Fraction(v.magnitude_in("USD"))
                nums |= {shown, shown * 100}
                if shown != shown * 100 and unit == "USD":
                    self.cents[gid] = shown * 100
            if unit in ("percent", "%") and written is not None:
                self.percent[gid] = written
            if v.dimensionless and isinstance(v.mag, Fraction) and 0 < v.mag < 1:
                self.fraction[gid] = v.mag
            self.numbers[gid] = nums
            self.words[gid] = given_words(problem.question, g)
            self.noun[gid] = _noun(problem.question, g)
            try:
                rest = problem.question[int(g.get("end", 0)):][:80]
            except (TypeError, ValueError):
                rest = ""
            if _TIMES_AFTER.match(rest):
                self.times.add(gid)
            elif _THAN_AFTER.match(rest) and str(g.get("unit") or "") not in ("percent", "%"):
                self.difference.add(gid)
            own = _WORD.findall(re.sub(r"[\d.,/$%-]+", " ", str(g.get("text") or "")))
            self.own[gid] = frozenset(stem(w) for w in own if w.lower() not in _STOP) or \
                frozenset(stem(w) for w in own)  # "half" (a stop word elsewhere) is the halving's own word
        # a multiplier word ("twice", "half") is a fixed multiple, as the chain's literal 2 for it: it does not move
        self.fixed = {str(g.get("id")) for g in problem.givens if _MULTIPLIER.fullmatch(str(g.get("text") or "").strip())}
        self.factor_word = {gid for gid in self.fixed if _FACTOR_WORD.fullmatch(str(
            next(g for g in problem.givens if str(g.get("id")) == gid).get("text") or "").strip())}
        # givens the question states with one number and the same words ("$5 for 8 weeks. At the end of the 8
        # weeks") are one quantity said twice: they move together
        self.tie: dict[str, str] = {}
        seen: dict[tuple, str] = {}
        for gid, v in self.values.items():
            key = (v.mag, v.dims, self.words[gid])
            if self.words[gid]:
                self.tie[gid] = seen.setdefault(key, gid)
            else:
                self.tie[gid] = gid
        # "5 apple pies ... set the five pies out", "3 other people each bid ... each of the 3 other people": a
        # number after a definite "the" with the noun of an earlier given of that value is that given again
        order = [g for g in problem.givens if str(g.get("id")) in self.values]
        for k, g in enumerate(order):
            gid = str(g.get("id"))
            noun = _definite_noun(problem.question, g)
            if not noun or self.tie[gid] != gid:
                continue
            for h in order[:k]:
                hid = str(h.get("id"))
                if self.values[hid].mag == self.values[gid].mag and self.values[hid].dims == self.values[gid].dims \
                        and noun in self.words[hid]:
                    self.tie[gid] = self.tie[hid]
                    break
        # givens of one value and one noun ("2 of the lollipops", "2 lollipops in one bag")
        self.twins = {gid for gid in self.values for hid in self.values if hid != gid and self.noun[gid] and
                      self.noun[gid] == self.noun[hid] and self.values[gid].mag == self.values[hid].mag and
                      self.tie[gid] != self.tie[hid]}



def read_solution(problem: Problem, givens: _Givens, equations: Sequence[Any], context: str) -> Reading | str:
    """The solution's equations with every number's owners after the words have spoken, or why it cannot be read."""
    from prosfi.quant.expr import group_fractions
    from prosfi.quant.licensed import ALLOWED_CONSTANTS, allowed_constant, fact_words, in_context

    try:
        gold = Fraction(str(problem.answer.get("value")))
    except (ValueError, ZeroDivisionError, AttributeError):
        return "unread: the answer is not a number"
    percent = str(problem.answer.get("unit") or "") in ("percent", "%")
    eqs: list[_Eq] = []
    nodes: list[list[Any]] = []
    results: list[Fraction] = []
    result_words: list[frozenset[str]] = []
    final = -1
    for eq in equations:
        try:
            tree = ast.parse(group_fractions(eq.expr), mode="eval")
            stated = Fraction(eq.result)
            got = _evaluate(tree, {})
        except (SyntaxError, ValueError, ZeroDivisionError, OverflowError, RecursionError):
            return f"unread: {eq.expr!r} is not plain arithmetic"
        if abs(got - stated) > abs(stated) / 100 + Fraction(1, 10**9):
            return f"unread: {eq.expr} = {float(stated):g} does not hold"
        if isinstance(tree.body, ast.Constant) or (isinstance(tree.body, ast.UnaryOp) and
                                                   isinstance(tree.body.operand, ast.Constant)):
            continue  # `<<5=5>>` restates a number: no new quantity
        line = eq.text

        def pair_ok(v: Fraction) -> bool:
            return 0 < v < 1 and (v in givens.fraction.values() or v in results)

        lits, nlist = [], []
        found = _literal_nodes(tree, pair_ok, lambda n: n in givens.percent.values())
        factors = _factor_nodes(tree)
        divisors = {id(n.right) for n in ast.walk(tree) if isinstance(n, ast.BinOp) and isinstance(n.op, ast.Div)}
        terms = {id(side) for n in ast.walk(tree) if isinstance(n, ast.BinOp) and isinstance(n.op, (ast.Add, ast.Sub))
                 for side in (n.left, n.right)}
        numerators = {id(n.left) for n in ast.walk(tree) if isinstance(n, ast.BinOp) and isinstance(n.op, ast.Div)}
        line_words = frozenset(stem(w) for w in _WORD.findall(re.sub(r"<<[^<>]*>>", " ", line)))
        for pos, (node, value, whole) in enumerate(found):
            owners = _owners(value, givens, results, context, in_context)
            if whole:  # the 1 of `1 - 3/4`; the 100 of `100 - 20` for "20 %" unless a given or result states 100
                owners = [("whole",)] + ([o for o in owners if o[0] in ("given", "result")] if value == 100 else [])
            if id(node) not in divisors and (id(node) not in factors or id(node) in numerators):
                # a reciprocal of "half" or "a third" divides or multiplies (`x / 2`, "half as many, so 20 * 2"),
                # never adds and is never divided (the first 2 of `2/2` is the 2 bolts)
                owners = [o for o in owners if o[0] != "inverse"] or [("const",)]
            inverses = [o for o in owners if o[0] in ("inverse", "given") and
                        (o[0] == "inverse" or o[1] in givens.factor_word) and givens.own[o[1]] and
                        givens.own[o[1]] <= line_words]
            if inverses and said_none(line, value):  # "half as many, so 20 * 2", "twice as much, 2*$4000": the
                owners = inverses  # line says the halving or doubling
            if id(node) not in factors:  # "twice", "double" multiply, never add ("5+2" is not 5 + twice)
                owners = [o for o in owners if o[0] != "given" or o[1] not in givens.factor_word] or owners
            if id(node) in divisors and said_none(line, value) and "average" in line_words and \
                    not any(o[0] == "given" and givens.words[o[1]] & line_words for o in owners) and \
                    all(o[0] == "given" for o in owners):
                # "On average they ate 45 because 90 / 2": an average's bare divisor is the count of the things
                # averaged, not a given the line does not name ("two roll-ups wide")
                owners = [("const",)]
            # a given's own words give it a role: "four times as long" multiplies, "20 fewer cards than" adds
            placed = [o for o in owners if o[0] != "given" or
                      not (o[1] in givens.times and id(node) not in factors) and
                      not (o[1] in givens.difference and id(node) not in terms)]
            owners = placed or owners
            if id(node) in factors and not _MULTIPLYING.search(line) and \
                    any(o[0] == "given" and o[1] in givens.factor_word for o in owners) and \
                    any(o[0] == "result" or o[0] == "given" and o[1] not in givens.factor_word for o in owners):
                # where a given or result of its value competes, "twice" is only the one of a line that says so:
                # the 2 of "math and science book weigh 2 pounds each, 2*2" counts two books (nothing states it)
                owners = list(dict.fromkeys([("const", o[1]) if o[0] == "given" and o[1] in givens.factor_word
                                             else o for o in owners]))  # one number, as a given would be
            if value == 1 and id(node) in factors:  # `44 * 1` for "1 shirt from each vacation": a plain factor 1
                owners = [o for o in owners if o[0] != "given" or not givens.values[o[1]].dimensionless] or \
                    [("const",)]  # is no data (no chain may cite it); "9 x $1" is a price
            same = [n for n, v, _ in found if v == value]
            said = None
            if len(same) == 1:  # words name a number written once in the equation
                said = number_words(line, value, False) if not isinstance(node, ast.BinOp) else \
                    number_words(line, Fraction(str(node.left.value)), False)
            else:  # "5 dance classes 5 days a week so that's 5*5": as many places with words as numbers, in order
                places = [w for w in number_places(line, value, False) if w]
                if len(places) == len(same):
                    said = places[same.index(node)]
            if said is not None:
                owners = _by_words(owners, said, givens, result_words, fact_words(value, context), value)
            elif len(owners) > 1:  # "3 * 3 = 9 tires" for 3 tricycles: the fact may be one of them (`_distinct`)
                pass
            else:
                owners = [o for o in owners if o[0] != "fact"] or owners
            lits.append(_Lit(pos, value, owners))
            nlist.append(node)
        eqs.append(_Eq(tree, lits, stated))
        nodes.append(nlist)
        results.append(stated)
        result_words.append(number_words(line, stated))
        if stated == gold or (percent and stated * 100 == gold) or \
                abs(stated - gold) <= abs(gold) / 10**6:
            final = len(eqs) - 1
    if final < 0:
        return "unread: no equation of the solution computes the answer"
    plain = frozenset(c for c in ALLOWED_CONSTANTS if allowed_constant(c, context))
    return Reading(eqs, final, nodes, str(problem.answer.get("unit") or "") in ("USD", "cent"), plain)


def _owners(value, givens: _Givens, results, context, in_context) -> list[tuple]:
    owners: list[tuple] = [("result", j) for j in range(len(results) - 1, -1, -1) if results[j] == value]
    owners += [("given", gid) for gid, nums in givens.numbers.items() if value in nums]
    if value:
        owners += [("inverse", gid) for gid, f in givens.fraction.items() if 1 / f == value]
        # `7200 / 4` after `1 - 3/4 = 1/4`: the reciprocal of an earlier result
        owners += [("inverse_result", j) for j in range(len(results) - 1, -1, -1) if 0 < results[j] < 1
                   and results[j] == 1 / value]
    if not owners:  # 0.8 or 80 for "20 % off", 1.15 for "a 15 % tip"
        for gid, f in givens.fraction.items():
            if value == 1 - f:
                owners.append(("complement", gid))
            elif value == 1 + f:
                owners.append(("growth", gid))
        for gid, n in givens.percent.items():
            if value == 100 - n:
                owners.append(("complement100", gid))
            elif value == 100 + n:
                owners.append(("growth100", gid))
    if not owners:
        return [("const",)]
    if in_context(value, context):  # a fact a pair of the question's words names (7 days a week), where the
        owners.append(("fact",))  # solution's words name it (`_by_words`): a number a given states is that given
    return owners


def _by_words(owners: list[tuple], said: frozenset[str], givens: _Givens, result_words,
             facts: frozenset[str], value: Fraction | None = None) -> list[tuple]:
    """The owners the solution's words name, where they name some and not others; else all of them."""
    if len(owners) < 2 or not said:
        return [o for o in owners if o[0] != "fact"] or owners
    if "$" in said:  # "$2 per bottle": the dollar amount, not the 2 bottles; "$10" is not "$0.10" in cents
        owners = [o for o in owners if o[0] != "given" or givens.money[o[1]]] or owners
        owners = [o for o in owners if o[0] != "given" or value is None or givens.cents.get(o[1]) != value] or owners

    def named(o: tuple) -> int:  # how many of the words name it ("first 3 customers": the first, not the last)
        if o[0] == "given":  # and one more where the line writes all of the given's own words ("4 miles" is the
            own = givens.own[o[1]]  # "4 miles", not the "4 miles per hour")
            return len(said & givens.words[o[1]]) + (1 if own and own <= said else 0)
        if o[0] == "result":
            return len(said & result_words[o[1]])
        if o[0] == "fact":  # the fact's own words, and a weekday's days of the week
            return len(said & ({stem(w) for w in facts} | ({"day", "week"} if "weekday" in facts else set())))
        return 0

    score = {o: named(o) for o in owners}
    best = max(score.values())
    hit = [o for o in owners if score[o] == best and best]
    return hit if hit else [o for o in owners if o[0] != "fact"]


def _run(reading: Reading, choice: dict[tuple[int, int], tuple], factors: dict[str, Fraction],
         givens: _Givens) -> Fraction:
    """The solution's answer when every given is multiplied by its factor, under one choice of owners."""
    results: list[Fraction] = []
    powers: list[int | None] = []
    for k, eq in enumerate(reading.eqs[:reading.final + 1]):
        values: dict[int, Fraction] = {}
        money: dict[int, int | None] = {}
        for lit, node in zip(eq.lits, reading.nodes[k]):
            owner = choice.get((k, lit.pos), lit.owners[0])
            kind = owner[0]
            if kind in ("const", "fact", "whole"):
                money[id(node)] = None if kind == "const" and (lit.value not in reading.plain or not lit.value) else 0
                continue
            if kind == "result":
                v = results[owner[1]]
            elif kind == "inverse_result":
                v = 1 / results[owner[1]]
            elif kind == "given":
                v = lit.value * factors[owner[1]]
            elif kind == "inverse":
                v = lit.value / factors[owner[1]]
            elif kind in ("complement", "growth"):
                f = givens.fraction[owner[1]] * factors[owner[1]]
                v = 1 - f if kind == "complement" else 1 + f
            else:  # complement100, growth100
                n = givens.percent[owner[1]] * factors[owner[1]]
                v = 100 - n if kind == "complement100" else 100 + n
            values[id(node)] = v
            money[id(node)] = powers[owner[1]] if kind == "result" else \
                (None if powers[owner[1]] is None else -powers[owner[1]]) if kind == "inverse_result" else \
                givens.money.get(owner[1], 0) if kind == "given" else 0
        powers.append(_money_power(eq.tree, money))
        results.append(_evaluate(eq.tree, values))
    if reading.money and powers[reading.final] not in (None, 1):
        raise ValueError("the answer is money, this reading computes no money")
    return results[reading.final]


def _money_power(node: ast.AST, money: dict[int, int | None]) -> int | None:
    """The power of dollars an expression carries (None: unknown, a number nothing states); ValueError where it
    adds dollars to a plain number ($100 - 30 % is no reading)."""
    if id(node) in money:
        return money[id(node)]
    if isinstance(node, ast.Expression):
        return _money_power(node.body, money)
    if isinstance(node, ast.Constant):
        return None
    if isinstance(node, ast.UnaryOp):
        return _money_power(node.operand, money)
    if isinstance(node, ast.BinOp):
        a, b = _money_power(node.left, money), _money_power(node.right, money)
        if isinstance(node.op, (ast.Add, ast.Sub)):
            if a is not None and b is not None and a != b:
                raise ValueError("dollars added to a plain number")
            return a if a is not None else b
        if a is None or b is None:
            return None
        if isinstance(node.op, ast.Mult):
            return a + b
        if isinstance(node.op, ast.Div):
            return a - b
    return None


def _needed(reading: Reading) -> list[tuple[int, int]]:
    """The (equation, number) slots the answer can depend on: those of the final equation and, through their
    result owners, of the equations before it."""
    need, stack, slots = set(), [reading.final], []
    while stack:
        k = stack.pop()
        if k in need:
            continue
        need.add(k)
        for lit in reading.eqs[k].lits:
            stack.extend(o[1] for o in lit.owners if o[0] in ("result", "inverse_result"))
    for k in sorted(need):
        slots.extend((k, lit.pos) for lit in reading.eqs[k].lits if len(lit.owners) > 1)
    return slots


def _trace_value(steps: list[dict], givens: _Givens, factors: dict[str, Fraction]) -> Fraction:
    from prosfi.quant import evaluate, parse_expr
    from prosfi.quant.units import Value

    env = {gid: Value(v.mag * factors[gid], v.dims, v.unit) for gid, v in givens.values.items()}
    last = None
    for s in steps:
        last = evaluate(parse_expr(str(s["expr"])), env)
        env[str(s["id"])] = last
    if last is None:
        raise ValueError("no steps")
    return Fraction(last.mag)


@dataclass
class Verdict:
    """What the check found: `issue` ('' passes), the number of distinct functions the readings left, and
    whether the trace computes one of them."""

    issue: str
    functions: int = 0
    matches: bool = False
    detail: dict = field(default_factory=dict)


def check(problem: Problem, equations: Sequence[Any], context: str, steps: list[dict] | None = None) -> Verdict:
    """The trace `steps` (default: the problem's gold steps) against the solution's `equations`
    (`gsm8k.equations`: expr, result, text) in the problem whose words are `context`
    (`quant_gold.constant_context`); module docstring."""
    steps = steps if steps is not None else (problem.extra or {}).get("gold_steps")
    if not steps:
        return Verdict("faithful: trace: no steps")
    givens = _Givens(problem)
    reading = read_solution(problem, givens, equations, context)
    if isinstance(reading, str):
        return Verdict(f"faithful: {reading}")
    slots = _needed(reading)
    owner_lists = [next(lit.owners for lit in reading.eqs[k].lits if lit.pos == p) for k, p in slots]
    total = 1
    for o in owner_lists:
        total *= len(o)
    if total > MAX_READINGS:
        return Verdict(f"faithful: ambiguous: {total} readings of the solution's numbers (more than {MAX_READINGS})")
    rng = random.Random(_SEED)
    ids = sorted(givens.values)
    base = {gid: Fraction(1) for gid in ids}
    points = [base]
    for _ in range(POINTS):
        moved = {gid: Fraction(1) if gid in givens.fixed else Fraction(rng.randint(1009, 9973), rng.randint(1009, 9973))
                 for gid in ids}
        points.append({gid: moved[givens.tie[gid]] for gid in ids})
    try:
        trace = [_trace_value(steps, givens, pt) for pt in points]
    except Exception as exc:  # noqa: BLE001 - a trace that breaks at moved givens is not checked
        return Verdict(f"faithful: trace: {exc}")
    functions: dict[tuple, list[dict]] = {}
    combos = [c for c in itertools.product(*owner_lists) if _distinct(reading, slots, c)]
    keys: dict[tuple, tuple] = {}
    for combo in combos or itertools.product(*owner_lists):
        try:
            keys[combo] = tuple(_run(reading, dict(zip(slots, combo)), pt, givens) for pt in points)
        except (ZeroDivisionError, ValueError, OverflowError):
            continue
    for combo in _preferred(reading, slots, list(keys), givens):
        functions.setdefault(keys[combo], []).append(dict(zip(slots, combo)))
    if not functions:
        return Verdict("faithful: unread: the solution breaks at the moved givens")
    matching = [key for key in functions if _same(trace, key)]
    detail = {"functions": len(functions), "readings": total}
    if len(functions) > 1:
        what = _unsettled(slots, owner_lists)
        return Verdict(f"faithful: ambiguous: the solution's words leave {what}", len(functions), bool(matching),
                       detail)
    if matching and not _cites_multipliers_as_read(steps, givens, reading, points[1], trace[1],
                                                   [c for key in matching for c in functions[key]], rng):
        return Verdict("faithful: mismatch: the trace cites a multiplier word (\"twice\") where the solution "
                       "does not", 1, False, detail)
    if not matching:
        ref = next(iter(functions))
        return Verdict(f"faithful: mismatch: the trace's answer is another function of the givens than the "
                       f"solution's (at moved givens {float(trace[1]):g}, the solution {float(ref[1]):g})",
                       1, False, detail)
    return Verdict("", 1, True, detail)


def _cites_multipliers_as_read(steps, givens: _Givens, reading: Reading, point: dict, at_point: Fraction,
                               choices: list[dict], rng: random.Random) -> bool:
    """A multiplier word ("twice") stays fixed at the compared points, so a trace citing it for another 2 (the
    two books of "2*2") would pass: at one more point where the multiplier words move too, a trace that depends
    on them must still be a reading's function (a trace writing the literal 2 for "twice" does not move)."""
    if not givens.fixed:
        return True
    star = dict(point)
    for gid in givens.fixed:
        star[gid] = Fraction(rng.randint(1009, 9973), rng.randint(1009, 9973))
    try:
        moved = _trace_value(steps, givens, star)
    except Exception:  # noqa: BLE001 - a trace that breaks here is not one of the readings
        return False
    if moved == at_point:
        return True
    for choice in choices:
        try:
            if _same([moved], (_run(reading, choice, star, givens),)):
                return True
        except (ZeroDivisionError, ValueError, OverflowError):
            continue
    return False


def _distinct(reading: Reading, slots, combo) -> bool:
    """Within one equation each given or result stands for at most one of its numbers (`5 * 5` for 5 children
    and the 5 pounds each eats is not children squared); where no reading keeps to that, repeats are read."""
    chosen = dict(zip(slots, combo))
    for k, eq in enumerate(reading.eqs):
        seen = set()
        for lit in eq.lits:
            o = chosen.get((k, lit.pos), lit.owners[0])
            if o[0] not in ("const", "whole") or len(o) > 1:
                if o in seen:
                    return False
                seen.add(o)
    return True


def _preferred(reading: Reading, slots, combos: list[tuple], givens: _Givens) -> list[tuple]:
    """The readings a solution's own flow supports, where its words leave several (each step keeps only the
    best, so it never leaves none):

    1. the most earlier results used: a solution computes nothing it leaves unused (the 9 liters of orange drink
       left and the 9 liters of water are both used, one in each line that writes a 9);
    2. the most used of the givens a solution does not leave out: those that state one value with one noun
       ("Jean eats 2 of the lollipops ... 2 lollipops in one bag": one is not left out while the other is cited
       twice) and the fractions and percentages ("Cody ate a third, Trevor a quarter": the `12/4` is the
       quarter). A count is not counted ("Two cars" is not the second 2 of "60*2 ... 70*2" for "after 2 hours":
       a question may state a count no step uses);
    3. where only the choice between earlier results of one value is left, the latest: a line that writes the
       value a line before it computed takes that result ("750 - 250" after "750 / 3 = 250", not the first 250).
    """
    def uses(combo) -> tuple[int, int]:
        chosen = dict(zip(slots, combo))
        results, gids = set(), set()
        for k in range(reading.final + 1):
            for lit in reading.eqs[k].lits:
                o = chosen.get((k, lit.pos), lit.owners[0])
                if o[0] in ("result", "inverse_result"):
                    results.add(o[1])
                elif o[0] in ("given", "inverse", "complement", "growth", "complement100", "growth100") and \
                        (o[1] in givens.twins or o[1] in givens.fraction or o[1] in givens.percent):
                    gids.add(givens.tie.get(o[1], o[1]))
        return len(results), len(gids)

    scored = [(uses(c), c) for c in combos]
    best = max((u for u, _ in scored), default=(0, 0))
    combos = [c for u, c in scored if u == best]
    result_slots = [i for i, _ in enumerate(slots) if all(c[i][0] == "result" for c in combos)]
    if result_slots and len(combos) > 1:
        latest = max(tuple(c[i][1] for i in result_slots) for c in combos)
        combos = [c for c in combos if tuple(c[i][1] for i in result_slots) == latest]
    return combos


def _same(trace: list[Fraction], ref: tuple) -> bool:
    """The trace is the reference times one unit factor (1, 100 or 1/100: cents, dollars, percent)."""
    for ratio in (Fraction(1), Fraction(100), Fraction(1, 100)):
        if all(t == ratio * r for t, r in zip(trace, ref)):
            return True
    return False


def _unsettled(slots, owner_lists) -> str:
    parts = []
    for (k, _), owners in zip(slots, owner_lists):
        names = ", ".join(o[0] if len(o) == 1 else f"{o[0]} {o[1]}" for o in owners)
        parts.append(f"eq {k + 1}: {names}")
        if len(parts) == 3:
            break
    return "several readings (" + "; ".join(parts) + ")"


def issue(problem: Problem, equations: Sequence[Any], context: str, steps: list[dict] | None = None) -> str:
    """'' when the trace computes the solution's function under the binding its words support, else why not."""
    return check(problem, equations, context, steps).issue


__all__ = ["CLASSES", "POINTS", "Verdict", "check", "given_words", "issue", "number_words", "read_solution", "stem",
           "words_of"]
