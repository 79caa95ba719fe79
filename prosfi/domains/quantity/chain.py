"""The quantity chain rules (docs/quantity.md, "Chain rules"): a chain is judged by what it computes, not
by what it claims.

- Every step is recomputed exactly from the givens (the recomputed values of the steps it cites, never their
  claims); its claim is checked against its own recomputed value; a step citing a step that is not verified
  is rejected too (taint).
- Grounding is by dependence, not by reading tokens: the chain is re-evaluated under a few random joint
  re-assignments of all the givens (exact rationals; a literal read from a given moves with it). A step whose
  value never moves is a constant built from nothing, however it was laundered; a step identically equal to a
  given or an earlier step restates it, however detoured; a step that is a constant multiple of a given or an
  earlier step must have that multiple stated by the problem (`prosfi.quant.licensed.MULTIPLE_WORDS`, unit
  factors), and a constant offset must be written in the step itself.
- The answer is established once: the chain's recomputed final value against the gold, in the gold's unit,
  with the problem's one tolerance.

One chain is checked in the `ChainBatch` protocol with no prover rounds: everything is worked out in-process.
"""

from __future__ import annotations

import hashlib
import math
import random
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any

from prosfi.chain import REJECTED, ChainConfig, ChainResult, StepResult
from prosfi.chain.config import register_settings_check
from prosfi.data.problem import Problem
from prosfi.data.quant_gold import constant_context
from prosfi.domains.quantity.composite import (Algebra, Collapse, Composite, Symbols, TooLarge, compose_expr,
                                               compose_op, reciprocal_symbol, shifted_symbol, symbol)
from prosfi.domains.quantity.opaque import asked, licence
from prosfi.domains.quantity.reference import build as build_reference
from prosfi.domains.quantity.reference import points as reference_points
from prosfi.domains.quantity.answer import (QuantityAnswer, answer_tolerance, as_written, gold_value, matches,
                                            plain_gold)
from prosfi.domains.quantity.steps import QuantityStep, claimed_value
from prosfi.quant import QuantError, Tolerance, close_enough, evaluate, parse_expr, parse_quantity
from prosfi.quant.check import compute
from prosfi.quant.evaluate import CONSTANTS
from prosfi.quant.expr import BinOp, Call, Expr, Name, Num, Unary, group_fractions
from prosfi.quant.licensed import (ALLOWED_CONSTANTS, allowed_constant, is_licensed_multiple, is_licensed_offset,
                                    mentions_word, multiple_word)
from prosfi.quant.tolerance import relative_ok
from prosfi.quant.units import Value, format_number, format_value, parse_number, unit_info

# guard names carried by step results (`guard`), so eval can count dimension errors and grounding failures
DIMENSION = "dimension"
GROUNDING_GUARDS = ("grounding", "literal_only", "insensitive", "restatement", "constant", "unused_step", "collapse",
                    "merge", "opaque")
TAINTED = "tainted"
MAX_BINDINGS = 8  # readings of a step's literals tried when several givens share a number
_SAME = 1e-9  # relative slack when a re-evaluation runs in floating point (sqrt, exp, trigonometry)


# The named rules (docs/quantity.md, "Chain rules"), each switchable alone for ablations (`QuantityRules.off`).
# Citations, recomputation, taint and the answer's check are the contract itself and cannot be switched off.
RULE_NAMES = ("grounding", "structure", "insensitive", "dependence", "unused", "collapse", "merge", "restatement",
              "opaque", "reference")


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
    off: frozenset = field(default=frozenset(), metadata={
        "help": "named rules switched off, for ablations (docs/quantity.md, \"Chain rules\"): any of "
                + ", ".join(RULE_NAMES)})
    reference: str = field(default="auto", metadata={
        "help": "the reference function (rule `reference`): `auto` judges the answer's composite against the "
                "problem's reference solution where it carries a trustworthy one (generated physics and "
                "GSM-Symbolic chains, a GSM8K solution whose equations hold); `off` never"})

    def __post_init__(self):
        off = self.off
        if isinstance(off, str):
            off = [x.strip() for x in off.split(",") if x.strip()]
        try:
            off = frozenset(off)
        except TypeError:
            raise ValueError(f"QuantityRules.off must be rule names, got {self.off!r}") from None
        unknown = sorted(str(x) for x in off if x not in RULE_NAMES)
        if unknown:
            raise ValueError(f"QuantityRules.off: unknown rule {', '.join(unknown)} (rules: {', '.join(RULE_NAMES)})")
        object.__setattr__(self, "off", off)
        if self.reference not in ("auto", "off"):
            raise ValueError(f"QuantityRules.reference must be 'auto' or 'off', got {self.reference!r}")
        if not isinstance(self.max_ops, int) or self.max_ops < 0:
            raise ValueError(f"QuantityRules.max_ops must be an int >= 0, got {self.max_ops!r}")
        if not isinstance(self.trials, int) or not 0 <= self.trials <= 16:
            raise ValueError(f"QuantityRules.trials must be an int in 0..16, got {self.trials!r}")


DEFAULT_RULES = QuantityRules()


def _check_settings(config: ChainConfig) -> None:
    """ChainConfig's quantity_* keys, judged by these rules once when the config is built."""
    config.quantity_rules(DEFAULT_RULES)


register_settings_check(_check_settings)


@dataclass(frozen=True)
class QuantityStepResult(StepResult):
    guard: str = ""  # which rule decided a non-valid verdict ("dimension", "grounding", ...), else ""

    def to_json(self) -> dict:
        out = super().to_json()
        if self.guard:
            out["guard"] = self.guard
        return out


def same_value(a: Value, b: Value, tol: Tolerance) -> bool:
    """`close_enough` without building a reason (the guards compare many values that differ): exact
    equality first, then the relative tolerance in floating point."""
    if a.dims != b.dims:
        return False
    if a.mag == b.mag:
        return True
    try:
        x, y = float(a.mag), float(b.mag)
    except OverflowError:
        return relative_ok(a.mag, b.mag, tol)
    return abs(x - y) <= tol.rel * max(abs(x), tol.abs_eps)


def _equal(a: Any, b: Any, floor: float = 0.0) -> bool:
    """Two re-evaluated magnitudes are the same function value: exactly, or within float noise (relative, plus
    an absolute `floor` for values that should be 0: `sin(pi * 3)` is 1e-16)."""
    if a == b:
        return True
    try:
        x, y = float(a), float(b)
    except (OverflowError, TypeError):
        return False
    return math.isfinite(x) and abs(x - y) <= _SAME * max(abs(x), abs(y)) + floor


