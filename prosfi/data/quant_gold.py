"""Gold step chains for quantity problems: read, build from worked arithmetic, and render as completions.

A gold chain is a list of steps in the policy's schema (`{"id": "s1", "expr": "g1 - g2 - g3", "value": 9,
"unit": ""}` or `{"id": "s2", "op": "kinetic_energy", "args": [...], ...}`) whose literals are all
grounded: every number in an expression is a given (by id), an earlier step (by id), or one of the
listed constants. Generated problems (physics, GSM-Symbolic) carry their chain in `extra["gold_steps"]`;
GSM8K chains are built from the solution's equations by `build_chain`, which maps each literal to a given
or an earlier result and leaves the record without gold (with the reason) when a literal stays ungrounded.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

from prosfi.data.problem import Problem
from prosfi.quant.units import json_number

# Used only if prosfi.quant.licensed (the chain rules' list) cannot be imported.
FALLBACK_CONSTANTS = frozenset(Fraction(n) for n in (0, 1, 2, Fraction(1, 2)))
MAX_STEPS = 24
MAX_OPS = 4  # the chain rules' limits (prosfi.domains.quantity)
MAX_REFS = 4
_ATTEMPTS = 48


def constant_context(problem: Problem) -> str:
    """The text a unit-factor constant must find its context in (`prosfi.quant.licensed`): the question and
    the givens' texts, then each unit field (givens, target, answer) on its own line after a `|`, so a unit
    symbol counts there but not inside a word ("Janet's" names no seconds)."""
    target = problem.target or {}
    texts = [problem.question, str(target.get("name") or "")] + [str(g.get("text") or "") for g in problem.givens]
    units = [str(target.get("unit") or "")] + [str(g.get("unit") or "") for g in problem.givens]
    if isinstance(problem.answer, dict):
        units.append(str(problem.answer.get("unit") or ""))
    tokens = [tok for u in units for tok in re.findall(r"[A-Za-z%¢]+", u)]
    return "\n".join([" ".join(texts)] + [f"| {tok}" for tok in dict.fromkeys(tokens)])


def allowed_constants(problem: Problem | None = None) -> frozenset[Fraction]:
    """The literals a chain for `problem` may use without citing a given: the chain rules' list
    (`prosfi.quant.licensed`), unit factors only where the problem names what they convert."""
    try:
        from prosfi.quant.licensed import ALLOWED_CONSTANTS, allowed_constant
    except ImportError:  # pragma: no cover - the list ships with prosfi.quant
        return FALLBACK_CONSTANTS
    context = None if problem is None else constant_context(problem)
    return frozenset(Fraction(c) for c in ALLOWED_CONSTANTS if allowed_constant(Fraction(c), context))


# ------------------------------------------------------------------ reading and rendering
def gold_steps(problem: Problem) -> list[dict[str, Any]] | None:
    """The problem's gold chain (copied), or None when none is known."""
    steps = problem.extra.get("gold_steps")
    if not isinstance(steps, list) or not steps:
        return None
    return [dict(s) for s in steps]


def answer_text(problem: Problem) -> str:
    """The gold `<answer>` content: `18` or `3.0 m/s`."""
    a = problem.answer if isinstance(problem.answer, dict) else {"value": problem.answer, "unit": ""}
    unit = str(a.get("unit") or "").strip()
    return f"{a.get('value')} {unit}".strip()


def _think(problem: Problem, steps: Sequence[dict[str, Any]]) -> str:
    lines = []
    for s in steps:
        how = s.get("expr") or f"{s.get('op')}({', '.join(s.get('args', []))})"
        unit = f" {s['unit']}" if s.get("unit") else ""
        lines.append(f"{s['id']} = {how} = {s['value']}{unit}.")
    lines.append(f"So the answer is {answer_text(problem)}.")
    return "\n".join(lines)


def render_completion(problem: Problem, steps: Sequence[dict[str, Any]]) -> str:
    """The completion text: `<think>` prose, the JSON step array (one step a line), the answer."""
    body = ",\n".join(json.dumps(s, ensure_ascii=False) for s in steps)
    return (f"<think>\n{_think(problem, steps)}\n</think>\n<steps>\n[{body}]\n</steps>\n"
            f"<answer>{answer_text(problem)}</answer>")


def gold_completion(problem: Problem) -> str | None:
    steps = gold_steps(problem)
    return None if steps is None else render_completion(problem, steps)


# ------------------------------------------------------------------ building chains from worked arithmetic
@dataclass
class Built:
    steps: list[dict[str, Any]] | None
    issue: str = ""
    unit: str = ""


_TOK = re.compile(r"\s*(?:(\d+(?:\.\d*)?|\.\d+)|(\*\*|//|[-+*/()]))")


def tokenize(expr: str) -> list[tuple[str, Any]] | None:
    out: list[tuple[str, Any]] = []
    pos = 0
    expr = expr.strip()
    while pos < len(expr):
        m = _TOK.match(expr, pos)
        if not m or m.end() == pos:
            return None
        if m.group(1) is not None:
            out.append(("num", m.group(1)))
        else:
            out.append(("op", m.group(2)))
        pos = m.end()
    return out


def _close(a: Fraction | float, b: Fraction | float, rel: float = 1e-9) -> bool:
    if isinstance(a, Fraction) and isinstance(b, Fraction):
        return a == b
    return abs(float(a) - float(b)) <= rel * max(abs(float(a)), abs(float(b)), 1e-12)


