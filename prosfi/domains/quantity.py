"""The quantity domain (kind `quantity`): numeric steps with units, checked in-process by
`prosfi.quant` (exact arithmetic, dimensions), guarded by the chain rules of docs/quantity.md
("Chain rules (grounding)").

A step is `{"id": "s1", "expr": "g1 - g2 - g3", "value": 9, "unit": "", "name": "eggs_for_sale"}` or
`{"id": "s2", "op": "kinetic_energy", "args": ["g1", "g2"], "value": 50, "unit": "J"}`. Its value is
checked against the expression evaluated over the givens and the *claimed* values of the earlier
steps it cites (so each step is judged on its own, like a logic step against its citations). The
guards close the cheap ways to look verified: inventing numbers (literals must be a given's number
or an `ALLOWED_CONSTANTS` entry), literal-only steps, citations that do not change the value
(`g1 - g1 + 18`, `min(g1, 18)`), restating a value (`g1 * 1`, a pure unit conversion), one giant
expression (`max_ops`), steps off the path to the answer, and an answer that is not the last
step's value. Quantity chains need no prover: both `ChainBatch` rounds send nothing.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any

from prosfi.chain import REJECTED, ChainConfig, ChainResult, StepResult
from prosfi.data.problem import Problem
from prosfi.domains.base import Domain
from prosfi.jsonl import loads
from prosfi.quant import QuantError, Tolerance, close_enough, evaluate, parse_expr, parse_quantity
from prosfi.quant.check import compute
from prosfi.quant.expr import BinOp, Call, Unary, fraction_literals
from prosfi.quant.grounding import ALLOWED_CONSTANTS, allowed_constant
from prosfi.quant.tolerance import _rel_ok
from prosfi.quant.units import (
    DIMENSIONLESS,
    Value,
    format_number,
    format_value,
    make_value,
    parse_number,
    unit_info,
)
from prosfi.trace.extract import completion_text, extract_blocks, strip_fence
from prosfi.trace.schema import MAX_REASONS, ParsedTrace, Trace

# guard names carried by step results (`guard`), so eval can count dimension errors and grounding failures
DIMENSION = "dimension"
GROUNDING_GUARDS = ("grounding", "literal_only", "insensitive", "restatement", "unused_step")
_CURRENCY: tuple | None = None  # the currency dimension, read on first use (unit_info builds the registry)


@dataclass
class QuantityRules:
    """The quantity chain rules' knobs (defaults are the documented contract)."""

    max_ops: int = field(default=4, metadata={"help": "operations (binary operators, unary minus, function "
                                              "calls; a primitive `op` is one) one step's expression may use"})
    tolerance: Tolerance = field(default_factory=Tolerance,
                                 metadata={"help": "step values: relative tolerance (and optional sigfigs)"})
    perturbation: Fraction = field(default=Fraction(137, 100),
                                   metadata={"help": "factor each cited value is scaled by to test it matters"})


DEFAULT_RULES = QuantityRules()


@dataclass(frozen=True)
class QuantityStep:
    id: str
    expr: str | None
    op: str | None
    args: tuple[str, ...]
    value: Any  # int | float | str (a number as written)
    unit: str = ""
    name: str = ""

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"id": self.id}
        if self.expr is not None:
            out["expr"] = self.expr
        else:
            out["op"], out["args"] = self.op, list(self.args)
        out.update(value=self.value, unit=self.unit)
        if self.name:
            out["name"] = self.name
        return out

    @property
    def refs(self) -> tuple[str, ...]:
        return self.args


@dataclass(frozen=True)
class QuantityStepResult(StepResult):
    guard: str = ""  # which rule decided a non-valid verdict ("dimension", "grounding", ...), else ""

    def to_json(self) -> dict:
        out = super().to_json()
        if self.guard:
            out["guard"] = self.guard
        return out


@dataclass(frozen=True)
class QuantityAnswer:
    """A read `<answer>`: `value` (a bare number is dimensionless until read in the target's unit), `bare`
    when no unit was written, `reason` when unreadable."""

    value: Value | None = None
    bare: bool = False
    text: str = ""
    reason: str = ""

    @property
    def ok(self) -> bool:
        return not self.reason and self.value is not None

    def render(self) -> str:
        return format_value(self.value) if self.value is not None else self.text


