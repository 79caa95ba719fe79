"""The PRM walkthrough's small CPU run (docs/prm.md): FoVer and NS-PRM end to end.

    python bench/prm_cpu_run.py --out runs/prm_bench [--policy runs/prm/policy/sft]

The tiny CPU policy writes almost no valid step, so the labelled chains here are built from the gold
derivations of generated problems, four per problem: the gold chain; the gold chain with one conclusion
negated (an invalid step; when it is the goal step, the opposite answer); the gold chain with a valid but ungrounded step inserted
(a CSP twin: the chain wanders off); and the gold chain cut before its last step (an unproven answer).
Everything else is the real commands: label, train (both objectives), score with meta-evaluation, rerank,
negatives, and (with --policy) verifier-first search with its ablations, once with the policy alone and
once with `GoldMixProposer` (half policy samples, half gold / CSP / negated gold steps: a stand-in for a
policy that writes valid steps, for the search's bookkeeping). Prints one JSON summary.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import time
from pathlib import Path


def variants(problem, rng: random.Random) -> list[str]:
    from prosfi.data.gold import gold_steps, render_completion
    from prosfi.domains.logic.perturbations import csp_candidates

    gold = gold_steps(problem)
    if not gold:
        return []
    out = [render_completion(problem, gold)]
    k = rng.choice([rng.randrange(len(gold)), len(gold) - 1])  # the last step half the time
    bad = [dict(s) for s in gold]
    c = bad[k]["conclusion"]
    bad[k]["conclusion"] = c[2:] if c.startswith("¬ ") else f"¬ {c}"
    text = render_completion(problem, bad)
    if k == len(gold) - 1 and problem.answer in ("A", "B"):  # the negated goal step argues the other answer
        text = text.replace(f"<answer>{problem.answer}</answer>", f"<answer>{'B' if problem.answer == 'A' else 'A'}</answer>")
    out.append(text)
    for i in range(len(gold)):
        twins = csp_candidates(problem, gold[:i], gold[i])
        if twins:
            twin = dict(twins[0][1], id="x1")
            out.append(render_completion(problem, gold[:i] + [twin] + gold[i:]))
            break
    if len(gold) > 1:
        out.append(render_completion(problem, gold[:-1]))
    return out


class GoldMixProposer:
    """A stand-in for a stronger policy (figures of the search's bookkeeping only): per expansion, half
    the candidates are the tiny policy's samples, the rest are the next gold step, a CSP twin of it and
    the gold step negated (invalid)."""

    def __init__(self, policy):
        self.policy = policy

    def head(self, problem):
        return self.policy.head(problem)

    def propose(self, problem, prefix, k):
        from prosfi.domains.logic.gold_path import Groundedness
        from prosfi.domains.logic.perturbations import csp_candidates, next_grounded_step
        from prosfi.prm.search import Proposal

        own = self.policy.propose(problem, prefix, max(1, k // 2))
        nxt = next_grounded_step(problem, prefix, Groundedness(problem).gold or [])
        if nxt is None:
            return own + [Proposal("]", end=True)] * (k - len(own))
        twins = [Proposal("", step=t) for _, t in csp_candidates(problem, prefix, nxt)[:1]]
        c = nxt["conclusion"]
        neg = Proposal("", step={**nxt, "conclusion": c[2:] if c.startswith("¬ ") else f"¬ {c}"})
        return (own + [Proposal("", step=nxt)] + twins + [neg])[:k]

    def answer(self, problem, steps):
        from prosfi.domains.logic.gold_path import canonical_text

        done = {canonical_text(s["conclusion"]) for s in steps}
        if canonical_text(problem.goal) in done:
            return "A"
        if canonical_text(f"¬ ({problem.goal})") in done:
            return "B"
        return self.policy.answer(problem, steps)


def mixed_search(policy_path: str, prm_path: str, problems, out: Path) -> dict:
    from prosfi.eval.generate import load_hf
    from prosfi.prm.model import load_prm
    from prosfi.prm.search import HFProposer
    from prosfi.prm.search_cli import run_modes, table
    from prosfi.verify import Verifier, VerifierConfig

    model, tok = load_hf(policy_path)
    proposer = GoldMixProposer(HFProposer(model, tok, temperature=0.7))
    with Verifier(VerifierConfig(backends=("z3",), workers=1)) as verifier:
        by_mode = run_modes(problems, proposer, load_prm(prm_path), verifier, ["both", "prm", "verifier"],
                            {"beams": 2, "candidates": 4, "max_steps": 4}, n_boot=200)
    (out / "search_mixed.md").write_text(table(by_mode) + "\n")
    return {mode: {"metrics": {k: d["metrics"][k] for k in ("accuracy", "reward_hit", "n_problems")},
                   "cost": d["cost"]} for mode, d in by_mode.items()}


def write_set(problems, path_problems: Path, path_completions: Path, seed: int) -> int:
    from prosfi.data.problem import write_problems

    rng = random.Random(seed)
    write_problems(problems, path_problems)
    n = 0
    with open(path_completions, "w", encoding="utf-8") as fh:
        for p in problems:
            for text in variants(p, rng):
                fh.write(json.dumps({"problem_id": p.id, "completion": text}, ensure_ascii=False) + "\n")
                n += 1
    return n


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", default="runs/prm_bench")
    ap.add_argument("--model", default="runs/tiny-model", help="base model of both PRMs (built when absent)")
    ap.add_argument("--policy", default=None, help="a policy for `prosfi search` (skipped without it)")
    ap.add_argument("--count", type=int, default=30, help="generated problems per difficulty (easy, medium)")
    ap.add_argument("--search-problems", type=int, default=6)
    args = ap.parse_args()

    from prosfi.cli import main as prosfi
    from prosfi.eval.sources import load_sources

    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    timings: dict[str, float] = {}

    def run(name: str, argv: list[str]) -> None:
        t = time.perf_counter()
        rc = prosfi(argv)
        timings[name] = round(time.perf_counter() - t, 1)
        if rc != 0:
            raise SystemExit(f"{name} failed ({rc}): prosfi {' '.join(argv)}")

    train = [p for s in load_sources(["fol:easy,medium"], count=args.count) for p in s.problems]
    held = [p for s in load_sources(["fol:easy,medium"], count=max(5, args.count // 2), seed=7) for p in s.problems]
    n_train = write_set(train, out / "problems.jsonl", out / "completions.jsonl", 0)
    n_held = write_set(held, out / "heldout.jsonl", out / "heldout_completions.jsonl", 1)
    v = ["--backends", "z3", "--workers", "1"]
    run("label", ["prm", "label", "--data", str(out / "problems.jsonl"), "--completions", str(out / "completions.jsonl"),
                  *v, "--balance", "0.5", "--val-fraction", "0.25", "-o", str(out / "data")])
    run("train_sft", ["prm", "train", "recipes/prm/cpu_fover.yaml", "--model_name_or_path", args.model,
                      "--train_file", str(out / "data" / "train.jsonl"), "--output_dir", str(out / "fover")])
    run("score_sft", ["prm", "score", "--prm", str(out / "fover"), "--labelled", str(out / "data" / "val.jsonl"),
                      "-o", str(out / "val_fover.jsonl")])
    run("rerank", ["prm", "rerank", "--prm", str(out / "fover"), "--data", str(out / "heldout.jsonl"), "--completions",
                   str(out / "heldout_completions.jsonl"), *v, "-o", str(out / "rerank")])
    run("negatives", ["prm", "negatives", "--data", str(out / "problems.jsonl"), "--completions",
                      str(out / "completions.jsonl"), *v, "-o", str(out / "pairs.jsonl")])
    run("train_pairwise", ["prm", "train", "recipes/prm/cpu_pairwise.yaml", "--model_name_or_path", args.model,
                           "--train_file", str(out / "pairs.jsonl"), "--problems", str(out / "problems.jsonl"),
                           "--output_dir", str(out / "pairwise")])
    run("score_pairwise", ["prm", "score", "--prm", str(out / "pairwise"), "--labelled",
                           str(out / "data" / "val.jsonl"), "-o", str(out / "val_pairwise.jsonl")])
    if args.policy:
        run("search", ["search", "--data", str(out / "heldout.jsonl"), "--limit", str(args.search_problems),
                       "--model", args.policy, "--prm", str(out / "pairwise"), "--beams", "2", "--candidates", "4",
                       "--max-steps", "3", "--temperature", "0.7", *v, "--ablations", "-o", str(out / "search")])

    if args.policy:
        t = time.perf_counter()
        mixed = mixed_search(args.policy, str(out / "pairwise"), held[: args.search_problems], out)
        timings["search_mixed"] = round(time.perf_counter() - t, 1)

    pairs = [json.loads(x) for x in (out / "pairs.jsonl").read_text().splitlines()]
    summary = {
        "completions": {"train": n_train, "heldout": n_held},
        "label": json.loads((out / "data" / "stats.json").read_text()),
        "metaeval_fover": json.loads((out / "val_fover.jsonl.metaeval.json").read_text()),
        "metaeval_pairwise": json.loads((out / "val_pairwise.jsonl.metaeval.json").read_text()),
        "rerank": json.loads((out / "rerank" / "rerank.json").read_text()),
        "pairs": {k: sum(p["kind"] == k for p in pairs) for k in ("wrong_operand", "wrong_principle", "natural")},
        "seconds": timings,
    }
    if args.policy:
        summary["search"] = json.loads((out / "search" / "summary.json").read_text())
        summary["search_mixed"] = mixed
    (out / "bench_summary.json").write_text(json.dumps(summary, indent=2) + "\n")
    print(json.dumps(summary, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
