"""The quantity chain rules (docs/quantity.md, "Chain rules"): a chain is judged by what it computes, not
by what it claims.

- Every step is recomputed exactly from the givens (the recomputed values of the steps it cites, never their
  claims); its claim is checked against its own recomputed value; a step citing a step that is not verified
  is rejected too (taint).
- Grounding is by dependence, not by reading tokens: the chain is re-evaluated under a few random joint
  re-assignments of all the givens (exact rationals; a literal read from a given moves with it). A step whose
  value never moves is a constant built from nothing, however it was laundered; a step identically equal to a
  given or an earlier step restates it, however detoured; a step that is a constant multiple of a given or an
  earlier step must have that multiple stated by the problem (`prosfi.quant.grounding.MULTIPLE_WORDS`, unit
  factors), and a constant offset must be written in the step itself.
- The answer is established once: the chain's recomputed final value against the gold, in the gold's unit,
  with the problem's one tolerance.

One chain is checked in the `ChainBatch` protocol with no prover rounds: everything is worked out in-process.
"""

from __future__ import annotations

import hashlib
import math
import random
from collections.abc import Sequence
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any

from prosfi.chain import REJECTED, ChainConfig, ChainResult, StepResult
from prosfi.data.problem import Problem
from prosfi.data.quant_gold import constant_context
from prosfi.domains.quantity.answer import QuantityAnswer, answer_tolerance, gold_value, matches
from prosfi.domains.quantity.steps import QuantityStep, claimed_value
from prosfi.quant import QuantError, Tolerance, close_enough, evaluate, parse_expr, parse_quantity
from prosfi.quant.check import compute
from prosfi.quant.evaluate import CONSTANTS
from prosfi.quant.expr import BinOp, Call, Expr, Name, Num, Unary, fraction_literals
from prosfi.quant.grounding import (ALLOWED_CONSTANTS, allowed_constant, is_licensed_multiple, is_licensed_offset,
                                    multiple_word)
from prosfi.quant.tolerance import _rel_ok
from prosfi.quant.units import Value, format_number, format_value, parse_number

# guard names carried by step results (`guard`), so eval can count dimension errors and grounding failures
DIMENSION = "dimension"
GROUNDING_GUARDS = ("grounding", "literal_only", "insensitive", "restatement", "constant", "unused_step")
TAINTED = "tainted"
MAX_BINDINGS = 8  # readings of a step's literals tried when several givens share a number
_SAME = 1e-9  # relative slack when a re-evaluation runs in floating point (sqrt, exp, trigonometry)


@dataclass(frozen=True)
class QuantityRules:
    """The quantity chain rules' knobs (defaults are the documented contract)."""

    max_ops: int = field(default=4, metadata={"help": "operations (binary operators, unary minus, function "
                                              "calls; a primitive `op` is one) one step's expression may use"})
    tolerance: Tolerance = field(default_factory=Tolerance,
                                 metadata={"help": "a step's claim against its recomputed value"})
    perturbation: Fraction = field(default=Fraction(137, 100),
                                   metadata={"help": "factor each cited value is scaled by to test it matters"})
    trials: int = field(default=4, metadata={"help": "random joint re-assignments of the givens the chain is "
                                             "re-evaluated under (grounding by dependence); 0 turns it off"})

    def __post_init__(self):
        if not isinstance(self.max_ops, int) or self.max_ops < 0:
            raise ValueError(f"QuantityRules.max_ops must be an int >= 0, got {self.max_ops!r}")
        if not isinstance(self.trials, int) or not 0 <= self.trials <= 16:
            raise ValueError(f"QuantityRules.trials must be an int in 0..16, got {self.trials!r}")


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


def _equal(a: Any, b: Any) -> bool:
    """Two re-evaluated magnitudes are the same function value: exactly, or within float noise."""
    if a == b:
        return True
    try:
        x, y = float(a), float(b)
    except (OverflowError, TypeError):
        return False
    return math.isfinite(x) and abs(x - y) <= _SAME * max(abs(x), abs(y))


