"""FoVer labels for solutions written in GSM8K's own style: each `<<expr=value>>` annotation is a step.

A GSM8K-style solution is free text with calculator annotations and a final `#### N` or `A: N`. Each
annotation becomes a quantity step `{"id": "sK", "expr", "value", "unit"}`, read by the same code as the
gold chains (`prosfi.data.gsm8k`, `prosfi.data.quant_gold`), and labelled `True` (symbolically valid) when
its arithmetic is right on plain numbers (the verifier, `prosfi.quant.check_quantity`; an annotation states
no unit) and some reading of its literals as givens, earlier results or plain numbers is free of dimension
errors (`read_steps`). A reading is never chosen greedily: a number the text leaves open (10 that is both
"10 hours" and "$10", an invented number, a plain-text result) is tried every way, and only a unit
confusion that no reading resolves (`$80 + 25` with 25 the written number of "25%") is an error.

Validity is not groundedness. A separate per-step `grounded` flag with its reason records operand
provenance: a literal that is neither a given, an earlier result nor a listed constant
(`prosfi.quant.licensed`) is an invented number; the step can still be arithmetically valid. That gap
(executable but ungrounded, or valid but the wrong principle) is what a groundedness PRM has to learn.

Exports: TRL stepwise (`prompt`, `completions`, `labels`), FoVer (`solution_steps`, `error_labels`, True =
correct) and ProcessBench (`steps`, `label` = index of the first wrong step, -1 when none).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from fractions import Fraction
from pathlib import Path
from typing import Any

from prosfi.data.problem import Problem
from prosfi.quant.units import json_number

_ANNOTATION = re.compile(r"<<([^<>]*)>>")
_A_LINE = re.compile(r"^\s*A:\s*(.+?)\s*$", re.MULTILINE)
_MAX_LINE = 2000
_LONG_DIGITS = re.compile(r"\d{101,}")


def final_answer(text: str) -> Fraction | None:
    """The solution's final answer: `#### N` (GSM8K's gold) or `A: N` (its example model solutions)."""
    from prosfi.data.gsm8k import final_answer as hash_answer
    from prosfi.data.gsm8k import parse_number

    got = hash_answer(text)
    if got is not None:
        return got
    m = None
    for m in _A_LINE.finditer(text):
        pass
    return None if m is None else parse_number(m.group(1).split()[0] if m.group(1).split() else "")


@dataclass
class AnnotatedStep:
    """One annotation read as a step, with its verdict and its operand provenance."""

    step: dict[str, Any]          # {"id", "expr", "value", "unit"}: the step as a policy would write it
    annotation: str               # the annotation's text between << and >>
    verdict: str                  # valid | invalid | error | unknown (the verifier's)
    detail: str                   # the verifier's reason ("" when valid)
    grounded: bool
    grounded_reason: str          # "" when grounded; else which number has no provenance


_PLAIN = ("plain",)      # the literal as a plain number
_DOLLARS = ("dollars",)  # an invented literal read as dollars (its unit is unknown: any reading may resolve it)
_MAX_READINGS = 256      # readings of one annotation tried (the options' product, best first)
_CURRENCY = 7            # index of [currency] in prosfi.quant.units.DIM_NAMES
_DOLLAR_DIMS = (0,) * _CURRENCY + (1,)
_MONEY_UNITS = ("USD", "cent")


def _unit_text(dims: tuple) -> str:
    """A unit text the registry reads back for these dimensions: `default_unit`'s, or (where that is not
    readable, e.g. `1/USD`) the base units with `**` exponents (`USD**-1`)."""
    from prosfi.quant import QuantError
    from prosfi.quant.units import BASE_UNITS, default_unit, unit_info

    text = default_unit(dims)
    if not text:
        return ""
    try:
        unit_info(text)
        return text
    except (QuantError, ValueError):
        return "*".join(u + (f"**{e}" if e != 1 else "") for u, e in zip(BASE_UNITS, dims) if e)


def _claim_in(value: Fraction, computed, unit: str):
    """The stated number as a value of `computed`'s dimension, read in `unit` (`""`: SI base)."""
    from prosfi.quant import Value
    from prosfi.quant.units import unit_info

    if computed is None or computed.dimensionless:
        return Value(value)
    if not unit:
        return Value(value, computed.dims, _unit_text(computed.dims))
    info = unit_info(unit)
    return Value(value * info.scale + info.offset, computed.dims, unit)