# ---------------------------------------------------------------------------------------- steps
def parse_steps(text: str, given_ids: Sequence[str] = ()) -> tuple[tuple[QuantityStep, ...], list[str]]:
    """Steps from the inner text of `<steps>` (code fence tolerated), plus schema errors."""
    data, why = loads(strip_fence(text))
    if why is not None:
        return (), [f"steps are not valid JSON: {why}"]
    if not isinstance(data, list):
        return (), [f"steps must be a JSON array, not {type(data).__name__}"]
    givens = set(given_ids)
    errors: list[str] = []
    steps: list[QuantityStep] = []
    seen: set[str] = set()
    for i, raw in enumerate(data):
        where = f"step {i + 1}"
        if not isinstance(raw, dict):
            errors.append(f"{where}: must be an object")
            continue
        sid = raw.get("id")
        if not isinstance(sid, str) or not sid.strip():
            errors.append(f"{where}: 'id' must be a non-empty string")
            continue
        sid = sid.strip()
        where = f"step {sid!r}"
        if sid in givens:
            errors.append(f"{where}: id shadows a given id")
        elif sid in seen:
            errors.append(f"{where}: duplicate id")
        seen.add(sid)
        expr, op, args = raw.get("expr"), raw.get("op"), raw.get("args", [])
        if (expr is None) == (op is None):
            errors.append(f"{where}: give exactly one of 'expr' (an expression) and 'op' (a primitive with 'args')")
            continue
        if expr is not None and (not isinstance(expr, str) or not expr.strip()):
            errors.append(f"{where}: 'expr' must be a non-empty string")
            continue
        if op is not None:
            if not isinstance(op, str) or not op.strip():
                errors.append(f"{where}: 'op' must be a non-empty string")
                continue
            if not isinstance(args, list) or not all(isinstance(a, str) for a in args):
                errors.append(f"{where}: 'args' must be a list of ids (strings)")
                continue
        value = raw.get("value")
        if isinstance(value, bool) or not isinstance(value, (int, float, str)):
            errors.append(f"{where}: 'value' must be a number")
            continue
        if isinstance(value, str):
            try:
                parse_number(value.strip())
            except QuantError:
                errors.append(f"{where}: 'value' must be a number (put the unit in 'unit'), not {value[:30]!r}")
                continue
        unit = raw.get("unit", "")
        unit = "" if unit is None else unit
        if not isinstance(unit, str):
            errors.append(f"{where}: 'unit' must be a string ('' for a plain number)")
            continue
        name = raw.get("name", "")
        if not isinstance(name, str):
            errors.append(f"{where}: 'name' must be a string")
            continue
        steps.append(QuantityStep(sid, expr.strip() if expr is not None else None,
                                  op.strip() if op is not None else None,
                                  tuple(a.strip() for a in args) if op is not None else (), value, unit.strip(),
                                  name))
    return tuple(steps), errors


def claimed_value(step: QuantityStep) -> Value:
    """The step's stated value and unit as a Value (QuantError when it does not read)."""
    return _claimed(step.value if not isinstance(step.value, float) else ("f", step.value), step.unit)


@functools.lru_cache(maxsize=65536)
def _claimed(value: Any, unit: str) -> Value:
    if isinstance(value, tuple):  # ("f", float): keyed apart from an equal int (1.0 vs 1 hash alike)
        value = value[1]
    number = parse_number(value.strip()) if isinstance(value, str) else parse_quantity(value).mag
    return make_value(number, unit)


def _same(a: Value, b: Value, tol: Tolerance) -> bool:
    """`close_enough` without building a reason (the guards compare many values that differ): exact
    equality first, then the relative tolerance in floating point."""
    if a.dims != b.dims:
        return False
    if a.mag == b.mag:
        return True
    try:
        x, y = float(a.mag), float(b.mag)
    except OverflowError:
        return _rel_ok(a.mag, b.mag, tol)
    return abs(x - y) <= tol.rel * max(abs(x), tol.abs_eps)


# ---------------------------------------------------------------------------------------- answers
_WORDS = {"dollars": "USD", "dollar": "USD", "usd": "USD", "bucks": "USD"}


def read_answer(text: str) -> QuantityAnswer:
    """`18`, `$18`, `18 dollars`, `1,000`, `3.0 m/s`, `25%`: one quantity; anything else has a reason."""
    given = text.strip()
    body = given
    low = body.lower()
    for prefix in ("the answer is", "answer:", "answer is", "answer"):
        if low.startswith(prefix):
            body = body[len(prefix):].strip()
            break
    body = body.removesuffix(".").strip()
    parts = body.rsplit(" ", 1)
    if len(parts) == 2 and parts[1].lower() in _WORDS:
        body = f"{parts[0]} {_WORDS[parts[1].lower()]}"
    try:
        value = parse_quantity(body)
    except QuantError as exc:
        return QuantityAnswer(text=given, reason=f"answer {_clip(given)!r} is not one quantity: {exc}"[:200])
    bare = not value.unit and value.dims == DIMENSIONLESS
    return QuantityAnswer(value=value, bare=bare, text=given)


def _currency() -> tuple:
    global _CURRENCY
    if _CURRENCY is None:
        _CURRENCY = unit_info("USD").dims
    return _CURRENCY


def _plain_unit(unit: str) -> bool:
    """A unit a bare number may stand for: none, percent-like (dimensionless) or a currency."""
    try:
        dims = unit_info(unit).dims if unit else DIMENSIONLESS
    except QuantError:
        return False
    return dims == DIMENSIONLESS or dims == _currency()


def read_in(claim: QuantityAnswer, unit: str) -> Value | None:
    """The claim's value, a bare number read in `unit` where `unit` is plain (none, percent, currency)."""
    if not claim.ok:
        return None
    if claim.bare and unit and _plain_unit(unit):
        return make_value(claim.value.mag, unit)
    return claim.value


