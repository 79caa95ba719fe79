"""Benchmark: `prosfi eval --completions` on 10,000 pre-generated completions (not a test).

Problems: generated Knights & Knaves (2-5 people) and ProverQA-style (easy, medium) problems; per
problem 10 completions: the gold trace, and variants with a wrong answer, a broken step, a dropped
step, or no steps block (as a sampled model writes them). Timed, in one process, same inputs:

  eval:     the whole `prosfi eval` path (load problems, read completions, score, metrics with 1,000
            bootstrap resamples per group, completions.jsonl / summary.json / summary.md; no plots)
  baseline: `prosfi score`'s core alone (score_batch over the same completions, nothing written)

The issue's target: eval ≤ 10 s on 2 cores. The ratio eval / baseline is the cost of evaluation on
top of scoring. Wall times depend on what else runs on the machine.

    python bench/bench_eval.py [--completions 10000] [--workers 1]
"""

from __future__ import annotations

import argparse
import json
import random
import tempfile
import time
from pathlib import Path


def _variants(problem, gold: str, rng: random.Random) -> list[str]:
    out = [gold]
    head, _, rest = gold.partition("<steps>")
    steps_text, _, tail = rest.partition("</steps>")
    steps = json.loads(steps_text)
    answer = tail.split("<answer>")[1].split("</answer>")[0]
    wrong = answer.replace("knight", "KNAVE").replace("knave", "knight").replace("KNAVE", "knave") \
        if problem.kind == "assignment" else {"A": "B", "B": "C", "C": "A"}[answer]
    out.append(gold.replace(f"<answer>{answer}</answer>", f"<answer>{wrong}</answer>"))
    if steps:
        broken = [dict(s) for s in steps]
        broken[0]["conclusion"] = "¬ (" + broken[0]["conclusion"] + ")"
        out.append(f"{head}<steps>\n{json.dumps(broken, ensure_ascii=False)}\n</steps>{tail}")
        out.append(f"{head}<steps>\n{json.dumps(steps[1:], ensure_ascii=False)}\n</steps>{tail}")
    out.append(f"{head}<answer>{answer}</answer>")
    while len(out) < 10:
        out.append(rng.choice(out))
    return out[:10]


def build(tmp: Path, n_completions: int, seed: int = 0) -> tuple[Path, Path, int]:
    from prosfi.data.gold import gold_completion
    from prosfi.data.problem import write_problems
    from prosfi.eval.sources import load_source

    n_problems = n_completions // 10
    per_group = max(1, n_problems // 6 + 2)  # a few problems have no gold trace
    problems = load_source("kk:2..5", count=per_group, seed=seed).problems
    problems += load_source("fol:easy,medium", count=per_group, seed=seed).problems
    rng = random.Random(seed)
    lines = []
    for p in problems:
        gold = gold_completion(p)
        if gold is None:
            continue
        for text in _variants(p, gold, rng):
            lines.append({"problem_id": p.id, "completion": text})
    lines = lines[:n_completions]
    prob_path, comp_path = tmp / "problems.jsonl", tmp / "completions.jsonl"
    write_problems(problems, prob_path)
    with comp_path.open("w", encoding="utf-8") as fh:
        for rec in lines:
            fh.write(json.dumps(rec, ensure_ascii=False) + "\n")
    return prob_path, comp_path, len(lines)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--completions", type=int, default=10_000)
    ap.add_argument("--workers", type=int, default=1, help="verifier worker processes (2 cores: 1)")
    args = ap.parse_args()

    from prosfi.data.problem import read_problems
    from prosfi.eval import evaluate, load_sources, read_completions
    from prosfi.rewards import score_batch
    from prosfi.verify.config import VerifierConfig
    from prosfi.verify.verifier import Verifier

    with tempfile.TemporaryDirectory() as tmp_s:
        tmp = Path(tmp_s)
        prob_path, comp_path, n = build(tmp, args.completions)
        cfg = VerifierConfig(workers=args.workers)

        # eval first: module-level parse caches it warms would flatter the baseline, not eval
        t0 = time.perf_counter()
        sources = load_sources([str(prob_path)])
        result = evaluate(sources, read_completions(comp_path), verifier_config=cfg, out_dir=tmp / "out",
                          plots=False)
        eval_s = time.perf_counter() - t0

        t0 = time.perf_counter()
        problems = {p.id: p for p in read_problems(prob_path)}
        texts = [(json.loads(line)["problem_id"], json.loads(line)["completion"])
                 for line in comp_path.read_text(encoding="utf-8").splitlines()]
        with Verifier(cfg) as v:
            for i in range(0, len(texts), 2048):
                chunk = texts[i:i + 2048]
                score_batch([problems[pid] for pid, _ in chunk], [t for _, t in chunk], v)
        baseline = time.perf_counter() - t0

    o = result.summary["overall"]
    print(json.dumps({
        "completions": n, "problems": result.summary["n_problems"], "groups": len(result.summary["groups"]),
        "eval_s": round(eval_s, 2), "baseline_score_batch_s": round(baseline, 2),
        "ratio_eval_over_baseline": round(eval_s / baseline, 2), "target_s": 10.0,
        "accuracy": o["accuracy"], "reward_hit": o["reward_hit"],
    }, indent=2))


if __name__ == "__main__":
    main()