class GoldChain:
    """The steps built so far, with their values, and which givens/steps a literal may stand for."""

    def __init__(self, problem: Problem):
        from prosfi.quant import parse_quantity

        self.env: dict[str, Any] = {}
        self.written: dict[str, Fraction] = {}
        self.percent: dict[str, Fraction] = {}  # given id -> N of an "N%" given
        for g in problem.givens:
            gid = str(g["id"])
            try:
                v = parse_quantity({"value": g["value"], "unit": g.get("unit") or ""})
            except (ValueError, TypeError):
                continue
            self.env[gid] = v
            try:
                self.written[gid] = Fraction(str(g["value"]).replace(",", ""))
            except (ValueError, ZeroDivisionError):
                continue
            if str(g.get("unit") or "").strip() in ("percent", "%"):
                self.percent[gid] = self.written[gid]
        self.texts = {str(g["id"]): str(g.get("text") or "") for g in problem.givens}
        self.nouns = {str(g["id"]): given_noun(problem.question, g) for g in problem.givens}
        self.windows = {str(g["id"]): noun_window(problem.question, g) for g in problem.givens}
        self.factor_only = {str(g["id"]) for g in problem.givens if _FACTOR_WORD.fullmatch(str(g.get("text") or ""))}
        # "three times as many": a multiplier (a factor or a divisor, never a term); "20 fewer cards than": a
        # difference (a term, never a factor): the role a given's own words give it
        self.times = {str(g["id"]) for g in problem.givens if _role(problem.question, g) == "times"}
        self.difference = {str(g["id"]): _direction(problem.question, g) for g in problem.givens
                           if _role(problem.question, g) == "difference"}
        self.constants = allowed_constants(problem)
        try:
            from prosfi.quant.licensed import CONSTANT_CONTEXT, fact_words, in_context, licensed_factors

            context = constant_context(problem)
            self.multiples = licensed_factors(context)
            # the numbers a pair of the question's words licenses here (unit factors, world facts), each with
            # the words that name it ("leg", "bird" for the 2 of "10 birds" and "legs")
            self.facts = {c: frozenset(_stem(w) for w in fact_words(c, context))
                          for c in CONSTANT_CONTEXT if in_context(c, context)}
        except ImportError:  # pragma: no cover
            self.multiples, self.facts = frozenset(), {}
        self.steps: list[dict[str, Any]] = []  # {"key", "tokens", "value": Value, "shown": Fraction|float}
        self.used: set[str] = set()
        self.lost: set[Fraction] = set()  # results of equations that gave no step

    def shown(self, v) -> Fraction | float:
        return v.magnitude_in()

    def candidates(self, lit: Fraction) -> list[str]:
        """Refs a literal may stand for, best first: an unused earlier result (latest first), a given
        (unused first), a used earlier result; a listed constant is the caller's last resort."""
        unused = [s["key"] for s in reversed(self.steps) if s["key"] not in self.used and self._shows(s, lit)]
        givens = []
        for gid, v in self.env.items():
            if v.dimensionless:
                ok = _close(v.mag, lit)
            else:
                ok = gid in self.written and self.written[gid] == lit
                if not ok and _money(v):  # "5 cents" written $0.05, "$0.25" written 25 (cents)
                    ok = any(_close(v.magnitude_in(u), lit) for u in ("USD", "cent"))
            if ok:
                givens.append(gid)
        givens.sort(key=lambda g: g in self.used)
        used = [s["key"] for s in reversed(self.steps) if s["key"] in self.used and self._shows(s, lit)]
        # a percentage cited by the number written ("100% / 20%" worked as 100/20): last, and only where the
        # value still comes out right (the grounding checks it)
        written = [g for g, n in self.percent.items() if n == lit and g not in givens]
        return unused + givens + used + written

    def _shows(self, step: dict, lit: Fraction) -> bool:
        """The step's value is `lit` as shown, or in the other currency unit (100 cents is the $1 after it)."""
        if _close(step["shown"], lit):
            return True
        v = step["value"]
        return _money(v) and sum(map(abs, v.dims)) == 1 and any(_close(v.magnitude_in(u), lit) for u in ("USD", "cent"))

    def value_of(self, key: str):
        if key in self.env:
            return self.env[key]
        return next(s["value"] for s in self.steps if s["key"] == key)


_FACTOR_WORD = re.compile(r"(?i)twice|double[sd]?|triple[sd]?|thrice|quadruple[sd]?")
_SKIP_WORDS = frozenset(["more", "less", "of", "per", "a", "an", "the", "each", "and", "than", "times", "extra", "other", "additional", "fewer"])
_WORD = re.compile(r"\$|[A-Za-z][A-Za-z'’]*")
_NUMBER_WORDS = re.compile(r"(?i)^(?:and|a|half|halves|dozen|hundred|thousand|million|billion|zero|one|two|three|"
                           r"four|five|six|seven|eight|nine|ten|eleven|twelve|thirteen|fourteen|fifteen|sixteen|"
                           r"seventeen|eighteen|nineteen|twenty|thirty|forty|fifty|sixty|seventy|eighty|ninety|"
                           r"thirds?|quarters?|fourths?|fifths?|sixths?|sevenths?|eighths?|ninths?|tenths?|twelfths?)$")


_CARDINAL = re.compile(r"(?i)^(?:one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|thirteen|fourteen|"
                       r"fifteen|sixteen|seventeen|eighteen|nineteen|twenty|thirty|forty|fifty|sixty|seventy|"
                       r"eighty|ninety)$")
_COMPARATIVE = re.compile(r"(?i)^(?:more|less|fewer|longer|shorter|older|younger|faster|slower|higher|lower|"
                          r"cheaper|bigger|smaller|heavier|lighter|extra|additional|than)$")


def _noun_after(text: str) -> str:
    """The first word after a number that says what it counts ("9 inpatients" -> "inpatient", "$20" -> "$"),
    marked `+` when a comparative goes with it ("2 more pets", "4 hours longer": a difference, not an amount)."""
    words = _WORD.findall(re.split(r"[.!?;]\s", text[:60] + " ", maxsplit=1)[0])  # within its sentence
    compared = False
    for k, w in enumerate(words):
        if w == "$":
            return "$"
        lw = w.lower().rstrip("'’s") if w.lower().endswith(("'s", "’s")) else w.lower()
        if _COMPARATIVE.match(lw):
            compared = True
            continue
        if _CARDINAL.match(lw) and k > 0:
            return ""  # "of the three in three years": the noun after another number is that number's
        if lw in _SKIP_WORDS or _NUMBER_WORDS.match(lw):
            continue
        if k + 1 < len(words) and _COMPARATIVE.match(words[k + 1]):
            compared = True
        return _stem(lw) + ("+" if compared else "")
    return ""


def _stem(word: str) -> str:
    """A plural to its singular, enough to compare nouns: "inpatients", "boxes", "inches", "berries"."""
    w = word.lower()
    w = {"people": "person", "persons": "person", "children": "child", "men": "man", "women": "woman",
         "feet": "foot", "teeth": "tooth", "mice": "mouse", "geese": "goose"}.get(w, w)
    if len(w) <= 3 or w.endswith(("ss", "us", "is")):
        return w
    if w.endswith("ies"):
        return w[:-3] + "y"
    if re.search(r"(?:s|x|z|ch|sh|o)es$", w):
        return w[:-2]
    return w.removesuffix("s")


def given_noun(question: str, g: dict) -> str:
    """What a given counts, read from the question: its unit word ("nine hours" -> "hour"), `$` for money,
    else the noun right after it ("9 inpatients" -> "inpatient")."""
    text = str(g.get("text") or "")
    if text.lstrip().startswith("$") or str(g.get("unit") or "") == "USD":
        return "$"
    words = [w for w in _WORD.findall(text) if not _NUMBER_WORDS.match(w)]
    try:
        rest = question[int(g.get("end", 0)):]
    except (TypeError, ValueError):
        rest = ""
    noun = _stem(words[-1]) if words else _noun_after(rest)
    if len(words) >= 2 and re.search(r"[A-Za-z]\s*(?:/|\bper\b)\s*[A-Za-z]", text):  # "4 feet/hour": a rate
        noun = f"{_stem(words[0])}/{_stem(words[-1])}"
    if words and re.match(r"\s*(?:more|less|fewer|longer|shorter|older|younger|faster|slower|extra)\b", rest, re.IGNORECASE):
        noun += "+"  # "4 hours longer" is a difference, "4 hours" an amount
    if not words and _TIMES_AFTER.match(rest):  # "three times as many", "3 times this number": a multiplier,
        return "times"  # whatever noun follows (the solution's "three times as many homes" names the same one)
    if noun.rstrip("+") == "time":  # "three times as long" is a multiplier, "three times a day" a count
        nxt = re.match(r"\s*(?:times?\s+)?([A-Za-z]+)", rest)
        noun = f"time {nxt.group(1).lower()}" if nxt else noun
    return noun