def answer_tolerance(problem: Problem) -> Tolerance:
    raw = problem.extra.get("tolerance")
    if isinstance(raw, dict):
        try:
            return Tolerance(**{k: raw[k] for k in ("rel", "abs_eps", "sigfigs") if k in raw})
        except (TypeError, ValueError):
            pass
    return Tolerance()


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


def matches(target: Value, target_unit: str, claim: QuantityAnswer, tol: Tolerance) -> tuple[bool, str]:
    """Does the claim state `target` (value within tolerance, unit by dimension with conversion)?"""
    value = read_in(claim, target_unit)
    if value is None:
        return False, claim.reason or "no readable answer"
    return close_enough(target, value, tol)


# ---------------------------------------------------------------------------------------- chain check
class QuantityState:
    """Per-batch memo: given values per problem, step outcomes by their inputs (a group repeats steps)."""

    def __init__(self) -> None:
        self.givens: dict[int, tuple[Problem, dict[str, Value], frozenset, dict[str, str], str]] = {}
        self.outcomes: dict[tuple, tuple] = {}
        self.exprs: dict[str, Any] = {}

    def problem_givens(self, problem: Problem) -> tuple[dict[str, Value], frozenset, dict[str, str], str]:
        """(given id -> Value, the givens' written numbers, given id -> why it does not read, the problem's
        text that unit-factor constants must find their context in)."""
        hit = self.givens.get(id(problem))
        if hit is None or hit[0] is not problem:
            values, numbers, bad = {}, set(), {}
            for g in problem.givens:
                gid = str(g.get("id", ""))
                try:
                    v = parse_quantity({"value": g.get("value"), "unit": g.get("unit") or ""})
                except (QuantError, TypeError, ValueError) as exc:
                    bad[gid] = str(exc)
                    continue
                values[gid] = v
                # the number as written ("150" of 150%, "120" of 120 km) and, for plain numbers, the value
                # itself (1.5 for 150%: GSM8K writes both 150/100 and 1.5)
                numbers.update(_given_numbers(v, str(g.get("value"))))
            hit = self.givens[id(problem)] = (problem, values, frozenset(numbers), bad, constant_context(problem))
        return hit[1], hit[2], hit[3], hit[4]

    def expr(self, text: str):
        hit = self.exprs.get(text)
        if hit is None:
            try:
                hit = parse_expr(text)
            except QuantError as exc:
                hit = exc
            except RecursionError:
                hit = QuantError("nested too deeply", "bound")
            self.exprs[text] = hit
        return hit


def _given_numbers(v: Value, written: str) -> set[Fraction]:
    out: set[Fraction] = set()
    readers = (lambda: v.magnitude_in(), lambda: v.mag if v.dimensionless else None,
               lambda: parse_number(written.strip().lstrip("$").rstrip("%")))
    for read in readers:
        try:
            x = read()
            if x is not None:
                out.add(Fraction(x))
        except (QuantError, TypeError, ValueError, OverflowError, ZeroDivisionError):
            pass
    return out


def constant_context(problem: Problem) -> str:
    """The text a unit-factor constant must find its context in: question, givens' units and texts, target."""
    target = problem.target or {}
    parts = [problem.question, str(target.get("name") or ""), str(target.get("unit") or "")]
    for g in problem.givens:
        parts += [str(g.get("unit") or ""), str(g.get("text") or "")]
    if isinstance(problem.answer, dict):
        parts.append(str(problem.answer.get("unit") or ""))
    return " ".join(parts)


def _ops(expr) -> int:
    return sum(1 for n in expr.walk() if isinstance(n, (BinOp, Unary, Call)))


def _scaled(v: Value, factor: Fraction) -> Value:
    if v.mag == 0:
        return Value(Fraction(1) if isinstance(v.mag, Fraction) else 1.0, v.dims, v.unit)
    mag = v.mag * factor if isinstance(v.mag, Fraction) else v.mag * float(factor)
    return Value(mag, v.dims, v.unit)


