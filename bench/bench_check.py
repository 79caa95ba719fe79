"""Benchmark step checking: naive Z3 vs prosfi's default path, and Prover9 (not a test).

    python bench/bench_check.py [--problems 400] [--group 8] [--steps 6] [--seed 0] [--prover9 200]

(the defaults shown; `--help` lists every option with the default the run uses)

Generates a seeded mix of step checks shaped like the ones GRPO produces: Knights & Knaves
problems (one `Knight x ↔ claim` premise per inhabitant) and ProverQA-style rule chains
(`∀ x, P x → Q x` rules and facts), each problem answered by a group of `--group` completions
that write `--steps` steps of 2–6 premises (valid and invalid conclusions). Completions of one
group repeat each other's steps, sometimes with renamed premises, reordered premises or renamed
bound variables, as sampled completions do. Then reports checks/s for

  (a) naive: one process, a fresh Z3 solver per check, no cache (formulas as Z3 Python objects,
      and as SMT-LIB text; the ratio uses the faster of the two);
  (b) prosfi: `Verifier()` with its defaults (all cores, cache, truth tables, incremental
      solving), fed one reward batch (`--batch` checks) per `check_many` call, starting with an
      empty cache; and the same with the truth tables off, to show what Z3 alone does;

plus their ratio, verdict agreement between (a) and (b), and Prover9's checks/s on distinct
checks (Prover9 alone, no truth tables, no cache).
"""

from __future__ import annotations

import argparse
import json
import os
import random
import sys
import time
from dataclasses import dataclass

from prosfi.verdict import Entailment

NAMES = ["ann", "bob", "cai", "dee", "eli", "fay", "gus", "hal"]
PREDS = ["Kind", "Nice", "Happy", "Big", "Round", "Green", "Quiet", "Smart", "Young", "Rough", "Cold", "Red"]
THINGS = ["candy", "rex", "tom", "lily", "max", "sam"]


@dataclass
class Problem:
    premises: dict[str, str]
    candidates: list[tuple[list[str], str]]  # (premise names used, conclusion) steps a policy might write


def _kk_problem(rng: random.Random) -> Problem:
    people = rng.sample(NAMES, rng.randint(2, 5))

    def lit(p: str) -> str:
        return f"Knight {p}" if rng.random() < 0.5 else f"¬ Knight {p}"

    def claim(speaker: str) -> str:
        others = [p for p in people if p != speaker] or people
        kind = rng.random()
        if kind < 0.4:
            return lit(rng.choice(others))
        a, b = rng.choice(others), rng.choice(people)
        op = "∧" if kind < 0.7 else "∨" if kind < 0.9 else "→"
        return f"({lit(a)} {op} {lit(b)})"

    premises = {f"h{i + 1}": f"Knight {p} ↔ {claim(p)}" for i, p in enumerate(people)}
    names = list(premises)
    candidates = []
    for _ in range(10):
        used = rng.sample(names, min(len(names), rng.randint(2, 6)))
        target = rng.choice(people)
        concl = f"Knight {target}" if rng.random() < 0.5 else f"¬ Knight {target}"
        if rng.random() < 0.2:
            other = rng.choice(people)
            concl = f"{concl} ∧ ¬ Knight {other}" if other != target else concl
        candidates.append((used, concl))
    return Problem(premises, candidates)


