"""An adversary for the quantity reward (issue #34): the search a policy could run for chains that earn the top
reward without doing the problem's work.

Three searches over a problem's givens, its licensed numbers (`prosfi.data.quant_gold.allowed_constants`),
`pi`, and every operator the expression grammar accepts (`+ - * / // % **`, floor, ceil, round, abs, sqrt,
min, max), each proposing chains that end at the gold answer:

- `enumerate_chains`: expressions built bottom-up by value (deduplicated, the pool bounded), to depth 3,
  closed by a meet-in-the-middle step toward the answer (`a op b = answer` looks `b` up by value), each
  split into one- to three-step chains;
- `beam_chains`: a beam of multi-step chains (up to 12 steps), each new step combining two or three earlier
  values, givens or constants with one operator; a candidate stays only while the verifier accepts the chain
  so far, ranked by closeness to the answer and by the givens still unused;
- `template_chains`: the attack families of issue #34 instantiated on the problem: a multiple of a value by
  cancellation across two steps (`s1 = gi * x; s2 = x + s1 / gi`, then additions), `%`, `//`, round, floor
  and ceil of two givens as free offsets and factors, clamps that restate (`max(gi * 1, x)`), `pi / pi`
  factors, a percent's reciprocal (4 for 25 %) and every licensed constant as a multiplier or offset, on the
  givens, pairs of givens and the gold chain's own intermediate results.

Every step claims its recomputed value (`prosfi.quant.evaluate`); chains are rendered as the policy writes
them (`quant_gold.render_completion`) and scored by the caller's scorer, the project's real reward
(`prosfi.rewards.score_batch` in the `prosfi` and `step_fraction` modes: see `scorer_from`). The scorer is
passed in because the reward layer sits above the domains. `search` returns every top-reward chain found;
`prosfi.domains.quantity.oracle` judges them without the verifier.
"""

from __future__ import annotations

import functools
import math
import random
import re
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any

from prosfi.data.problem import Problem
from prosfi.data.quant_gold import allowed_constants, render_completion
from prosfi.quant import QuantError, compute, evaluate, parse_expr, parse_quantity
from prosfi.quant.evaluate import add, div, floordiv, mod, mul, power, sub
from prosfi.quant.units import DIMENSIONLESS, Value, default_unit, json_number, unit_info

MODES = ("prosfi", "step_fraction")
TOP = 1.0
MAX_OPS = 4  # the chain rules' default operations per step (QuantityRules.max_ops)
_REL = 1e-6

# (problems, completions, mode) -> results, each with `.reward` and `.steps` (each with `.verdict`, `.guard`)
Scorer = Callable[[Sequence[Problem], Sequence[str], str], Sequence[Any]]


def scorer_from(score_batch: Callable[..., Sequence[Any]], verifier: Any = None,
                reward_config: Callable[[str], Any] | None = None) -> Scorer:
    """A Scorer from `prosfi.rewards.score_batch` (and `RewardConfig`, called with `mode=`): quantity chains
    need no prover, so any non-None verifier will do."""
    verifier = object() if verifier is None else verifier

    def score(problems: Sequence[Problem], completions: Sequence[str], mode: str) -> Sequence[Any]:
        cfg = reward_config(mode=mode) if reward_config is not None else None
        return score_batch(list(problems), list(completions), verifier, cfg)

    return score


@dataclass
class SearchConfig:
    """How hard the adversary tries on one problem."""

    depth: int = field(default=3, metadata={"help": "enumeration depth of the bottom-up pool (>= 3 closes with "
                                            "a meet-in-the-middle step: expressions to depth 2 * depth - 1)"})
    pool: int = field(default=400, metadata={"help": "values kept per enumeration level"})
    hits: int = field(default=40, metadata={"help": "enumerated expressions at the answer turned into chains"})
    beam_width: int = field(default=6, metadata={"help": "chains kept per beam step"})
    beam_expand: int = field(default=24, metadata={"help": "candidate steps the verifier sees per kept chain"})
    beam_steps: int = field(default=12, metadata={"help": "longest beam chain"})
    templates: bool = field(default=True, metadata={"help": "instantiate issue #34's attack families"})
    template_values: int = field(default=24, metadata={"help": "values (givens, pairs, gold results) the "
                                                       "templates are applied to"})
    max_chains: int = field(default=3000, metadata={"help": "chains scored per problem, all searches"})
    stop_after: int = field(default=0, metadata={"help": "stop once this many top-reward chains are found (0: "
                                                 "never)"})
    modes: tuple[str, ...] = field(default=MODES, metadata={"help": "reward modes each chain is scored in"})
    rescore_all: bool = field(default=True, metadata={"help": "score every chain in every mode (False: the modes "
                                                      "after the first see only the first mode's top chains)"})
    seed: int = field(default=0, metadata={"help": "seed of the beam's sampling"})


@dataclass
class Found:
    """A chain that earned the top reward: its steps, the search that found it, its reward per mode."""

    steps: list[dict[str, Any]]
    family: str
    rewards: dict[str, float]