class QuantityChainCheck:
    """One quantity chain against its problem and claimed answer, in the `ChainBatch` protocol (no
    prover rounds: everything is worked out in-process in `finish`)."""

    def __init__(self, problem: Problem, steps: Sequence[QuantityStep], claim: QuantityAnswer,
                 config: ChainConfig, state: QuantityState, establish: bool = True,
                 rules: QuantityRules | None = None) -> None:
        self.problem, self.steps, self.claim, self.config = problem, tuple(steps), claim, config
        self.state, self.establish = state, establish
        self.rules = rules or getattr(config, "quantity", None) or DEFAULT_RULES

    def key(self) -> tuple:
        return (id(self.problem), id(self.config), id(self.state), self.establish, self.steps,
                self.claim.text, self.claim.reason)

    def round1(self) -> list:
        return []

    def round2(self, verdicts) -> list:
        return []

    def finish(self, verdicts) -> ChainResult:
        givens, numbers, bad_givens, context = self.state.problem_givens(self.problem)
        index = {s.id: i for i, s in enumerate(self.steps)}
        claims: dict[str, Value | None] = {}
        computed: dict[int, Value] = {}
        results: list[QuantityStepResult] = []
        for i, step in enumerate(self.steps):
            try:
                claims[step.id] = claimed_value(step)
            except QuantError:
                claims[step.id] = None
            res, true = self._step(i, step, index, givens, (numbers, context), bad_givens, claims)
            results.append(res)
            if true is not None and res.verified:
                computed[i] = true
        # every given the chain cites changes the answer (nothing cancels out across steps: g1 + g4, then - g4)
        if results and len(self.steps) - 1 in computed:
            self._answer_sensitivity(results, index, givens)
        # every step on the dependency path of the last one
        if results:
            needed = self._ancestors(len(self.steps) - 1, index)
            for i, r in enumerate(results):
                if i not in needed and r.verified:
                    results[i] = QuantityStepResult(r.id, REJECTED, "unused step (every step is used): not on the "
                                                    "path to the last step, whose value is the answer",
                                                    guard="unused_step")
        verified = [r.verified for r in results]
        all_verified = all(verified) and len(results) >= self.config.min_steps
        established, why = self._established(results, computed, claims)
        reason = ""
        if len(results) < self.config.min_steps:
            reason = f"{len(results)} step(s) given; min_steps is {self.config.min_steps}"
        elif not all(verified):
            bad = next(r for r in results if not r.verified)
            reason = f"step {bad.id} {bad.verdict}" + (f": {bad.reason}" if bad.reason else "")
        elif not established:
            reason = why
        return ChainResult(tuple(results), all_verified, established, reason)

    def _ancestors(self, last: int, index: dict[str, int]) -> set[int]:
        seen, todo = {last}, [last]
        while todo:
            i = todo.pop()
            for ref in self._refs(self.steps[i]):
                j = index.get(ref)
                if j is not None and j < i and j not in seen:
                    seen.add(j)
                    todo.append(j)
        return seen

    def _answer_sensitivity(self, results: list, index: dict[str, int], givens: dict[str, Value]) -> None:
        """Recompute the chain to the last step with each cited given scaled. A step that comes back to the
        value of a given it depends on while another given cancels out on the way (`s1 = g1 + g4`,
        `s2 = s1 - g4` restates g1) is rejected. Cancellation alone is not: physics has it honestly (a
        free-fall speed does not depend on the mass the potential energy was computed with)."""
        order = sorted(self._ancestors(len(self.steps) - 1, index))
        if not all(results[j].verified for j in order):
            return
        key = ("chain", id(self.problem), tuple(self.steps[j] for j in order), self.rules.tolerance,
               self.rules.perturbation)
        hit = self.state.outcomes.get(key)
        if hit is None:
            hit = self.state.outcomes[key] = self._cancellations(order, index, givens)
        for j, g, h in hit:
            results[j] = QuantityStepResult(self.steps[j].id, REJECTED, f"restates {h} through steps where {g} "
                                            f"cancels out (grounding): {self.steps[j].id} has {h}'s value whatever "
                                            f"{g} is", backend="quant", guard="restatement")

    def _cancellations(self, order: list[int], index: dict[str, int], givens: dict[str, Value]) -> tuple:
        depends: dict[int, set[str]] = {}  # step -> the givens it depends on, transitively
        for j in order:
            refs = self._refs(self.steps[j])
            depends[j] = {r for r in refs if r in givens}.union(
                *(depends.get(index[r], set()) for r in refs if r in index and index[r] < j))
        base = self._recompute(order, givens)
        if base is None:
            return ()
        out = []
        for g in sorted(set().union(*depends.values())):
            moved = self._recompute(order, {**givens, g: _scaled(givens[g], self.rules.perturbation)})
            if moved is None:
                continue
            tol = self.rules.tolerance
            for j in order:
                sid = self.steps[j].id
                if g not in depends[j] or not _same(base[sid], moved[sid], tol):
                    continue
                same = [h for h in sorted(depends[j]) if h != g and _same(givens[h], base[sid], tol)]
                if same:
                    out.append((j, g, same[0]))
                    break
        return tuple(out)

    def _recompute(self, order: list[int], givens: dict[str, Value]) -> dict[str, Value] | None:
        env = dict(givens)
        try:
            for j in order:
                step = self.steps[j]
                expr = self.state.expr(step.expr) if step.expr is not None else None
                if isinstance(expr, QuantError):
                    return None
                env[step.id] = self._compute(step, expr, env)
        except (QuantError, ArithmeticError, ValueError, OverflowError, KeyError):
            return None
        return env

    def _refs(self, step: QuantityStep) -> tuple[str, ...]:
        if step.expr is not None:
            e = self.state.expr(step.expr)
            return tuple(sorted(e.names())) if not isinstance(e, QuantError) else ()
        return step.args  # a conversion's target unit is no step id: `_ancestors` skips it

    def _established(self, results, computed: dict[int, Value], claims) -> tuple[bool, str]:
        if not self.claim.ok:
            return False, "no readable answer to establish"
        if not self.establish:
            return False, "answer not checked against the chain (known to be wrong)"
        if not results:
            return False, "no steps: the answer must be the value of the last step"
        last = len(results) - 1
        if last not in computed:
            return False, f"the last step {results[last].id} is not verified, so nothing establishes the answer"
        value = claims[self.steps[last].id]
        ok, why = matches(value, self.steps[last].unit, self.claim, answer_tolerance(self.problem))
        if not ok:
            return False, f"answer: the answer is not the value of the last step {results[last].id} ({why})"
        return True, ""

    # ------------------------------------------------------------------ one step
    def _step(self, i, step, index, givens, grounds, bad_givens, claims) -> tuple[QuantityStepResult, Value | None]:
        cfg, rules = self.config, self.rules
        numbers, context = grounds

        def res(verdict, reason, guard=""):
            return QuantityStepResult(step.id, verdict, reason, backend="quant", guard=guard), None

        if i >= cfg.max_steps:
            return res(REJECTED, f"beyond max_steps ({cfg.max_steps})")
        expr = None
        if step.expr is not None:
            expr = self.state.expr(step.expr)
            if isinstance(expr, QuantError):
                return res("unknown" if expr.kind == "bound" else "error", f"expression: {expr}"[:300])
            refs = sorted(expr.names())
            literals = [n.value for n in expr.walk() if type(n).__name__ == "Num"]
            ops = _ops(expr)
        else:
            refs = list(step.args)
            if step.op == "convert" and refs and refs[-1] not in givens and refs[-1] not in index:
                refs = refs[:-1]  # the target unit of a conversion
            literals, ops = [], 1
        for d in refs:
            if d in givens:
                continue
            if d in bad_givens:
                return res("error", f"cites given {d}, which does not read as a quantity")
            j = index.get(d)
            if j is None:
                return res("invalid", f"cites unknown id {d!r}")
            if j == i:
                return res("invalid", "cites itself")
            if j > i:
                return res("invalid", f"forward reference to {d!r}")
        if not refs:
            return res(REJECTED, "literal-only step (grounding): cites no given or earlier step", "literal_only")
        if rules.max_ops and ops > rules.max_ops:
            return res(REJECTED, f"{ops} operations in one step (max_ops {rules.max_ops}): one step, one small "
                       "computation", "max_ops")
        if len(refs) > cfg.max_dependencies:
            return res(REJECTED, f"cites {len(refs)} ids (max_dependencies {cfg.max_dependencies})")
        paired: set[Fraction] = set()  # `3/5` written for a given "three-fifths": both literals are grounded
        if step.expr is not None and literals:
            for text, value in fraction_literals(step.expr):
                if value in numbers:
                    paired.update(parse_number(part) for part in text.split("/"))
        for lit in literals:
            if lit not in numbers and lit not in paired and allowed_constant(lit, context) is None:
                why = ("a unit factor the problem gives no context for" if lit in ALLOWED_CONSTANTS
                       else "not a given's number nor a listed constant")
                return res(REJECTED, f"ungrounded literal {format_number(lit)} (grounding): {why}", "grounding")
        env: dict[str, Value] = {}
        for d in refs:
            if d in givens:
                env[d] = givens[d]
            else:
                v = claims.get(d)
                if v is None:
                    return res("invalid", f"cites {d}, whose stated value or unit does not read")
                env[d] = v
        try:
            claim = claims[step.id] if claims.get(step.id) is not None else claimed_value(step)
        except QuantError as exc:
            return res("unknown" if exc.kind == "bound" else "error", f"value/unit: {exc}"[:300])
        key = (step.expr, step.op, step.args, tuple((d, env[d].mag, env[d].dims) for d in refs),
               claim.mag, claim.dims, rules.tolerance, rules.perturbation)
        hit = self.state.outcomes.get(key)
        if hit is None:
            hit = self.state.outcomes[key] = self._outcome(step, expr, refs, env, claim)
        verdict, reason, guard, true = hit
        return QuantityStepResult(step.id, verdict, reason, backend="quant", guard=guard), true

    def _compute(self, step, expr, env) -> Value:
        if expr is not None:
            return evaluate(expr, env)
        return compute(env, op=step.op, args=step.args)

    def _outcome(self, step, expr, refs, env, claim) -> tuple[str, str, str, Value | None]:
        tol = self.rules.tolerance
        try:
            true = self._compute(step, expr, env)
        except QuantError as exc:
            if exc.kind == "dimension":
                return "invalid", f"dimension error inside the expression: {exc}"[:300], DIMENSION, None
            if exc.kind == "bound":
                return "unknown", f"bound: {exc}"[:300], "", None
            if exc.kind == "math":
                return "invalid", f"math error: {exc}"[:300], "", None
            return "error", f"expression: {exc}"[:300], "", None
        except (ArithmeticError, ValueError, OverflowError) as exc:
            return "invalid", f"math error: {exc!r}"[:300], "", None
        ok, why = close_enough(true, claim, tol)
        if not ok:
            return "invalid", why, DIMENSION if why.startswith("wrong unit") else "", None
        for d in refs:  # every cited value must matter
            try:
                moved = self._compute(step, expr, {**env, d: _scaled(env[d], self.rules.perturbation)})
            except (QuantError, ArithmeticError, ValueError, OverflowError):
                continue  # the result depends on it (it breaks without it)
            if _same(true, moved, tol):
                why = f"does not depend on {d} (grounding): the value stays {format_value(true)} whatever {d} is"
                return REJECTED, why, "insensitive", None
        for d in refs:
            if _same(env[d], true, tol):
                return REJECTED, f"restates {d} (grounding): its value is {d}'s", "restatement", None
        return "valid", "", "", true