def _claim_units(computed, operands) -> list[str]:
    """Units an annotation's bare result may be written in: the computed value's display unit, those of its
    operands of the same dimension (`50 * 20 = 1000` with 50 cents: cents), the dimension's base unit, and
    for money dollars and cents."""
    if computed is None or computed.dimensionless:
        return [""]
    units = [computed.unit] + [v.unit for v in operands if v.dims == computed.dims] + [""]
    if computed.dims == _DOLLAR_DIMS:  # a sum of money is written in dollars or in cents
        units += list(_MONEY_UNITS)
    return list(dict.fromkeys(units))


def _text_results(solution: str) -> list[tuple[int, Fraction]]:
    """(line, result) of the plain-text equations the solution states without an annotation
    (`$50 - $33 = $17`): a later literal equal to one of them has that provenance."""
    from prosfi.data.gsm8k import equations

    # the text readers' regexes are quadratic in a digit run's length: numbers past the verifier's bound
    # (100 digits) and very long lines are not read as text results
    lines = ["" if len(ln) > _MAX_LINE else _LONG_DIGITS.sub("#", ln) for ln in solution.splitlines()]
    return [(e.line, e.result) for e in equations("\n".join(lines)) if e.origin == "text"]


def _near(a: Fraction, b: Fraction, rel: float = 1e-9) -> bool:
    return a == b or abs(float(a) - float(b)) <= rel * max(abs(float(a)), abs(float(b)), 1e-12)


@dataclass
class _Reading:
    """One reading of an annotation: which given, earlier result or plain number each literal stands for."""

    tokens: list[tuple[str, Any]]  # ("ref", key) | ("num", text) | ("dollars", (kind, shown, magnitude))
    env: dict[str, Any]
    computed: Any = None           # the expression's Value (None: it does not evaluate)
    error: str = ""                # the evaluator's reason when it does not ("dimension …", "math …")
    claim: Any = None              # the stated number as a value of the computed dimension (when valid)
    valid: bool = False
    detail: str = ""               # the verifier's reason for the value (when it evaluates)

    def expr(self) -> str:
        """The expression as evaluated (a dollars literal is a name bound in `env`)."""
        from prosfi.data.quant_gold import render_tokens

        return render_tokens([("ref", v) if k == "dollars" else (k, v) for k, v in self.tokens_named()])

    def shown(self) -> str:
        """The expression as a policy would write it (a number read as dollars shown as written)."""
        from prosfi.data.quant_gold import render_tokens

        return render_tokens([(v[0], v[1]) if k == "dollars" else (k, v) for k, v in self.tokens])

    def tokens_named(self) -> list[tuple[str, Any]]:
        out, n = [], 0
        for k, v in self.tokens:
            if k == "dollars":
                n += 1
                out.append(("dollars", f"_d{n}"))
            else:
                out.append((k, v))
        return out


_MONEY_AFTER = {"dollar", "dollars", "bucks"}
_MONEY_BEFORE = {"makes", "make", "earns", "earn", "earned", "pays", "pay", "paid", "costs", "cost", "charges",
                 "charged", "spends", "spent", "saves", "saved", "owes", "owed", "sells", "sold", "for", "worth"}
_CLAUSE_END = {"", "a", "an", "each", "per", "every", "apiece"}