# ------------------------------------------------------------------------------------------ per problem
@dataclass
class _Givens:
    problem: Problem
    values: dict[str, Value]
    numbers: dict[Fraction, tuple[str, ...]]  # a number as written or its value -> the givens stating it
    fractions: dict[Fraction, tuple[str, ...]]  # the value of a fraction or percentage given (0 < x < 1) -> it
    bad: dict[str, str]
    context: str
    trials: list[dict[str, Value]]  # the givens re-assigned, one mapping per trial
    syms: Symbols = None  # the composites' symbol table (docs/quantity.md, "Composites")
    comps: dict = None  # given id -> its composite (one symbol)
    reference: Any = False  # the reference function (prosfi.domains.quantity.reference), built on first use
    points: list = field(default_factory=list)  # the exact re-assignments the reference is compared at


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
            fractions: dict[Fraction, tuple[str, ...]] = {}
            for gid, v in values.items():
                if v.dimensionless and isinstance(v.mag, Fraction) and 0 < v.mag < 1:
                    fractions[v.mag] = fractions.get(v.mag, ()) + (gid,)
            syms = Symbols(_seed(problem))
            comps = {gid: symbol(syms.of(("given", gid), gid, "given")) for gid in values}
            hit = self.givens[id(problem)] = _Givens(problem, values, numbers, fractions, bad,
                                                     constant_context(problem), _reassign(problem, values, trials),
                                                     syms, comps)
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
                hit = parse_expr(group_fractions(text))
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


def _seed(problem: Problem) -> int:
    seed = hashlib.sha256(f"{problem.id}\x00{problem.question}".encode()).digest()
    return int.from_bytes(seed[:8], "big")


def _reassign(problem: Problem, values: dict[str, Value], n: int) -> list[dict[str, Value]]:
    """`n` joint re-assignments of the givens, seeded by the problem so scores are reproducible. Each given
    moves on its own grid: an integer to another integer, a number with d decimals to another with d decimals
    (so `g % 1`, `round(g)`, `sin(pi * g)` are as constant as they are at the given numbers: a zero that
    moves only off the grid is no zero); half the trials stay near (within ±25 %), half go wide (x 1/3 to 3),
    so an honest domain (`sqrt(g1 - g2)` with g1 > g2) mostly survives. Floating point: identities are read
    within `_SAME` (random points make a false identity vanishingly unlikely)."""
    rng = random.Random(_seed(problem))
    written = {str(g.get("id", "")): str(g.get("value", "")) for g in problem.givens}
    out = []
    for k in range(n):
        joint = k % 2 == 0  # near trials scale every given by one factor (orders and ratios survive: a ladder's
        spread = 1.25 if joint else 3.0  # sqrt(25**2 - 24**2)); wide ones move each given on its own
        shared = spread ** rng.uniform(-1, 1)
        trial = {}
        for gid, v in values.items():
            trial[gid] = _moved_given(v, written.get(gid, ""), spread, rng, shared if joint else None)
        out.append(trial)
    return out


def _moved_given(v: Value, written: str, spread: float, rng: random.Random, factor: float | None = None) -> Value:
    try:
        shown = float(v.magnitude_in())
        scale = float(v.mag) / shown if shown else 1.0
    except (QuantError, OverflowError, ZeroDivisionError, TypeError):
        shown, scale = float(v.mag), 1.0
    text = written.strip().lstrip("$").rstrip("%").replace(",", "")
    decimals = len(text.split(".", 1)[1]) if "." in text and text.replace(".", "", 1).isdigit() else None
    if decimals is None and isinstance(v.mag, Fraction) and Fraction(shown).denominator == 1 and text.isdigit():
        decimals = 0
    f = factor if factor is not None else spread ** rng.uniform(-1, 1)
    x = shown * f if shown else f
    if decimals is not None:  # on the given's grid, and never the given itself (1 kg must move too)
        step = 10.0 ** -decimals
        x = round(x / step) * step
        if (x == shown or x == 0) and factor is None:
            x = shown + step * rng.choice((-1, 1)) * rng.randint(1, 3)
            if x <= 0 < shown or x == 0:
                x = shown + step * rng.randint(1, 3)
    if x == shown or x == 0:  # a joint factor too small to move this one: one grid step its way
        step = 10.0 ** -decimals if decimals is not None else abs(shown or 1.0) * 0.1
        x = shown + step if factor is None or factor >= 1 or shown - step <= 0 < shown else shown - step
    return Value(x * scale, v.dims, v.unit)


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
    comp: Composite | None = None  # its composite (None: not built, the rules that need it are off)
    merges: tuple = ()  # like terms merged into an unstated multiple (Merge), a given a count cancels (its reason,
    # a str): each forgiven only where the chain computes the reference function
    reading: tuple = ()  # how its literals were read: (node id, number, owner) per literal read as a given


