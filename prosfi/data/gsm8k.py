"""GSM8K in its public JSONL format -> quantity problems with gold step chains (docs/quantity.md "Data").

A record is `{"question": ..., "answer": "...<<16-3-4=9>>9 ...\\n#### 18"}`: the solution text carries
calculator annotations `<<expr=value>>`, and sometimes plain-text equations without them (`100 x 2 = 200`,
`1/2*50 = 25`). Problem ids are `gsm8k-<file stem>-NNNN` by line order. Givens come from
`prosfi.quant.extract_givens(question, units="money")` (deterministic, never a model; GSM8K's arithmetic
treats hours and miles as plain numbers, so only dollars and percentages keep a unit); the gold chain is read from the equations,
every numeric literal mapped to a given, an earlier step, or a listed constant
(`prosfi.data.quant_gold.allowed_constants`). A literal that maps to none of them stays ungrounded: that
record gets no gold chain (the reason is kept in `extra["gold_issue"]`), the grounding rule is not loosened.
Records that cannot be converted at all (no `#### N`, a non-numeric answer, bad JSON) are skipped with the
reason.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from fractions import Fraction
from pathlib import Path
from typing import Any

from prosfi.data.problem import Problem

MAX_STEPS = 24

_ANNOTATION = re.compile(r"<<([^<>]*)>>")
_FINAL = re.compile(r"^\s*####\s*(.+?)\s*$", re.MULTILINE)
_NUM = r"(?:\d+(?:,\d{3})+(?:\.\d+)?|\d*\.\d+|\d+)"


def parse_number(text: str) -> Fraction | None:
    """'1,200' / '.5' / '-3' / '2.50' / '3/4' -> an exact Fraction; None when it is not a plain number."""
    t = text.strip().replace(",", "").replace("$", "").strip()
    t = t.removesuffix(".")
    m = re.fullmatch(r"(-?)(\d+)\s*/\s*(\d+)", t)
    if m:
        den = int(m.group(3))
        return None if den == 0 else Fraction(int(m.group(2)), den) * (-1 if m.group(1) else 1)
    if not re.fullmatch(r"-?(?:\d+(?:\.\d*)?|\.\d+)", t) or len(t) > 40:
        return None
    return Fraction(t)


def number_text(x: Fraction) -> str:
    """An exact Fraction as a short decimal when it terminates within 12 digits, else 'p/q'."""
    if x.denominator == 1:
        return str(x.numerator)
    d = x.denominator
    for p in (2, 5):
        while d % p == 0:
            d //= p
    if d == 1:
        text = f"{float(x):.12f}".rstrip("0").rstrip(".")
        if Fraction(text) == x:
            return text
    return f"{x.numerator}/{x.denominator}"


# ------------------------------------------------------------------ equations in the solution text
@dataclass
class Equation:
    """One computation read from the solution: `expr` (normalised arithmetic over numeric literals),
    its stated `result`, where it came from (`annotation` or `text`) and the solution line."""

    expr: str
    result: Fraction
    origin: str
    line: int
    percent_literals: set[str] = field(default_factory=set)  # literals written as N% in the text
    money: bool = False  # the solution writes the result as dollars ("= $<<...>>", "$5 x 3 = $15")
    text: str = ""  # the solution line it is on (what the literals' nouns are read from)


_TIMES = re.compile(r"(?<=[\d)%])\s*[x×X∗·]\s*(?=[\d($.])")


MAX_EXPR_CHARS = 500  # an annotation's left-hand side; GSM8K's longest is under 100
MAX_LINE_CHARS = 2000  # a solution line; GSM8K's longest is a few hundred
_LONG_DIGITS = re.compile(r"\d{101}")  # a number of over 100 digits is no GSM8K quantity (and is outside the grammar)


def normalise(expr: str) -> tuple[str, set[str]] | None:
    """Solution arithmetic -> the expression grammar: `x ×` -> `*`, `÷` -> `/`, `−` -> `-`, `$`, thousands
    commas and unit words dropped, `N%` -> `N/100`. None when what is left is not plain arithmetic."""
    if len(expr) > MAX_EXPR_CHARS or _LONG_DIGITS.search(expr):  # the regexes below backtrack on long runs
        return None
    e = expr.replace("÷", "/").replace("−", "-").replace("–", "-").replace("—", "-").replace("^", "**")
    e = _TIMES.sub(" * ", e)
    e = re.sub(r"(?<=[A-Za-z])\s+[x×X]\s+(?=[\d($.])", " * ", e)  # "5 pizzas x 12 slices"
    e = e.replace("$", "")
    e = re.sub(r"(?<=\d),(?=\d{3}(?!\d))", "", e)
    # unit words attached to numbers ("20 miles", "$20/hour", "3 hours/week"): drop them
    e = re.sub(r"(?<=[\d.%])\s*(?:/|per\s+)[A-Za-z][A-Za-z'’]*(?=\s*(?:[-+*/)=]|$|\s[A-Za-z]))", "", e)  # "$600/month"
    e = re.sub(r"(?<=[\d.)%])(?:\s*[A-Za-z][A-Za-z'’]*){1,2}(?:\s*/\s*[A-Za-z][A-Za-z'’]*|\s+per\s+[A-Za-z]+)?"
               r"(?=\s*(?:[-+*/)=]|$))", "", e)
    percents: set[str] = set()

    def pct(m: re.Match) -> str:
        percents.add(m.group(1))
        return f"({m.group(1)}/100)"

    # implicit multiplication as people write it: `27(1/3)`, `2+2(16)`, `220(.40)`, `(1/2)(68)`
    e = re.sub(r"(?<=[\d.)])\s*\(", " * (", e)
    e = re.sub(r"\)\s*(?=[\d.(])", ") * ", e)
    e = re.sub(rf"({_NUM.replace(',', '')})\s*%", pct, e)
    e = re.sub(r"\s+", " ", e).strip()
    if not e or not re.fullmatch(r"[\d.+\-*/() ]+", e) or not re.search(r"\d", e):
        return None
    if re.search(r"\d\s+\d|\.\d*\.", e):  # two numbers without an operator: not arithmetic
        return None
    return e, percents


def literal_value(expr: str) -> Fraction | None:
    """The value of a normalised expression (exact rational arithmetic, for cross-checks only)."""
    import ast

    try:
        tree = ast.parse(expr, mode="eval")
    except (SyntaxError, ValueError):
        return None

    def ev(node) -> Fraction:
        if isinstance(node, ast.Expression):
            return ev(node.body)
        if isinstance(node, ast.Constant) and isinstance(node.value, (int, float)):
            return Fraction(str(node.value))
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)):
            v = ev(node.operand)
            return -v if isinstance(node.op, ast.USub) else v
        if isinstance(node, ast.BinOp):
            a, b = ev(node.left), ev(node.right)
            if isinstance(node.op, ast.Add):
                return a + b
            if isinstance(node.op, ast.Sub):
                return a - b
            if isinstance(node.op, ast.Mult):
                return a * b
            if isinstance(node.op, ast.Div):
                if b == 0:
                    raise ZeroDivisionError
                return a / b
            if isinstance(node.op, ast.Pow) and b.denominator == 1 and abs(b) <= 64 and abs(a) < 10**6:
                return a ** int(b)
        raise ValueError("not plain arithmetic")

    try:
        return ev(tree)
    except (ValueError, ZeroDivisionError, RecursionError, OverflowError):
        return None


# the words a number may carry in a plain equation: a unit or noun ("20 miles", "3 hours/week", "$600/month",
# "12 slices per pizza", "25 total cars"), at most two words, never the operator x
_UNIT_WORDS = r"(?:(?:/|per\s+)[A-Za-z]+\s*)?(?:(?![xX]\b)[A-Za-z]+(?:/[A-Za-z]+|\s+per\s+[A-Za-z]+)?\s*){0,2}"
_PLAIN = re.compile(
    r"(?P<lhs>[$(]*\s*" + _NUM + r"%?\s*" + _UNIT_WORDS + r"\)*"
    r"(?:(?:\s*(?:[-+*/÷×−–]|\bx\b|X)\s*|(?<=[\d.)%])\s*(?=\())[$(]*\s*" + _NUM + r"%?\s*" + _UNIT_WORDS + r"\)*)+)"
    r"\s*=\s*\$?\s*(?P<rhs>-?" + _NUM + r")(?P<pct>%?)")


_DOLLAR_AMOUNT = re.compile(r"\$\s?(" + _NUM + r")|(" + _NUM + r")\s*dollars?\b", re.IGNORECASE)


def _dollars(line: str, value: Fraction) -> bool:
    """The line writes `value` as money (`$100`, `100 dollars`), wherever it stands: "She bought them for $100
    because 10 x 10 = 100" computes dollars although the equation itself shows no `$`."""
    for m in _DOLLAR_AMOUNT.finditer(_ANNOTATION.sub(" ", line)):
        if parse_number(m.group(1) or m.group(2)) == value:
            return True
    return False


