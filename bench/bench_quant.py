"""Benchmark quantity step checks: a naive Pint evaluation per check vs prosfi.quant (not a test).

    python bench/bench_quant.py [--completions 512] [--steps 4] [--seed 0]

Generates a seeded batch shaped like one GRPO reward batch of quantity completions: physics-style
problems (distance/time/mass/velocity givens in mixed units) answered by `--completions`
completions that write `--steps` steps each; a step is an expression over the givens and earlier
steps with a claimed value and unit (right, rounded, wrong value, wrong unit, or a dimension error
inside the expression). Completions of one problem repeat each other's steps, as sampled
completions do. Then reports checks/s for

  (a) naive: every check on its own: the quantity strings parsed by Pint (one registry, built
      before the clock starts), the expression walked with Python's `ast` over Pint Quantities,
      the claim converted with `.to()` and compared with the same tolerance;
  (b) prosfi: `check_quantity` on the same checks (exact rationals, SI base magnitudes, cached
      unit and expression parsing);

plus their ratio, the verdict agreement, and the wall time of the whole batch (the issue's target:
a 512-completion quantity batch in <= 0.5 s on 2 cores).
"""

from __future__ import annotations

import argparse
import ast
import operator
import random
import time

from prosfi.quant import Tolerance, check_quantity
from prosfi.quant.units import registry

UNITS = {"length": ["m", "km", "cm", "mi"], "time": ["s", "min", "h"], "mass": ["kg", "g"],
         "speed": ["m/s", "km/h"]}


def _problem(rng: random.Random) -> tuple[dict[str, str], list[tuple[str, str, str]]]:
    """Givens and the gold steps (name, expr, dimension kind) of one problem."""
    g = {"g1": f"{rng.randint(1, 900)} {rng.choice(UNITS['length'])}",
         "g2": f"{rng.randint(1, 90)} {rng.choice(UNITS['time'])}",
         "g3": f"{rng.randint(1, 200)} {rng.choice(UNITS['mass'])}",
         "g4": f"{rng.randint(1, 50)}"}
    steps = [("s1", "g1 / g2", "speed"), ("s2", "g3 * s1", "momentum"), ("s3", "g3 * s1 ** 2 / 2", "energy"),
             ("s4", "s2 * g4 + s2", "momentum"), ("s5", "(g1 + g1 / g4) / g2", "speed")]
    return g, steps


def _naive_eval(node, env, ureg):
    ops = {ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul, ast.Div: operator.truediv,
           ast.Pow: operator.pow}
    if isinstance(node, ast.Expression):
        return _naive_eval(node.body, env, ureg)
    if isinstance(node, ast.BinOp):
        return ops[type(node.op)](_naive_eval(node.left, env, ureg), _naive_eval(node.right, env, ureg))
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        return -_naive_eval(node.operand, env, ureg)
    if isinstance(node, ast.Constant):
        return ureg.Quantity(node.value)
    if isinstance(node, ast.Name):
        return env[node.id]
    raise ValueError(type(node).__name__)


def naive_check(quantities: dict, expr: str, claim: str, ureg, rel: float) -> str:
    """What one writes without prosfi: Pint Quantities from strings, ast walk, `.to()`, compare."""
    import pint

    try:
        env = {k: ureg.Quantity(v) for k, v in quantities.items()}
        true = _naive_eval(ast.parse(expr, mode="eval"), env, ureg)
        c = ureg.Quantity(claim)
        if true.dimensionality != c.dimensionality:
            return "invalid"
        t = true.to_base_units().magnitude
        return "valid" if abs(t - c.to_base_units().magnitude) <= rel * max(abs(t), 1e-12) else "invalid"
    except pint.DimensionalityError:
        return "invalid"
    except Exception:
        return "error"


def naive_registry():
    import pint

    return pint.UnitRegistry()  # Pint's defaults: float magnitudes


def build_batch(completions: int, steps: int, seed: int, ureg):
    """[(quantities, expr, claim)] for `completions` completions of `steps` steps (groups of 8)."""
    rng = random.Random(seed)
    out = []
    for _ in range(completions // 8 + (completions % 8 > 0)):
        givens, gold = _problem(rng)
        env = {k: ureg.Quantity(v) for k, v in givens.items()}
        for _ in range(8):
            if len(out) >= completions * steps:
                break
            quantities = dict(givens)
            for name, expr, _ in gold[:steps]:
                true = _naive_eval(ast.parse(expr, mode="eval"), env, ureg)
                env[name] = true
                base = true.to_base_units()
                kind = rng.random()
                mag = float(base.magnitude)
                unit = f"{base.units:~}".replace(" ", "")
                if kind < 0.55:
                    claim = f"{mag!r} {unit}"
                elif kind < 0.7:
                    claim = f"{mag * 1.3!r} {unit}"
                elif kind < 0.85:
                    claim = f"{mag!r} kg"
                else:
                    claim = f"{mag:.4g} {unit}"
                use = expr if rng.random() > 0.1 else expr.replace("/", "+", 1)
                out.append((dict(quantities), use, claim))
                quantities[name] = f"{mag!r} {unit}"
    return out


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--completions", type=int, default=512,
                    help="completions in the batch (default: %(default)s)")
    ap.add_argument("--steps", type=int, default=4,
                    help="steps per completion, at most 5 (default: %(default)s)")
    ap.add_argument("--seed", type=int, default=0, help="random seed (default: %(default)s)")
    args = ap.parse_args(argv)
    ureg = naive_registry()  # registries are built before the clocks start (~0.3 s each)
    registry()
    batch = build_batch(args.completions, min(args.steps, 5), args.seed, ureg)
    tol = Tolerance()
    print(f"batch: {args.completions} completions x {min(args.steps, 5)} steps = {len(batch)} checks")

    t0, c0 = time.perf_counter(), time.process_time()
    naive = [naive_check(q, e, c, ureg, tol.rel) for q, e, c in batch]
    t_naive, cpu_naive = time.perf_counter() - t0, time.process_time() - c0

    t0, c0 = time.perf_counter(), time.process_time()
    ours = [check_quantity(q, expr=e, claim=c, tol=tol).status.value for q, e, c in batch]
    t_ours, cpu_ours = time.perf_counter() - t0, time.process_time() - c0

    agree = sum(a == b or (a != "valid" and b != "valid") for a, b in zip(naive, ours))
    print(f"(a) naive Pint per check : {len(batch) / t_naive:10.0f} checks/s  ({t_naive:.3f} s wall, "
          f"{cpu_naive:.3f} s CPU)")
    print(f"(b) prosfi check_quantity: {len(batch) / t_ours:10.0f} checks/s  ({t_ours:.3f} s wall, "
          f"{cpu_ours:.3f} s CPU)")
    print(f"ratio (b)/(a): {t_naive / t_ours:.1f}x wall, {cpu_naive / cpu_ours:.1f}x CPU; "
          f"valid/not-valid agreement {agree}/{len(batch)}; "
          f"valid {ours.count('valid')}, invalid {ours.count('invalid')}")
    print(f"batch target (<= 0.5 s for 512 completions): {t_ours:.3f} s wall, {cpu_ours:.3f} s CPU for "
          f"{args.completions} completions (wall time counts other processes on a shared machine)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