class QuantityChainCheck:
    """One quantity chain against its problem and claimed answer, in the `ChainBatch` protocol (no
    prover rounds: everything is worked out in-process in `finish`)."""

    def __init__(self, problem: Problem, steps: Sequence[QuantityStep], claim: QuantityAnswer,
                 config: ChainConfig, state: QuantityState, establish: bool = True,
                 rules: QuantityRules | None = None) -> None:
        self.problem, self.steps, self.claim, self.config = problem, tuple(steps), claim, config
        self.state, self.establish = state, establish
        reader = getattr(config, "quantity_rules", None)  # ChainConfig's quantity_* keys (recipes, CLI flags)
        self.rules = rules or (reader(DEFAULT_RULES) if callable(reader) else None) or DEFAULT_RULES

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
        checked = list(checked[1])
        established, why, by_reference = self._established(checked)
        for k, c in enumerate(checked):  # like terms merged into a multiple no word states, a count that cancels a
            if c.merges and c.result.verified and not by_reference:  # given: only the reference's own
                m = c.merges[0]
                if isinstance(m, str):
                    why, guard = f"collapses (composite): {m}", "collapse"
                else:
                    why, guard = (f"merges like terms (composite): {m.term} counted {_show(m.multiple)} times, a "
                                  "multiple the problem does not state"), "merge"
                checked[k] = _Step(QuantityStepResult(c.result.id, REJECTED, why, backend="quant", guard=guard))
        results = [c.result for c in checked]
        verified = [r.verified for r in results]
        all_verified = all(verified) and len(results) >= self.config.min_steps
        reason = ""
        if len(results) < self.config.min_steps:
            reason = f"{len(results)} step(s) given; min_steps is {self.config.min_steps}"
        elif not all(verified):
            bad = next(r for r in results if not r.verified)
            reason = f"step {bad.id} {bad.verdict}" + (f": {bad.reason}" if bad.reason else "")
        elif not established:
            reason = why
        credited = sum(verified) if established and all_verified else 0
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
        if checked and "unused" not in self.rules.off:  # every step on the dependency path of the last one
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
        if why and "grounding" not in rules.off:
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
        if not ok and not _rounded(true, claim, step):
            return res("invalid", why, DIMENSION if why.startswith("wrong unit") else "")
        for d in (refs if "insensitive" not in rules.off else ()):  # every cited value must matter (locally)
            unmoved = True
            for factor in (rules.perturbation, Fraction(7, 10), Fraction(5, 2), Fraction(2, 5)):
                try:
                    moved = self._compute(step, expr, {**env, d: _scaled(env[d], factor)},
                                          bindings[0][0] if bindings else None)
                except (QuantError, ArithmeticError, ValueError, OverflowError):
                    unmoved = False  # the result depends on it (it breaks without it)
                    break
                if not same_value(true, moved, rules.tolerance):
                    unmoved = False  # floor(a / b) moves with b, if not at every factor
                    break
            if unmoved:
                return res(REJECTED, f"does not depend on {d} (grounding): the value stays {format_value(true)} "
                           f"whatever {d} is", "insensitive")
        why = "" if "structure" in rules.off else \
            self._structure(step, expr, g, env, bindings[0][0] if bindings else None, i == len(self.steps) - 1)
        if why:
            return res(REJECTED, why, "grounding")
        trials: tuple[Value | None, ...] = ()
        if rules.trials and "dependence" not in rules.off:
            # where several givens share a number, every reading must pass: never guess which one it is
            for literals, trial_literals, _ in bindings or [(None, [None] * rules.trials, ())]:
                values = self._trial_values(step, expr, refs, g, index, earlier, trial_literals)
                why, guard = self._dependence(i, step, expr, true, values, g, earlier)
                if why:
                    return res(REJECTED, why, guard)
                trials = trials or values  # later steps are re-evaluated with the first reading
        reading = tuple(bindings[0][2]) if bindings else ()
        comp, why, guard, merges = self._composite(i, step, expr, refs, index, g, earlier, reading, env,
                                                   bindings[0][0] if bindings else None, true)
        if why:
            return res(REJECTED, why, guard)
        return _Step(QuantityStepResult(step.id, "valid", "", backend="quant"), true, trials, comp, merges, reading)

    def _compute(self, step: QuantityStep, expr: Expr | None, env: dict[str, Value],
                 literals: dict[int, Value] | None) -> Value:
        if expr is not None:
            return evaluate(expr, env, literals)
        return compute(env, op=step.op, args=step.args)

    # ------------------------------------------------------------------ composites
    def _composite(self, i: int, step: QuantityStep, expr: Expr | None, refs: list[str], index: dict[str, int],
                   g: _Givens, earlier: list[_Step], reading: tuple, values: dict[str, Value],
                   literals: dict | None, true: Value) -> tuple[Composite | None, str, str, tuple]:
        """The step's composite and the composite rules (docs/quantity.md, "Composites"): (composite, why
        rejected, guard, unlicensed merges). Nothing is built when every composite rule is off."""
        off = self.rules.off
        if {"collapse", "merge", "restatement", "opaque", "reference"} <= off:
            return None, "", "", ()
        env: dict[str, Composite] = {}
        for d in refs:
            if d in g.comps:
                env[d] = g.comps[d]
            else:
                c = earlier[index[d]].comp
                if c is None:
                    return None, "", "", ()
                env[d] = c
        # a count or an amount of money never cancels; a physical formula may (the mass of a falling stone
        # cancels from v = sqrt(2 g h), and its 2 and 1/2 are the formula's anyway)
        counted = _is_counted(true)
        alg = Algebra(g.syms, strict=False)
        try:
            if expr is not None:
                lits = {nid: _reading_composite(value, owner, g) for nid, value, owner in reading}
                comp = compose_expr(alg, expr, env, lits)
            else:
                comp = compose_op(alg, step.op, [env[a] for a in step.args if a in env])
        except Collapse as exc:
            if "collapse" in off:
                return None, "", "", ()
            return None, f"collapses (composite): {exc}", "collapse", ()
        except TooLarge as exc:
            if "collapse" in off:
                return None, "", "", ()
            return None, f"composite too large to judge ({exc}): split the work into smaller steps", "collapse", ()
        cancels: tuple = ()
        i_step = i
        # a factor cancelled: what did it take with it? A count never loses a given; a physical formula may on
        # the way (work is m a d with t cancelling from a = dv / t and d), but not from the answer
        if (alg.collapses or i_step == len(self.steps) - 1) and "collapse" not in off:  # the answer: always
            gone = [i for i in alg.gone(comp) if g.syms.kinds[i] in ("literal", "constant")
                    or (g.syms.kinds[i] == "given" and (counted or i_step == len(self.steps) - 1))]
            if gone:
                names = ", ".join(g.syms.names[i] for i in gone)
                return None, (f"collapses (composite): {names} cancels out of the composite: the chain computes a "
                              "function without it"), "collapse", ()
        if alg.cancelled and "collapse" not in off:  # a detour inside the step: x * y / y, x / x, 2 * x - x
            others = list(g.comps.values()) + [e.comp for e in earlier if e.comp is not None]
            for part in alg.cancelled:
                if alg.is_constant(part) or any(alg.proportional(part, c) for c in others):
                    return None, ("collapses (composite): a product, quotient or difference inside the step is a given, an "
                                  "earlier step or a number times one (a detour: x * y / y, 2 * x - x)"), "collapse", ()
        if alg.collapses and counted and "collapse" not in off:
            # a count or money never loses a given it uses; a factor that cancels without taking a given with it
            # never leaves a given, a step or a number (the free multiples of `g2 + g1 * g2 / g1`), and stands only
            # where the reference solution computes the same function
            others = [c for k, c in g.comps.items()] + [e.comp for e in earlier if e.comp is not None]
            gone = next((c for c in alg.collapses if "cancels out of" in c), "")
            if gone:  # every given a count uses stays in it (a detour x g / g, or a price that cancels)
                return None, f"collapses (composite): {gone}", "collapse", ()
            if alg.is_constant(comp) or any(alg.proportional(comp, c) for c in others):
                return None, f"collapses (composite): {alg.collapses[0]}", "collapse", ()
            cancels = (alg.collapses[0],)
        cited = [m for d in refs if d not in g.comps for m in env[d].merges]
        new = list(comp.merges)
        for m in cited:
            if m in new:
                new.remove(m)
        merges = tuple(m for m in new if not _merge_licensed(m.multiple, g.context))
        if "opaque" not in off:
            seen = {id(o[2]) for d in refs if d not in g.comps for o in env[d].opaque}
            for func, args, node in comp.opaque:
                if id(node) in seen or node is None:
                    continue
                why = self._opaque(func, args, node, expr, i == len(self.steps) - 1, g, values, literals)
                if why:
                    return None, why, "opaque", ()
        if "restatement" not in off:
            if alg.is_constant(comp):
                return None, (f"constant (composite): {step.id} is the same number whatever the givens are"), \
                    "constant", ()
            conversion = self._conversion(i, step, g)
            for gid, c in g.comps.items():
                if gid != conversion and alg.equal(comp, c):
                    return None, f"restates {gid} (composite): {step.id} is {gid} as a function of the givens", \
                        "restatement", ()
            for j, e in enumerate(earlier):
                if e.comp is not None and alg.equal(comp, e.comp):
                    return None, (f"restates {self.steps[j].id} (composite): {step.id} is {self.steps[j].id} as a "
                                  "function of the givens"), "restatement", ()
        return comp, "", "", (merges if "merge" not in off else ()) + cancels

    def _opaque(self, func: str, args: tuple, node: Any, expr: Expr | None, last: bool, g: _Givens,
                values: dict[str, Value], literals: dict | None) -> str:
        """Rule 3: an opaque operator only in its licensed pattern, asked by the question's words."""
        lic = licence(func)
        if lic is None:
            return ""  # a formula's function (sqrt, exp, sin, ...): judged as an atom, not licensed
        shown = {"floordiv": "//", "mod": "%"}.get(func, func)
        moving = [any(g.syms.kinds[s] in ("given", "atom") for s in a.symbols()) for a in args]
        if not all(moving):
            return f"{shown} of a number that no given moves (opaque): {lic.pattern}"
        if not asked(lic, g.context):
            return f"{shown} where the question does not ask for it (opaque): only {lic.pattern}"
        if lic.last_step_only and (not last or expr is None or node is not expr):
            return f"{shown} inside a step (opaque): only {lic.pattern}"
        if func in ("floor", "ceil") and not any(m for m in args[0].den):  # a denominator that is a number
            return f"{shown} of something that is no quotient (opaque): only {lic.pattern}"
        if func in ("min", "max"):
            if len(args) < 2:
                return f"{shown} of one value (opaque): only {lic.pattern}"
            try:
                v = evaluate(node, values, literals)
            except (QuantError, ArithmeticError, ValueError, OverflowError):
                v = None
            stated = next((gid for gid, x in g.values.items() if v is not None and same_value(x, v, Tolerance())), "")
            if stated:
                return f"{shown} whose value is {stated}'s number (opaque): a clamp to a stated number restates it"
        if func == "abs":
            signs = {c > 0 for c in args[0].num.values()}
            if len(signs) < 2:
                return f"abs of something that is no difference (opaque): only {lic.pattern}"
        return ""

    # ------------------------------------------------------------------ literals
    def _literals(self, expr: Expr | None, g: _Givens, cited: set[str]) -> tuple[list, list, str]:
        """Check that every literal is grounded, and read each given's number into the given it states:
        [(literal node -> base Value, [literal node -> Value in trial t, ...]), ...], one entry per reading
        when several givens share a number (the chain must pass under every reading: never guess). A literal
        is not read as a given the step also cites by id (`g1 / 2` with g1 = 2 halves g1)."""
        if expr is None:
            return [], [], ""

        def owners_of(value: Fraction) -> tuple[str, ...]:
            """The givens a number states (`~g2`: the reciprocal of g2, `3` in `x / 3` for "a third")."""
            direct = tuple(o for o in g.numbers.get(value, ()) if o not in cited)
            # the reciprocal of a fraction or percentage given (3 for "a third", 4 for 25 %) is that given, as a
            # divisor only (below); the reciprocal of a whole given (0.5 for "2 buses") is a new number
            inverse = tuple("~" + o for o in g.fractions.get(1 / value, ()) if o not in cited) if value > 1 else ()
            # 0.75 for "25% off", 1.15 for "a 15% tip", 2/3 for "the rest of a third": 1 - x, 1 + x of a fraction
            rest = tuple("-" + o for o in g.fractions.get(1 - value, ()) if o not in cited)
            more = tuple("+" + o for o in g.fractions.get(value - 1, ()) if o not in cited)
            return direct + inverse + rest + more

        choices: list[tuple[int, Fraction, tuple[str, ...]]] = []
        inside_pair: set[int] = set()
        # the reciprocal of a fraction or percentage given (3 for "a third", 4 for 25 %) is that given only as a
        # divisor (x / 3 is x * g): written as a factor or a term it is a new number, not the given
        divisors = {id(n.right) for n in expr.walk() if isinstance(n, BinOp) and n.op == "/"}
        for node in expr.walk():
            if isinstance(node, BinOp) and node.op == "/" and isinstance(node.left, Num) and \
                    isinstance(node.right, Num) and node.right.value != 0:
                value = node.left.value / node.right.value
                owners = tuple(o for o in owners_of(value) if not o.startswith("~"))
                if owners:  # `3/5` for "three-fifths": the pair is the given, its parts are not
                    choices.append((id(node), value, owners))
                    inside_pair.update((id(node.left), id(node.right)))
        for node in expr.walk():
            if not isinstance(node, Num) or id(node) in inside_pair:
                continue
            if allowed_constant(node.value, g.context) is not None:
                continue  # a listed constant is the constant: a given of the same number is cited by id
            owners = owners_of(node.value)
            if id(node) not in divisors and node.value > 1:  # 4 for 25 %, 3 for "a third": only x / 4, x / 3
                owners = tuple(o for o in owners if not o.startswith("~"))
            if owners:
                choices.append((id(node), node.value, owners))
            else:
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
            for trial in g.trials:  # a literal read from a given moves with it (a reciprocal one inversely)
                per_trial.append({nid: Value(_read(value, o, g, trial)) for nid, value, o in reading})
            out.append((base, per_trial, reading))
        return out, choices, ""

    def _structure(self, step: QuantityStep, expr: Expr | None, g: _Givens, env: dict[str, Value],
                   literals: dict[int, Value] | None, last: bool = False) -> str:
        """What the step's own expression writes, read off its tree at the given numbers:
        - a term repeated in a sum (`g1 + g1 + g1`, `(g1 + g1) * g2`, `a * b + a * b`, `sum(g1, g1, g1)`) is a
          count; a literal factor of a product (`g1 * g2 * 2`, `(g1 + g2) / 2`) is a multiple: each must be
          stated (`MULTIPLE_WORDS`, a unit factor in context), unless the step is a formula (a power, a root,
          `pi`/`e`: `0.5 * m * v ** 2`, `2 * pi * r`);
        - a term that is 0 here, or a factor, divisor or exponent that is 1 here, does nothing but move the step
          off the given numbers (`g1 + g2 % 1`, `g1 * g4` with g4 = 1, `g1 ** g4`): the step restates."""
        if expr is None:
            if step.op in ("sum", "add", "average"):
                for a in dict.fromkeys(step.args):
                    k = step.args.count(a)
                    if k > 1 and not is_licensed_multiple(k, g.context):
                        return _count_reason(a, k)
            return ""
        bound = set(literals or {})
        for node in expr.walk():
            if isinstance(node, BinOp) and node.op in ("+", "-") and not _is_sum_child(node, expr):
                terms = [str(term) for term, _ in _sum_terms(node)]
                for term in dict.fromkeys(terms):
                    k = terms.count(term)
                    if k > 1 and any(c.isalpha() for c in term) and not is_licensed_multiple(k, g.context):
                        return _count_reason(term, k)
            if isinstance(node, Call) and node.func in ("min", "max"):
                try:
                    v = evaluate(node, env, literals)
                    for arg in node.args:
                        if isinstance(arg, Name) and arg.id in env and same_value(env[arg.id], v, self.rules.tolerance):
                            return (f"restates {arg.id} through {node.func} (grounding): a clamp to a stated value is "
                                    "that value")
                except (QuantError, ArithmeticError, ValueError, OverflowError):
                    pass
            if isinstance(node, BinOp) and node.op in ("*", "/") and id(node) not in bound and \
                    not _is_product_child(node, expr):
                why = self._factors(node, g, env, literals, bound)
                if why:
                    return why
            if isinstance(node, BinOp) and node.op in ("+", "-") and not _is_sum_child(node, expr):
                why = self._offsets(node, g, env, literals, bound)
                if why:
                    return why
            if isinstance(node, BinOp) and node.op == "**" and isinstance(node.right, Num) and \
                    id(node.right) not in bound and not _EXPONENTS.__contains__(node.right.value):
                return (f"raises to {format_number(node.right.value)} (grounding): an exponent the problem does not "
                        "state (squares, cubes and roots are formulas; other powers come from a given)")
            if isinstance(node, (BinOp, Unary, Call)) and node.names() - set(CONSTANTS) == set() and \
                    id(node) not in bound and not (isinstance(node, Unary) and isinstance(node.operand, Num)):
                try:
                    folded = evaluate(node, env, literals)
                except (QuantError, ArithmeticError, ValueError, OverflowError):
                    folded = None
                if not (isinstance(node, Call) and node.func in ("sqrt",) or _pi_only(node)):
                    return ("computes a number from literals only"
                            + (f" ({format_value(folded)})" if folded is not None else "")
                            + " (grounding): write one listed constant or cite a given")
            if isinstance(node, BinOp) and node.op in ("+", "-", "*", "/", "**"):
                for side in ((node.left, node.right) if node.op in ("+", "*") else (node.right,)):
                    if isinstance(side, Num) or not side.names() - set(CONSTANTS):
                        continue
                    if isinstance(side, Name) and side.id in g.values and node.op != "**" and not last:
                        continue  # a given that is 1 ("1 hour") may be a factor; a computed 1 or 0, or a given 1
                        # that makes the answer another value, may not
                    try:
                        v = evaluate(side, env, literals)
                    except (QuantError, ArithmeticError, ValueError, OverflowError):
                        continue
                    null = 0 if node.op in ("+", "-") else 1
                    try:
                        size = abs(float(evaluate(node, env, literals).mag)) if null == 0 else 1.0
                        near = abs(float(v.mag) - null) <= 1e-12 * size
                    except (QuantError, ArithmeticError, ValueError, OverflowError):
                        near = v.mag == null
                    if near and (null == 0 or v.dimensionless):
                        what = "adds" if null == 0 else "multiplies by" if node.op == "*" else \
                            "divides by" if node.op == "/" else "raises to"
                        return (f"{what} {side}, which is {null} here (grounding): a term that does nothing at "
                                "the given numbers")
        return ""

    def _factors(self, node: BinOp, g: _Givens, env, literals, bound: set) -> str:
        """The literal factors of one product (`a * 2 * b / 60`): together they must be a stated multiple (one
        word multiple times unit factors in context) in a count or money step, or a formula's (2, 0.5, a unit
        factor) in a physical one."""
        lits = []
        for factor, inverse in _product_factors(node, bound):
            if isinstance(factor, Num) and id(factor) not in bound and factor.value not in (1,):
                lits.append(1 / factor.value if inverse and factor.value else factor.value)
        if not lits:
            return ""
        product = Fraction(1)
        for x in lits:
            product *= x
        if product == 1 and len(lits) > 1:
            return ("multiplies and divides by the same number (grounding): a detour")
        if _counted(node, env, literals):
            if any(isinstance(n, Name) and n.id in CONSTANTS and n.id not in env for n in node.walk()) and \
                    all(x in _FORMULA for x in lits) and len(lits) == 1:
                return ""  # 2 * pi * r: a geometry formula (a count's other multiples need their word)
            if self._average_divisor(node, lits, g):
                return ""
            if not is_licensed_multiple(product, g.context):
                word = multiple_word(product)
                return (f"multiplies by {format_number(product)} (grounding): a multiple the problem does not state"
                        + (f" (say {word})" if word else ""))
            return ""
        if len(lits) == 1 and (lits[0] in _FORMULA or allowed_constant(lits[0], g.context)):
            return ""
        if is_licensed_multiple(product, g.context) and len(lits) <= 2:
            return ""
        return (f"multiplies by {format_number(product)} (grounding): a constant no formula or word of the problem "
                "gives")

    def _average_divisor(self, node: BinOp, lits: list, g: _Givens) -> bool:
        """`(g1 + g2 + g3) / 3` for an average: a divisor equal to the number of terms it divides, where the
        problem asks for an average or a mean."""
        if node.op != "/" or len(lits) != 1 or not isinstance(node.right, Num) or \
                not mentions_word(g.context, ("average", "mean")):
            return False
        if not (isinstance(node.left, BinOp) and node.left.op in ("+", "-")):
            return False
        return Fraction(len(_sum_terms(node.left))) == 1 / lits[0]

    def _offsets(self, node: BinOp, g: _Givens, env, literals, bound: set) -> str:
        """The literal terms of one sum: a complement (`1 - x`, `1 + x` of a fraction or percentage) or a stated
        offset (`OFFSET_WORDS`); never a number built up (`g1 + g2 + 2 + 2`)."""
        terms = _sum_terms(node)
        lits = [(term.value, sign) for term, sign in terms if isinstance(term, Num) and id(term) not in bound]
        if not lits:
            return ""
        total = sum((v * s for v, s in lits), Fraction(0))
        others = [term for term, _ in terms if not (isinstance(term, Num) and id(term) not in bound)]
        if len(lits) > 1:
            return f"adds up literals ({format_number(total)}) (grounding): a number built from listed constants"
        if total == 0:
            return "adds 0 (grounding): a term that does nothing"
        if abs(total) == 1 and len(others) == 1:
            try:
                v = evaluate(others[0], env, literals)
                if v.dimensionless and 0 < abs(float(v.mag)) < 1:
                    return ""  # 1 - x, 1 + x: a complement or a growth factor
            except (QuantError, ArithmeticError, ValueError, OverflowError):
                pass
        if is_licensed_offset(abs(total), g.context):
            return ""
        return (f"adds {format_number(total)} (grounding): an offset the problem does not state"
                + (" (say \"one more\", \"herself\")" if abs(total) == 1 else ""))

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
        if len(live) < min(2, len(trials)):
            return (f"holds only at the given numbers (grounding): {step.id} cannot be re-evaluated when the givens "
                    "move (a math error every time)", "constant")
        floor = _SAME * max([abs(float(true.mag))] + [abs(float(v.mag)) for v in self._inputs(step, g, earlier)
                                                       if v.dims == true.dims])
        if all(trials[t].dims == true.dims and _equal(trials[t].mag, true.mag, floor) for t in live):
            return (f"constant (grounding): {step.id} is {format_value(true)} whatever the givens are, a number "
                    "built from none of them", "constant")
        others: list[tuple[str, Value, tuple]] = [(gid, v, tuple(tr[gid] for tr in g.trials))
                                                   for gid, v in g.values.items()]
        others += [(self.steps[j].id, c.value, c.trials) for j, c in enumerate(earlier)
                   if c.value is not None and c.trials]
        conversion = self._conversion(i, step, g)
        for name, base, values in others:
            if name == conversion:
                continue
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
        if _COUNTED is None:
            _counted(Num("1", Fraction(1)), {}, None)
        if true.dims not in _COUNTED:
            return "", ""  # a physical quantity: its constants are its formula's (v = 2 * d / t)
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
            complement = (_equal(abs(slope), 1) and _equal(abs(offset), 1) and base.dimensionless
                          and 0 < abs(float(base.mag)) < 1)  # 1 - x, 1 + x of a fraction or a percentage
            if offset and not complement and (not is_licensed_offset(abs(offset), g.context) or
                                              (depth == 0 and not any(_equal(abs(offset), w) for w in written))):
                return (f"{step.id} is {name} {'+' if offset > 0 else '-'} {_show(abs(offset))} (grounding): an "
                        "offset the problem does not state", "grounding")
            j = index.get(name)
            if j is None or j >= len(earlier):
                break
            refs = sorted(set(self._refs(self.steps[j], index)))
            depth += 1
        return "", ""

    def _conversion(self, i: int, step: QuantityStep, g: _Givens) -> str:
        """The given a last step may restate because the question asks for it in another unit ("72 km/h in
        m/s"): the step cites only that given and claims it in the answer's unit, which is not the given's."""
        if i != len(self.steps) - 1 or not isinstance(self.problem.answer, dict):
            return ""
        refs = set(self._refs(step, {s.id: k for k, s in enumerate(self.steps)}))
        if len(refs) != 1:
            return ""
        gid = next(iter(refs))
        given = next((x for x in self.problem.givens if str(x.get("id")) == gid), None)
        want = str(self.problem.answer.get("unit") or "")
        if given is None or not want or not _same_unit(step.unit, want) or _same_unit(str(given.get("unit") or ""),
                                                                                      want):
            return ""
        return gid

    def _inputs(self, step: QuantityStep, g: _Givens, earlier: list[_Step]) -> list[Value]:
        index = {s.id: k for k, s in enumerate(self.steps)}
        out = []
        for d in self._refs(step, index):
            v = g.values.get(d)
            if v is None and d in index and index[d] < len(earlier):
                v = earlier[index[d]].value
            if v is not None:
                out.append(v)
        return out

    # ------------------------------------------------------------------ the answer
    def _established(self, checked: list[_Step]) -> tuple[bool, str, bool]:
        """(established, why not, whether the reference function was checked and matched)."""
        if not self.claim.ok:
            return False, "no readable answer to establish", False
        if not self.establish:
            return False, "answer not checked against the chain (known to be wrong)", False
        if not checked:
            return False, "no steps: the answer must be the value of the last step", False
        last = checked[-1]
        if not last.result.verified or last.value is None:
            return False, f"the last step {last.result.id} is not verified, so nothing establishes the answer", False
        tol = answer_tolerance(self.problem)
        gold = gold_value(self.problem)
        if gold is not None:
            ok, why = _final_matches(gold, last.value, self.problem, tol, _percent_number(self.steps[-1], self.state))
            if not ok:
                return False, (f"answer: the last step {last.result.id} computes {format_value(last.value)}, "
                               f"not the answer ({why})"), False
            if all(c.result.verified for c in checked):
                why, matched = self._reference(checked, gold)
                if why:
                    return False, why, False
                return True, "", matched
            return True, "", False
        ok, why = matches(last.value, self.steps[-1].unit, self.claim, tol)
        if not ok:
            return False, f"answer: the answer is not the value of the last step {last.result.id} ({why})", False
        return True, "", False

    def _reference(self, checked: list[_Step], gold: Value) -> tuple[str, bool]:
        """Rule 5: the answer's composite against the reference solution's, at exact re-assignments of the
        givens ("" and whether it was checked, or why not)."""
        if "reference" in self.rules.off or self.rules.reference == "off":
            return "", False
        g = self.state.of(self.problem, self.rules.trials)
        ref = self._reference_of(g)
        if ref is None:
            return "", False
        tight = Tolerance(rel=1e-6, abs_eps=0.0)
        pct = _percent_number(self.steps[-1], self.state)
        wanted = [ref.final(self.problem, g.values, point) for point in g.points]
        first_miss = None
        for extra in self._literal_readings(checked, g):  # a literal 2 may be the given "twice" it equals
            finals = []
            for point in g.points:
                try:
                    finals.append(self._run_at(point, checked, extra))
                except (QuantError, ArithmeticError, ValueError, OverflowError, TypeError, KeyError):
                    finals.append(None)
            for r in range(len(wanted[0]) if wanted else 0):  # one reading of the reference holds at every point
                compared, ok = 0, True
                for k, point in enumerate(g.points):
                    w = self._as_gold(wanted[k][r], ref, gold)
                    if w is None:
                        continue  # the reference breaks there (a math error): no evidence either way
                    if finals[k] is None or not _final_matches(w, finals[k], self.problem, tight, pct)[0]:
                        ok = False
                        if first_miss is None:
                            first_miss = (point, finals[k], w)
                        break
                    compared += 1
                if ok and compared:
                    return "", True
        if first_miss is None:
            return "", False
        point, final, w = first_miss
        moved = ", ".join(f"{k}={format_value(v)}" for k, v in list(point.items())[:4])
        return (f"answer: the chain computes another function of the givens than the reference solution "
                f"(reference): at {moved} it gives {format_value(final) if final is not None else 'an error'}, "
                f"the reference {format_value(w)}"), False

    def _reference_of(self, g: _Givens) -> Any:
        """The problem's reference (built once per problem and batch), None without one or with the rule off."""
        if "reference" in self.rules.off or self.rules.reference == "off":
            return None
        if g.reference is False:
            try:
                g.reference = build_reference(self.problem, g.values)
            except Exception:  # noqa: BLE001 - a reference that cannot be read is no reference
                g.reference = None
            g.points = reference_points(self.problem, g.values, g.syms.seed) if g.reference else []
        return g.reference

    @staticmethod
    def _as_gold(w: Any, ref: Any, gold: Value) -> Value | None:
        """A reference value as a gold: a Value as is, a plain number (a solution's) in the gold's unit."""
        if w is None or isinstance(w, Value):
            return w
        if not ref.base:
            return None
        mag = gold.mag * Fraction(w) / ref.base if isinstance(gold.mag, Fraction) else \
            float(gold.mag) * float(w) / float(ref.base)
        return Value(mag, gold.dims, gold.unit)

    def _literal_readings(self, checked: list[_Step], g: _Givens, most: int = 16) -> list[dict]:
        """Readings of the chain's literals 2 and 1/2, always allowed, where a given states the number (a 2 where
        "twice" is a given): each may be the constant or that given, for the reference check only (a
        chain computes the reference's function under one reading). {step index: [(node id, number, owner)]}."""
        choices = []
        for k, (step, c) in enumerate(zip(self.steps, checked)):
            if step.expr is None:
                continue
            expr = self.state.expr(step.expr)
            if isinstance(expr, QuantError):
                continue
            bound = {nid for nid, _, _ in c.reading}
            for node in expr.walk():
                if isinstance(node, Num) and id(node) not in bound and node.value in (2, Fraction(1, 2)):
                    owners = tuple(g.numbers.get(node.value, ())) + \
                        tuple("~" + o for o in g.fractions.get(1 / node.value, ()))  # 2 for "half": `x * 2`
                    if owners:
                        choices.append((k, id(node), node.value, owners))
        out: list[dict] = [{}]
        for k, nid, value, owners in choices:
            out = [r for base in out for r in
                   [base] + [{**base, k: base.get(k, []) + [(nid, value, o)]} for o in owners]][:most]
        return out

    def _run_at(self, point: dict[str, Value], checked: list[_Step], extra: dict | None = None) -> Value:
        """The chain's final value with the givens at `point`, exactly (its literals read as givens move)."""
        env: dict[str, Value] = dict(point)
        index = {s.id: k for k, s in enumerate(self.steps)}
        last = None
        for k, (step, c) in enumerate(zip(self.steps, checked)):
            expr = self.state.expr(step.expr) if step.expr is not None else None
            lits = {}
            for nid, value, owner in tuple(c.reading) + tuple((extra or {}).get(k, ())):
                gid = owner.lstrip("~-+")
                old, new = Fraction(self.state.of(self.problem, self.rules.trials).values[gid].mag), \
                    Fraction(point[gid].mag)
                if owner[0] == "-":
                    lits[nid] = Value(1 - new)
                elif owner[0] == "+":
                    lits[nid] = Value(1 + new)
                elif owner[0] == "~":
                    lits[nid] = Value(value * old / new)
                else:
                    lits[nid] = Value(value * new / old if old else value)
            if expr is not None:
                local = {d: env[d] for d in self._refs(step, index) if d in env}
                last = evaluate(expr, local, lits)
            else:
                last = compute(env, op=step.op, args=step.args)
            env[step.id] = last
        return last