# ---------------------------------------------------------------------------------------- prompts
SYSTEM_PROMPT = """\
You solve quantitative word problems with steps a checker can verify. Reply in exactly this form:
<think>
your reasoning in plain language
</think>
<steps>
[{"id": "s1", "expr": "g1 - g2", "value": 9, "unit": "", "name": "eggs_left"}, ...]
</steps>
<answer>your answer</answer>
Write nothing after </answer>. Each step computes one value. "expr" is arithmetic over the givens \
(g1, g2, ...) and earlier steps (s1, s2, ...) with + - * / ** ( ) and sqrt exp log sin cos tan abs floor \
ceil min max round; or use "op" with "args" (a named primitive such as kinetic_energy). "value" and \
"unit" state the result ("" for a plain number; units such as m/s, km/h, J, USD, percent; they convert by \
themselves). A number written in an expression must be a given's number or one of 0-10, 0.5, 7, 12, 24, \
52, 60, 100, 365, 1000, 3600. At most 4 operations per step; every value a step cites must change its \
result; a step may not just restate a value; every step must lead to the last step, whose value is the \
answer. Answer with that value and its unit, e.g. <answer>18</answer> or <answer>3 m/s</answer>."""


def _given_line(g: dict[str, Any]) -> str:
    value = str(g.get("value", ""))
    unit = str(g.get("unit") or "")
    text = str(g.get("text") or "")
    shown = f"{value}{' ' + unit if unit else ''}"
    line = f"{g.get('id')} = {shown}"
    return f"{line}  (\"{text}\")" if text and text.strip() != shown else line