_MIDDLE = re.compile(r"=\s*(?P<mid>\$?\s*(?P<b0>" + _NUM + r")\s*(?:[-+*/÷×x]\s*\$?\s*\(?\s*" + _NUM +
                     r"\s*\)?\s*|\(\s*" + _NUM + r"\s*\)\s*)+)(?==)")
_FRACTION_RHS = re.compile(r"=\s*(\d+)\s*/\s*(\d+)(?![\d/.])")


def _plain_value(text: str) -> Fraction | None:
    norm = normalise(text)
    return None if norm is None else literal_value(norm[0])


def _unchain(plain: str) -> str:
    """Chained plain equations as people write them, rewritten to the plain `lhs = rhs` the equation reader
    takes: `5+2(3)=5+6=11` (the middle restates the left side) -> `5+2(3)=11`; a run-on `2 x 3 = 6 + 4 = 10`
    (the middle goes on from the left side's result) -> `2 x 3 = 6, 6 + 4 = 10`; a fraction result
    `1 - 3/4 = 1/4` -> `1 - 3/4 = 0.25` (exact: a quarter is 0.25). Every equation read from the result is still
    checked against its own arithmetic."""
    def frac(m: re.Match) -> str:
        den = int(m.group(2))
        if den == 0:
            return m.group(0)
        x = Fraction(int(m.group(1)), den)
        text = number_text(x)
        return m.group(0) if "/" in text else f"= {text}"  # 1/3 has no exact decimal: left as it is

    plain = _FRACTION_RHS.sub(frac, plain)
    for _ in range(8):  # a line chains a few equalities at most
        m = _MIDDLE.search(plain)
        if m is None:
            break
        mid_value = _plain_value(m.group("mid"))
        left = plain[:m.start()]
        lhs = re.search(r"[\d.$()%+\-*/÷×x ]+$", left)
        lhs_value = _plain_value(lhs.group(0)) if lhs else None
        b0 = parse_number(m.group("b0"))
        if lhs_value is not None and mid_value is not None and lhs_value == mid_value:
            plain = plain[:m.start()] + plain[m.end():]  # `A = B = C`, B a rewriting of A: `A = C`
        elif lhs_value is not None and b0 is not None and lhs_value == b0:
            plain = plain[:m.start()] + f"= {m.group('b0')}, " + plain[m.start("mid"):]  # run-on
        else:
            break
    return plain