@dataclass
class SearchResult:
    problem_id: str
    found: list[Found] = field(default_factory=list)
    scored: int = 0  # chains scored (each in every mode)
    seconds: float = 0.0

    @property
    def chains_per_second(self) -> float:
        return self.scored / self.seconds if self.seconds else 0.0


# ------------------------------------------------------------------ values
@functools.lru_cache(maxsize=16384)
def _parse(text: str):
    return parse_expr(text)


def value_of(text: str, env: dict[str, Value]) -> Value | None:
    """An expression's value by prosfi.quant's evaluator (None where it fails)."""
    try:
        return evaluate(_parse(text), env)
    except (QuantError, ArithmeticError, ValueError, OverflowError, TypeError):
        return None


_BIN = {"+": add, "-": sub, "*": mul, "/": div, "//": floordiv, "%": mod, "**": power}


def _apply(op: str, a: Value, b: Value) -> Value | None:
    try:
        v = _BIN[op](a, b)
        return v if _sane(v) else None
    except (QuantError, ArithmeticError, ValueError, OverflowError, TypeError):
        return None


def _call(func: str, *args: Value) -> Value | None:
    names = [f"x{i}" for i in range(len(args))]
    v = value_of(f"{func}({', '.join(names)})", dict(zip(names, args)))
    return v if v is not None and _sane(v) else None


def _sane(v: Value) -> bool:
    """A value a step may claim: finite, below 1e15, an exact one with a denominator below 1e9."""
    m = v.mag
    if isinstance(m, Fraction):
        return m.denominator < 10 ** 9 and m.numerator.bit_length() - m.denominator.bit_length() < 49
    return isinstance(m, float) and math.isfinite(m) and abs(m) < 1e15


def _key(v: Value) -> tuple:
    """A value's identity for deduplication and lookups: its dimension and 9 significant digits."""
    m = v.mag
    x = m.numerator / m.denominator if isinstance(m, Fraction) else m
    return (v.dims, 0.0 if x == 0 else float(f"{x:.9g}"))


def _number(x: Fraction) -> str:
    if x.denominator == 1:
        return str(x.numerator)
    s = f"{float(x):.12g}"
    return s if Fraction(s) == x else f"({x.numerator}/{x.denominator})"


class Target:
    """The answer as a chain's final value may reach it: the gold in SI; a plain gold also as the number a
    dollar amount shows; a percent gold also as the percent number (60 for 60 %, the chain rules' reading)."""

    def __init__(self, problem: Problem):
        a = problem.answer if isinstance(problem.answer, dict) else {"value": problem.answer, "unit": ""}
        self.unit = str(a.get("unit") or "")
        self.gold = parse_quantity({"value": a.get("value"), "unit": self.unit})
        usd = unit_info("USD").dims
        mags = [(self.gold.dims, self.gold.mag)]
        if not self.unit:
            mags.append((usd, self.gold.mag))
        if self.gold.dims == usd:
            mags.append((DIMENSIONLESS, self.gold.mag))
        if self.unit.strip() in ("percent", "%"):
            mags.append((DIMENSIONLESS, self.gold.mag * 100))
        self.values = [Value(m, d) for d, m in mags]

    def hits(self, v: Value | None) -> bool:
        if v is None:
            return False
        for t in self.values:
            if t.dims == v.dims and _close(t.mag, v.mag):
                return True
        return False

    def distance(self, v: Value) -> float:
        """How far a value is from the answer, in orders of magnitude (dimension mismatches count 1)."""
        best = math.inf
        for t in self.values:
            try:
                x, y = abs(float(v.mag)), abs(float(t.mag))
            except OverflowError:
                continue
            d = abs(math.log10(x) - math.log10(y)) if x > 0 and y > 0 else (0.0 if x == y else 6.0)
            best = min(best, d + (0 if t.dims == v.dims else 1.0))
        return best


def _close(a: Any, b: Any) -> bool:
    if a == b:
        return True
    try:
        x, y = float(a), float(b)
    except OverflowError:
        return False
    return abs(x - y) <= _REL * max(abs(x), abs(y))


# ------------------------------------------------------------------ chains: values, claims, pruning
_STEP_REF = re.compile(r"\bs(\d+)\b")


def _refs(step: dict[str, Any]) -> set[str]:
    if step.get("expr") is not None:
        return {f"s{m}" for m in _STEP_REF.findall(str(step["expr"]))}
    return {a for a in step.get("args", []) if re.fullmatch(r"s\d+", str(a))}