# ------------------------------------------------------------------------------------------ per problem
@dataclass
class _Givens:
    problem: Problem
    values: dict[str, Value]
    numbers: dict[Fraction, tuple[str, ...]]  # a number as written or its value -> the givens stating it
    bad: dict[str, str]
    context: str
    trials: list[dict[str, Value]]  # the givens re-assigned, one mapping per trial


class QuantityState:
    """Per-batch memo: givens and their re-assignments per problem, parsed expressions, whole-chain step
    results (a GRPO group repeats chains)."""

    def __init__(self) -> None:
        self.givens: dict[int, _Givens] = {}
        self.outcomes: dict[tuple, Any] = {}
        self.exprs: dict[str, Any] = {}

    def of(self, problem: Problem, trials: int = DEFAULT_RULES.trials) -> _Givens:
        hit = self.givens.get(id(problem))
        if hit is None or hit.problem is not problem or len(hit.trials) != trials:
            values, numbers, bad = {}, {}, {}
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
                for x in _given_numbers(v, str(g.get("value"))):
                    numbers[x] = numbers.get(x, ()) + (gid,)
            hit = self.givens[id(problem)] = _Givens(problem, values, numbers, bad, constant_context(problem),
                                                     _reassign(problem, values, trials))
        return hit

    def problem_givens(self, problem: Problem) -> tuple[dict[str, Value], frozenset, dict[str, str], str]:
        """(given id -> Value, the givens' written numbers, given id -> why it does not read, the problem's
        text that unit-factor constants must find their context in)."""
        g = self.of(problem)
        return g.values, frozenset(g.numbers), g.bad, g.context

    def expr(self, text: str):
        hit = self.exprs.get(text)
        if hit is None:
            try:
                hit = parse_expr(_group_fractions(text))
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


def _reassign(problem: Problem, values: dict[str, Value], n: int) -> list[dict[str, Value]]:
    """`n` joint re-assignments of the givens: each scaled by its own random factor in [1/3, 3] (log-uniform; a
    zero given becomes the factor itself), seeded by the problem so scores are reproducible. Floating point:
    identities are read within `_SAME` (random points make a false identity vanishingly unlikely)."""
    seed = hashlib.sha256(f"{problem.id}\x00{problem.question}".encode()).digest()
    rng = random.Random(int.from_bytes(seed[:8], "big"))
    out = []
    for _ in range(n):
        trial = {}
        for gid, v in values.items():
            f = 3 ** rng.uniform(-1, 1)
            try:
                mag = float(v.mag) * f if v.mag != 0 else f
            except OverflowError:
                mag = float("inf")
            trial[gid] = Value(mag, v.dims, v.unit)
        out.append(trial)
    return out


def _group_fractions(text: str) -> str:
    """`15*3/5` -> `15*(3/5)` for every literal pair that denotes a fraction wherever it stands (same value),
    so the pair is one node a given "three-fifths" can be read into."""
    pairs = fraction_literals(text)
    if not pairs:
        return text
    import re

    for pair, _ in pairs:
        a, b = pair.split("/")
        text = re.sub(rf"(?<![\w.]){re.escape(a)}\s*/\s*{re.escape(b)}(?![\w.])", f"({a}/{b})", text, count=1)
    return text


def _ops(expr: Expr) -> int:
    return sum(1 for n in expr.walk() if isinstance(n, (BinOp, Unary, Call)))


def _scaled(v: Value, factor: Fraction) -> Value:
    if v.mag == 0:
        return Value(Fraction(1) if isinstance(v.mag, Fraction) else 1.0, v.dims, v.unit)
    mag = v.mag * factor if isinstance(v.mag, Fraction) else v.mag * float(factor)
    return Value(mag, v.dims, v.unit)