# "$350 000": thousands grouped by spaces after a dollar sign, as the givens extraction reads them
_SPACED_DOLLARS = re.compile(r"(?<=\$)\s?\d{1,3}(?:[ \u00a0]\d{3})+(?![\d,]|\.\d)")


def equations(solution: str) -> list[Equation]:
    """Every computation in a GSM8K solution, in order: the annotations, and plain-text equations
    (`100 x 2 = 200`) that no annotation on the same line already states."""
    out: list[Equation] = []
    for lineno, line in enumerate(solution.splitlines()):
        if line.strip().startswith("####"):
            continue
        if len(line) > MAX_LINE_CHARS or _LONG_DIGITS.search(line):  # hostile or broken: not a solution line
            continue
        annotated: list[Fraction] = []
        for m in _ANNOTATION.finditer(line):
            body = m.group(1)
            money = line[max(0, m.start() - 3):m.start()].strip().endswith("$")
            if "=" not in body:
                continue
            lhs, _, rhs = body.rpartition("=")
            value = parse_number(rhs)
            norm = normalise(lhs)
            if value is None or norm is None:
                continue
            if re.search(r"[-+*/]", norm[0].lstrip("-")):  # `<<6000=6000>>` states a number, not a computation:
                annotated.append(value)  # the plain equation it follows (`3 + 2 = <<5=5>>5`) is read instead
            out.append(Equation(norm[0], value, "annotation", lineno, norm[1], money or _dollars(line, value),
                                line))
        plain = _ANNOTATION.sub(" ", line)
        plain = _SPACED_DOLLARS.sub(lambda d: re.sub(r"[ \u00a0]", "", d.group()), plain)  # "$409 500"
        plain = re.sub(r"(?<=\d)\s*/\s*\$", "/", plain)
        plain = _unchain(plain)
        for m in _PLAIN.finditer(plain):
            value = parse_number(m.group("rhs"))
            norm = normalise(m.group("lhs"))
            if value is None or norm is None:
                continue
            if m.group("pct"):
                value = value / 100
            if any(value == a for a in annotated):
                continue
            got = literal_value(norm[0])
            if got is None or got != value and abs(got - value) > abs(value) * Fraction(1, 100):
                continue  # "x = 2L + 8 = 22" style algebra, or text we misread: not a computation
            money = "$" in m.group(0).split("=")[-1] or _dollars(line, value)
            out.append(Equation(norm[0], value, "text", lineno, norm[1], money, line))
    return out


