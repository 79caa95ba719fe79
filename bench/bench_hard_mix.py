"""The verifier at the limit: a hard mix of distinct first-order checks (a third need Z3), `prosfi check`'s path against a
naive loop, CPU time of each measured in the same run (not a test).

    python bench/bench_hard_mix.py [--checks 4978] [--seed 0] [--workers 2] [--no-herbrand] [--cli]
                                   [--json]

The mix (`generate`): every check distinct (no cache can help), shaped like GRPO steps on first-order
problems — ProverQA-style rule chains over several constants (`∀ x, P x → Q x`, conjunctive and
disjunctive rules, facts, negated facts; valid and invalid conclusions), and about a third that the
exact truth tables cannot decide and Z3 must: binary relations under nested quantifiers (`∀ x, ∃ y,
R x y`, symmetry and transitivity rules, existential conclusions, equality between constants). Each
check has its own vocabulary suffix so no two share text.

  naive:  one process, for each check: parse every formula, check the signature, a fresh Z3 solver, the
          formulas as Z3 objects, `check()` (what a straightforward reward does);
  prosfi: what `prosfi check` runs — `Verifier` with its defaults (truth tables, then Herbrand proofs
          and wider-domain countermodels in the parent, incremental Z3 in `--workers` worker
          processes for the rest) fed 512 checks per `check_many`, from an empty cache;
          `--no-herbrand` measures it without the Herbrand stage (Z3 then decides a third);
          `--cli` runs the command itself instead (`prosfi check in.jsonl -o out.jsonl`, in the
          side's process: JSON reading and writing included).

Each side runs in its own fresh subprocess; its CPU time is user+system of that process and of every
process it started (the workers), read with `resource.getrusage(RUSAGE_CHILDREN)` after it exits. The
report gives both CPU times, the ratio naive / prosfi, wall times, verdict counts, who decided on the
prosfi side and how many worker processes it started, and soundness against the naive path (no check
`valid` on one side and `invalid` on the other).
"""

from __future__ import annotations

import argparse
import json
import os
import random
import resource
import subprocess
import sys
import time

PREDS = ["Kind", "Nice", "Happy", "Big", "Round", "Green", "Quiet", "Smart", "Young", "Rough", "Cold", "Red",
         "Blue", "Tall", "Wise", "Brave"]
RELS = ["Likes", "Sees", "Knows", "Helps", "Chases", "Eats"]
THINGS = ["ann", "bob", "cai", "dee", "eli", "fay", "gus", "hal"]


def _chain_check(rng: random.Random, tag: str) -> dict:
    """A ProverQA-style rule chain over one or two constants, within the exact truth tables' reach
    (at most 16 atoms): they decide these without a prover."""
    preds = [p + tag for p in rng.sample(PREDS, 8)]
    things = rng.sample(THINGS, rng.randint(1, 2))
    prem: dict[str, str] = {}
    depth = rng.randint(2, 5)
    for i in range(depth):
        a, b = preds[i], preds[i + 1]
        form = rng.random()
        if form < 0.5:
            prem[f"h{len(prem) + 1}"] = f"∀ x, {a} x → {b} x"
        elif form < 0.75:
            prem[f"h{len(prem) + 1}"] = f"∀ x, {a} x ∧ {preds[7]} x → {b} x"
        else:
            prem[f"h{len(prem) + 1}"] = f"∀ x, {a} x → {b} x ∨ {preds[6]} x"
    t = things[0]
    prem[f"h{len(prem) + 1}"] = f"{preds[0]} {t}"
    prem[f"h{len(prem) + 1}"] = f"{preds[7]} {t}"
    prem[f"h{len(prem) + 1}"] = f"¬ {preds[6]} {t}"
    for other in things[1:]:
        prem[f"h{len(prem) + 1}"] = f"{rng.choice(preds[:depth])} {other} ∨ ¬ {preds[7]} {other}"
    target = rng.choice(preds[1:depth + 1])
    who = t if rng.random() < 0.8 else rng.choice(things)
    concl = f"{target} {who}" if rng.random() < 0.7 else f"¬ {target} {who}"
    if rng.random() < 0.2:
        concl = f"{concl} ∧ {preds[0]} {t}"
    return {"premises": prem, "conclusion": concl}