def _money_count(question: str, given: dict[str, Any]) -> bool:
    """A count given (digits, no unit) that the question states as money without a dollar sign: "dollars"
    right after it ("16 dollars each", "60 more dollars"; not "20 dollar bills"), or a money verb or "for"
    right before it with the clause ending there ("sells them for 40.", "makes 2000 a week", "costs 5 less
    than"; not "for 3 hours", "sells 5 more pens")."""
    text = str(given.get("text") or "")
    if str(given.get("unit") or "").strip() or not re.fullmatch(r"[\d,]+(?:\.\d+)?", text):
        return False
    start, end = given.get("start"), given.get("end")
    if not isinstance(start, int) or not isinstance(end, int):
        return False
    after = re.findall(r"[a-z]+|[.,;:?!]", question[end:end + 40].lower())
    words_after = []
    for w in after:
        if not w.isalpha():
            break
        words_after.append(w)
    w = words_after + ["", "", ""]
    if (w[0] in _MONEY_AFTER or (w[0] in ("more", "less") and w[1] in _MONEY_AFTER)) and "bill" not in \
            (w[1] + w[2]):
        return True
    before = re.findall(r"[a-z]+", question[max(0, start - 20):start].lower())
    ends = w[0] in _CLAUSE_END or (w[0] in ("less", "more") and w[1] in ("than", ""))  # "costs 5 less than"
    return bool(before) and before[-1] in _MONEY_BEFORE and ends


class _Labeller:
    """The reading of one solution: its earlier steps' readings (a result may have more than one dimension,
    e.g. `10 * 50` with "10 hours" and "$10" both given) and the problem's givens (`quant_gold.GoldChain`)."""

    def __init__(self, problem: Problem):
        from prosfi.data.quant_gold import GoldChain

        self.chain = GoldChain(problem)
        self.readings: dict[str, list[Any]] = {}  # step id -> its result's values, best first
        # count givens the question states as money without a dollar sign ("60 more dollars", "sells them
        # for 40.", "makes 2000 a week")
        self.money_counts = {str(g["id"]) for g in problem.givens if _money_count(problem.question or "", g)}

    def value_options(self, key: str) -> list[Any]:
        return self.readings.get(key) or [self.chain.value_of(key)]

    def refs(self, lit: Fraction) -> list[str]:
        """The givens and earlier results a literal may cite (`quant_gold.GoldChain.candidates`), without a
        percentage cited by its written number (25 for "25%"): the literal 25 is not the value 1/4, and reading
        it as the percent would change what the calculator computed."""
        chain = self.chain
        return [r for r in dict.fromkeys(chain.candidates(lit))
                if not (r in chain.percent and not _near(chain.env[r].mag, lit))]

    def exact(self, key: str, lit: Fraction) -> bool:
        """Does the ref show the literal's number in its own unit (not `$0.25` cited as 25 cents)?"""
        chain = self.chain
        if key in chain.env:
            v = chain.env[key]
            return _near(v.mag, lit) if v.dimensionless else chain.written.get(key) == lit
        return any(_near(Fraction(str(s["shown"])), lit) for s in chain.steps if s["key"] == key)

    def options(self, lit: Fraction, money: bool = False, text_result: bool = False, bare: bool = False
                ) -> list[Any]:
        """What a literal may stand for, best first: the givens and earlier results equal to it; a plain number
        when it is a listed constant, when its refs disagree in dimension (a reading that needs a unit the
        text does not fix), or when it has no ref at all. A number whose unit nothing fixes may also be read as
        dollars: an invented one, one a plain-text equation of the solution states (`60/15 = 4` containers,
        `40*.10 = $4.00`), the number of a bare `<<50=50>>`, and (`money`: the text writes the result in
        dollars) a count given the question states as money without a dollar sign ("makes 2000 a week",
        "sells them for 40.", "60 more dollars": the givens extractor reads those as plain numbers). The
        written number of a percent given (25 for "25%") is a plain 25 and nothing else: reading it as dollars
        is the confusion."""
        chain = self.chain
        refs = self.refs(lit)
        if not refs:
            if lit in chain.constants or lit in chain.percent.values():
                return [_PLAIN]
            return [_PLAIN, _DOLLARS]
        dims = {v.dims for r in refs for v in self.value_options(r)}
        # a ref in another unit than written (`25` for "$0.25", in cents) leaves the literal's unit open too
        plain = lit in chain.constants or len(dims) > 1 or not all(self.exact(r, lit) for r in refs)
        out: list[Any] = [("ref", r) for r in refs]
        if money:
            out += [("dollars", r) for r in refs if r in self.money_counts]
        if text_result or bare:
            return out + [_PLAIN, _DOLLARS]
        return out + ([_PLAIN] if plain else [])

    def readings_of(self, tokens: list[tuple[str, Any]], money: bool = False, texts: Sequence[Fraction] = ()):
        """Every reading of `tokens` (bounded, best first), one per choice of options and of cited results'
        values. `money`: the text writes the result in dollars; `texts`: results of plain-text equations
        stated so far."""
        import itertools

        slots = [i for i, t in enumerate(tokens) if t[0] == "num"]
        bare = len(tokens) == 1
        lits = [Fraction(tokens[i][1]) for i in slots]
        options = [self.options(lit, money, any(_near(r, lit) for r in texts), bare) for lit in lits]

        def penalty(combo) -> tuple:
            refs = [c[1] for c in combo if c[0] == "ref"]
            return (sum(c == _DOLLARS or c[0] == "dollars" for c in combo),
                    sum(c == _PLAIN and len(o) > 1 for c, o in zip(combo, options)),
                    len(refs) - len(set(refs)), sum(o.index(c) for o, c in zip(options, combo)))

        combos = sorted(itertools.islice(itertools.product(*options), 16 * _MAX_READINGS), key=penalty)
        count = 0
        for combo in combos:
            cand = list(tokens)
            for i, pick in zip(slots, combo):
                if pick == _DOLLARS:
                    cand[i] = ("dollars", ("num", tokens[i][1], Fraction(tokens[i][1])))
                elif pick[0] == "dollars":
                    cand[i] = ("dollars", ("ref", pick[1], Fraction(tokens[i][1])))
                elif pick != _PLAIN:
                    cand[i] = pick
            keys = list(dict.fromkeys(v for k, v in cand if k == "ref"))
            for values in itertools.product(*[self.value_options(k) for k in keys]):
                if count >= _MAX_READINGS:
                    return
                count += 1
                env = dict(zip(keys, values))
                yield _Reading(cand, env)