def _percent_number(step: QuantityStep, state: QuantityState) -> bool:
    """Does the last step write a percent number (`part / whole * 100`)? Only then is a dimensionless final
    value read as the percent number of a percentage gold; else it is the fraction (a final 0.6 for a 0.6 %
    gold is 60 %, 100 times too much)."""
    if step.expr is None:
        return False
    expr = state.expr(step.expr)
    if isinstance(expr, QuantError):
        return False
    return any(isinstance(f, Num) and f.value == 100 and not inv for f, inv in _product_factors(expr))


def _final_matches(gold: Value, final: Value, problem: Problem, tol: Tolerance,
                   percent_number: bool = True) -> tuple[bool, str]:
    """The chain's recomputed final value against the gold, in the gold's unit, with one tolerance: a
    temperature relative to its size in the gold's own scale (40 °C, not 313 K: 5 % is 2 °C), and for a
    percentage either the fraction (0.6) or the percent number (60, `part / whole * 100`)."""
    unit = str((problem.answer or {}).get("unit") or "") if isinstance(problem.answer, dict) else ""
    try:
        info = unit_info(unit) if unit else None
    except QuantError:
        info = None
    if info is not None and info.offset and final.dims == gold.dims:
        x, y = float(final.magnitude_in(unit)), float(gold.magnitude_in(unit))
        if abs(x - y) <= tol.rel * max(abs(y), tol.abs_eps):
            return True, ""
        return False, f"wrong value: expected {format_value(gold, unit)}, got {format_value(final, unit)}"
    if plain_gold(unit) and (not final.dimensionless or final.unit):
        if _COUNTED is None:
            _counted(Num("1", Fraction(1)), {}, None)
        if final.dims not in _COUNTED:
            return False, f"wrong unit: a plain number, got {format_value(final)}"
        final = as_written(final)  # a plain gold (a GSM8K count) is the number the chain shows: 18 USD -> 18
    ok, why = close_enough(gold, final, tol)
    if not ok and unit.strip() in ("percent", "%") and final.dimensionless and percent_number:
        ok = close_enough(Value(gold.mag * 100 if isinstance(gold.mag, Fraction) else float(gold.mag) * 100),
                          final, tol)[0]
    return ok, why