def _relational_check(rng: random.Random, tag: str) -> dict:
    """Nested quantifiers over binary relations, existential conclusions, equality: Z3's work."""
    r, s = [x + tag for x in rng.sample(RELS, 2)]
    p, q = [x + tag for x in rng.sample(PREDS, 2)]
    a, b, c = rng.sample(THINGS, 3)
    shape = rng.randrange(6)
    if shape == 0:  # seriality + a rule: ∃ conclusion
        prem = {"h1": f"∀ x, ∃ y, {r} x y", "h2": f"∀ x y, {r} x y → {p} y"}
        concl = f"∃ z, {p} z" if rng.random() < 0.7 else f"{p} {a}"
    elif shape == 1:  # symmetry
        prem = {"h1": f"∀ x y, {r} x y → {r} y x", "h2": f"{r} {a} {b}"}
        concl = f"{r} {b} {a}" if rng.random() < 0.6 else f"{r} {a} {c}"
    elif shape == 2:  # transitivity
        prem = {"h1": f"∀ x y z, {r} x y ∧ {r} y z → {r} x z", "h2": f"{r} {a} {b}", "h3": f"{r} {b} {c}"}
        concl = f"{r} {a} {c}" if rng.random() < 0.6 else f"{r} {c} {a}"
    elif shape == 3:  # ∀∃ → ∃∀ is invalid, the other way valid
        if rng.random() < 0.5:
            prem, concl = {"h1": f"∃ x, ∀ y, {r} x y"}, f"∀ y, ∃ x, {r} x y"
        else:
            prem, concl = {"h1": f"∀ y, ∃ x, {r} x y"}, f"∃ x, ∀ y, {r} x y"
    elif shape == 4:  # equality between constants
        prem = {"h1": f"{a} = {b}", "h2": f"{p} {a}", "h3": f"∀ x, {p} x → {q} x"}
        concl = f"{q} {b}" if rng.random() < 0.7 else f"{q} {c}"
    else:  # two relations, a rule linking them, an existential witness
        prem = {"h1": f"∀ x y, {r} x y → {s} y x", "h2": f"∃ x, {r} {a} x", "h3": f"∀ x y, {s} x y → {p} y"}
        concl = f"{p} {a}" if rng.random() < 0.6 else f"∃ x, {s} {a} x"
    return {"premises": prem, "conclusion": concl}


def generate(n: int, seed: int = 0) -> list[dict]:
    """`n` distinct check lines (`prosfi check`'s input): half relational, of which about two thirds
    reach Z3 (a third of all checks)."""
    rng = random.Random(seed)
    out = []
    for k in range(n):
        tag = f"{k}"  # every check its own vocabulary: nothing is shared or cached
        rec = _relational_check(rng, tag) if k % 2 == 0 else _chain_check(rng, tag)
        out.append({"id": f"c{k}", **rec})
    return out


def run_naive(lines: list[dict], timeout_ms: int) -> list[str]:
    import z3

    from prosfi.logic import check_signature, parse
    from prosfi.logic.render_z3 import Z3Renderer

    out = []
    for e in lines:
        prem = [parse(t) for t in e["premises"].values()]
        concl = parse(e["conclusion"])
        sig = check_signature(prem + [concl])
        s = z3.Solver()
        s.set("timeout", timeout_ms)
        r = Z3Renderer(sig)
        s.add(*[r.formula(f) for f in prem])
        s.add(z3.Not(r.formula(concl)))
        res = s.check()
        out.append("valid" if res == z3.unsat else "invalid" if res == z3.sat else "unknown")
    return out


def run_prosfi(lines: list[dict], workers: int, timeout_ms: int,
               herbrand: bool = True) -> tuple[list[str], dict]:
    """The verdicts, and who decided them (`decided_by`, the pool's `workers_started`)."""
    from prosfi.verdict import Entailment
    from prosfi.verify.verifier import Verifier

    checks = [Entailment(e["premises"], e["conclusion"], e["id"]) for e in lines]
    out = []
    with Verifier(workers=workers, timeout_ms=timeout_ms, herbrand=herbrand) as v:
        for k in range(0, len(checks), 512):
            out.extend(x.status.value for x in v.check_many(checks[k:k + 512]))
        stats = v.stats()
    return out, {"decided_by": stats["decided_by"],
                 "workers_started": stats.get("pool", {}).get("workers_started", 0)}