def noun_window(question: str, g: dict) -> frozenset[str]:
    """The words that may name what a given counts: up to three words right after it, up to the first
    punctuation or comparison ("10 tapered candles" -> {"tapered", "candle"}), stemmed; none for money."""
    if str(g.get("text") or "").lstrip().startswith("$") or str(g.get("unit") or "") in ("USD", "cent"):
        return frozenset()
    try:
        rest = question[int(g.get("end", 0)):][:60]
    except (TypeError, ValueError):
        return frozenset()
    rest = re.split(r"[.,;:?!()\d]|\b(?:than|and|or|of|per|each|for|to|in|on|at|with)\b", rest, maxsplit=1)[0]
    words = [w.lower() for w in _WORD.findall(rest) if w != "$"][:3]
    return frozenset(_stem(w) for w in words if w not in _SKIP_WORDS and not _NUMBER_WORDS.match(w))


def literal_nouns(line: str, lit: Fraction) -> set[str]:
    """The nouns the solution line writes after the number `lit` ("has 9 inpatients, so ... 9 * 20" ->
    {"inpatient"}; "three times as long" -> {"time as"}), read like the question's givens; `$` for `$9`."""
    from prosfi.quant import extract_givens

    if not line:
        return set()
    text = re.sub(r"<<[^<>]*>>", " ", line)
    out: set[str] = set()
    for g in extract_givens(text, units="money"):
        try:
            value = Fraction(g.value)
        except (ValueError, ZeroDivisionError):
            continue
        if value != lit and not (g.unit == "cent" and value / 100 == lit):
            continue
        if g.unit == "percent":  # "30% less than Mitchel" names the 30%, not a 30 the step multiplies with
            continue
        if g.unit == "USD" or g.text.lstrip().startswith("$"):
            out.add("$")  # `$2 x 2`: the dollar sign is its noun, whatever follows
            continue
        if re.match(r"\s*[-+*/x×=]\s*[\d$(]", text[g.end:]) and not re.search(r"[A-Za-z]", g.text):
            continue  # an operator follows: no noun here
        noun = given_noun(text, g.to_dict())
        if noun:
            out.add(noun)
    return out


def resolve_givens(chain: GoldChain, gids: list[str], lit: Fraction, line: str,
                   slots: int = 1, sign: str = "") -> tuple[list[str], str]:
    """Which of several givens with the value `lit` the solution means, or none: never a guess. In order:
    givens that count the same thing (the same noun or unit) are interchangeable, and so are givens the step
    cites all of (`3 * 3` for "3 sprints 3 times a week"); else the noun the solution writes after the number
    decides ("9 inpatients" against "nine hours" and "9 inpatients"); else a given not yet cited when all the others already are (each stated number is used
    once). Returns (the givens it may be, "") or (all of them, why not) for the caller to settle by unit."""
    if len(gids) < 2:
        return gids, ""
    nouns = {g: chain.nouns.get(g, "") for g in gids}
    if len(set(nouns.values())) == 1 or slots >= len(gids):
        return gids, ""
    said = literal_nouns(line, lit)
    hit = [g for g in gids if nouns[g] and nouns[g] in said]
    if hit and len({nouns[g] for g in hit}) == 1:
        return hit, ""
    if not hit and said and not any(g in chain.difference or g in chain.times for g in gids):
        # "10 tapered candles" is the one the solution's "10 candles" names, not "$10.00" (a difference's words,
        # "40 fewer corns than", name what it is compared with as much as what it counts: not read this way)
        hit = [g for g in gids if chain.windows.get(g, frozenset()) & said]
        if len(hit) == 1:
            return hit, ""
    unused = [g for g in gids if g not in chain.used]
    if len(unused) == 1 and (unused[0] not in chain.difference or chain.difference[unused[0]] == sign):
        # each stated number is used once; a difference ("40 fewer corns than") only where the step goes its
        # way (`60 - 40`): "80 + 40" adds the 40 cannolis again, whatever was cited before
        return unused, ""
    what = ", ".join(f"{g} ({nouns[g] or 'no noun'})" for g in gids)
    return gids, f"ambiguous: {number_text_short(lit)} could be {what}"


def number_text_short(x: Fraction) -> str:
    return str(x.numerator) if x.denominator == 1 else f"{float(x):g}"


def _fraction_givens(chain: GoldChain) -> dict[Fraction, str]:
    """Dimensionless non-integer givens ("25%", "two-thirds", "a quarter"), by value."""
    out: dict[Fraction, str] = {}
    for gid, v in chain.env.items():
        if v.dimensionless and isinstance(v.mag, Fraction) and v.mag.denominator != 1:
            out.setdefault(v.mag, gid)
    return out