def _same_unit(a: str, b: str) -> bool:
    """The same unit however spelled (`m/s`, `m * s**-1`)."""
    try:
        x, y = unit_info(a) if a else None, unit_info(b) if b else None
    except QuantError:
        return False
    if x is None or y is None:
        return x is y
    return x.dims == y.dims and x.scale == y.scale and x.offset == y.offset


def _rounded(true: Value, claim: Value, step: QuantityStep) -> bool:
    """A claim written as the recomputed value rounded to the decimals it shows (`10.9` for 10.89, `3.33` for
    10/3), within 0.5 % of it: people round what they report; later steps use the recomputed value anyway."""
    if true.dims != claim.dims:
        return False
    text = step.value if isinstance(step.value, str) else repr(step.value)
    text = text.strip().lower()
    mantissa, _, exponent = text.partition("e")
    decimals = len(mantissa.split(".", 1)[1]) if "." in mantissa else 0
    try:
        decimals -= int(exponent) if exponent else 0  # 4.89e-19: two decimals of 1e-19
    except ValueError:
        return False
    try:
        x = float(true.magnitude_in(step.unit or None))
        c = float(claim.magnitude_in(step.unit or None))
    except (QuantError, OverflowError, TypeError):
        return False
    return abs(x - c) <= 0.5 * 10.0 ** -decimals * (1 + 1e-9) and abs(x - c) <= 0.005 * abs(x)