def run_cli(lines: list[dict], workers: int, timeout_ms: int,
            herbrand: bool = True) -> tuple[list[str], dict]:
    """`prosfi check` itself on the mix written as JSONL: the verdicts and who decided them."""
    import collections
    import tempfile

    from prosfi.cli import main

    with tempfile.TemporaryDirectory() as tmp:
        src, dst = os.path.join(tmp, "mix.jsonl"), os.path.join(tmp, "out.jsonl")
        with open(src, "w", encoding="utf-8") as f:
            f.writelines(json.dumps(e, ensure_ascii=False) + "\n" for e in lines)
        argv = ["check", src, "-o", dst, "--workers", str(workers), "--timeout-ms", str(timeout_ms),
                "--no-progress"]
        if main(argv + ([] if herbrand else ["--no-herbrand"])) != 0:
            raise RuntimeError("prosfi check failed")
        with open(dst, encoding="utf-8") as f:
            records = [json.loads(line) for line in f]
    by = collections.Counter(r["backend"] for r in records if r.get("backend"))
    return [r["verdict"] for r in records], {"decided_by": dict(by), "workers_started": None}


def _child(args) -> int:
    lines = generate(args.checks, args.seed)
    t0 = time.perf_counter()
    if args.side == "naive":
        out, info = run_naive(lines, args.timeout_ms), {}
    else:
        run = run_cli if args.cli else run_prosfi
        out, info = run(lines, args.workers, args.timeout_ms, not args.no_herbrand)
    wall = time.perf_counter() - t0
    print(json.dumps({"wall_s": wall, "verdicts": out, **info}))
    return 0


def measure(side: str, args) -> dict:
    """Run one side in a fresh subprocess; its CPU (and its workers') from RUSAGE_CHILDREN."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    cmd = [sys.executable, __file__, "--side", side, "--checks", str(args.checks), "--seed", str(args.seed),
           "--workers", str(args.workers), "--timeout-ms", str(args.timeout_ms)]
    if args.no_herbrand:
        cmd.append("--no-herbrand")
    if args.cli:
        cmd.append("--cli")
    proc = subprocess.run(cmd, capture_output=True, text=True, check=True)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    data = json.loads(proc.stdout.strip().splitlines()[-1])
    data["cpu_s"] = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return data


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--checks", type=int, default=4978, help="distinct checks (default: %(default)s)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--workers", type=int, default=2, help="prosfi's worker processes (default: %(default)s)")
    ap.add_argument("--timeout-ms", type=int, default=2000, help="per check (default: %(default)s)")
    ap.add_argument("--no-herbrand", action="store_true",
                    help="prosfi without its Herbrand stage (VerifierConfig.herbrand=False)")
    ap.add_argument("--cli", action="store_true",
                    help="time `prosfi check` itself on the mix as JSONL (reading and writing included)")
    ap.add_argument("--side", choices=("naive", "prosfi"), help=argparse.SUPPRESS)
    ap.add_argument("--json", action="store_true", help="one JSON object instead of text")
    args = ap.parse_args(argv)
    if args.side:
        return _child(args)
    naive, fast = measure("naive", args), measure("prosfi", args)
    agree = sum(a == b for a, b in zip(naive["verdicts"], fast["verdicts"]))
    clash = sum({a, b} == {"valid", "invalid"} for a, b in zip(naive["verdicts"], fast["verdicts"]))

    def counts(vs):
        return {k: vs.count(k) for k in sorted(set(vs))}

    result = {
        "checks": args.checks, "workers": args.workers,
        "cores": len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count(),
        "load_avg_1min": round(os.getloadavg()[0], 2),
        "naive_cpu_s": round(naive["cpu_s"], 2), "prosfi_cpu_s": round(fast["cpu_s"], 2),
        "cpu_ratio_naive_over_prosfi": round(naive["cpu_s"] / fast["cpu_s"], 2),
        "naive_wall_s": round(naive["wall_s"], 2), "prosfi_wall_s": round(fast["wall_s"], 2),
        "prosfi_checks_per_cpu_s": round(args.checks / fast["cpu_s"], 1),
        "naive_verdicts": counts(naive["verdicts"]), "prosfi_verdicts": counts(fast["verdicts"]),
        "prosfi_decided_by": fast["decided_by"], "prosfi_workers_started": fast["workers_started"],
        "herbrand": not args.no_herbrand, "cli": args.cli,
        "same_verdict": agree, "valid_vs_invalid_clashes": clash,
    }
    print(json.dumps(result) if args.json else "\n".join(f"{k:>30}: {v}" for k, v in result.items()))
    return 0 if clash == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