# ------------------------------------------------------------------------------------------ the chain
@dataclass
class _Step:
    """What the chain knows of one step once checked: its result and, when valid, its values."""

    result: QuantityStepResult
    value: Value | None = None  # recomputed from the givens
    trials: tuple[Value | None, ...] = ()  # re-evaluated under each re-assignment


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
        g = self.state.of(self.problem, self.rules.trials)
        key = ("chain", id(self.problem), self.steps, self.rules, self.config.max_steps,
               self.config.max_dependencies)
        checked = self.state.outcomes.get(key)
        if checked is None or checked[0] is not self.problem:
            checked = self.state.outcomes[key] = (self.problem, self._check_steps(g))
        checked = checked[1]
        results = [c.result for c in checked]
        verified = [r.verified for r in results]
        all_verified = all(verified) and len(results) >= self.config.min_steps
        established, why = self._established(checked)
        reason = ""
        if len(results) < self.config.min_steps:
            reason = f"{len(results)} step(s) given; min_steps is {self.config.min_steps}"
        elif not all(verified):
            bad = next(r for r in results if not r.verified)
            reason = f"step {bad.id} {bad.verdict}" + (f": {bad.reason}" if bad.reason else "")
        elif not established:
            reason = why
        credited = sum(verified) if established else 0
        return ChainResult(tuple(results), all_verified, established, reason, credited=credited)

    # ------------------------------------------------------------------ the steps
    def _check_steps(self, g: _Givens) -> list[_Step]:
        index = {s.id: i for i, s in enumerate(self.steps)}
        checked: list[_Step] = []
        for i, step in enumerate(self.steps):
            # a step's outcome is a function of the chain up to it: a GRPO group shares prefixes
            key = ("prefix", id(self.problem), self.steps[:i + 1], self.rules, self.config.max_steps,
                   self.config.max_dependencies)
            hit = self.state.outcomes.get(key)
            if hit is None or hit[0] is not self.problem:
                hit = self.state.outcomes[key] = (self.problem, self._step(i, step, index, g, checked))
            checked.append(hit[1])
        if checked:  # every step on the dependency path of the last one
            needed = self._ancestors(len(self.steps) - 1, index)
            for i, c in enumerate(checked):
                if i not in needed and c.result.verified:
                    checked[i] = _Step(QuantityStepResult(
                        c.result.id, REJECTED, "unused step (every step is used): not on the path to the last "
                        "step, whose value is the answer", backend="quant", guard="unused_step"))
        return checked

    def _ancestors(self, last: int, index: dict[str, int]) -> set[int]:
        seen, todo = {last}, [last]
        while todo:
            i = todo.pop()
            for ref in self._refs(self.steps[i], index):
                j = index.get(ref)
                if j is not None and j < i and j not in seen:
                    seen.add(j)
                    todo.append(j)
        return seen

    def _refs(self, step: QuantityStep, index: dict[str, int]) -> list[str]:
        """The ids a step cites: names of its expression other than the constants `pi` and `e` (a given or
        step of that name wins), or a primitive's arguments (a conversion's target unit is no id)."""
        g = self.state.of(self.problem, self.rules.trials)
        if step.expr is not None:
            e = self.state.expr(step.expr)
            if isinstance(e, QuantError):
                return []
            return sorted(n for n in e.names() if n not in CONSTANTS or n in g.values or n in g.bad or n in index)
        refs = list(step.args)
        if step.op == "convert" and refs and refs[-1] not in g.values and refs[-1] not in index:
            refs = refs[:-1]
        return refs

    def _step(self, i: int, step: QuantityStep, index: dict[str, int], g: _Givens,
              earlier: list[_Step]) -> _Step:
        cfg, rules = self.config, self.rules

        def res(verdict, reason, guard=""):
            return _Step(QuantityStepResult(step.id, verdict, reason[:300], backend="quant", guard=guard))

        if i >= cfg.max_steps:
            return res(REJECTED, f"beyond max_steps ({cfg.max_steps})")
        expr = None
        if step.expr is not None:
            expr = self.state.expr(step.expr)
            if isinstance(expr, QuantError):
                return res("unknown" if expr.kind == "bound" else "error", f"expression: {expr}")
            ops = _ops(expr)
        else:
            ops = 1
        refs = self._refs(step, index)
        for d in refs:
            if d in g.values:
                continue
            if d in g.bad:
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
        bindings, choices, why = self._literals(expr, g, set(refs))
        if why:
            return res(REJECTED, why, "grounding")
        for d in refs:  # taint: a step is only as good as what it is built on
            j = index.get(d)
            if j is not None and d not in g.values and not earlier[j].result.verified:
                return res(REJECTED, f"built on {d}, which is not verified", TAINTED)
        env = {d: (g.values[d] if d in g.values else earlier[index[d]].value) for d in refs}
        try:
            claim = claimed_value(step)
        except QuantError as exc:
            return res("unknown" if exc.kind == "bound" else "error", f"value/unit: {exc}")
        try:
            true = self._compute(step, expr, env, bindings[0][0] if bindings else None)
        except QuantError as exc:
            if exc.kind == "dimension":
                return res("invalid", f"dimension error inside the expression: {exc}", DIMENSION)
            if exc.kind == "bound":
                return res("unknown", f"bound: {exc}")
            if exc.kind == "math":
                return res("invalid", f"math error: {exc}")
            return res("error", f"expression: {exc}")
        except (ArithmeticError, ValueError, OverflowError) as exc:
            return res("invalid", f"math error: {exc!r}")
        ok, why = close_enough(true, claim, rules.tolerance)
        if not ok:
            return res("invalid", why, DIMENSION if why.startswith("wrong unit") else "")
        for d in refs:  # every cited value must matter (locally: the step's own expression)
            try:
                moved = self._compute(step, expr, {**env, d: _scaled(env[d], rules.perturbation)},
                                      bindings[0][0] if bindings else None)
            except (QuantError, ArithmeticError, ValueError, OverflowError):
                continue  # the result depends on it (it breaks without it)
            if _same(true, moved, rules.tolerance):
                return res(REJECTED, f"does not depend on {d} (grounding): the value stays {format_value(true)} "
                           f"whatever {d} is", "insensitive")
        why = self._repeated_terms(step, expr, g)
        if why:
            return res(REJECTED, why, "grounding")
        trials: tuple[Value | None, ...] = ()
        if rules.trials:
            # every reading of the literals is tried: where a 0 or 1 could be the identity, each must pass
            # (`g1 * 1` restates g1 even though g4 = 1); otherwise one honest reading suffices
            strict = any(value in (0, 1) and len(owners) > 1 for _, value, owners in choices)
            flags = []
            for literals, trial_literals in bindings or [(None, [None] * rules.trials)]:
                values = self._trial_values(step, expr, refs, g, index, earlier, trial_literals)
                why, guard = self._dependence(i, step, expr, true, values, g, earlier)
                if why:
                    if strict:
                        return res(REJECTED, why, guard)
                    flags.append((why, guard))
                elif not trials:
                    trials = values
            if not trials:
                return res(REJECTED, *flags[0])
        return _Step(QuantityStepResult(step.id, "valid", "", backend="quant"), true, trials)

    def _compute(self, step: QuantityStep, expr: Expr | None, env: dict[str, Value],
                 literals: dict[int, Value] | None) -> Value:
        if expr is not None:
            return evaluate(expr, env, literals)
        return compute(env, op=step.op, args=step.args)

    # ------------------------------------------------------------------ literals
    def _literals(self, expr: Expr | None, g: _Givens, cited: set[str]) -> tuple[list, list, str]:
        """Check that every literal is grounded, and read each given's number into the given it states:
        [(literal node -> base Value, [literal node -> Value in trial t, ...]), ...], one entry per reading
        when several givens share a number (the chain must pass under every reading: never guess). A literal
        is not read as a given the step also cites by id (`g1 / 2` with g1 = 2 halves g1)."""
        if expr is None:
            return [], [], ""

        def owners_of(value: Fraction) -> tuple[str, ...]:
            return tuple(o for o in g.numbers.get(value, ()) if o not in cited)

        choices: list[tuple[int, Fraction, tuple[str, ...]]] = []
        inside_pair: set[int] = set()
        for node in expr.walk():
            if isinstance(node, BinOp) and node.op == "/" and isinstance(node.left, Num) and \
                    isinstance(node.right, Num) and node.right.value != 0:
                value = node.left.value / node.right.value
                owners = owners_of(value)
                if owners:  # `3/5` for "three-fifths": the pair is the given, its parts are not
                    choices.append((id(node), value, owners))
                    inside_pair.update((id(node.left), id(node.right)))
        for node in expr.walk():
            if not isinstance(node, Num) or id(node) in inside_pair:
                continue
            owners = owners_of(node.value)
            if owners:
                # a listed constant written where a given has the same number is read both ways ("" = the constant)
                constant = node.value in (0, 1) or allowed_constant(node.value, g.context) is not None
                # the constant first: where it passes, later steps are re-evaluated with it (the stricter reading)
                choices.append((id(node), node.value, (("",) if constant else ()) + owners))
            elif allowed_constant(node.value, g.context) is None:
                why = ("a unit factor the problem gives no context for" if node.value in ALLOWED_CONSTANTS
                       else "not a given's number nor a listed constant")
                return [], [], f"ungrounded literal {format_number(node.value)} (grounding): {why}"
        if not choices:
            return [], [], ""
        readings: list[list[tuple[int, Fraction, str]]] = [[]]
        for nid, value, owners in choices:
            readings = [r + [(nid, value, o)] for r in readings for o in owners][:MAX_BINDINGS]
        out = []
        for reading in readings:
            base = {nid: Value(value) for nid, value, _ in reading}
            per_trial = []
            for trial in g.trials:  # a literal read from a given moves with it; the constant reading ("") does not
                per_trial.append({nid: Value(_moved(value, g.values[o].mag, trial[o].mag) if o else value)
                                  for nid, value, o in reading})
            out.append((base, per_trial))
        return out, choices, ""

    def _repeated_terms(self, step: QuantityStep, expr: Expr | None, g: _Givens) -> str:
        """A value added to itself in one step (`g1 + g1 + g1`, `sum(g1, g1, g1)`) is a count: it must be
        stated (`MULTIPLE_WORDS`)."""
        if expr is not None:
            terms: dict[tuple[str, int], int] = {}
            for name, sign in _additive_names(expr):
                terms[(name, sign)] = terms.get((name, sign), 0) + 1
            counts = [(name, k) for (name, _), k in terms.items() if k > 1]
        else:
            counts = [(a, step.args.count(a)) for a in dict.fromkeys(step.args) if step.args.count(a) > 1]
        for name, k in counts:
            if not is_licensed_multiple(k, g.context):
                return (f"adds {name} {k} times (grounding): a count of {k} the problem does not state"
                        + (f" (say {multiple_word(Fraction(k))})" if multiple_word(Fraction(k)) else ""))
        return ""

    # ------------------------------------------------------------------ dependence
    def _trial_values(self, step, expr, refs, g: _Givens, index, earlier, trial_literals) -> tuple:
        out = []
        for t, trial in enumerate(g.trials):
            try:
                env = {d: (trial[d] if d in g.values else earlier[index[d]].trials[t]) for d in refs}
                if any(v is None for v in env.values()):
                    out.append(None)
                    continue
                out.append(self._compute(step, expr, env, trial_literals[t]))
            except (QuantError, ArithmeticError, ValueError, OverflowError, IndexError, TypeError):
                out.append(None)
        return tuple(out)

    def _dependence(self, i: int, step: QuantityStep, expr: Expr | None, true: Value,
                    trials: tuple[Value | None, ...], g: _Givens, earlier: list[_Step]) -> tuple[str, str]:
        """Constant, restatement or an unstated multiple, read off the step's values under the trials."""
        live = [t for t, v in enumerate(trials) if v is not None]
        if len(live) < 2:
            return "", ""  # the re-evaluations broke (a domain error): the value moves with the givens
        if all(trials[t].dims == true.dims and _equal(trials[t].mag, true.mag) for t in live):
            return (f"constant (grounding): {step.id} is {format_value(true)} whatever the givens are, a number "
                    "built from none of them", "constant")
        others: list[tuple[str, Value, tuple]] = [(gid, v, tuple(tr[gid] for tr in g.trials))
                                                   for gid, v in g.values.items()]
        others += [(self.steps[j].id, c.value, c.trials) for j, c in enumerate(earlier)
                   if c.value is not None and c.trials]
        for name, base, values in others:
            if base.dims == true.dims and _equal(base.mag, true.mag) and \
                    all(values[t] is not None and values[t].dims == true.dims and _equal(values[t].mag,
                                                                                     trials[t].mag) for t in live):
                return (f"restates {name} (grounding): {step.id} equals {name} whatever the givens are",
                        "restatement")
        index = {s.id: k for k, s in enumerate(self.steps)}
        refs = sorted(set(self._refs(step, index)))
        has_pi = expr is not None and bool(expr.names() & set(CONSTANTS))
        written = {n.value for n in expr.walk() if isinstance(n, Num)} if expr is not None else set()
        by_name = {n: (b, v) for n, b, v in others}
        # a step of one input is a + b x of it, or of the input's own one input, and so on back: the multiple
        # and the offset accumulated along that path must be stated (two `+ 1` steps add a 2 nobody wrote)
        depth = 0
        while len(refs) == 1 and refs[0] in by_name and depth < 8:
            name = refs[0]
            base, values = by_name[name]
            fit = _affine(base, values, true, trials, live)
            if fit is None:
                return "", ""  # not a + b x of it (a square, a root, a floor): no hidden count
            slope, offset = fit
            if not _equal(abs(slope), 1) and not _licensed(slope, g.context, has_pi):
                near = Fraction(slope).limit_denominator(1000)
                word = multiple_word(near) if _equal(float(near), slope) else ""
                return (f"{step.id} is {_show(slope)} × {name} (grounding): a multiple the problem does not "
                        "state" + (f" (say {word})" if word else ""), "grounding")
            if offset and (not is_licensed_offset(abs(offset), g.context) or
                           (depth == 0 and not any(_equal(abs(offset), w) for w in written))):
                return (f"{step.id} is {name} {'+' if offset > 0 else '-'} {_show(abs(offset))} (grounding): an "
                        "offset the problem does not state", "grounding")
            j = index.get(name)
            if j is None or j >= len(earlier):
                break
            refs = sorted(set(self._refs(self.steps[j], index)))
            depth += 1
        return "", ""

    # ------------------------------------------------------------------ the answer
    def _established(self, checked: list[_Step]) -> tuple[bool, str]:
        if not self.claim.ok:
            return False, "no readable answer to establish"
        if not self.establish:
            return False, "answer not checked against the chain (known to be wrong)"
        if not checked:
            return False, "no steps: the answer must be the value of the last step"
        last = checked[-1]
        if not last.result.verified or last.value is None:
            return False, f"the last step {last.result.id} is not verified, so nothing establishes the answer"
        tol = answer_tolerance(self.problem)
        gold = gold_value(self.problem)
        if gold is not None:
            ok, why = close_enough(gold, last.value, tol)
            if not ok:
                return False, (f"answer: the last step {last.result.id} computes {format_value(last.value)}, "
                               f"not the answer ({why})")
            return True, ""
        ok, why = matches(last.value, self.steps[-1].unit, self.claim, tol)
        if not ok:
            return False, f"answer: the answer is not the value of the last step {last.result.id} ({why})"
        return True, ""