_COMPARATIVE = re.compile(
    r"\b(?:more|fewer|less|older|younger|taller|shorter|longer|heavier|lighter|cheaper|bigger|smaller|higher|lower|"
    r"faster|slower|farther|further|greater|larger)\s+(?:[a-z$'-]+\s+){0,3}?than\b|\bas (?:many|much)\b|"
    r"\bthe same\b", re.IGNORECASE)


def _is_counted(v: Value) -> bool:
    """A count or an amount of money (plain or USD), as opposed to a physical quantity."""
    if _COUNTED is None:
        _counted(Num("1", Fraction(1)), {}, None)
    return v.dims in _COUNTED


def _merge_licensed(multiple: Fraction, context: str) -> bool:
    """Like terms merged into `multiple` are stated when a word multiple says so ("twice"), or when the
    question defines quantities by comparison ("5 more than Bob", "20% more shirts than in May", "as many as"): each comparison
    counts its base once more in a total, so n comparisons license a multiple of at most n + 1."""
    if is_licensed_multiple(multiple, context):
        return True
    return multiple.denominator == 1 and 2 <= multiple <= 1 + len(_COMPARATIVE.findall(context))


def _reading_composite(literal: Fraction, owner: str, g: "_Givens") -> Composite:
    """A literal the grounding read as a given, as a composite: the given scaled (120 for "120 km" is the
    given; 25 for "25%" is 100 times it), its reciprocal (3 in `x / 3` for "a third"), or its complement or
    growth factor (0.75 for "25% off", 1.15 for "a 15% tip")."""
    gid = owner.lstrip("~-+")
    i = g.syms.of(("given", gid), gid, "given")
    if owner[0] == "-":
        return shifted_symbol(i, -1)
    if owner[0] == "+":
        return shifted_symbol(i, 1)
    base = g.values[gid].mag
    base = Fraction(base) if not isinstance(base, Fraction) else base
    if owner[0] == "~":
        return reciprocal_symbol(i, literal * base)
    return symbol(i, literal / base if base else Fraction(1))


