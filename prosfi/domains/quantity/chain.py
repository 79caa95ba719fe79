"""The quantity chain rules (docs/quantity.md, "Chain rules (grounding)"): one chain against its problem
and claimed answer, in the `ChainBatch` protocol (no prover rounds: everything is worked out in-process)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any

from prosfi.chain import REJECTED, ChainConfig, ChainResult, StepResult
from prosfi.data.problem import Problem
from prosfi.data.quant_gold import constant_context
from prosfi.domains.quantity.answer import QuantityAnswer, answer_tolerance, matches
from prosfi.domains.quantity.steps import QuantityStep, claimed_value
from prosfi.quant import QuantError, Tolerance, close_enough, evaluate, parse_expr, parse_quantity
from prosfi.quant.check import compute
from prosfi.quant.expr import BinOp, Call, Unary, fraction_literals
from prosfi.quant.grounding import ALLOWED_CONSTANTS, allowed_constant
from prosfi.quant.tolerance import _rel_ok
from prosfi.quant.units import Value, format_number, format_value, parse_number

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
class QuantityStepResult(StepResult):
    guard: str = ""  # which rule decided a non-valid verdict ("dimension", "grounding", ...), else ""

    def to_json(self) -> dict:
        out = super().to_json()
        if self.guard:
            out["guard"] = self.guard
        return out


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