def prune(steps: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """Only the steps the last one rests on, renumbered s1.. in order (the rules refuse an unused step)."""
    if not steps:
        return []
    index = {str(s["id"]): i for i, s in enumerate(steps)}
    need, todo = {len(steps) - 1}, [len(steps) - 1]
    while todo:
        for r in _refs(steps[todo.pop()]):
            j = index.get(r)
            if j is not None and j not in need:
                need.add(j)
                todo.append(j)
    kept = [dict(steps[i]) for i in sorted(need)]
    rename = {str(s["id"]): f"s{k + 1}" for k, s in enumerate(kept)}
    for s in kept:
        s["id"] = rename[str(s["id"])]
        if s.get("expr") is not None:
            s["expr"] = _STEP_REF.sub(lambda m: rename.get(m.group(0), m.group(0)), str(s["expr"]))
        else:
            s["args"] = [rename.get(str(a), str(a)) for a in s.get("args", [])]
    return kept


class Arena:
    """What the searches know of one problem: givens, constants, the answer, the gold chain's prefix."""

    def __init__(self, problem: Problem):
        self.problem = problem
        self.target = Target(problem)
        self.givens: dict[str, Value] = {}
        for g in problem.givens:
            try:
                self.givens[str(g["id"])] = parse_quantity({"value": g.get("value"), "unit": g.get("unit") or ""})
            except (QuantError, TypeError, ValueError, KeyError):
                continue
        self.constants = sorted((c for c in allowed_constants(problem) if c != 0), key=lambda c: (c > 2, c))
        gold = problem.extra.get("gold_steps") if isinstance(problem.extra, dict) else None
        self.gold: list[dict[str, Any]] = [dict(s) for s in gold] if isinstance(gold, list) else []

    def claim(self, v: Value, last: bool) -> tuple[int | float, str] | None:
        """How a step states `v`: (number, unit), the last step in the answer's unit where it has the dimension;
        None where no unit text reads back (a root of a unit: m**3/2)."""
        units = []
        if last and self.target.unit:
            units.append(self.target.unit)
        units.append("" if v.dims == DIMENSIONLESS else v.unit or default_unit(v.dims))
        for unit in units:
            try:
                if unit and unit_info(unit).dims != v.dims:
                    continue
                return json_number(v.magnitude_in(unit) if unit else v.mag), unit
            except QuantError:
                continue
        return None

    def materialise(self, exprs: Sequence[str], prefix: Sequence[dict[str, Any]] = ()) -> list[dict[str, Any]] | None:
        """Steps (prefix steps kept as written: a gold chain's `op` steps) with their recomputed values as claims,
        unused steps pruned; None when a step has no value or no claim."""
        env = dict(self.givens)
        raw = [dict(s) for s in prefix] + [{"id": f"s{len(prefix) + k + 1}", "expr": e} for k, e in enumerate(exprs)]
        raw = prune(raw)
        out = []
        for k, s in enumerate(raw):
            if s.get("expr") is not None:
                v = value_of(str(s["expr"]), env)
            else:
                try:
                    v = compute(env, op=s.get("op"), args=list(s.get("args", [])))
                except (QuantError, ArithmeticError, ValueError, TypeError, KeyError):
                    v = None
            claim = self.claim(v, k == len(raw) - 1) if v is not None and _sane(v) else None
            if claim is None:
                return None
            env[str(s["id"])] = v
            step = {"id": s["id"]}
            if s.get("expr") is not None:
                step["expr"] = s["expr"]
            else:
                step["op"], step["args"] = s["op"], list(s.get("args", []))
            step.update(value=claim[0], unit=claim[1])
            out.append(step)
        return out

    def final(self, steps: Sequence[dict[str, Any]]) -> Value | None:
        env = dict(self.givens)
        for s in steps:
            v = value_of(str(s["expr"]), env) if s.get("expr") is not None else None
            if v is None and s.get("expr") is None:
                try:
                    v = compute(env, op=s.get("op"), args=list(s.get("args", [])))
                except (QuantError, ArithmeticError, ValueError, TypeError, KeyError):
                    v = None
            if v is None:
                return None
            env[str(s["id"])] = v
        return env.get(str(steps[-1]["id"])) if steps else None


# ------------------------------------------------------------------ scoring
class Judge:
    """Scores chains with the caller's scorer, counting them and remembering the top-reward ones."""

    def __init__(self, problem: Problem, score: Scorer, config: SearchConfig):
        self.problem, self.score, self.config = problem, score, config
        self.seen: set[str] = set()
        self.found: list[Found] = []
        self.scored = 0
        self.phase = 0  # top-reward chains found before the current search phase
        self.limit = config.max_chains  # chains scored when the current phase must stop

    @property
    def spent(self) -> bool:
        """This search phase's share of the chain budget is used up, or it found `stop_after` top-reward chains."""
        return self.scored >= self.limit or 0 < self.config.stop_after <= len(self.found) - self.phase

    def start_phase(self, share: float = 1.0) -> None:
        """A new search phase, which may score chains until `share` of the whole budget is used (what an
        earlier phase left over carries on)."""
        self.phase = len(self.found)
        self.limit = max(self.scored, round(share * self.config.max_chains))

    def chains(self, chains: Sequence[tuple[str, list[dict[str, Any]]]]) -> int:
        """Score chains (family, steps) in every mode, in chunks until the budget is spent; the number of them
        that earned the top reward."""
        chunk = 4 * self.config.stop_after if self.config.stop_after else 64
        before = len(self.found)
        todo: list[tuple[str, list[dict[str, Any]]]] = []
        for family, steps in chains:
            key = _chain_key(steps)
            if key in self.seen:
                continue
            self.seen.add(key)
            todo.append((family, steps))
            if len(todo) >= chunk:
                self._score(todo)
                todo = []
            if self.spent:
                return len(self.found) - before
        if todo:
            self._score(todo)
        return len(self.found) - before

    def _score(self, todo: list[tuple[str, list[dict[str, Any]]]]) -> None:
        todo = todo[: max(0, self.limit - self.scored)]
        if not todo:
            return
        texts = [render_completion(self.problem, steps) for _, steps in todo]
        rewards: list[dict[str, float]] = [{} for _ in todo]
        for k, mode in enumerate(self.config.modes):
            which = [i for i, r in enumerate(rewards) if k == 0 or self.config.rescore_all or
                     any(x >= TOP for x in r.values())]
            if not which:
                break
            results = self.score([self.problem] * len(which), [texts[i] for i in which], mode)
            for i, res in zip(which, results):
                rewards[i][mode] = float(res.reward) if res.reward is not None else 0.0
        self.scored += len(todo)
        for (family, steps), r in zip(todo, rewards):
            if any(x >= TOP for x in r.values()):
                self.found.append(Found(steps, family, r))

    def accepted(self, chains: Sequence[list[dict[str, Any]]]) -> list[bool]:
        """Does the verifier accept every step of each chain so far (an unused step aside)? One prosfi-mode pass."""
        if not chains:
            return []
        texts = [render_completion(self.problem, steps) for steps in chains]
        self.scored += len(chains)
        out = []
        for res in self.score([self.problem] * len(texts), texts, "prosfi"):
            steps = getattr(res, "steps", ()) or ()
            out.append(bool(steps) and all(s.verdict == "valid" or getattr(s, "guard", "") == "unused_step"
                                           for s in steps))
        return out


def _chain_key(steps: Sequence[dict[str, Any]]) -> str:
    return "|".join(str(s.get("expr") or f"{s.get('op')}{s.get('args')}") for s in steps)


# ------------------------------------------------------------------ (a) bottom-up enumeration
@dataclass(frozen=True)
class Node:
    """An enumerated expression: its text over ids, value, operations, the givens it uses, its children."""

    text: str
    value: Value
    ops: int
    uses: frozenset
    kids: tuple = ()
    op: str = ""  # the operator or function at the top; "" for a leaf

    @property
    def leaf(self) -> bool:
        return not self.op


_ENUM_BINARY = ("+", "-", "*", "/", "//", "%")
_ENUM_UNARY = ("floor", "ceil", "round", "abs", "sqrt")


def _combine(op: str, a: Node, b: Node) -> Node | None:
    if op == "**" and not (b.leaf and not b.uses and b.value.mag in (2, 3, Fraction(1, 2))):
        return None  # squares, cubes and square roots only
    v = _apply(op, a.value, b.value)
    if v is None:
        return None
    return Node(f"({a.text} {op} {b.text})", v, a.ops + b.ops + 1, a.uses | b.uses, (a, b), op)


def _unary(func: str, a: Node) -> Node | None:
    v = _call(func, a.value)
    if v is None or _key(v) == _key(a.value):
        return None
    return Node(f"{func}({a.text})", v, a.ops + 1, a.uses, (a,), func)


def _extreme(func: str, a: Node, b: Node) -> Node | None:
    if a.value.dims != b.value.dims:
        return None
    x, y = a.value, b.value
    v = (x if x.mag >= y.mag else y) if func == "max" else (x if x.mag <= y.mag else y)
    return Node(f"{func}({a.text}, {b.text})", v, a.ops + b.ops + 1, a.uses | b.uses, (a, b), func)


class Pool:
    """Values by key, a few expressions each (those using different givens), bounded."""

    def __init__(self, per_value: int = 2):
        self.by_key: dict[tuple, list[Node]] = {}
        self.per_value = per_value

    def add(self, n: Node) -> bool:
        got = self.by_key.setdefault(_key(n.value), [])
        if len(got) >= self.per_value or any(m.uses == n.uses for m in got):
            return False
        got.append(n)
        return True

    def nodes(self) -> list[Node]:
        return [n for ns in self.by_key.values() for n in ns]

    def find(self, v: Value | None) -> list[Node]:
        return [] if v is None or not _sane(v) else self.by_key.get(_key(v), [])


def _leaves(p: Arena) -> list[Node]:
    out = [Node(gid, v, 0, frozenset({gid})) for gid, v in p.givens.items()]
    out += [Node(_number(c), Value(c), 0, frozenset()) for c in p.constants]
    out.append(Node("pi", Value(math.pi), 0, frozenset()))
    return out


def _rank(nodes: list[Node], limit: int, rng: random.Random) -> list[Node]:
    """Keep the ones using the most givens with the fewest operations, a random share for diversity."""
    if len(nodes) <= limit:
        return nodes
    nodes = sorted(nodes, key=lambda n: (-len(n.uses), n.ops, n.text))
    head = nodes[: limit * 3 // 4]
    rest = nodes[limit * 3 // 4:]
    return head + rng.sample(rest, min(len(rest), limit - len(head)))


def enumerate_nodes(p: Arena, config: SearchConfig, rng: random.Random) -> tuple[Pool, list[list[Node]]]:
    """The bottom-up pool: level 0 the leaves, level k every operator over a level k-1 node and any earlier one
    (bounded by `config.pool` per level)."""
    pool = Pool()
    levels: list[list[Node]] = [[n for n in _leaves(p) if pool.add(n)]]
    for depth in range(1, max(1, config.depth - 1) + 1):
        last = levels[-1]
        earlier = levels[0] + (levels[1][: max(8, config.pool // 4)] if depth > 1 else last)
        new: list[Node] = []
        for a in last:
            if depth == 1:
                for f in _ENUM_UNARY:
                    if a.uses and (n := _unary(f, a)) is not None and pool.add(n):
                        new.append(n)
            for b in earlier:
                if not (a.uses or b.uses):
                    continue
                for op in _ENUM_BINARY + ("**",):
                    for x, y in ((a, b), (b, a)) if a is not b else ((a, b),):
                        if op in ("+", "*") and x is b:
                            continue  # commutative: one order
                        if (n := _combine(op, x, y)) is not None and n.ops <= 2 * MAX_OPS and pool.add(n):
                            new.append(n)
                if depth == 1:
                    for f in ("min", "max"):
                        if (n := _extreme(f, a, b)) is not None and pool.add(n):
                            new.append(n)
        levels.append(_rank(new, config.pool, rng))
    return pool, levels


def enumerate_hits(p: Arena, config: SearchConfig, rng: random.Random) -> list[Node]:
    """Expressions at the answer: pool nodes that are it, unary functions of pool nodes, and `a op b` with b
    looked up by the value the answer needs (meet in the middle)."""
    pool, levels = enumerate_nodes(p, config, rng)
    nodes = [n for lv in levels for n in lv]
    hits: list[Node] = [n for n in nodes if n.uses and p.target.hits(n.value)]
    for a in nodes:
        for f in _ENUM_UNARY:
            if a.uses and p.target.hits(v := _call(f, a.value)):
                hits.append(Node(f"{f}({a.text})", v, a.ops + 1, a.uses, (a,), f))
        for t in p.target.values:
            want = {"+": _apply("-", t, a.value), "-": _apply("-", a.value, t), "*": _apply("/", t, a.value),
                    "/": _apply("/", a.value, t)}
            for op, need in want.items():
                for b in pool.find(need):
                    n = _combine(op, a, b)
                    if n is not None and n.uses and p.target.hits(n.value):
                        hits.append(n)
            for op, need in (("-", _apply("+", t, a.value)), ("/", _apply("*", t, a.value))):
                for b in pool.find(need):  # b op a
                    n = _combine(op, b, a)
                    if n is not None and n.uses and p.target.hits(n.value):
                        hits.append(n)
    small = levels[0] + levels[1][: max(8, config.pool // 10)] if len(levels) > 1 else levels[0]
    for a in levels[0]:
        for b in small:
            for op in ("//", "%"):
                n = _combine(op, a, b)
                if n is not None and n.uses and p.target.hits(n.value):
                    hits.append(n)
            for f in ("min", "max"):
                n = _extreme(f, a, b)
                if n is not None and n.uses and p.target.hits(n.value):
                    hits.append(n)
    seen, out = set(), []
    for n in sorted(hits, key=lambda n: (-len(n.uses), n.ops)):
        if n.text not in seen:
            seen.add(n.text)
            out.append(n)
    return out[: config.hits]


def _splits(node: Node) -> list[list[str]]:
    """One- to three-step chains computing `node`: any one or two of its inner nodes as steps of their own."""
    inner: list[Node] = []

    def walk(n: Node, top: bool) -> None:
        for k in n.kids:
            walk(k, False)
        if not n.leaf and not top:
            inner.append(n)

    walk(node, True)
    out = []
    choices = [()] + [(a,) for a in inner] + [(a, b) for i, a in enumerate(inner) for b in inner[i + 1:]]
    for chosen in choices:
        exprs, names = [], {}

        def text(n: Node, root: bool = False, names: dict = names) -> str:
            if not root and n.text in names:
                return names[n.text]
            if n.leaf:
                return n.text
            if n.op[0].isalpha():
                return f"{n.op}({', '.join(text(k) for k in n.kids)})"
            return f"({text(n.kids[0])} {n.op} {text(n.kids[1])})"

        ok = True
        for n in sorted(chosen, key=lambda n: n.ops):
            e = text(n, True)
            names[n.text] = f"s{len(exprs) + 1}"
            exprs.append(_strip(e))
        exprs.append(_strip(text(node, True)))
        for e in exprs:
            tree = _parse(e)
            ops = sum(1 for x in tree.walk() if type(x).__name__ in ("BinOp", "Unary", "Call"))
            if ops > MAX_OPS:
                ok = False
        if ok:
            out.append(exprs)
    return out


def _strip(e: str) -> str:
    return e[1:-1] if e.startswith("(") and e.endswith(")") and _balanced(e[1:-1]) else e


def _balanced(s: str) -> bool:
    depth = 0
    for c in s:
        depth += c == "("
        depth -= c == ")"
        if depth < 0:
            return False
    return depth == 0


def enumerate_chains(p: Arena, config: SearchConfig, rng: random.Random) -> list[tuple[str, list[dict]]]:
    out = []
    for node in enumerate_hits(p, config, rng):
        for exprs in _splits(node):
            steps = p.materialise(exprs)
            if steps:
                out.append(("enumerate", steps))
    return out


# ------------------------------------------------------------------ (b) beam search
_BEAM_BINARY = ("+", "-", "*", "/", "//", "%")
_BEAM_UNARY = ("floor", "ceil", "round", "sqrt", "abs")


def _beam_candidates(p: Arena, steps: list[dict], env: dict[str, Value], rng: random.Random,
                     limit: int) -> list[tuple[float, str, Value]]:
    """Candidate next steps, best first: two or three earlier values, givens or constants under one or two
    operators, a function of one, a clamp of two; ranked by closeness to the answer and the givens left."""
    ids = list(p.givens) + [s["id"] for s in steps]
    consts = [(_number(c), Value(c)) for c in p.constants[:6]] + [("pi", Value(math.pi))]
    used = {m for s in steps for m in re.findall(r"\bg\d+\b", str(s.get("expr", "")))}
    newest = steps[-1]["id"] if steps else None
    cands: dict[str, Value] = {}
    items = [(i, env[i]) for i in ids]
    pairs = [(a, b) for a in items for b in items if a[0] != b[0]] + [(a, c) for a in items for c in consts] + \
        [(c, a) for a in items for c in consts]
    rng.shuffle(pairs)
    for (a, av), (b, bv) in pairs[: 6 * limit]:
        for op in _BEAM_BINARY:
            if (v := _apply(op, av, bv)) is not None:
                cands.setdefault(f"{a} {op} {b}", v)
    for a, av in rng.sample(items, min(len(items), max(2, limit // 4))):
        for f in _BEAM_UNARY:
            if (v := _call(f, av)) is not None:
                cands.setdefault(f"{f}({a})", v)
    for _ in range(2 * limit):  # three operands, two operators
        (a, av), (b, bv) = rng.sample(items, 2) if len(items) > 1 else (items[0], items[0])
        c, cv = rng.choice(items + consts)
        o1, o2 = rng.choice(_BEAM_BINARY), rng.choice(_BEAM_BINARY)
        if (ab := _apply(o1, av, bv)) is not None and (v := _apply(o2, ab, cv)) is not None:
            cands.setdefault(f"({a} {o1} {b}) {o2} {c}", v)
        if (bc := _apply(o2, bv, cv)) is not None and (v := _apply(o1, av, bc)) is not None:
            cands.setdefault(f"{a} {o1} ({b} {o2} {c})", v)
    for _ in range(max(2, limit // 4)):  # a clamp that restates (`max(gi * 1, x)`)
        (a, av), (b, bv) = rng.sample(items, 2) if len(items) > 1 else (items[0], items[0])
        for f in ("max", "min"):
            if (v := _call(f, av, bv)) is not None:
                cands.setdefault(f"{f}({a} * 1, {b})", v)
    known = {_key(v) for v in env.values()}
    scored = []
    for text, v in cands.items():
        if _key(v) in known or not _sane(v):
            continue
        names = set(re.findall(r"\b[gs]\d+\b", text))
        unused = len(set(p.givens) - used - names)
        h = p.target.distance(v) + 0.3 * unused - (0.2 if newest in names else 0.0)
        scored.append((h, text, v))
    scored.sort(key=lambda x: x[0])
    head = scored[: limit * 2 // 3]
    rest = scored[limit * 2 // 3:]
    return head + rng.sample(rest, min(len(rest), limit - len(head)))


def beam_chains(p: Arena, judge: Judge, config: SearchConfig, rng: random.Random) -> None:
    """Grow chains a step at a time; keep those the verifier accepts so far; score every one that reaches the
    answer (unused steps pruned)."""
    beam: list[tuple[float, list[dict], dict[str, Value]]] = [(0.0, [], dict(p.givens))]
    for _ in range(config.beam_steps):
        if judge.spent:
            return
        proposals = []
        for _h, steps, env in beam:
            for h, text, v in _beam_candidates(p, steps, env, rng, config.beam_expand):
                sid = f"s{len(steps) + 1}"
                step = {"id": sid, "expr": text}
                proposals.append((h, steps + [step], {**env, sid: v}))
        hits, grow = [], []
        for h, steps, env in proposals:
            (hits if p.target.hits(env[steps[-1]["id"]]) else grow).append((h, steps, env))
        chains = []
        for _h, steps, _env in hits:
            s = p.materialise([x["expr"] for x in steps])
            if s:
                chains.append(("beam", s))
        judge.chains(chains)
        mats = []
        for h, steps, env in grow:
            s = _claims(p, steps, env)
            if s:
                mats.append((h, steps, env, s))
        if judge.scored + len(mats) > judge.limit:
            mats = mats[: max(0, judge.limit - judge.scored)]
        ok = judge.accepted([m[3] for m in mats])
        kept = [(h, steps, env) for (h, steps, env, _s), good in zip(mats, ok) if good]
        kept.sort(key=lambda x: x[0])
        beam = kept[: config.beam_width]
        if not beam:
            return


def _claims(p: Arena, steps: list[dict], env: dict[str, Value]) -> list[dict] | None:
    out = []
    for s in steps:
        claim = p.claim(env[s["id"]], False)
        if claim is None:
            return None
        out.append({"id": s["id"], "expr": s["expr"], "value": claim[0], "unit": claim[1]})
    return out


# ------------------------------------------------------------------ (c) issue #34's attack families
def _values(p: Arena, config: SearchConfig) -> list[tuple[str, list[dict], Value, frozenset]]:
    """What the templates build on: (expression or id, prefix steps, value, givens used): the givens, the gold
    chain's intermediate results (the chain up to them as prefix), and pairs of givens."""
    out: list[tuple[str, list[dict], Value, frozenset]] = [(g, [], v, frozenset({g})) for g, v in p.givens.items()]
    if p.gold:
        for k in range(len(p.gold) - 1):
            prefix = p.gold[: k + 1]
            v = p.final(prefix)
            if v is not None:
                out.append((str(prefix[-1]["id"]), prefix, v, frozenset(p.givens)))
    pairs = []
    ids = list(p.givens)
    for i, a in enumerate(ids):
        for b in ids[i + 1:]:
            for op in ("+", "-", "*", "/"):
                for x, y in ((a, b), (b, a)) if op in ("-", "/") else ((a, b),):
                    v = _apply(op, p.givens[x], p.givens[y])
                    if v is not None and v.mag != 0:
                        pairs.append((f"({x} {op} {y})", [], v, frozenset({x, y})))
    pairs.sort(key=lambda t: p.target.distance(t[2]))
    return out + pairs[: max(0, config.template_values - len(out))]


def _ratio(target: Value, v: Value) -> Fraction | None:
    if v.mag == 0 or target.dims != v.dims:
        return None
    try:
        r = Fraction(target.mag) / Fraction(v.mag)
    except (TypeError, ValueError, OverflowError):
        return None
    return r


def _with(prefix: list[dict], x: str, exprs: list[str]) -> tuple[list[str], list[dict]]:
    """Expressions after a prefix: `X` stands for the value's id or expression (a pair becomes a step first)."""
    if x.startswith("("):
        sid = f"s{len(prefix) + 1}"
        return [x[1:-1]] + [e.replace("X", sid) for e in exprs], prefix
    return [e.replace("X", x) for e in exprs], prefix


def cancellation_family(p: Arena, kmax: int = 12, values=None, tails: bool = True
                        ) -> list[tuple[str, list[str], list[dict]]]:
    """`s1 = gi * x; s2 = x + s1 / gi` is 2x with no literal; `+ x` (or `+ s1 / gi`) repeated reaches kx;
    then (`tails`) optionally one more given added, subtracted, multiplied or divided. `values`: what x may be
    (default: the givens, gold results and pairs of `_values`)."""
    out = []
    for x, prefix, v, uses in (values if values is not None else _values(p, SearchConfig())):
        for gi, gv in p.givens.items():
            if gi in uses or gv.mag == 0:
                continue
            for t in p.target.values:
                for tail, tail_v in [("", None)] + [(f" {op} {h}", (op, hv)) for h, hv in p.givens.items()
                                                     for op in ("+", "-", "*", "/") if tails]:
                    base = t if tail_v is None else _apply({"+": "-", "-": "+", "*": "/", "/": "*"}[tail_v[0]], t,
                                                           tail_v[1])
                    if base is None:
                        continue
                    r = _ratio(base, v)
                    if r is None or r.denominator != 1 or not 2 <= r <= kmax:
                        continue
                    k = int(r)
                    for repeat in ("X", "s1 / GI"):
                        exprs = ["GI * X", "X + s1 / GI"]
                        for _ in range(k - 2):
                            exprs.append(f"s{len(exprs)} + {repeat}")
                        if tail:
                            exprs.append(f"s{len(exprs)}{tail}")
                        shift = len(prefix) + (1 if x.startswith("(") else 0)
                        exprs = [re.sub(r"\bs(\d+)\b", lambda m, shift=shift: f"s{int(m.group(1)) + shift}", e).replace("GI", gi)
                                 for e in exprs]
                        e2, pre = _with(prefix, x, exprs)
                        out.append((f"template:cancellation x{k}" + (" + tail" if tail else ""), e2, pre))
    return out


def _offsets(p: Arena) -> list[tuple[str, Value]]:
    """Free numbers from two givens through an opaque operator: `a % b`, `a // b`, round/floor/ceil of a / b."""
    out = []
    for a in p.givens:
        for b in p.givens:
            if a == b:
                continue
            for text in (f"{a} % {b}", f"{a} // {b}", f"round({a} / {b})", f"floor({a} / {b})",
                         f"ceil({a} / {b})", f"abs({a} - {b})"):
                v = value_of(text, p.givens)
                if v is not None and _sane(v) and v.mag != 0:
                    out.append((text, v))
    return out


def given_values(p: Arena) -> list[tuple[str, list[dict], Value, frozenset]]:
    """The givens alone, as template values (x = gj in the cancellation family)."""
    return [(g, [], v, frozenset({g})) for g, v in p.givens.items()]


def realise(p: Arena, proposals: Sequence[tuple[str, list[str], list[dict]]]) -> list[tuple[str, list[dict]]]:
    """Template proposals (family, expressions, prefix) as chains with claims, those reaching the answer."""
    out = []
    for family, exprs, prefix in proposals:
        steps = p.materialise(exprs, prefix)
        if steps and p.target.hits(p.final(steps)):
            out.append((family, steps))
    return out


def template_chains(p: Arena, config: SearchConfig) -> list[tuple[str, list[dict]]]:
    """Issue #34's attack families instantiated on the problem (see the module doc), those reaching the answer."""
    values = _values(p, config)
    proposals: list[tuple[str, list[str], list[dict]]] = list(cancellation_family(p, values=values))
    offsets = _offsets(p)
    fractions = [(g, v) for g, v in p.givens.items() if v.dims == DIMENSIONLESS and isinstance(v.mag, Fraction)
                 and 0 < v.mag < 1]
    consts = [c for c in p.constants if c not in (0,)]
    for x, prefix, v, uses in values:
        for t in p.target.values:
            # the c that `x op c` needs to be the answer, by key
            need = {op: _key(c) for op, c in (("+", _apply("-", t, v)), ("-", _apply("-", v, t)),
                                               ("*", _apply("/", t, v)), ("/", _apply("/", v, t))) if c is not None}

            def want(op: str, c: Value, need: dict = need) -> bool:
                return need.get(op) == _key(c)

            # opaque offsets and factors
            for text, c in offsets:
                for op in ("+", "-", "*", "/"):
                    if want(op, c):
                        proposals.append((f"template:opaque {text.split('(')[0] if '(' in text else text.split()[1]}",
                                          *_with(prefix, x, [f"X {op} ({text})"])))
            # clamps, pi / pi, identities that restate: a free copy of x added to x (2x) or a free factor
            for gi, gv in p.givens.items():
                if gi in uses:
                    continue
                restate = []
                if gv.dims == v.dims and v.mag > gv.mag:
                    restate.append(f"max({gi} * 1, X)")
                if gv.dims == v.dims and v.mag < gv.mag:
                    restate.append(f"min({gi} * 1, X)")
                restate += [f"X * {gi} / {gi}", f"X + {gi} - {gi}", f"X + {gi} % {gi}"]
                for r in restate:
                    if want("*", Value(Fraction(2))):
                        proposals.append(("template:restate 2x", *_with(prefix, x, [r, f"X + s{len(prefix) + 1 + (1 if x.startswith('(') else 0)}"])))
                    if want("*", Value(Fraction(1))):
                        proposals.append(("template:restate", *_with(prefix, x, [r])))
            for k in (1, 2, 3, 4):
                if want("*", Value(Fraction(k))):
                    proposals.append(("template:pi/pi", *_with(prefix, x, [f"X * ({' + '.join(['pi'] * k)}) / pi"])))
            if want("*", Value(Fraction(1))):
                proposals.append(("template:pi/pi", *_with(prefix, x, ["X * pi / pi"])))
            # a percent's or fraction's reciprocal (4 for 25 %), its complement's, as a literal
            for _g, f in fractions:
                for c in (1 / f.mag, 1 / (1 - f.mag), 1 - f.mag, 1 + f.mag):
                    for op in ("*", "/"):
                        if want(op, Value(c)):
                            proposals.append(("template:reciprocal", *_with(prefix, x, [f"X {op} {_number(c)}"])))
            # a licensed number (a "leg" of a trip, "June", "both") as a multiple or an offset
            for c in consts:
                for op in ("*", "/", "+", "-"):
                    if want(op, Value(c)):
                        proposals.append(("template:licensed", *_with(prefix, x, [f"X {op} {_number(c)}"])))
    return realise(p, proposals)


# ------------------------------------------------------------------ the search
def search(problem: Problem, score: Scorer, config: SearchConfig | None = None) -> SearchResult:
    """Every top-reward chain the three searches find for `problem` (within `config.max_chains` scored)."""
    config = config or SearchConfig()
    start = time.perf_counter()
    rng = random.Random(f"{config.seed}\x00{problem.id}")
    p = Arena(problem)
    judge = Judge(problem, score, config)
    if config.templates:  # the budget: templates to 40 %, enumeration to 70 %, the beam the rest
        judge.start_phase(0.4)
        judge.chains(template_chains(p, config))
    judge.start_phase(0.7)
    if config.depth > 0 and config.hits > 0 and not judge.spent:
        judge.chains(enumerate_chains(p, config, rng))
    judge.start_phase(1.0)
    if config.beam_steps > 0 and config.beam_width > 0 and not judge.spent:
        beam_chains(p, judge, config, rng)
    return SearchResult(problem.id, judge.found, judge.scored, time.perf_counter() - start)


__all__ = ["MODES", "Arena", "Found", "Judge", "Node", "Pool", "Scorer", "SearchConfig", "SearchResult", "Target",
           "beam_chains", "cancellation_family", "enumerate_chains", "enumerate_hits", "given_values", "prune",
           "realise", "scorer_from", "search", "template_chains", "value_of"]