def final_answer(solution: str) -> Fraction | None:
    """The `#### N` answer (commas and a leading $ allowed), or None."""
    m = _FINAL.search(solution)
    return None if m is None else parse_number(m.group(1))


# ------------------------------------------------------------------ the answer's unit, from the record
_Q_MONEY = re.compile(
    r"how much money|how many dollars|\bin dollars\b|dollar amount|amount of money|"
    r"how much (?:more |less |extra )?(?:profit|revenue|income|change|interest|tax|cash)\b|"
    r"how much (?:more |less |extra )?"
    r"(?:do|does|did|will|would|should|can|could|must|is|are|was|were|has|have|had)\b[^?.!]*?\b"
    r"(?:spend|spent|pay|paid|earn|earned|earns|make|made|makes|save|saved|cost|costs|charge|charged|owe|owes|lose|"
    r"lost|collect|collected|raise|raised|receive|received|profit|get paid|worth|tip|refund|donate|donated|"
    r"invest|invested|sell|sold|give|gave|lend|borrow|borrowed)\b"
    r"|\bwhat(?:'s| is| was| will be| would be| are| were)? (?:the |his |her |their |its |your )?"
    r"(?:total |final |new |original |average |net |annual |monthly |weekly |daily |combined |regular |remaining )?"
    r"(?:cost|price|profit|revenue|income|salary|bill|budget|fee|earnings|savings|wage|debt|balance|payment)s?\b",
    re.IGNORECASE)
_NOT_NOUNS = frozenset("because so since as in on for and or more less left each per a an the to from at this that "
                       "which total altogether overall is was are were will would in all".split())
_Q_CENTS = re.compile(r"how many cents|\bin cents\b", re.IGNORECASE)
_OTHER_MONEY = re.compile(r"[€£¥₹]|\beuros?\b|\bpounds? sterling\b|\byen\b|\brupees?\b", re.IGNORECASE)
_ANSWER_MONEY = re.compile(r"\$\s?(" + _NUM + r")|(" + _NUM + r")\s*(dollars?|cents?)\b|(?<![\d.,])(" + _NUM + r")",
                           re.IGNORECASE)


_Q_COUNT = re.compile(r"\bhow many (?!dollars?\b|cents?\b|more dollars\b)", re.IGNORECASE)


def _asking_sentence(question: str) -> str:
    """The sentence that asks (the last one with a `?`, else the last sentence): "how many days ... to save the
    remaining amount of money" asks for days, whatever the earlier sentences say."""
    parts = [p for p in re.split(r"(?<=[.?!])\s+", question.strip()) if p]
    asking = [p for p in parts if "?" in p]
    return (asking or parts or [""])[-1]


def _final_line(solution: str) -> str:
    """The solution's last line before `#### N`, annotations replaced by nothing (`$<<9*2=18>>18` -> `$18`)."""
    lines = [ln for ln in solution.splitlines() if ln.strip() and not ln.strip().startswith("####")]
    return _ANNOTATION.sub("", lines[-1]) if lines else ""


def answer_unit(question: str, solution: str, answer: Fraction) -> str:
    """The gold answer's unit, read from the record alone (the same whether or not a gold chain is built):
    `cent` when the question asks in cents ("how many cents", "in cents") or the final line writes `N cents`;
    `USD` when the solution's final line writes the answer as money (`$18`, `18 dollars`) or the question asks
    for money ("how much money", "how many dollars", "in dollars", "how much did he spend / earn / pay / make
    / save ...", "what is the total cost / price / profit ..."); otherwise a plain number. A question in
    another currency (€, £, euros) is never USD."""
    if _OTHER_MONEY.search(question):
        return ""
    # how the final line writes the answer: as money somewhere ("$18", "18 dollars", "90 cents"), unless the
    # last time it writes it a counting noun follows ("$6.00 ... 6/1 = 6 scoops")
    line, shown, last_noun = _final_line(solution), "", False
    for m in _ANSWER_MONEY.finditer(line):
        if parse_number(m.group(1) or m.group(2) or m.group(4)) == answer:
            if m.group(1) is not None or m.group(3) is not None:
                shown = shown or ("cent" if (m.group(3) or "").lower().startswith("cent") else "USD")
                last_noun = False
            else:
                noun = re.match(r"\s*([A-Za-z]+)", line[m.end():])
                last_noun = bool(noun) and noun.group(1).lower() not in _NOT_NOUNS
    shown = "" if last_noun else shown
    if _Q_CENTS.search(question) or shown == "cent":
        return "cent"
    asked = _asking_sentence(question)
    if shown == "USD" or (_Q_MONEY.search(asked) and not _Q_COUNT.search(asked)):
        return "USD"
    return ""