def percent_rewrite(tokens: list[tuple[str, Any]], chain: GoldChain) -> list[tuple[str, Any]]:
    """Write the solution's spelled-out fractions as the givens they are: `N / 100` and `N * .01` where "N%"
    is a given, `a / b` where a/b is a given ("three-fifths"), `x / b` where 1/b is a given ("a third" ->
    `x * g`), and a literal `1 + p` or `1 - p` where p is a given ("25% more" -> 1.25)."""
    by_n: dict[Fraction, str] = {}
    for gid, n in chain.percent.items():
        by_n.setdefault(n, gid)
    fractions = _fraction_givens(chain)

    def free(x: Fraction) -> bool:  # a literal nothing else grounds
        return not chain.candidates(x) and x not in chain.constants

    if len(tokens) == 5 and [t[0] for t in tokens[::2]] == ["num"] * 3 and [t[1] for t in tokens[1::2]] == ["*", "/"]:
        # "four-fifths of 60": `4 * 60 / 5` (or `60 * 4 / 5`) is `g * 60`
        a, b, k = (Fraction(t[1]) for t in tokens[::2])
        for n, x in ((a, tokens[2]), (b, tokens[0])):
            if k and n / k in fractions and n / k != n and (free(n) or free(k)):
                return [("ref", fractions[n / k]), ("op", "*"), x]
    out: list[tuple[str, Any]] = []
    i = 0
    while i < len(tokens):
        t = tokens[i]
        after_div = out[-1:] == [("op", "/")]
        if t[0] == "num" and i + 2 < len(tokens) and tokens[i + 1][0] == "op" and not after_div \
                and tokens[i + 2][0] == "num" and not (i + 3 < len(tokens) and tokens[i + 3] == ("op", "**")):
            n, op, k = Fraction(t[1]), tokens[i + 1][1], Fraction(tokens[i + 2][1])
            hundredth = (op == "/" and k == 100) or (op == "*" and k == Fraction(1, 100))
            if n in by_n and hundredth:
                out.append(("ref", by_n[n]))
                i += 3
                continue
            if hundredth and n == 100:  # `100/100`: the whole, 1
                out.append(("num", "1"))
                i += 3
                continue
            step = next((st["key"] for st in reversed(chain.steps) if _close(st["shown"], n / 100)), None)
            if hundredth and step is not None and not chain.candidates(n):  # "10 years * 5% = 50%", then 50*.01
                out.append(("ref", step))
                i += 3
                continue
            if op == "/" and k != 0 and (n / k) in fractions and (
                    not chain.candidates(n) or not chain.candidates(k) or
                    chain.texts.get(fractions[n / k], "").replace(" ", "") == f"{t[1]}/{tokens[i + 2][1]}"):
                out.append(("ref", fractions[n / k]))
                i += 3
                continue
        if t == ("op", "/") and i + 1 < len(tokens) and tokens[i + 1][0] == "num" and \
                not (i + 2 < len(tokens) and tokens[i + 2] == ("op", "**")):
            k = Fraction(tokens[i + 1][1])
            quarter = fractions.get(1 / k) if k else None
            if k == 2 and quarter is not None and quarter in chain.used:
                quarter = next((g for g, f in fractions_all(chain).items() if f == Fraction(1, 2)
                                and g not in chain.used), None)  # the next "half" of two
            if k not in (0, 1) and quarter is not None and (not chain.candidates(k) or quarter not in chain.used) \
                    and (k != 2 or quarter not in chain.used):
                # "a quarter of the sandwiches": 12 / 4 is `12 * g`, not 12 over the 4 Cody ate; "one-fourth as
                # much as the Dachshund": 20 / 4 is that fourth, not the "Four dogs" in the line
                out += [("op", "*"), ("ref", fractions[1 / k])]
                i += 2
                continue
            # "1 - 3/4 = 1/4 of the flights" computed, then `88 / 4`: that is `88 * s` (the fraction just computed)
            part = next((st["key"] for st in reversed(chain.steps) if k and st["key"] not in chain.used
                         and st["value"].dimensionless and _close(st["shown"], 1 / k)), None)
            if k not in (0, 1) and part is not None and free(k):
                out += [("op", "*"), ("ref", part)]
                i += 2
                continue
            # "two thirds of 9300" worked as `9300 / 3`, then `* 2`: `x / 3` is `x * g / 2`
            whole = next((g for f, g in fractions.items() if f.denominator == k and f.numerator != 1), None)
            if k not in (0, 1, 2) and free(k) and whole is not None and \
                    Fraction(fractions_inv(fractions)[whole].numerator) in chain.constants:
                n = fractions_inv(fractions)[whole].numerator
                out += [("op", "*"), ("ref", whole), ("op", "/"), ("num", str(n))]
                i += 2
                continue
        if t == ("op", "*") and i + 1 < len(tokens) and tokens[i + 1][0] == "num" and \
                not (i + 2 < len(tokens) and tokens[i + 2] in (("op", "**"), ("op", "/"))):
            k = Fraction(tokens[i + 1][1])
            if k > 2 and free(k) and (1 / k) in fractions:  # "one-quarter inch beads": 17 inches * 4 = 17 / g
                out += [("op", "/"), ("ref", fractions[1 / k])]
                i += 2
                continue
        # (the 1 of `1 + g` is the whole, a constant: kind "whole", which no given is looked for)
        if t[0] == "num" and not chain.candidates(Fraction(t[1])) and Fraction(t[1]) not in chain.constants:
            lit = Fraction(t[1])
            if (lit - 1) in fractions:
                out += [("op", "("), ("whole", "1"), ("op", "+"), ("ref", fractions[lit - 1]), ("op", ")")]
                i += 1
                continue
            if (1 - lit) in fractions:
                out += [("op", "("), ("whole", "1"), ("op", "-"), ("ref", fractions[1 - lit]), ("op", ")")]
                i += 1
                continue
        out.append(t)
        i += 1
    return out


def fractions_all(chain: GoldChain) -> dict[str, Fraction]:
    """Every dimensionless non-integer given by id (two "half"s are two givens)."""
    return {gid: v.mag for gid, v in chain.env.items()
            if v.dimensionless and isinstance(v.mag, Fraction) and v.mag.denominator != 1}


def fractions_inv(fractions: dict[Fraction, str]) -> dict[str, Fraction]:
    return {g: f for f, g in fractions.items()}


def _drop_zero_terms(tokens: list[tuple[str, Any]]) -> list[tuple[str, Any]]:
    """`3 + 4 + 0` (3 customers who buy nothing) -> `3 + 4`: a term 0 changes no value, and the chain rules
    reject a step that carries one; only a whole term is dropped (`+ 0` not followed by `*`, `/`, `**`)."""
    out = list(tokens)
    k = 0
    while k < len(out):
        t = out[k]
        nxt = out[k + 1] if k + 1 < len(out) else None
        prev = out[k - 1] if k > 0 else None
        zero = t[0] == "num" and Fraction(t[1]) == 0 and nxt not in (("op", "*"), ("op", "/"), ("op", "**"),
                                                                       ("op", "//"))
        if zero and prev in (("op", "+"), ("op", "-")) and (k < 2 or out[k - 2] not in (("op", "*"), ("op", "/"))):
            del out[k - 1:k + 1]
            k -= 1
            continue
        k += 1
    return out


def _ops(tokens: Sequence[tuple[str, Any]]) -> int:
    """Operations in a token list (binary operators and unary minus count one each)."""
    return sum(1 for kind, v in tokens if kind == "op" and v in ("+", "-", "*", "/", "**", "//"))


def render_tokens(tokens: Sequence[tuple[str, Any]], names: dict[str, str] | None = None) -> str:
    parts = []
    for kind, v in tokens:
        if kind == "ref":
            parts.append(names.get(v, v) if names else v)
        elif kind == "num":
            parts.append(str(Fraction(v)) if Fraction(v).denominator == 1 else v if not v.startswith(".")
                         else "0" + v)
        else:
            parts.append(v)
    text = " ".join(parts)
    return re.sub(r"\( ", "(", re.sub(r" \)", ")", text))


def _evaluate(chain: GoldChain, tokens: Sequence[tuple[str, Any]], scale: str | None = None):
    """The expression's value; with `scale`, that ref's value is multiplied by 1.37 (0 becomes 1), as the
    chain rules' sensitivity check does."""
    from prosfi.quant import evaluate, parse_expr

    env = {k: chain.value_of(k) for kind, k in tokens if kind == "ref"}
    if scale is not None:
        v = env[scale]
        env[scale] = type(v)(v.mag * Fraction(137, 100) if v.mag else Fraction(1), v.dims, v.unit)
    return evaluate(parse_expr(render_tokens(tokens)), env)