def _pqa_problem(rng: random.Random) -> Problem:
    preds = rng.sample(PREDS, 7)
    thing = rng.choice(THINGS)
    premises: dict[str, str] = {}
    chain = preds[:5]
    for i in range(4):  # Kind → Nice → Happy → … with an occasional negated or conjunctive rule
        left, right = chain[i], chain[i + 1]
        form = rng.random()
        if form < 0.6:
            premises[f"h{len(premises) + 1}"] = f"∀ x, {left} x → {right} x"
        elif form < 0.8:
            premises[f"h{len(premises) + 1}"] = f"∀ x, {left} x ∧ {preds[6]} x → {right} x"
        else:
            premises[f"h{len(premises) + 1}"] = f"∀ x, {left} x → {right} x ∨ {preds[5]} x"
    premises[f"h{len(premises) + 1}"] = f"{chain[0]} {thing}"
    premises[f"h{len(premises) + 1}"] = f"{preds[6]} {thing}"
    premises[f"h{len(premises) + 1}"] = f"¬ {preds[5]} {thing}"
    names = list(premises)
    candidates = []
    for _ in range(10):
        used = rng.sample(names, min(len(names), rng.randint(2, 6)))
        p = rng.choice(chain + [preds[5]])
        concl = f"{p} {thing}" if rng.random() < 0.7 else f"¬ {p} {thing}"
        if rng.random() < 0.15:
            concl = f"∃ y, {p} y"
        candidates.append((used, concl))
    return Problem(premises, candidates)


def _alpha_variant(text: str, rng: random.Random) -> str:
    return text.replace("∀ x,", "∀ z,").replace(" x ", " z ").replace(" x)", " z)").replace(" x", " z") \
        if "∀ x," in text and rng.random() < 0.5 else text


def generate(n_problems: int, group: int, steps: int, seed: int) -> list[Entailment]:
    """Checks in the order a GRPO reward batch would send them: problem by problem, group by group."""
    rng = random.Random(seed)
    checks: list[Entailment] = []
    for k in range(n_problems):
        prob = _kk_problem(rng) if k % 2 == 0 else _pqa_problem(rng)
        for _ in range(group):
            for s in range(steps):
                used, concl = rng.choice(prob.candidates)
                used = list(used)
                if rng.random() < 0.3:
                    rng.shuffle(used)
                rename = rng.random() < 0.2  # a completion that cites steps s1.. instead of h1..
                prem = {(f"s{j}" if rename else n): _alpha_variant(prob.premises[n], rng)
                        for j, n in enumerate(used)}
                checks.append(Entailment(prem, concl, f"p{k}-s{s}"))
    return checks


def naive(checks: list[Entailment], timeout_ms: int, smtlib: bool = False) -> tuple[float, list[str]]:
    """A fresh Z3 solver per check in this process, no cache (what a straightforward reward does).
    Formulas go in as Z3 Python objects (`Z3Renderer`), or with `smtlib` as one SMT-LIB script
    per check (`to_smtlib`), which skips the cost of Z3's Python API."""
    import z3

    from prosfi.logic import check_signature, parse
    from prosfi.logic.render_z3 import Z3Renderer, to_smtlib

    out = []
    start = time.perf_counter()
    for e in checks:
        prem = [parse(t) for t in e.premises.values()]
        concl = parse(e.conclusion)
        sig = check_signature(prem + [concl])
        s = z3.Solver()
        s.set("timeout", timeout_ms)
        if smtlib:
            s.from_string(to_smtlib(prem, concl, sig).replace("(check-sat)", ""))
        else:
            r = Z3Renderer(sig)
            s.add(*[r.formula(f) for f in prem])
            s.add(z3.Not(r.formula(concl)))
        res = s.check()
        out.append("valid" if res == z3.unsat else "invalid" if res == z3.sat else "unknown")
    return time.perf_counter() - start, out


def prosfi_default(checks: list[Entailment], batch: int, **overrides) -> tuple[float, list[str], dict]:
    from prosfi.verify.verifier import Verifier

    with Verifier(**overrides) as v:
        v.check_many(checks[:64])  # start the pool outside the timed region (paid once per run)
        v.cache.clear()
        before = v.stats()
        start = time.perf_counter()
        out = []
        for k in range(0, len(checks), batch):
            out.extend(x.status.value for x in v.check_many(checks[k:k + batch]))
        elapsed = time.perf_counter() - start
        after = v.stats()
        n = after["checks"] - before["checks"]
        after["hit_rate"] = (after["cache_hits"] - before["cache_hits"]) / n
        after["decided_by"] = {k: n - before["decided_by"].get(k, 0) for k, n in after["decided_by"].items()}
        after["status"] = {k: n - before["status"].get(k, 0) for k, n in after["status"].items()}
        return elapsed, out, after