def _evaluate(reading: _Reading, value: Fraction) -> _Reading:
    """Evaluate one reading and check the stated result against it in each unit it may be written in."""
    from prosfi.quant import QuantError, Value, check_quantity, evaluate, parse_expr

    env = dict(reading.env)
    n = 0
    for k, v in reading.tokens:
        if k == "dollars":
            n += 1
            env[f"_d{n}"] = Value(v[2], _DOLLAR_DIMS, "USD")
    expr = reading.expr()
    try:
        reading.computed = evaluate(parse_expr(expr), env)
    except QuantError as exc:
        msg = str(exc).removeprefix("dimension error: ")
        reading.error = (f"dimension error inside the expression: {msg}" if exc.kind == "dimension" else
                         f"{exc.kind} error in the expression: {msg}")
        return reading
    dims = reading.computed.dims
    if len(dims) > _CURRENCY and abs(dims[_CURRENCY]) > 1:
        reading.error = "dimension error inside the expression: dollars times dollars (no quantity is USD**2)"
        return reading
    for unit in _claim_units(reading.computed, env.values()):
        try:
            claim = _claim_in(value, reading.computed, unit)
        except (QuantError, ValueError):
            continue  # a display unit the registry does not read back: not a unit the result can be in
        verdict = check_quantity(env, expr=expr, claim=claim)
        if verdict.status.value == "valid":
            reading.claim, reading.valid, reading.detail = claim, True, ""
            return reading
        if not reading.detail:
            reading.claim, reading.detail = claim, verdict.detail or str(verdict.status.value)
    return reading


def _plain_check(tokens: list[tuple[str, Any]], value: Fraction):
    """The annotation's arithmetic on plain numbers, as a calculator reads it (every literal a number): the
    verdict that decides whether the stated result is right at all."""
    from prosfi.data.quant_gold import render_tokens
    from prosfi.quant import Value, check_quantity

    return check_quantity({}, expr=render_tokens(tokens), claim=Value(value))


def _money_rank(r: _Reading) -> int:
    """0: the reading states the result in dollars (`$<<…>>` in the text), 1: in another currency unit, 2: not
    money."""
    return 0 if r.claim.unit == "USD" else 1 if r.claim.dims == _DOLLAR_DIMS else 2