def user_prompt(problem: Problem) -> str:
    """The problem as the user turn: the question, the givens with their ids, what to find."""
    lines = [f"Question: {problem.question}", "", "Givens:"]
    lines += [_given_line(g) for g in problem.givens] or ["(none)"]
    target = problem.target or {}
    name, unit = target.get("name"), target.get("unit")
    if name or unit:
        lines += ["", f"Find: {name or 'the answer'}" + (f" (in {unit})" if unit else "")]
    return "\n".join(lines)


def answer_text(problem: Problem) -> str:
    answer = problem.answer if isinstance(problem.answer, dict) else {"value": problem.answer}
    unit = str(answer.get("unit") or "")
    return f"{answer.get('value')} {unit}".strip()


def render_completion(problem: Problem, steps: Sequence[dict[str, Any]], answer: str | None = None) -> str:
    lines = []
    for s in steps:
        what = s.get("expr") if "expr" in s else f"{s.get('op')}({', '.join(s.get('args', []))})"
        lines.append(f"{s.get('name') or s['id']} = {what} = {s.get('value')} {s.get('unit') or ''}".rstrip())
    body = ",\n".join(json.dumps(s, ensure_ascii=False) for s in steps)
    return ("<think>\n" + "\n".join(lines) + f"\n</think>\n<steps>\n[{body}]\n</steps>\n"
            f"<answer>{answer if answer is not None else answer_text(problem)}</answer>")