def _read(literal: Fraction, owner: str, g: "_Givens", trial: dict) -> Any:
    """A literal's value in a trial, read as given `owner` states it: the number itself, its reciprocal (`~`),
    its complement 1 - x (`-`) or its growth factor 1 + x (`+`)."""
    gid = owner.lstrip("~-+")
    if owner[0] == "-":
        return 1.0 - float(trial[gid].mag)
    if owner[0] == "+":
        return 1.0 + float(trial[gid].mag)
    return _moved(literal, g.values[gid].mag, trial[gid].mag, owner.startswith("~"))


def _moved(literal: Fraction, given: Any, moved: Any, inverse: bool = False) -> Any:
    """A literal read from a given (or from its reciprocal), in a trial where the given moved from `given` to
    `moved`."""
    if given == 0 or moved == 0:
        return float(literal) + float(moved)
    ratio = float(moved) / float(given)
    return float(literal) / ratio if inverse else float(literal) * ratio


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


_COUNTED: tuple | None = None


def _counted(node: Expr, env: dict, literals: dict | None) -> bool:
    """Is the node's value a count or an amount of money (plain or USD: where a multiple is a count a word
    must state)? A physical quantity's literal factors are its formula's (0.5 * m * s1 with s1 = v ** 2)."""
    global _COUNTED
    if _COUNTED is None:
        _COUNTED = (Value(1).dims, unit_info("USD").dims)
    try:
        return evaluate(node, env, literals).dims in _COUNTED
    except (QuantError, ArithmeticError, ValueError, OverflowError):
        return True


