"""The quantity adversary's figures (issue #34): how often a search a policy could run finds a top-reward chain
that does not do the problem's work. Not a test.

    python bench/quant_adversary.py [--count 100] [--gsm8k FILE] [--max-chains 400] [--sources gsm8k,physics,...]

For each source (GSM8K records of FILE, default tests/fixtures/gsm8k_test_head.jsonl; generated physics of every
difficulty, seed 0; GSM-Symbolic, seed 0, when reasoning-gym is installed) it runs
`prosfi.domains.quantity.adversary.search` on `--count` problems, scores every chain with the real reward
(`prosfi.rewards.score_batch`, modes prosfi and step_fraction) and judges the top-reward ones with the oracle
(`prosfi.domains.quantity.oracle`, which does not use the verifier). It prints a markdown table per source:

- top: the share of problems with a top-reward chain at all (honest ones included);
- not reference: the share with a top-reward chain whose composite is not the reference solution's function
  (physics and GSM-Symbolic: the gold steps; GSM8K: the solution's own equations);
- collapsing: the share with a top-reward chain whose composite collapses (a cancelled given, a cancellation
  that leaves a restatement or a free multiple, a factor 1 or a term 0);
- either: the share with a top-reward chain that does one or the other;
- chains/s: chains (and beam prefixes) scored per second of search;
- gold: the same two judgments of the problems' own gold chains (the oracle's false-alarm rate).

Then the families behind the "either" share, and the worst family on every record of the GSM8K file:
`s1 = gi * gj; s2 = gj + s1 / gi` (+ `gj` added again) reaching a multiple of a given with no literal.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from prosfi.data import physics
from prosfi.data.gsm8k import load_gsm8k
from prosfi.domains.quantity import adversary, oracle
from prosfi.rewards.config import RewardConfig
from prosfi.rewards.score import score_batch

SCORE = adversary.scorer_from(score_batch, reward_config=RewardConfig)


def problems(source: str, count: int, gsm8k: Path) -> list:
    if source == "gsm8k":
        return load_gsm8k(gsm8k)[:count]
    if source == "physics":
        per = -(-count // len(physics.DIFFICULTIES))
        return [p for d in physics.DIFFICULTIES for p in physics.generate(d, per, seed=0)][:count]
    from prosfi.data import gsm_symbolic

    return gsm_symbolic.generate(count, seed=0)


def judge(p, found) -> tuple[bool, bool, Counter]:
    readings = oracle.reference(p)
    notref = collapse = False
    families: Counter = Counter()
    for f in found:
        c = bool(oracle.collapses(f.steps, p))
        n = bool(readings) and oracle.same_function(f.steps, readings, p) is False
        notref |= n
        collapse |= c
        if c or n:
            families[f.family.split(" ")[0]] += 1
    return notref, collapse, families


def run(source: str, count: int, gsm8k: Path, config: adversary.SearchConfig) -> dict:
    ps = problems(source, count, gsm8k)
    row = Counter()
    families: Counter = Counter()
    seconds = 0.0
    for p in ps:
        r = adversary.search(p, SCORE, config)
        seconds += r.seconds
        row["scored"] += r.scored
        row["top"] += bool(r.found)
        notref, collapse, fams = judge(p, r.found)
        row["reference"] += bool(oracle.reference(p))
        row["notref"] += notref
        row["collapse"] += collapse
        row["either"] += notref or collapse
        families.update({k: 1 for k in fams})
        gold = p.extra.get("gold_steps")
        if gold:
            row["gold"] += 1
            readings = oracle.reference(p)
            row["gold_notref"] += bool(readings) and oracle.same_function(gold, readings, p) is False
            row["gold_collapse"] += bool(oracle.collapses(gold, p))
    return {"source": source, "n": len(ps), "seconds": seconds, "families": families, **row}


def worst_family(gsm8k: Path) -> tuple[int, int, int]:
    """Records of the file that `s1 = gi * gj; s2 = gj + s1 / gi` (+ `gj` again) brings to the top reward:
    (records, with the bare family, with one more given added/subtracted/multiplied/divided at the end)."""
    records = load_gsm8k(gsm8k)
    bare = tailed = 0
    for p in records:
        arena = adversary.Arena(p)
        for tails in (False, True):
            chains = adversary.realise(arena, adversary.cancellation_family(
                arena, kmax=24, values=adversary.given_values(arena), tails=tails))
            j = adversary.Judge(p, SCORE, adversary.SearchConfig(max_chains=10_000, stop_after=1))
            if j.chains(chains):
                if tails:
                    tailed += 1
                else:
                    bare += 1
                    tailed += 1
                    break
    return len(records), bare, tailed


def pct(a: int, b: int) -> str:
    return f"{100 * a / b:.0f} % ({a})" if b else "-"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--count", type=int, default=100, help="problems per source")
    ap.add_argument("--gsm8k", type=Path, default=ROOT / "tests/fixtures/gsm8k_test_head.jsonl")
    ap.add_argument("--max-chains", type=int, default=400, help="chains scored per problem")
    ap.add_argument("--sources", default="gsm8k,physics,gsm_symbolic")
    ap.add_argument("--no-worst", action="store_true", help="skip the worst family on every GSM8K record")
    args = ap.parse_args(argv)
    config = adversary.SearchConfig(max_chains=args.max_chains, pool=120, hits=20, template_values=16)
    rows = []
    for source in args.sources.split(","):
        try:
            rows.append(run(source, args.count, args.gsm8k, config))
        except ImportError as exc:  # GSM-Symbolic without reasoning-gym
            print(f"{source}: skipped ({exc})", file=sys.stderr)
    print(f"search: {config}\n")
    print("| source | problems | with a reference | top | not reference | collapsing | either | chains scored "
          "| chains/s | gold: not reference | gold: collapsing |")
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    for r in rows:
        n = r["n"]
        print(f"| {r['source']} | {n} | {r['reference']} | {pct(r['top'], n)} | {pct(r['notref'], n)} | "
              f"{pct(r['collapse'], n)} | {pct(r['either'], n)} | {r['scored']} | {r['scored'] / r['seconds']:.0f} | "
              f"{pct(r['gold_notref'], r['gold'])} | {pct(r['gold_collapse'], r['gold'])} |")
    print("\nfamilies behind `either` (problems where the family found such a chain):")
    for r in rows:
        print(f"- {r['source']}: " + ", ".join(f"{k} {v}" for k, v in r["families"].most_common()))
    if not args.no_worst:
        start = time.perf_counter()
        n, bare, tailed = worst_family(args.gsm8k)
        print(f"\nworst family on {n} GSM8K records ({time.perf_counter() - start:.0f} s): "
              f"`s1 = gi * gj; s2 = gj + s1 / gi` (+ gj) reaches the top reward on {bare} ({100 * bare / n:.0f} %); "
              f"with one more given at the end, {tailed} ({100 * tailed / n:.0f} %)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