# ---------------------------------------------------------------------------------------- the domain
class QuantityDomain(Domain):
    name = "quantity"
    kinds = ("quantity",)
    system_prompt = SYSTEM_PROMPT
    step_grounding = False  # the PRM tools' CSP groundedness is defined over logic steps

    def parse_trace(self, problem: Problem, completion: Any) -> ParsedTrace:
        try:
            text = completion_text(completion)
        except TypeError as exc:
            return ParsedTrace(None, str(exc))
        extraction = extract_blocks(text)
        if not extraction.ok:
            return ParsedTrace(None, extraction.reason)
        blocks = extraction.blocks
        steps, errors = parse_steps(blocks.steps, [str(g.get("id")) for g in problem.givens])
        if errors:
            more = len(errors) - MAX_REASONS
            reason = "; ".join(errors[:MAX_REASONS]) + (f"; and {more} more" if more > 0 else "")
            return ParsedTrace(None, reason, answer=blocks.answer)
        return ParsedTrace(Trace(blocks.think, steps, blocks.answer), answer=blocks.answer)

    def as_step(self, raw: Any) -> QuantityStep:
        if isinstance(raw, QuantityStep):
            return raw
        steps, errors = parse_steps(json.dumps([raw]))
        if errors:
            raise ValueError(errors[0])
        return steps[0]

    def step_object(self, step: Any) -> dict[str, Any]:
        return self.as_step(step).to_json()

    def parse_answer(self, problem: Problem, text: str) -> QuantityAnswer:
        return read_answer(text)

    def answer_correct(self, problem: Problem, claim: QuantityAnswer) -> bool:
        gold = gold_value(problem)
        if gold is None or not claim.ok:
            return False
        unit = str((problem.answer or {}).get("unit") or "") if isinstance(problem.answer, dict) else ""
        return matches(gold, unit, claim, answer_tolerance(problem))[0]

    def no_claim(self, problem: Problem) -> QuantityAnswer:
        return QuantityAnswer(reason="no answer")

    def batch_state(self) -> QuantityState:
        return QuantityState()

    def chain_check(self, problem: Problem, steps: Sequence[Any], claim: QuantityAnswer, config: Any,
                    state: QuantityState | None, establish: bool = True) -> QuantityChainCheck:
        return QuantityChainCheck(problem, steps, claim, config or ChainConfig(),
                                  state if state is not None else QuantityState(), establish)

    def check_chain(self, problem: Problem, steps: Sequence[Any], claim: QuantityAnswer | None = None,
                    config: ChainConfig | None = None) -> ChainResult:
        """The chain's result directly (no verifier needed for quantity chains)."""
        claim = claim if claim is not None else QuantityAnswer(reason="no answer")
        check = self.chain_check(problem, [self.as_step(s) for s in steps], claim, config or ChainConfig(),
                                 None, establish=claim.ok)
        return check.finish([])

    # ------------------------------------------------------------------ gold (built by prosfi.data.quant_gold)
    def gold_steps(self, problem: Problem) -> list[dict[str, Any]] | None:
        steps = problem.extra.get("gold_steps")
        if isinstance(steps, list) and steps:
            return steps
        try:
            from prosfi.data import quant_gold
        except ImportError:
            return None
        return quant_gold.gold_steps(problem)

    def gold_completion(self, problem: Problem, verifier: Any = None) -> str | None:
        """Q2's gold completion, kept only when it earns the top level under these chain rules."""
        text = None
        try:
            from prosfi.data import quant_gold

            text = quant_gold.gold_completion(problem)
        except ImportError:
            steps = self.gold_steps(problem)
            text = render_completion(problem, steps) if steps else None
        if text is None:
            return None
        trace = self.parse_trace(problem, text)
        if not trace.ok:
            return None
        claim = self.parse_answer(problem, trace.trace.answer)
        if not self.answer_correct(problem, claim):
            return None
        return text if self.check_chain(problem, trace.trace.steps, claim).chain_valid else None

    def sloppy_completion(self, problem: Problem) -> str | None:
        """The gold answer with every step's expression replaced by its value written as a literal: the
        numbers are right, nothing is derived (rejected: literal-only steps)."""
        steps = self.gold_steps(problem)
        if not steps:
            return None
        sloppy = [{"id": s["id"], "expr": format_number(Fraction(str(s.get("value")))) if not isinstance(
            s.get("value"), float) else repr(s.get("value")), "value": s.get("value"), "unit": s.get("unit", ""),
            **({"name": s["name"]} if s.get("name") else {})} for s in steps]
        return render_completion(problem, sloppy)

    def answer_text(self, problem: Problem) -> str:
        return answer_text(problem)

    def perturbations(self, problem: Problem, prefix: Sequence[dict[str, Any]], chosen: dict[str, Any]
                      ) -> list[tuple[str, dict[str, Any]]]:
        """Twins of the gold step `chosen` with a recomputed (so checkable) value that no gold step has:
        `wrong_operand` cites another given or earlier step of the same dimension (or swaps a primitive's
        arguments); `wrong_principle` swaps one operator (+ and -, * and /) or applies another primitive of
        the same primitive domain. Every twin has the dimension of `chosen` (the target's unit)."""
        state = QuantityState()
        givens, _, _, _ = state.problem_givens(problem)
        env: dict[str, Value] = dict(givens)
        for s in prefix:
            try:
                env[str(s["id"])] = claimed_value(self.as_step(s))
            except (QuantError, ValueError, KeyError):
                return []
        gold_values = []
        for s in list(prefix) + [chosen] + list(self.gold_steps(problem) or []):
            try:
                gold_values.append(claimed_value(self.as_step(s)))
            except (QuantError, ValueError, KeyError):
                pass
        step = self.as_step(chosen)
        variants: list[tuple[str, str | None, tuple[str, ...]]] = []
        if step.expr is not None:
            expr = state.expr(step.expr)
            if isinstance(expr, QuantError):
                return []
            for name in sorted(expr.names()):
                for other, value in env.items():
                    if other != name and other not in expr.names() and value.dims == env[name].dims:
                        variants.append(("wrong_operand", _rename(step.expr, name, other), ()))
            for a, b in (("+", "-"), ("-", "+"), ("*", "/"), ("/", "*")):
                at = _binary_at(step.expr, a)
                if at is not None:
                    variants.append(("wrong_principle", step.expr[:at] + b + step.expr[at + 1:], ()))
        elif step.op is not None:
            variants += [(kind, None, (op, args)) for kind, op, args in _primitive_variants(env, step)]
        try:
            target_dims = claimed_value(step).dims
        except (QuantError, ValueError):
            return []
        out, seen = [], set()
        for kind, text, args in variants:
            op, args = args if text is None else (None, args)
            try:
                true = compute(env, expr=text) if text is not None else compute(env, op=op, args=args)
                if true.dims != target_dims:
                    continue  # the target's unit: a twin must be a candidate answer to the same question
                shown = format_value(true, step.unit if step.unit and unit_info(step.unit).dims == true.dims
                                     else None)
            except (QuantError, ArithmeticError, ValueError, OverflowError):
                continue
            if any(_same(true, g, DEFAULT_RULES.tolerance) for g in gold_values):
                continue  # the same value as a gold step: not wrong for the problem
            number, _, unit = shown.partition(" ")
            cand = {"id": step.id, **({"expr": text} if text is not None else {"op": op, "args": list(args)}),
                    "value": _json_number(parse_number(number)), "unit": unit}
            key = json.dumps(cand, sort_keys=True)
            if key not in seen:
                seen.add(key)
                out.append((kind, cand))
        return out

    def user_prompt(self, problem: Problem) -> str:
        return user_prompt(problem)

    def few_shot_examples(self, kind: str, k: int) -> list[tuple[Problem, str]]:
        if k <= 0:
            return []
        try:
            from prosfi.data.quant_gold import few_shot_examples
        except ImportError:
            return []
        return list(few_shot_examples(k))[:k]

    def step_categories(self) -> dict[str, tuple[str, ...]]:
        return {"dimension_errors": (DIMENSION,), "grounding_failures": GROUNDING_GUARDS}

    def content_key(self, problem: Problem) -> tuple:
        answer = problem.answer if isinstance(problem.answer, dict) else {"value": problem.answer}
        return (problem.kind, problem.question.strip(),
                tuple((str(g.get("id")), str(g.get("value")), str(g.get("unit") or "")) for g in problem.givens),
                str(answer.get("value")), str(answer.get("unit") or ""))