def _step_values(readings: list[_Reading], value: Fraction, money: bool) -> list[Any]:
    """What later annotations may cite this result as: the stated number in each dimension a valid reading
    gives (the one the text marks, `$<<…>>`, first), a sum of money in dollars or in cents (the annotation says
    neither: `1000/100=$10` after `200*5=1000` cents); a result no reading makes valid may be cited as a plain
    number or as dollars (its own step carries the error, not the steps after it)."""
    from prosfi.quant import Value

    valid = [r for r in readings if r.valid]
    if money:
        valid.sort(key=_money_rank)
    out, seen = [], set()
    for r in valid:
        claims = [r.claim] + ([_claim_in(value, r.claim, u) for u in _MONEY_UNITS]
                              if r.claim.dims == _DOLLAR_DIMS else [])
        for c in claims:
            key = (c.dims, c.mag)
            if key not in seen:
                seen.add(key)
                out.append(c)
    if money and _DOLLAR_DIMS not in {c.dims for c in out}:
        # the text writes this result in dollars (`80 / 20 = $<<…>>4` rewards: $1 for every $20): the writer's
        # unit, citable as such even where the expression's own reading is a plain ratio
        out.append(Value(value, _DOLLAR_DIMS, "USD"))
    return out or [Value(value), Value(value, _DOLLAR_DIMS, "USD")]


def read_steps(problem: Problem, solution: str) -> list[AnnotatedStep]:
    """Every annotation of `solution`, in order, as a labelled step (nothing is skipped: an annotation the
    grammar cannot read is a step with verdict `error`).

    A step is valid when its arithmetic is right on plain numbers (the calculator's reading; an annotation
    states no units) and some reading of its literals as givens, earlier results or plain numbers is free of
    dimension errors and gives the stated result. Only a unit confusion that no reading resolves is an error
    (`$80 + 25` with 25 the written number of "25%"); the reading shown is the best one (refs first)."""
    from prosfi.data.gsm8k import normalise, parse_number
    from prosfi.data.quant_gold import percent_rewrite, tokenize

    lab = _Labeller(problem)
    chain = lab.chain
    texts = _text_results(solution)
    out: list[AnnotatedStep] = []
    for m in _ANNOTATION.finditer(solution):
        body = m.group(1)
        line = solution.count("\n", 0, m.start())
        money = solution[max(0, m.start() - 3):m.start()].strip().endswith("$")
        sid = f"s{len(out) + 1}"
        if len(body) > _MAX_LINE or _LONG_DIGITS.search(body):
            step = {"id": sid, "expr": body[:80], "value": "", "unit": ""}
            out.append(AnnotatedStep(step, body[:_MAX_LINE], "unknown", "bound: a number of more than 100 digits "
                                     "or an annotation of more than 2000 characters", False, "not read: too large"))
            continue
        lhs, eq, rhs = body.rpartition("=")
        value = parse_number(rhs) if eq else None
        norm = normalise(lhs) if eq else None
        raw = tokenize(norm[0]) if norm is not None else None
        if value is None or raw is None:
            why = "no '=' in the annotation" if not eq else (
                f"result {rhs.strip()!r} is not a number" if value is None else
                f"{lhs.strip()!r} is not arithmetic over numbers")
            step = {"id": sid, "expr": lhs.strip() if eq else body.strip(), "value": rhs.strip(), "unit": ""}
            out.append(AnnotatedStep(step, body, "error", why, False, f"not read: {why}"))
            continue
        tokens = percent_rewrite(raw, chain)
        plain = _plain_check(raw, value)
        stated = [r for ln, r in texts if ln <= line]
        readings = [_evaluate(r, value) for r in lab.readings_of(tokens, money, stated)]
        best = next((r for r in readings if r.valid), None)
        if best is not None and money:  # the text says dollars: a valid reading in dollars first
            best = min((r for r in readings if r.valid), key=_money_rank)
        evaluated = [r for r in readings if r.computed is not None and not r.error]
        if money:
            evaluated.sort(key=_money_rank)
        shown = best or (evaluated[0] if evaluated else readings[0] if readings else _Reading(list(tokens), {}))
        status, detail = plain.status.value, plain.detail or ""
        if status == "valid" and best is None:
            status = "invalid"
            detail = shown.detail or shown.error or "no reading of the literals gives the stated result"
        elif status == "valid" and best is not None:
            detail = ""
        claim = shown.claim if shown.claim is not None else _claim_in(value, shown.computed, "")
        free = [t[1] for t in tokens if t[0] == "num" and Fraction(t[1]) not in chain.constants
                and not lab.refs(Fraction(t[1]))
                and not any(ln <= line and _near(r, Fraction(t[1])) for ln, r in texts)]
        reason = "" if not free else (
            f"invented number {free[0]}: neither a given, an earlier result nor a listed constant")
        step = {"id": sid, "expr": shown.shown(), "value": json_number(value), "unit": claim.unit}
        out.append(AnnotatedStep(step, body, status, detail, not free, reason))
        # later literals may cite this result as stated (its claim, right or wrong), in any dimension a valid
        # reading gives it (a float `shown` lets 99 cite a stated 99.00000000000001; exact values compare exactly)
        values = _step_values(readings, value, money)
        lab.readings[sid] = values
        chain.steps.append({"key": sid, "tokens": shown.tokens, "value": values[0],
                            "shown": value if value.denominator == 1 else float(value)})
    return out