def _insensitive(chain: GoldChain, tokens: Sequence[tuple[str, Any]], v) -> str | None:
    """A cited ref whose value does not change the result (`s1 - s3 + s3`): the chain rules reject such a
    step, so the grounding is not taken."""
    from prosfi.quant import QuantError

    for ref in dict.fromkeys(k for kind, k in tokens if kind == "ref"):
        try:
            if _evaluate(chain, tokens, ref).mag == v.mag:
                return ref
        except QuantError:
            continue
    return None


_CURRENCY = 7  # index of [currency] in prosfi.quant.units.DIM_NAMES


def _money(v) -> bool:
    return len(v.dims) > _CURRENCY and v.dims[_CURRENCY] == 1


_UNIT_NOUNS = frozenset(["second", "minute", "hour", "day", "week", "month", "year", "mile", "meter", "metre", "kilometer", "foot", "feet", "inch", "yard", "pound", "ounce", "gram", "kilogram", "liter", "litre", "gallon", "cent", "dollar", "$"])


def _steps_or_givens(chain: GoldChain, opts: list, lit: Fraction, line: str) -> list:
    """An earlier result and a given with the same number: the noun the solution writes after it decides
    ("24 feet / 4 feet/hour" is the given rate, not the 4 hours computed before); without one, the order
    stands (an unused result first). Only a given is singled out this way: the solution's nouns after a
    result are looser ("200 calories/roll * 200 rolls")."""
    steps = {st["key"]: st.get("nouns", set()) for st in chain.steps}
    step_opts = [o for o in opts if o in steps]
    given_opts = [o for o in opts if o in chain.env]
    if not step_opts or not given_opts:
        return opts
    said = literal_nouns(line, lit)
    if not said:
        return opts
    given_hit = [g for g in given_opts if chain.nouns.get(g, "") in said]
    step_hit = [k for k in step_opts if steps[k] & said]
    if given_hit and not step_hit:
        return [o for o in opts if o not in steps]
    return opts


def _unit_contradicts(chain: GoldChain, gid: str, lit: Fraction, line: str) -> bool:
    """The solution writes the number with another unit than the given's ("5 minutes cutting" against "5
    seconds"): it is some other quantity with the same number."""
    noun = chain.nouns.get(gid, "")
    if noun not in _UNIT_NOUNS:
        return False
    said = literal_nouns(line, lit)
    money = {"cent", "dollar", "$"}
    if noun in money and said & money:  # "$0.05" is the given "5 cents": one currency
        return False
    return bool(said) and said <= _UNIT_NOUNS and noun not in said


_COMPARED = (r"more|fewer|less|longer|shorter|older|younger|taller|heavier|lighter|faster|slower|higher|lower|"
             r"cheaper|larger|bigger|smaller|greater")
_TIMES_AFTER = re.compile(r"\s+times\s+(?:as|that|the|what|his|her|their|its|this|those|these|how|" + _COMPARED +
                          r")\b", re.IGNORECASE)
_FILLER = r"(?!times?\b|percent\b|%)[A-Za-z][A-Za-z'’-]*"  # a noun or adjective between ("20 fewer cards than")
_THAN_AFTER = re.compile(r"(?:\s+" + _FILLER + r"){0,2}?\s+(?:" + _COMPARED + r")\s+(?:" + _FILLER + r"\s+){0,2}?than\b",
                         re.IGNORECASE)


def _role(question: str, g: dict) -> str:
    """'times' when the question's words make the given a multiplier ("three times as many", "5 times the
    number"), 'difference' when a comparison with "than" follows it ("20 fewer cards than", "4 hours longer
    than", "$5 more than"), else ''. A plain number, a dollar amount or a count of anything else has no role."""
    try:
        rest = question[int(g.get("end", 0)):][:80]
        whole = Fraction(str(g.get("value"))).denominator == 1
    except (TypeError, ValueError, ZeroDivisionError):
        return ""
    if str(g.get("unit") or "") in ("percent", "%") or not whole:  # "60% more than", "1/4 times more": factors
        return ""
    if _TIMES_AFTER.match(rest):
        return "times"
    if _THAN_AFTER.match(rest):
        return "difference"
    return ""


_LESS = re.compile(r"(?i)fewer|less|shorter|younger|lighter|slower|lower|cheaper|smaller")


def _direction(question: str, g: dict) -> str:
    """The sign a difference goes with when the solution works forward: "20 fewer than" subtracts, "5 more than"
    adds."""
    m = _THAN_AFTER.match(question[int(g.get("end", 0)):][:80])
    return "-" if m and _LESS.search(m.group(0)) else "+"


def _role_placed(chain: GoldChain, gid: str, tokens: Sequence[tuple[str, Any]], i: int) -> bool:
    """A multiplier ("three times as many") stands next to `*` or `/`; a difference ("20 fewer than") next to
    `+` or `-` and in no product: a given is cited only in the role its words give it."""
    before = tokens[i - 1] if i > 0 else None
    after = tokens[i + 1] if i + 1 < len(tokens) else None
    near = {t[1] for t in (before, after) if t is not None and t[0] == "op"}
    if gid in chain.times:
        return bool(near & {"*", "/"})
    if gid in chain.difference:
        return bool(near & {"+", "-"}) and not near & {"*", "/", "**"}
    return True


_HALF_OR_TWICE = re.compile(r"(?i)\b(?:half|twice|double|doubled)\b")


def _is_fraction(chain: GoldChain, key: str) -> bool:
    """A given or step that is a part of a whole (a dimensionless value strictly between 0 and 1)."""
    try:
        v = chain.value_of(key)
    except StopIteration:
        return False
    return v.dimensionless and 0 < v.mag < 1


def _factor_placed(tokens: Sequence[tuple[str, Any]], i: int) -> bool:
    """A multiplier word ("twice", "triple") may only multiply: `x * g`, `g * x`, never `x / g` or `x + g`."""
    before = tokens[i - 1] if i > 0 else None
    after = tokens[i + 1] if i + 1 < len(tokens) else None
    return ("op", "*") in (before, after) and before != ("op", "/")