_FORMULA = (Fraction(2), Fraction(1, 2))  # a physics or geometry formula's own constants (0.5 m v^2, 2 a d)
_EXPONENTS = (Fraction(2), Fraction(3), Fraction(1, 2), Fraction(1, 3), Fraction(-1), Fraction(-2))


def _pi_only(node: Expr) -> bool:
    """`2 * pi`, `pi / 4`, `e ** 2`: a formula constant written with pi or e."""
    names = node.names()
    return bool(names) and names <= set(CONSTANTS)


def _product_factors(node: Expr, bound: set = frozenset()) -> list[tuple[Expr, bool]]:
    """The factors of a maximal product (`a * b / c`), each with whether it divides (a literal pair read as a
    given is one factor)."""
    out: list[tuple[Expr, bool]] = []
    todo: list[tuple[Expr, bool]] = [(node, False)]
    while todo:
        n, inv = todo.pop()
        if isinstance(n, BinOp) and n.op in ("*", "/") and (n is node or id(n) not in bound):
            todo.append((n.left, inv))
            todo.append((n.right, not inv if n.op == "/" else inv))
        else:
            out.append((n, inv))
    return out


def _is_product_child(node: Expr, root: Expr) -> bool:
    for n in root.walk():
        if isinstance(n, BinOp) and n.op in ("*", "/") and (n.left is node or n.right is node):
            return True
    return False


def _sum_terms(node: Expr) -> list[tuple[Expr, int]]:
    """The terms of a maximal sum (`a + b - c`), with their signs."""
    out: list[tuple[Expr, int]] = []
    todo: list[tuple[Expr, int]] = [(node, 1)]
    while todo:
        n, sign = todo.pop()
        if isinstance(n, BinOp) and n.op in ("+", "-"):
            todo.append((n.left, sign))
            todo.append((n.right, sign if n.op == "+" else -sign))
        else:
            out.append((n, sign))
    return out


def _is_sum_child(node: Expr, root: Expr) -> bool:
    """Is `node` the operand of a larger sum (then that sum's terms are read, not this part's)?"""
    for n in root.walk():
        if isinstance(n, BinOp) and n.op in ("+", "-") and (n.left is node or n.right is node):
            return True
    return False


def _count_reason(term: str, k: int) -> str:
    word = multiple_word(Fraction(k))
    return (f"adds {term} {k} times (grounding): a count of {k} the problem does not state"
            + (f" (say {word})" if word else ""))


__all__ = ["DEFAULT_RULES", "DIMENSION", "GROUNDING_GUARDS", "TAINTED", "QuantityChainCheck", "QuantityRules",
           "QuantityState", "QuantityStepResult"]