def prover9_rate(checks: list[Entailment], n: int) -> tuple[float, int, dict]:
    from prosfi.verify.verifier import Verifier

    seen, unique = set(), []
    for e in checks:
        key = (tuple(sorted(e.premises.values())), e.conclusion)
        if key not in seen:
            seen.add(key)
            unique.append(e)
    unique = unique[:n]
    with Verifier(backends=("prover9",), cache_size=0, truth_table=False) as v:
        v.check_many(unique[:4])
        start = time.perf_counter()
        verdicts = v.check_many(unique)
        elapsed = time.perf_counter() - start
    counts: dict = {}
    for x in verdicts:
        counts[x.status.value] = counts.get(x.status.value, 0) + 1
    return elapsed, len(unique), counts


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--problems", type=int, default=400, help="problems, half K&K (default: %(default)s)")
    ap.add_argument("--group", type=int, default=8, help="completions per problem (GRPO group size; "
                    "default: %(default)s)")
    ap.add_argument("--steps", type=int, default=6, help="steps per completion (default: %(default)s)")
    ap.add_argument("--batch", type=int, default=512, help="checks per check_many call (one reward batch; "
                    "default: %(default)s)")
    ap.add_argument("--naive-limit", type=int, default=3000, help="checks timed on the naive path "
                    "(default: %(default)s)")
    ap.add_argument("--prover9", type=int, default=200, help="distinct checks timed on Prover9 "
                    "(default: %(default)s)")
    ap.add_argument("--seed", type=int, default=0, help="(default: %(default)s)")
    ap.add_argument("--json", action="store_true", help="print one JSON object instead of text")
    args = ap.parse_args(argv)

    checks = generate(args.problems, args.group, args.steps, args.seed)
    unique = len({(frozenset(e.premises.values()), e.conclusion) for e in checks})
    sample = checks[: args.naive_limit]
    t_naive, v_naive = naive(sample, 2000)
    t_naive_smt, _ = naive(sample, 2000, smtlib=True)
    naive_rate = len(sample) / min(t_naive, t_naive_smt)  # the faster naive variant
    t_fast, v_fast, stats = prosfi_default(checks, args.batch)
    fast_rate = len(checks) / t_fast
    t_z3, _, _ = prosfi_default(checks, args.batch, truth_table=False)
    seen: set = set()
    distinct = [e for e in checks if not ((k := (frozenset(e.premises.values()), e.conclusion)) in seen
                                          or seen.add(k))]
    t_distinct, _, _ = prosfi_default(distinct, args.batch)
    agree = sum(a == b for a, b in zip(v_naive, v_fast)) / len(v_naive)
    t_p9, n_p9, p9_counts = prover9_rate(checks, args.prover9)
    result = {
        "cores": len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count(),
        "load_avg_1min": round(os.getloadavg()[0], 2) if hasattr(os, "getloadavg") else None,
        "checks": len(checks), "distinct_text_checks": unique, "batch": args.batch,
        "naive_z3_objects_checks_per_s": round(len(sample) / t_naive, 1),
        "naive_smtlib_checks_per_s": round(len(sample) / t_naive_smt, 1),
        "prosfi_checks_per_s": round(fast_rate, 1),
        "speedup_vs_faster_naive": round(fast_rate / naive_rate, 2),
        "prosfi_without_truth_table_checks_per_s": round(len(checks) / t_z3, 1),
        "prosfi_distinct_only_checks_per_s": round(len(distinct) / t_distinct, 1),
        "verdict_agreement_naive_vs_prosfi": round(agree, 4),
        "prosfi_status": stats["status"], "prosfi_hit_rate": round(stats["hit_rate"], 3),
        "prosfi_decided_by": stats["decided_by"],
        "prover9_checks_per_s": round(n_p9 / t_p9, 1), "prover9_checks": n_p9, "prover9_status": p9_counts,
    }
    if args.json:
        print(json.dumps(result))
    else:
        for k, v in result.items():
            print(f"{k:>36}: {v}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