def _ground(chain: GoldChain, tokens: list[tuple[str, Any]], result: Fraction, money: bool = False, line: str = "",
            accept=None):
    """Map every literal to a ref or an allowed constant so that the expression still evaluates to
    `result`. Returns (tokens, value) or (None, reason). Combinations are tried best first: distinct refs,
    no ref standing for 0 or 1 (a cited 1 or 0 would not change the value), earlier options first. Givens
    that share the literal's value are resolved by `resolve_givens`; where it cannot tell them apart, the
    grounding stands only if no other of them would also fit (by unit: `$4 * $1.5` is dollars squared), else
    the step is refused as ambiguous: a gold trace never guesses which quantity the solution meant."""
    import itertools

    from prosfi.quant import QuantError

    slots = [i for i, t in enumerate(tokens) if t[0] == "num"]
    options: list[list[Any]] = []
    contested: dict[int, tuple[list[str], str]] = {}  # slot index -> (the givens it cannot tell apart, why)
    for n, i in enumerate(slots):
        lit = Fraction(tokens[i][1])
        opts: list[Any] = list(dict.fromkeys(chain.candidates(lit)))
        opts = [o for o in opts if o not in chain.factor_only or _factor_placed(tokens, i)]
        placed = [o for o in opts if o not in chain.env or _role_placed(chain, o, tokens, i)]
        # a multiplier is never a term; a difference ("20 fewer cards than") may be a factor ("8 fewer enemies *
        # 10 points"), so it only gives way where another given or result has the number
        opts = [o for o in opts if o in placed or (o in chain.difference and not [p for p in placed if p])]
        opts = [o for o in opts if o not in chain.env or not _unit_contradicts(chain, o, lit, line)]
        undo = tokens[i - 1:i] == [("op", "*")] and _HALF_OR_TWICE.search(line or "")
        if lit == 2 and i > 0 and (tokens[i - 1] == ("op", "/") or undo) and 2 in chain.multiples and \
                lit in chain.constants:
            # (and "flies half as much as the first, so the first makes 44 * 2": the line states the doubling)
            # "half that distance": 60 / 2 is the halving the problem states, not its "two trains"
            counted = [o for o in opts if o in chain.env and o not in chain.factor_only
                       and chain.nouns.get(o, "") not in literal_nouns(line, lit)]
            opts = [o for o in opts if o not in counted]
        if lit in chain.facts and lit in chain.constants:
            # "10 birds * 2 legs/bird" with "2 cats" given: the line names the fact's own word after its 2 ("leg",
            # licensed with "birds" by `licensed.CONSTANT_CONTEXT`): the fact, not a given that counts else
            said = {_stem(n.split("/")[0].rstrip("+")) for n in literal_nouns(line, lit)}
            if said & chain.facts[lit]:  # ("24 hours/day" keeps the given "24 hours": the same noun)
                opts = [o for o in opts if o not in chain.env or
                        _stem(chain.nouns.get(o, "").split("/")[0].rstrip("+")) in said]
        if lit == 1 and i + 2 < len(tokens) and tokens[i + 1] == ("op", "-") and tokens[i + 2][0] == "ref" and \
                (i == 0 or tokens[i - 1][0] == "op") and _is_fraction(chain, tokens[i + 2][1]):
            opts = [None]  # `1 - 3/4`: the whole, not "one day"
        if lit in chain.lost:
            # "7 - 4 = 3 remained" gave no step: a later 3 may be that result, so no given is cited for it
            opts = [o for o in opts if o not in chain.env]
        opts = _steps_or_givens(chain, opts, lit, line)
        gids = [o for o in opts if o in chain.env]
        same_here = sum(1 for j in slots if Fraction(tokens[j][1]) == lit)
        sign = tokens[i - 1][1] if i > 0 and tokens[i - 1][0] == "op" else ""
        kept, why = resolve_givens(chain, gids, lit, line, same_here, sign)
        if why:
            contested[n] = (gids, why)
        else:
            opts = [o for o in opts if o not in chain.env or o in kept]
        fresh = [o for o in opts if o not in chain.env and o not in chain.used]
        additive = any(tokens[j] in (("op", "+"), ("op", "-")) for j in (i - 1, i + 1) if 0 <= j < len(tokens))
        stated = additive and any(o in chain.env for o in opts)  # "spill one liter": 10 - 1 cites it
        if lit in chain.constants and not (lit in (0, 1) and (fresh or stated)):  # None: keep the literal (a 0
            opts.insert(0, None) if lit in (0, 1) else opts.append(None)  # or 1 just computed is that result)
        elif lit in chain.constants:
            opts.append(None)
        if not opts:
            return None, f"ungrounded: literal {tokens[i][1]} (not a given, an earlier result or a listed constant)"
        options.append(opts)


    def penalty(combo) -> tuple:
        refs = [c for c in combo if c is not None]
        # (a step cited next to one of its own inputs that cancels is refused by the rules check, `accept`)
        # a listed constant written where a given states the number is read as the constant by the chain rules
        # (`2 + s1` is an offset of 2): cite the given instead
        uncited = sum(1 for o, c in zip(options, combo) if c is None and any(x in chain.env for x in o if x))
        return (len(refs) - len(set(refs)), uncited,
                sum(combo_i for combo_i in (o.index(c) for o, c in zip(options, combo))))

    def trial(combo):
        """(tokens, value, fits, in_usd, reason) for one assignment of the literals."""
        cited = [c for c in combo if c is not None and c in chain.env]
        if len(cited) != len(set(cited)):  # `g3 * g3` for "3 people x 3 tires": the second 3 is no given
            return tokens, None, False, False, "ungrounded: one given stands for two numbers of the step"
        out = list(tokens)
        for i, pick in zip(slots, combo):
            if pick is not None:
                out[i] = ("ref", pick)
        try:
            v = _evaluate(chain, out)
            shown = chain.shown(v)
        except QuantError as exc:
            return out, None, False, False, f"{'dimension' if exc.kind == 'dimension' else 'evaluation'}: {exc}"
        if len(v.dims) > _CURRENCY and abs(v.dims[_CURRENCY]) > 1:
            return out, None, False, False, "dimension: dollars times dollars"
        if _money(v) and not _close(shown, result, 1e-6):  # 20 x 25 cents = $5: the solution's unit
            for unit in ("USD", "cent"):
                if _close(v.magnitude_in(unit), result, 1e-6):
                    v = type(v)(v.mag, v.dims, unit)
                    shown = chain.shown(v)
                    break
        if v.dimensionless and v.unit and not _close(shown, result, 1e-6) and _close(v.mag, result, 1e-6):
            v = type(v)(v.mag, v.dims, "")  # 100% - 80% worked as the fraction 0.2, not as 20 (percent)
            shown = chain.shown(v)
        if _close(shown, result, 1e-6):
            dead = _insensitive(chain, out, v)
            if dead is not None:
                return out, v, False, False, f"insensitive: the result does not depend on {dead}"
            return out, v, True, _money(v), ""
        return out, v, False, False, (f"value: grounded expression gives {float(shown):g}, the solution says "
                                      f"{float(result):g}")

    def unambiguous(combo, in_usd) -> str:
        """'' when no other contested given would fit in place of the one picked, else why not."""
        for n, (gids, why) in contested.items():
            pick = combo[n]
            if pick not in gids:
                continue
            for other in gids:
                if other == pick or other in combo:
                    continue
                alt = list(combo)
                alt[n] = other
                _, _, fits, alt_usd, _ = trial(alt)
                if fits and alt_usd == in_usd:
                    return why
        return ""

    combos = list(itertools.islice(itertools.product(*options), 512))
    combos.sort(key=penalty)
    last_reason = "value: no grounding reproduces the stated result"
    fallback = None
    for combo in combos[:_ATTEMPTS]:
        out, v, fits, in_usd, reason = trial(combo)
        if not fits:
            last_reason = reason or last_reason
            continue
        why = unambiguous(combo, in_usd)
        if why:
            last_reason = why
            continue
        refused = accept(out, v) if accept is not None else ""
        if refused:  # the chain rules would reject this step: another reading, or none
            last_reason = refused
            continue
        if money != in_usd:  # the line says dollars (or does not): look for a grounding that agrees first
            fallback = fallback or (out, v)
            continue
        return out, v
    return fallback if fallback is not None else (None, last_reason)