MAX_PRIMITIVE_TWINS = 24


def _primitive_variants(env: dict[str, Value], step: QuantityStep) -> list[tuple[str, str, tuple[str, ...]]]:
    """Twins of a primitive step: `wrong_operand` puts another value of the same dimension in one argument
    (or swaps two); `wrong_principle` applies another primitive of the same primitive domain (kinematics,
    energy, ...) to the step's arguments and other values (the caller keeps those with the target's unit)."""
    import itertools

    from prosfi.quant import PRIMITIVES

    prim = PRIMITIVES.get(step.op)
    if prim is None:
        return []
    args = list(step.args)
    out: list[tuple[str, str, tuple[str, ...]]] = []
    if len(args) >= 2 and args[0] != args[1]:
        out.append(("wrong_operand", step.op, tuple([args[1], args[0]] + args[2:])))
    for i, a in enumerate(args):
        if a not in env:
            continue
        for other, value in env.items():
            if other not in args and value.dims == env[a].dims:
                out.append(("wrong_operand", step.op, tuple(args[:i] + [other] + args[i + 1:])))
    names = list(dict.fromkeys(args + list(env)))  # the step's own arguments first
    names = [n for n in names if n in env]
    for other in sorted(PRIMITIVES.values(), key=lambda p: p.name):
        if other.name == prim.name or other.domain != prim.domain or other.name == "convert":
            continue
        n = len(other.params)
        for combo in itertools.islice(itertools.permutations(names, n), MAX_PRIMITIVE_TWINS):
            out.append(("wrong_principle", other.name, tuple(combo)))
    return out


def _rename(expr: str, name: str, other: str) -> str:
    import re

    return re.sub(rf"(?<![A-Za-z0-9_]){re.escape(name)}(?![A-Za-z0-9_])", other, expr)


def _binary_at(expr: str, op: str) -> int | None:
    """The index of the first binary `op` (a single-character operator, not part of `**` or `//`, not a sign)."""
    for i, ch in enumerate(expr):
        if ch != op or expr[i - 1:i] == op or expr[i + 1:i + 2] == op:
            continue
        before = expr[:i].rstrip()
        if op in "+-" and (not before or before[-1] in "(*/+-,^"):
            continue  # a sign, not an operator
        return i
    return None


def _json_number(x: Fraction) -> int | float:
    return int(x) if x.denominator == 1 else float(x)


def _clip(s: str, n: int = 40) -> str:
    return s if len(s) <= n else s[: n - 1] + "…"


__all__ = ["ALLOWED_CONSTANTS", "DEFAULT_RULES", "DIMENSION", "GROUNDING_GUARDS", "SYSTEM_PROMPT", "QuantityAnswer",
           "QuantityChainCheck", "QuantityDomain", "QuantityRules", "QuantityState", "QuantityStep",
           "QuantityStepResult", "answer_text", "claimed_value", "matches", "parse_steps", "read_answer",
           "render_completion", "user_prompt"]
