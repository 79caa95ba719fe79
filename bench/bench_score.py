"""Benchmark: seconds per reward batch, default path vs a naive path (not a test).

A batch is 512 completions: 64 rule-chain problems x 8 samples, ~8 steps each, most steps
repeated across the samples of a problem as in a GRPO group. Each timed batch uses new
problems (a cold verdict cache, as in training where every step brings new prompts); a warm
batch (the same batch again) is reported too.

  default: score_batch + Verifier (parse cache, verdict cache, dedup, one solver per signature
           in a worker pool, two verifier round trips per batch)
  naive:   score each completion on its own; every check parsed and proved on a fresh Z3
           solver in this process, no cache

Wall time depends on what else runs on the cores; `default_cold_cpu_s_per_batch` (this process
plus the verifier workers, from /proc) does not, and over 2 cores bounds the idle wall time
from below at half of it.

`--domain quantity`: 512 quantity completions (64 problems x 8 samples, 4-step unit-carrying chains:
gold, a wrong value, a wrong answer, an unused step, an ungrounded literal, a dimension error), checked
in-process (no verifier round trip). default: `score_batch` (one batch memo: a group's repeated steps
are worked out once); naive: every completion scored on its own (`score_completion`, fresh memo).

    python bench/bench_score.py [--batches 3] [--workers 2] [--naive-batches 1] [--domain logic|quantity]
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import time

from prosfi.chain import ChainConfig
from prosfi.data.problem import Problem
from prosfi.logic import FormulaError, check_signature, parse
from prosfi.rewards import RewardConfig, score_batch, score_completion
from prosfi.verify.backend import Check
from prosfi.verify.config import VerifierConfig
from prosfi.verdict import Status, Verdict
from prosfi.verify.verifier import Verifier
from prosfi.verify.z3_backend import Z3Backend

DEPTH = 8
OPTIONS = {"A": "True", "B": "False", "C": "Uncertain"}


def make_problem(rng: random.Random, tag: str) -> Problem:
    """A chain `P0 c`, `∀ x, P_i x → P_{i+1} x` (last one negated for False problems), plus distractors."""
    names = [f"{tag}p{i}" for i in range(DEPTH + 4)]
    rng.shuffle(names)
    c = f"c{tag}"
    negate = rng.random() < 0.5
    premises = [f"{names[0]} {c}"]
    for i in range(DEPTH):
        head = f"¬ {names[i + 1]} x" if negate and i == DEPTH - 1 else f"{names[i + 1]} x"
        premises.append(f"∀ x, {names[i]} x → {head}")
    premises += [f"∀ x, {names[DEPTH + 1]} x → {names[DEPTH + 2]} x", f"{names[DEPTH + 3]} {c}"]
    order = list(range(len(premises)))
    rng.shuffle(order)
    ids = {old: f"h{new + 1}" for old, new in enumerate(order)}  # premise i is written as h{order[i]+1}
    formal = [None] * len(premises)
    for old, new in enumerate(order):
        formal[new] = premises[old]
    problem = Problem.from_dict({
        "id": tag, "kind": "true_false_uncertain", "goal": f"{names[DEPTH]} {c}", "options": OPTIONS,
        "answer": "B" if negate else "A",
        "premises": [{"id": f"h{i + 1}", "formal": f} for i, f in enumerate(formal)]})
    problem.extra["_chain"] = (names, c, negate, ids)
    return problem


def gold_steps(problem: Problem) -> list[dict]:
    names, c, negate, ids = problem.extra["_chain"]
    steps, prev = [], ids[0]
    for i in range(DEPTH):
        concl = f"¬ {names[i + 1]} {c}" if negate and i == DEPTH - 1 else f"{names[i + 1]} {c}"
        steps.append({"id": f"s{i + 1}", "dependencies": [ids[i + 1], prev], "conclusion": concl, "rule": "mp"})
        prev = f"s{i + 1}"
    return steps


def samples(problem: Problem, rng: random.Random) -> list[str]:
    """8 samples: gold chains, a wrong step, a wrong answer, a padded and an over-citing chain."""
    names, c, _, ids = problem.extra["_chain"]
    gold, answer = gold_steps(problem), problem.answer
    wrong = [dict(s) for s in gold]
    k = rng.randrange(2, DEPTH - 1)
    wrong[k]["conclusion"] = f"{names[k + 2]} {c}"
    padded = gold + [{"id": "s9", "dependencies": ["s1"], "conclusion": gold[0]["conclusion"], "rule": "copy"}]
    over = [dict(s) for s in gold]
    over[-1]["dependencies"] = [ids[i] for i in range(1, 6)]
    variants = [(gold, answer)] * 4 + [(wrong, answer), (gold, "C"), (padded, answer), (over, answer)]
    return [f"<think>follow the rules</think>\n<steps>\n{json.dumps(steps, ensure_ascii=False)}\n</steps>\n"
            f"<answer>{ans}</answer>" for steps, ans in variants]


def make_batch(seed: int, n_problems: int = 64) -> tuple[list[Problem], list[str]]:
    rng = random.Random(seed)
    problems, texts = [], []
    for i in range(n_problems):
        p = make_problem(rng, f"b{seed}q{i}")
        for t in samples(p, rng):
            problems.append(p)
            texts.append(t)
    return problems, texts


class NaiveVerifier:
    """Every check parsed and proved on a fresh Z3 solver, one after another, nothing cached."""

    def __init__(self, timeout_ms: int = 2000) -> None:
        self.backend, self.timeout_ms = Z3Backend(), timeout_ms

    def check_many(self, entailments):
        out = []
        for e in entailments:
            try:
                premises = tuple((k, parse(v)) for k, v in e.premises.items())
                conclusion = parse(e.conclusion)
                signature = check_signature([f for _, f in premises] + [conclusion])
            except FormulaError as exc:
                out.append(Verdict(Status.ERROR, None, 0.0, str(exc)))
                continue
            out.append(self.backend.check(Check(premises, conclusion), signature, self.timeout_ms))
        return out

    def stats(self) -> dict:
        return {}


def _worker_cpu_s(verifier) -> float:
    """CPU seconds used so far by the verifier's worker processes (Linux /proc), 0 where unknown."""
    pool, total = verifier.pool, 0.0
    for pid in pool.worker_pids() if pool is not None else []:
        try:
            with open(f"/proc/{pid}/stat") as fh:
                fields = fh.read().rsplit(")", 1)[1].split()
            total += (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
        except (OSError, ValueError, IndexError):
            pass
    return total


# ---------------------------------------------------------------------------------------- quantity
def make_quantity_problem(rng: random.Random, tag: str) -> tuple[Problem, list[dict], str]:
    """d1 km in t1 h, then d2 km in t2 min: the average speed in m/s (3 unit-carrying steps)."""
    d1, d2 = rng.randint(20, 200), rng.randint(5, 50)
    t1, t2 = rng.randint(1, 5), rng.choice([15, 20, 30, 40, 45])
    speed = (d1 + d2) * 1000 / (t1 * 3600 + t2 * 60)
    problem = Problem.from_dict({
        "id": tag, "kind": "quantity", "source": "bench", "difficulty": 3,
        "question": f"A car drives {d1} km in {t1} h, then {d2} km in {t2} min. Average speed in m/s?",
        "givens": [{"id": "g1", "value": str(d1), "unit": "km"}, {"id": "g2", "value": str(t1), "unit": "h"},
                   {"id": "g3", "value": str(d2), "unit": "km"}, {"id": "g4", "value": str(t2), "unit": "min"}],
        "target": {"name": "speed", "unit": "m/s"}, "answer": {"value": repr(speed), "unit": "m/s"}})
    steps = [{"id": "s1", "expr": "g1 + g3", "value": d1 + d2, "unit": "km"},
             {"id": "s2", "expr": "g2 + g4", "value": t1 * 60 + t2, "unit": "min"},
             {"id": "s3", "expr": "s1 / s2", "value": speed, "unit": "m/s"}]
    return problem, steps, f"{speed:.9g} m/s"


def quantity_samples(problem: Problem, gold: list[dict], answer: str, rng: random.Random) -> list[str]:
    wrong = [dict(s) for s in gold]
    wrong[1]["value"] = wrong[1]["value"] + 1
    padded = [{"id": "s0", "expr": "g1 * g2", "value": 0, "unit": "km*h"}] + gold
    literal = gold[:-1] + [{"id": "s3", "expr": "s1 / s2 * 1.25", "value": gold[-1]["value"], "unit": "m/s"}]
    dim = gold[:-1] + [{"id": "s3", "expr": "s1 + s2", "value": gold[-1]["value"], "unit": "m/s"}]
    variants = [(gold, answer)] * 3 + [(wrong, answer), (gold, "3 m"), (padded, answer), (literal, answer),
                                       (dim, answer)]
    return [f"<think>add distances and times</think>\n<steps>\n{json.dumps(st)}\n</steps>\n<answer>{a}</answer>"
            for st, a in variants]


def make_quantity_batch(seed: int, n_problems: int = 64) -> tuple[list[Problem], list[str]]:
    rng = random.Random(seed)
    problems, texts = [], []
    for i in range(n_problems):
        p, gold, answer = make_quantity_problem(rng, f"q{seed}-{i}")
        for t in quantity_samples(p, gold, answer, rng):
            problems.append(p)
            texts.append(t)
    return problems, texts


def quantity_main(args) -> None:
    cfg, chain = RewardConfig(), ChainConfig()
    batches = [make_quantity_batch(seed, args.problems) for seed in range(args.batches + 1)]
    no_verifier = object()  # quantity chains never call it
    score_batch(*batches[-1], no_verifier, cfg, chain)  # warm imports and the unit registry (not timed)
    cold, cpu = [], []
    for problems, texts in batches[:-1]:
        c0, t0 = time.process_time(), time.perf_counter()
        results = score_batch(problems, texts, no_verifier, cfg, chain)
        cold.append(time.perf_counter() - t0)
        cpu.append(time.process_time() - c0)
    naive = []
    for seed in range(args.naive_batches):
        problems, texts = make_quantity_batch(1000 + seed, args.problems)
        t0 = time.perf_counter()
        naive_rewards = [score_completion(p, t, no_verifier, cfg, chain).reward for p, t in zip(problems, texts)]
        naive.append(time.perf_counter() - t0)
    rewards = [r.reward for r in results]
    print(json.dumps({
        "domain": "quantity", "completions_per_batch": len(batches[0][1]),
        "default_s_per_batch": round(statistics.mean(cold), 3), "default_runs": [round(x, 3) for x in cold],
        "default_cpu_s_per_batch": round(statistics.mean(cpu), 3),  # one process: the load-free wall time
        "naive_s_per_batch": round(statistics.mean(naive), 3),
        "speedup": round(statistics.mean(naive) / statistics.mean(cold), 1),
        "reward_histogram": {str(k): rewards.count(k) for k in sorted(set(rewards))},
        "naive_reward_histogram": {str(k): naive_rewards.count(k) for k in sorted(set(naive_rewards))},
        "load_average": [round(x, 2) for x in os.getloadavg()],
    }, indent=2))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--batches", type=int, default=3, help="timed default-path batches (new problems each)")
    ap.add_argument("--naive-batches", type=int, default=1)
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--problems", type=int, default=64)
    ap.add_argument("--domain", choices=("logic", "quantity"), default="logic")
    args = ap.parse_args()
    if args.domain == "quantity":
        quantity_main(args)
        return
    cfg, chain = RewardConfig(), ChainConfig()
    batches = [make_batch(seed, args.problems) for seed in range(args.batches + 1)]
    n = len(batches[0][1])
    steps = sum(len(json.loads(t.split("<steps>")[1].split("</steps>")[0])) for t in batches[0][1])

    with Verifier(VerifierConfig(workers=args.workers)) as verifier:
        score_batch(*batches[-1], verifier, cfg, chain)  # start the pool, warm imports (not timed)
        cold, cpu = [], []
        for problems, texts in batches[:-1]:
            c0 = time.process_time() + _worker_cpu_s(verifier)
            t0 = time.perf_counter()
            results = score_batch(problems, texts, verifier, cfg, chain)
            cold.append(time.perf_counter() - t0)
            cpu.append(time.process_time() + _worker_cpu_s(verifier) - c0)
        t0 = time.perf_counter()
        score_batch(*batches[0], verifier, cfg, chain)
        warm = time.perf_counter() - t0
        stats = verifier.stats()
    rewards = [r.reward for r in results]

    naive_verifier, naive = NaiveVerifier(), []
    for seed in range(args.naive_batches):
        problems, texts = make_batch(1000 + seed, args.problems)
        t0 = time.perf_counter()
        naive_rewards = [score_completion(p, t, naive_verifier, cfg, chain).reward for p, t in zip(problems, texts)]
        naive.append(time.perf_counter() - t0)

    report = {
        "completions_per_batch": n, "steps_per_batch": steps, "workers": args.workers,
        "default_cold_s_per_batch": round(statistics.mean(cold), 3), "default_cold_runs": [round(x, 3) for x in cold],
        "default_cold_cpu_s_per_batch": round(statistics.mean(cpu), 3),
        "default_warm_s_per_batch": round(warm, 3),
        "naive_s_per_batch": round(statistics.mean(naive), 3),
        "speedup_cold": round(statistics.mean(naive) / statistics.mean(cold), 1),
        "reward_histogram": {str(k): rewards.count(k) for k in sorted(set(rewards))},
        "naive_reward_histogram": {str(k): naive_rewards.count(k) for k in sorted(set(naive_rewards))},
        "load_average": [round(x, 2) for x in os.getloadavg()],
        "verifier": {k: stats[k] for k in ("checks", "cache_hits", "hit_rate", "decided_by") if k in stats},
    }
    print(json.dumps(report, indent=2))


if __name__ == "__main__":
    main()