def label_solution(problem: Problem, completion: str, **provenance: Any) -> dict[str, Any]:
    """The labelled record of one GSM8K-style solution (see the module docstring for the keys)."""
    from prosfi.domains import domain_for
    from prosfi.prm.inputs import step_text

    error = None
    try:
        steps = read_steps(problem, completion)
    except (ValueError, ArithmeticError, RecursionError, MemoryError) as exc:  # a bad solution costs its record
        steps, error = [], f"{type(exc).__name__}: {exc}"[:300]
    labels = [s.verdict == "valid" for s in steps]
    answer = final_answer(completion)
    gold = None
    if isinstance(problem.answer, dict):
        from prosfi.data.gsm8k import parse_number

        gold = parse_number(str(problem.answer.get("value", "")))
    first_error = next((i for i, ok in enumerate(labels) if not ok), None)
    return {
        "problem_id": problem.id,
        "completion": completion,
        "prompt": domain_for(problem).user_prompt(problem),
        "steps": [s.step for s in steps],
        "completions": [step_text(s.step) for s in steps],
        "labels": labels,
        "verdicts": [s.verdict for s in steps],
        "details": [s.detail for s in steps],
        "annotations": [s.annotation for s in steps],
        "grounded": [s.grounded for s in steps],
        "grounded_reasons": [s.grounded_reason for s in steps],
        "first_error": first_error,
        "answer": None if answer is None else json_number(answer),
        "answer_correct": None if answer is None or gold is None else answer == gold,
        **({"read_error": error} if error else {}),
        **provenance,
    }


# ------------------------------------------------------------------ exports
def fover_record(rec: dict[str, Any]) -> dict[str, Any]:
    """FoVer's format: `solution_steps` (text), `error_labels` (True = correct)."""
    return {"problem_id": rec["problem_id"], "problem": rec["prompt"], "solution_steps": list(rec["completions"]),
            "error_labels": [bool(x) for x in rec["labels"]]}


def processbench_record(rec: dict[str, Any]) -> dict[str, Any]:
    """ProcessBench's format: `steps`, `label` = index of the first wrong step (-1 when none)."""
    first = next((i for i, ok in enumerate(rec["labels"]) if not ok), -1)
    return {"id": rec["problem_id"], "problem": rec["prompt"], "steps": list(rec["completions"]), "label": first,
            "final_answer_correct": rec.get("answer_correct")}