def _moved(literal: Fraction, given: Any, moved: Any) -> Any:
    """A literal read from a given, in a trial where the given moved from `given` to `moved`."""
    if given == 0:
        return float(literal) + float(moved)
    return float(literal) * float(moved) / float(given)


def _affine(base: Value, values: tuple, true: Value, trials: tuple, live: list[int]
            ) -> tuple[float, float | None] | None:
    """(a, b) when the step is a + b-free line a * x + b of its one input x on every trial (b None when the
    dimensions differ, so only a scale is possible), else None."""
    pts = [(base.mag, true.mag)] + [(values[t].mag, trials[t].mag) for t in live if values[t] is not None]
    try:
        pts = [(float(x), float(y)) for x, y in pts]
    except (OverflowError, TypeError):
        return None
    if len(pts) < 3 or pts[1][0] == pts[0][0]:
        return None
    (x0, y0), (x1, y1) = pts[0], pts[1]
    slope = (y1 - y0) / (x1 - x0)
    offset = y0 - slope * x0
    scale = max(abs(y) for _, y in pts) or 1.0
    if not all(abs(slope * x + offset - y) <= 1e-7 * scale for x, y in pts[2:]):
        return None
    if abs(offset) <= 1e-9 * scale:
        offset = 0.0
    if base.dims != true.dims:
        return (slope, None) if offset == 0.0 else None
    return slope, offset