# ------------------------------------------------------------------ records -> problems
@dataclass
class LoadReport:
    """What loading a file did: problems made, records skipped (index, reason), and gold outcomes."""

    loaded: int = 0
    skipped: list[tuple[int, str]] = field(default_factory=list)
    gold: int = 0
    no_gold: dict[str, int] = field(default_factory=dict)  # reason class -> count

    def summary(self) -> str:
        parts = [f"{self.loaded} problems", f"{len(self.skipped)} skipped", f"{self.gold} with a gold chain"]
        if self.no_gold:
            why = ", ".join(f"{k}: {v}" for k, v in sorted(self.no_gold.items(), key=lambda kv: -kv[1]))
            parts.append(f"no gold chain ({why})")
        return "; ".join(parts)


def problem_from_record(record: Any, pid: str, with_gold: bool = True) -> Problem:
    """One GSM8K record -> a quantity Problem. Raises ValueError with the reason when it cannot be used."""
    from prosfi.quant import extract_givens

    if not isinstance(record, dict):
        raise ValueError("not a JSON object")
    question, solution = record.get("question"), record.get("answer")
    if not isinstance(question, str) or not question.strip():
        raise ValueError("no 'question' text")
    if not isinstance(solution, str):
        raise ValueError("no 'answer' text")
    answer = final_answer(solution)
    if answer is None:
        m = _FINAL.search(solution)
        raise ValueError("no '#### N' final answer" if m is None else f"final answer {m.group(1)!r} is not a number")
    givens = []
    for g in extract_givens(question, units="money"):
        d = {"id": g.id, "value": g.value, "unit": g.unit, "text": g.text, "start": g.start, "end": g.end}
        givens.append(d)
    eqs = equations(solution)
    unit = answer_unit(question, solution, answer)
    problem = Problem(
        id=pid, kind="quantity", premises=[], source="gsm8k", question=question.strip(),
        givens=givens, target={"name": "answer", "unit": unit},
        answer={"value": number_text(answer), "unit": unit},
        difficulty=max(1, min(8, len(eqs))) if eqs else None,
        extra={"solution": solution},
    )
    if with_gold:
        from prosfi.data.quant_gold import attach_gold

        attach_gold(problem, eqs, answer)
    return problem


def issue_class(issue: str) -> str:
    """The class of a gold issue (its text before the first colon): what docs/quantity.md counts."""
    return issue.split(":", 1)[0]


def load_gsm8k(path: str | Path, limit: int | None = None, with_gold: bool = True,
               report: LoadReport | None = None) -> list[Problem]:
    """Problems from a GSM8K JSONL file; unusable records are skipped (`report.skipped`), never raised."""
    from prosfi.jsonl import loads, read_lines

    path = Path(path)
    report = report if report is not None else LoadReport()
    stem = re.sub(r"[^A-Za-z0-9_.-]+", "_", path.stem)
    problems: list[Problem] = []
    index = -1
    with open(path, "rb") as fh:
        for lineno, line, bad_bytes in read_lines(fh):
            if not line.strip() and not bad_bytes:
                continue
            index += 1
            if limit is not None and len(problems) >= limit:
                break
            if bad_bytes:
                report.skipped.append((index, f"line {lineno}: {bad_bytes}"))
                continue
            data, why = loads(line)
            if why is not None:
                report.skipped.append((index, f"line {lineno}: not valid JSON: {why}"))
                continue
            try:
                p = problem_from_record(data, f"gsm8k-{stem}-{index:04d}", with_gold=with_gold)
            except (ValueError, TypeError, RecursionError) as exc:
                report.skipped.append((index, f"line {lineno}: {exc}"))
                continue
            problems.append(p)
            if "gold_steps" in p.extra:
                report.gold += 1
            elif with_gold:
                cls = issue_class(p.extra.get("gold_issue", "unknown"))
                report.no_gold[cls] = report.no_gold.get(cls, 0) + 1
    report.loaded = len(problems)
    return problems


def read_records(path: str | Path) -> list[dict]:
    """The raw records of a GSM8K JSONL file (for tests and inspection)."""
    with open(path, encoding="utf-8") as fh:
        return [json.loads(line) for line in fh if line.strip()]