# The quantity domain (a layer above data) registers itself here when it is imported, so gold chains are
# built under its rules without data importing it (`prosfi.domains.quantity` calls `use_chain_rules`).
_CHAIN_RULES: Any = None


def _chain_rules() -> Any:
    """The registered rules; the quantity domain is loaded on first use, so gold chains never depend on whether
    a caller happened to import it first (they did: 43 gold chains of the test fixtures without it, 42 with)."""
    if _CHAIN_RULES is None:
        import importlib

        importlib.import_module("prosfi.domains.quantity")  # calls use_chain_rules
    return _CHAIN_RULES


def use_chain_rules(domain: Any) -> None:
    """Build and keep gold chains only as `domain` (parse_trace, parse_answer, answer_correct, check_chain)
    scores them at the top level."""
    global _CHAIN_RULES
    _CHAIN_RULES = domain


def _rules_accept(problem: Problem, chain: GoldChain):
    """A check of one more step against the quantity domain's chain rules (the chain so far plus the step,
    the step last): '' when they verify it, else `rules: <guard>: <reason>`. Gold chains are built only from
    steps the rules accept, so an unstated offset (`x + 1`) or multiple (`x * 2` with no "twice") is looked
    for elsewhere (a given "one liter") or the record gets no gold."""
    domain = _chain_rules()
    if domain is None:
        return None

    def accept(tokens, v) -> str:
        steps = [_step_dict(st["key"], st["tokens"], st["value"], st["shown"]) for st in chain.steps]
        steps.append(_step_dict(f"s{len(chain.steps) + 1}", tokens, v, chain.shown(v)))
        result = domain.check_chain(problem, steps)
        last = result.steps[-1] if result.steps else None
        if last is None or last.verdict == "valid":
            return ""
        return f"rules: {getattr(last, 'guard', '') or last.verdict}: {last.reason}"

    return accept


_TIMES_ONE = re.compile(r"\s*\*\s*\(1\)(?![\w.(])")


def _step_dict(key: str, tokens, v, shown) -> dict[str, Any]:
    # `x 100%` read as `* (100/100)` is a factor 1, which does nothing: the chain rules refuse it, so it is dropped
    expr = _TIMES_ONE.sub("", render_tokens(tokens))
    return {"id": key, "expr": expr, "value": json_number(shown), "unit": "" if v.dimensionless else v.unit}


def _split_long_sums(equations: Sequence[tuple[str, Fraction, Any]]) -> list[tuple[str, Fraction, Any]]:
    """`12+43+15+4+22` (more values than one step may cite) -> `12+43+15+4` = 74, then `74+22`: a flat sum
    or difference split after every MAX_REFS values, each part its own step."""
    out: list[tuple[str, Fraction, Any]] = []
    for expr, result, info in equations:
        tokens = tokenize(expr)
        if tokens is None or any(t[0] == "op" and t[1] not in ("+", "-") for t in tokens) or \
                [t[0] for t in tokens[::2]] != ["num"] * len(tokens[::2]) or \
                any(t[0] != "op" for t in tokens[1::2]) or len(tokens[::2]) <= MAX_REFS:
            out.append((expr, result, info))
            continue
        nums, ops = [Fraction(t[1]) for t in tokens[::2]], [t[1] for t in tokens[1::2]]
        texts = [t[1] for t in tokens[::2]]
        head, value = texts[0], nums[0]
        i = 0
        while len(nums) - i > MAX_REFS:
            take = MAX_REFS if i == 0 else MAX_REFS - 1
            part = [head] + [f"{ops[j]} {texts[j + 1]}" for j in range(i, i + take - 1)]
            for j in range(i, i + take - 1):
                value = value + nums[j + 1] if ops[j] == "+" else value - nums[j + 1]
            out.append((" ".join(part), value, info))
            i += take - 1
            head = _decimal(value)
        rest = [head] + [f"{ops[j]} {texts[j + 1]}" for j in range(i, len(ops))]
        out.append((" ".join(rest), result, info))
    return out


def _decimal(x: Fraction) -> str:
    if x.denominator == 1:
        return str(x.numerator)
    return f"{float(x):.12g}"