def _ratio(a: Any, b: Any) -> float | None:
    try:
        return float(a) / float(b)
    except (ZeroDivisionError, OverflowError):
        return None


def _diff(a: Any, b: Any) -> float | None:
    try:
        return float(a) - float(b)
    except OverflowError:
        return None


def _licensed(ratio: float, context: str, has_pi: bool) -> bool:
    """Is a constant ratio stated: -1 (a sign), a licensed multiple, or with `pi`/`e` in the step a formula's
    constant (2π, π/4, e²: a licensed multiple or one of 2, 4 and their reciprocals times π^k or e^k)."""
    if _equal(ratio, -1) or is_licensed_multiple(ratio, context):
        return True
    if not has_pi:
        return False
    for c in CONSTANTS.values():
        for k in (-2, -1, 1, 2):
            m = abs(ratio) / c ** k
            if any(_equal(m, f) for f in (1.0, 2.0, 0.5, 4.0, 0.25)) or is_licensed_multiple(m, context):
                return True
    return False


def _show(x: Any) -> str:
    return format_number(x) if isinstance(x, Fraction) else f"{x:.6g}"


def _additive_names(expr: Expr) -> list[tuple[str, int]]:
    """The bare names among the terms of an expression's top-level sum, with their signs."""
    out: list[tuple[str, int]] = []
    todo: list[tuple[Expr, int]] = [(expr, 1)]
    while todo:
        node, sign = todo.pop()
        if isinstance(node, BinOp) and node.op in "+-" and len(node.op) == 1:
            todo.append((node.left, sign))
            todo.append((node.right, sign if node.op == "+" else -sign))
        elif isinstance(node, Unary):
            todo.append((node.operand, sign if node.op == "+" else -sign))
        elif isinstance(node, Call) and node.func == "sum":  # pragma: no cover - not in the grammar
            todo.extend((a, sign) for a in node.args)
        elif isinstance(node, Name):
            out.append((node.id, sign))
    return out


__all__ = ["DEFAULT_RULES", "DIMENSION", "GROUNDING_GUARDS", "TAINTED", "QuantityChainCheck", "QuantityRules",
           "QuantityState", "QuantityStepResult"]