def score_record(rec: dict[str, Any], sample: int) -> dict[str, Any]:
    """A `prosfi prm score`-style record for `prosfi prm rerank --scores`: the symbolic judge's step scores
    (1.0 = valid and grounded, 0.0 otherwise) stand in for a PRM's, so Best-of-K by min / mean / last /
    product, majority vote, random and oracle run on GSM8K-style solutions with no model at all."""
    return {"problem_id": rec["problem_id"], "sample": sample, "source": "gsm8k", "difficulty": None,
            "model": rec.get("model"), "format_ok": rec["answer"] is not None, "answer": rec["answer"],
            "answer_correct": bool(rec.get("answer_correct")), "chain_valid": bool(rec["labels"]) and all(rec["labels"]),
            "reward": 1.0 if rec.get("answer_correct") and rec["labels"] and all(rec["labels"]) else 0.0,
            "step_scores": [1.0 if ok and g else 0.0 for ok, g in zip(rec["labels"], rec["grounded"])]}


def score_records(records: Sequence[dict[str, Any]], seed: int = 0) -> list[dict[str, Any]]:
    """`score_record` for every candidate solution (GSM8K's own `ground_truth`, the answer key, left out).
    Sample numbers are a seeded shuffle within each problem: `rerank` breaks ties by sample number, and the
    file's order (6B models first) would otherwise decide them."""
    import random

    by_problem: dict[str, list[dict[str, Any]]] = {}
    for r in records:
        if r.get("model") != "ground_truth":
            by_problem.setdefault(r["problem_id"], []).append(r)
    out = []
    for pid, recs in by_problem.items():
        order = list(range(len(recs)))
        random.Random(f"{seed}:{pid}").shuffle(order)
        out += [score_record(r, k) for r, k in zip(recs, order)]
    return out


# ------------------------------------------------------------------ completion files
def _norm_question(text: str) -> str:
    return re.sub(r"\s+", " ", text).strip()


@dataclass
class ReadReport:
    lines: int = 0
    solutions: int = 0
    unmatched: int = 0  # solutions whose question is not one of --data's problems
    bad: list[str] = field(default_factory=list)


def read_completions(path: str | Path, problems: dict[str, Problem], report: ReadReport | None = None,
                     ) -> list[dict[str, Any]]:
    """`{"problem_id", "completion"}` items from either completion file format (one may mix them):

    - plain: `{"problem_id": ..., "completion": "...<<a*b=c>>c ... #### N"}` (extra keys are kept);
    - GSM8K's `example_model_solutions.jsonl`: `{"question", "ground_truth", "<model>": {"is_correct",
      "solution"}, ...}`, matched to --data's problems by question text; one item per model solution
      (`model`, `is_correct` kept) and one for `ground_truth` (`model: "ground_truth"`).
    """
    report = report if report is not None else ReadReport()
    by_question = {_norm_question(p.question or ""): p.id for p in problems.values()}
    items: list[dict[str, Any]] = []
    from prosfi.jsonl import loads, read_lines

    with open(path, "rb") as fh:
        for lineno, line, undecodable in read_lines(fh):
            if not line.strip():
                continue
            report.lines += 1
            data, why = loads(line)  # never raises: deep nesting, huge integers, NaN are a bad line
            if why is not None or undecodable is not None:
                report.bad.append(f"line {lineno}: not valid JSON ({undecodable or why})")
                continue
            if not isinstance(data, dict):
                report.bad.append(f"line {lineno}: not a JSON object")
                continue
            if "completion" in data and "problem_id" in data:
                if not isinstance(data["completion"], str):
                    report.bad.append(f"line {lineno}: 'completion' is not text")
                    continue
                report.solutions += 1
                items.append(dict(data, problem_id=str(data["problem_id"])))
                continue
            if not isinstance(data.get("question"), str):
                report.bad.append(f"line {lineno}: neither {{problem_id, completion}} nor a GSM8K question record")
                continue
            pid = by_question.get(_norm_question(data["question"]))
            sols = [("ground_truth", data["ground_truth"], True)] if isinstance(data.get("ground_truth"), str) else []
            sols += [(k, v["solution"], v.get("is_correct")) for k, v in data.items()
                     if isinstance(v, dict) and isinstance(v.get("solution"), str)]
            report.solutions += len(sols)
            if pid is None:
                report.unmatched += len(sols)
                continue
            for model, text, ok in sols:
                items.append({"problem_id": pid, "completion": text, "model": model, "is_correct": ok})
    return items