def build_chain(problem: Problem, equations: Sequence[tuple[str, Fraction, Any]], answer: Fraction) -> Built:
    """A gold chain for `problem` from worked equations `(expr over literals, stated result, _)`, ending at
    the step whose value is `answer`; steps the answer does not depend on are dropped."""
    from prosfi.quant import QuantError

    try:
        chain = GoldChain(problem)
    except QuantError as exc:
        return Built(None, f"givens: {exc}")
    first_issue = ""
    accept = _rules_accept(problem, chain)
    refused: dict[int, str] = {}  # equation index -> why it gave no step
    worked = list(_split_long_sums(equations))
    for n_eq, (expr, result, info) in enumerate(worked):
        tokens = tokenize(expr)
        if tokens is None:
            first_issue = first_issue or f"parse: {expr!r}"
            refused[n_eq] = f"parse: {expr!r}"
            chain.lost.add(result)
            continue
        tokens = percent_rewrite(_drop_zero_terms(tokens), chain)
        if sum(1 for t in tokens if t[0] != "op") <= 1:
            continue  # `<<40=40>>`: restates a number, not a computation
        grounded, v = _ground(chain, tokens, result, bool(getattr(info, "money", False)),
                              str(getattr(info, "text", "") or ""), accept)
        if grounded is None:
            if str(v).startswith("rules: restatement"):
                continue  # `180 * 1`, `3 * 1`: the solution restates a number; later literals find the cited one
            first_issue = first_issue or f"{v} in {expr!r}"
            refused[n_eq] = f"{v} in {expr!r}"
            chain.lost.add(result)
            continue
        text = render_tokens(grounded)
        if any(render_tokens(s["tokens"]) == text for s in chain.steps):
            continue
        refs = [k for kind, k in grounded if kind == "ref"]
        if not refs:
            # `12/2` (months in half a year): only constants, a world fact; its result may still be used
            # later as a listed constant, but it is not a step
            first_issue = first_issue or f"literal-only: {expr!r} cites no given (a world fact)"
            refused[n_eq] = f"literal-only: {expr!r} cites no given (a world fact)"
            chain.lost.add(result)
            continue
        if len(set(refs)) == 1 and _close(chain.shown(chain.value_of(refs[0])), chain.shown(v)) and \
                chain.value_of(refs[0]).dims == v.dims:
            continue  # restates its one cited value (`x * 1`): later literals find the cited one. A step that
            # comes to a given's value from other values too (`4 - 2 = 2` goals for "2 fewer") is kept: it is
            # what a later `2 + 4` means, not the given
        if _ops(grounded) > MAX_OPS or len(set(refs)) > MAX_REFS:
            first_issue = first_issue or (f"size: {expr!r} has more than {MAX_OPS} operations or {MAX_REFS} "
                                          "cited values")
            refused[n_eq] = f"size: {expr!r}"
            chain.lost.add(result)
            continue
        key = f"s{len(chain.steps) + 1}"
        chain.steps.append({"key": key, "tokens": grounded, "value": v, "shown": chain.shown(v), "eq": n_eq,
                            "nouns": literal_nouns(str(getattr(info, "text", "") or ""), result)})
        chain.used.update(k for kind, k in grounded if kind == "ref")
    # the answer: the last step showing it in the answer's own unit (decided from the record, never from the
    # chain: `gsm8k.answer_unit`), or showing answer/100 when a plain answer is a percentage
    want = str((problem.answer or {}).get("unit") or "") if isinstance(problem.answer, dict) else ""
    final, unit = None, want
    for s in reversed(chain.steps):
        v = s["value"]
        if want in ("USD", "cent"):
            if _money(v) and v.dims[_CURRENCY] == 1 and sum(map(abs, v.dims)) == 1 and \
                    _close(v.magnitude_in(want), answer, 1e-6):
                final = s
                s["value"] = type(v)(v.mag, v.dims, want)
                s["shown"] = chain.shown(s["value"])
                break
        elif want == "percent":
            if v.dimensionless and _close(s["shown"] * 100, answer, 1e-6):
                final = s
                break
        elif v.dimensionless and _close(s["shown"], answer, 1e-6):
            final = s
            break
    if final is None and not want:
        for s in reversed(chain.steps):
            if s["value"].dimensionless and _close(s["shown"] * 100, answer, 1e-6):
                final, unit = s, "percent"
                break
    # the solution's own last computation of the answer must be the step that ends the chain: when it was
    # refused, an earlier step that happens to show the same number computes something else ("40 x 2 = 80"
    # yards, then "3000 - 2920 = 80" farther)
    last_eq = max((n for n, (_, r, _) in enumerate(worked)
                   if _close(r, answer, 1e-6) or _close(r * 100, answer, 1e-6)), default=None)
    if final is not None and last_eq is not None and last_eq in refused and final.get("eq", -1) < last_eq:
        return Built(None, f"answer: the solution's last computation of {float(answer):g} gives no step "
                           f"({refused[last_eq]})")
    if final is None:
        shown_as = [s for s in chain.steps if _close(s["shown"], answer, 1e-6)]
        if shown_as and not first_issue:
            got = shown_as[-1]["value"].unit or "a plain number"
            return Built(None, f"unit: the chain computes {float(answer):g} as {got}, the answer is "
                               f"{want or 'a plain number'}")
        why = first_issue or f"answer: no equation computes {float(answer):g}"
        return Built(None, why)
    # keep the answer's dependency closure, renumbered s1..sk in order
    by_key = {s["key"]: s for s in chain.steps}
    need, stack = set(), [final["key"]]
    while stack:
        k = stack.pop()
        if k in need or k not in by_key:
            continue
        need.add(k)
        stack.extend(r for kind, r in by_key[k]["tokens"] if kind == "ref")
    kept = [s for s in chain.steps if s["key"] in need]
    if len(kept) > MAX_STEPS:
        return Built(None, f"length: {len(kept)} steps (more than {MAX_STEPS})")
    names = {s["key"]: f"s{i + 1}" for i, s in enumerate(kept)}
    steps = []
    for s in kept:
        v = s["value"]
        steps.append({"id": names[s["key"]], "expr": _TIMES_ONE.sub("", render_tokens(s["tokens"], names)),
                      "value": json_number(s["shown"]), "unit": "" if v.dimensionless else v.unit})
    return Built(steps, "", unit)


FEW_SHOT_SEED = 90_210  # far from the training and eval seeds


def few_shot_examples(k: int) -> list[tuple[Problem, str]]:
    """k small solved quantity examples (generated physics problems, easy then medium; fixed seed)."""
    from prosfi.data.physics import generate

    if k <= 0:
        return []
    problems = generate("easy", k, FEW_SHOT_SEED)
    problems = [problems[0]] + (generate("medium", 1, FEW_SHOT_SEED) if k > 1 else []) + problems[1:]
    return [(p, text) for p in problems[:k] if (text := gold_completion(p)) is not None]


def rules_issue(problem: Problem) -> str:
    """'' when the problem's gold chain earns the top reward under the quantity domain's own chain rules,
    else why not (`rules: <guard>: <reason>` of the first step they refuse): a built chain is kept only then."""
    domain = _chain_rules()
    if domain is None:
        return ""  # no domain registered its rules (see `use_chain_rules`): the chain is kept unchecked
    text = gold_completion(problem)
    if text is None:
        return "rules: no gold chain"
    trace = domain.parse_trace(problem, text)
    if not trace.ok:
        return "rules: the gold completion does not parse"
    claim = domain.parse_answer(problem, trace.trace.answer)
    if not domain.answer_correct(problem, claim):
        return "rules: the gold answer is not read as right"
    result = domain.check_chain(problem, trace.trace.steps, claim)
    if result.chain_valid:
        return ""
    bad = next((r for r in result.steps if getattr(r, "verdict", "valid") != "valid"), None)
    if bad is None:
        return "rules: the chain does not establish the answer"
    return f"rules: {getattr(bad, 'guard', '') or bad.verdict}: {bad.reason}"


def attach_gold(problem, equations, answer) -> None:
    """Build the gold chain from a solution's equations (`gsm8k.equations`) into `problem.extra["gold_steps"]`
    (the target and answer take the chain's unit), or record why not in `problem.extra["gold_issue"]`."""
    built = build_chain(problem, [(e.expr, e.result, e) for e in equations], answer)
    if built.steps is None:
        problem.extra["gold_issue"] = built.issue
        return
    problem.extra["gold_steps"] = built.steps
    saved = dict(problem.target), dict(problem.answer)
    if built.unit == "percent" and not problem.answer.get("unit"):  # 0.25 computed for "#### 25"
        problem.target["unit"] = built.unit
        problem.answer["unit"] = built.unit
    why = rules_issue(problem)
    if not why and problem.source == "gsm8k":
        # the trace must compute the solution's own function of the givens, read without the builder's choices:
        # a trace citing "two days" for the solution's "2 trains" is dropped, never kept on a guess
        from prosfi.data.gold_check import issue as faithful_issue

        why = faithful_issue(problem, equations, constant_context(problem))
    if why:  # the chain rules would not give it the top reward: no gold rather than a gold the rules refuse
        del problem.extra["gold_steps"]
        problem.target, problem.answer = saved
        problem.extra["gold_issue"] = why