def label_items(problems: dict[str, Problem], items: Iterable[dict[str, Any]]) -> list[dict[str, Any]]:
    """Labelled records for completion items of known problems (items of unknown problems are left out)."""
    out = []
    for index, item in enumerate(items):
        problem = problems.get(item["problem_id"])
        if problem is None:
            continue
        extra = {k: v for k, v in item.items() if k not in ("problem_id", "completion")}
        out.append(label_solution(problem, item["completion"], completion_index=index, **extra))
    return out


# ------------------------------------------------------------------ measurements
REFERENCE = "ground_truth"  # the model key of GSM8K's own solution in example_model_solutions.jsonl


def is_reference(rec: dict[str, Any]) -> bool:
    """GSM8K's own solution (the answer key), not a model's."""
    return rec.get("model") == REFERENCE


def group_counts(records: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """Counts and rates of one group of labelled solutions (steps = annotations)."""
    steps = sum(len(r["labels"]) for r in records)
    valid = sum(sum(r["labels"]) for r in records)
    labelled = [r for r in records if r["labels"]]
    return {"solutions": len(records), "without_annotations": len(records) - len(labelled), "steps": steps,
            "valid_steps": valid, "valid_rate": valid / steps if steps else None,
            "dimension_error_steps": sum(1 for r in records for d in r["details"] if d.startswith("dimension")),
            "ungrounded_steps": sum(r["grounded"].count(False) for r in records),
            "solutions_all_valid": sum(1 for r in labelled if all(r["labels"])),
            "solution_level": [solution_level(labelled, "verifier"), solution_level(labelled, "verifier+grounding")]}


def label_stats(records: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """`stats.json`'s figures with model solutions and reference solutions (GSM8K's own `ground_truth`) kept
    apart: a rate over both would mix the answer key's near-perfect steps into the models' (and the answer
    key's right answers into the solution-level F1)."""
    models = [r for r in records if not is_reference(r)]
    refs = [r for r in records if is_reference(r)]
    return {"model_solutions": group_counts(models), "reference_solutions": group_counts(refs)}


def solution_level(records: Sequence[dict[str, Any]], judge: str = "verifier") -> dict[str, Any]:
    """Solution-level ProcessBench-style F1 against the final answer's correctness (`is_correct`, else
    `answer_correct`): an erroneous solution (wrong answer) counts as caught when the judge flags a step, a
    correct one when it flags none; F1 = harmonic mean of the two accuracies. Judges: `verifier` (a step is
    not valid), `verifier+grounding` (not valid, or not grounded). Without human step labels the first-error
    index cannot be checked here; this is the part of ProcessBench's F1 that final answers can check."""
    err = err_hit = ok = ok_hit = 0
    wrong_all_valid = 0
    for r in records:
        truth = r.get("is_correct")
        truth = r.get("answer_correct") if truth is None else truth
        if truth is None or not r["labels"]:
            continue
        flags = [not v for v in r["labels"]]
        if judge == "verifier+grounding":
            flags = [f or not g for f, g in zip(flags, r["grounded"])]
        flagged = any(flags)
        if truth:
            ok += 1
            ok_hit += not flagged
        else:
            err += 1
            err_hit += flagged
            wrong_all_valid += all(r["labels"])
    acc_err = err_hit / err if err else None
    acc_ok = ok_hit / ok if ok else None
    f1 = None if acc_err is None or acc_ok is None else (
        2 * acc_err * acc_ok / (acc_err + acc_ok) if acc_err + acc_ok else 0.0)
    return {"judge": judge, "wrong_answer_solutions": err, "right_answer_solutions": ok,
            "accuracy_erroneous": acc_err, "accuracy_correct": acc_ok, "f1": f1,
            "wrong_answer_all_steps_valid": wrong_all_valid,
            "wrong_answer_all_steps_valid_fraction": wrong_all_valid / err if err else None}


__all__ = [
    "REFERENCE",
    "AnnotatedStep",
    "ReadReport",
    "final_answer",
    "fover_record",
    "group_counts",
    "is_reference",
    "label_items",
    "label_solution",
    "label_stats",
    "processbench_record",
    "read_completions",
    "read_steps",
    "score_record",
    "score_records",
    "solution_level",
]
