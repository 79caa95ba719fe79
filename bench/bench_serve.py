"""Benchmark `prosfi serve` against in-process `prosfi score` on the same batch (not a test).

    python bench/bench_serve.py [--problems 40] [--repeat 5] [--clients 200] [--request 8] [--workers 1]

Builds a seeded batch of logic completions (K&K 2-5 people and ProverQA-style easy/medium/hard problems;
per problem its gold, sloppy, wrong-answer and malformed completion, the batch repeated `--repeat` times as
GRPO groups repeat a problem), then times

  (a) in-process: what `prosfi score` does — `score_entries` over chunks of 512 with a fresh
      `Verifier(workers=W)` (cold cache), then again with the cache warm;
  (b) the service: `prosfi serve --workers W` in its own process (fresh, cold cache), the same batch sent
      by `--clients` concurrent clients in requests of `--request` completions; then again warm;

`--rounds` times, interleaved, and reports median completions/s for each, the median overhead of the service
over in-process scoring ((time_service / time_inprocess) - 1 per round; the goal is <= 20 % on one machine),
per-request latency p50/p99, and whether every reward matched. Prints one JSON line at the end.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import subprocess
import sys
import time

import httpx


def batch(n_problems: int, repeat: int):
    from prosfi.data.gold import gold_completion, sloppy_completion
    from prosfi.eval.sources import load_source

    per = max(1, n_problems // 7)
    problems = load_source("kk:2..5", count=per).problems + load_source("fol:easy,medium,hard", count=per).problems
    comps = []
    for p in problems:
        gold = gold_completion(p)
        if not gold:
            continue
        comps.append({"problem_id": p.id, "completion": gold})
        s = sloppy_completion(p)
        if s:
            comps.append({"problem_id": p.id, "completion": s})
        comps.append({"problem_id": p.id, "completion": gold.replace("<answer>", "<answer>not ")})
        comps.append({"problem_id": p.id, "completion": "<think>x</think><answer>A</answer>"})
    return problems, comps * repeat


def in_process(problems, comps, workers: int) -> tuple[list[float], list]:
    from prosfi.chain import ChainConfig
    from prosfi.rewards.config import RewardConfig
    from prosfi.rewards.records import read_completion, score_entries
    from prosfi.verify.verifier import Verifier

    by_id = {p.id: p for p in problems}
    times, rewards = [], []
    with Verifier(workers=workers) as v:
        for _ in range(2):  # cold, warm
            t = time.perf_counter()
            rewards = []
            for a in range(0, len(comps), 512):
                entries = [read_completion(c, a + k + 1, by_id, "prosfi") for k, c in enumerate(comps[a:a + 512])]
                records, _, _ = score_entries(entries, by_id, v, RewardConfig(), ChainConfig())
                rewards += [r["reward"] for r in records]
            times.append(time.perf_counter() - t)
    return times, rewards


async def through_service(url: str, problems, comps, clients: int, size: int):
    pdicts = {p.id: p.to_dict() for p in problems}
    chunks = [comps[a:a + size] for a in range(0, len(comps), size)]
    queue: asyncio.Queue = asyncio.Queue()
    for k, ch in enumerate(chunks):
        queue.put_nowait((k, ch))
    answers: list = [None] * len(chunks)
    latencies: list[float] = []
    statuses: list[int] = []

    async def worker(c):
        while not queue.empty():
            k, ch = queue.get_nowait()
            ids = {x["problem_id"] for x in ch}
            t = time.perf_counter()
            async with c.post(url + "/score", json={"problems": [pdicts[i] for i in ids], "completions": ch}) as r:
                body = await r.json()
            latencies.append(time.perf_counter() - t)
            statuses.append(r.status)
            answers[k] = body["results"]

    import aiohttp  # a light load generator: httpx's pool costs more CPU than the server at 200 connections

    conn = aiohttp.TCPConnector(limit=clients)
    async with aiohttp.ClientSession(connector=conn, timeout=aiohttp.ClientTimeout(total=600)) as c:
        t = time.perf_counter()
        await asyncio.gather(*(worker(c) for _ in range(clients)))
        elapsed = time.perf_counter() - t
    rewards = [r["reward"] for part in answers for r in part]
    return elapsed, rewards, latencies, statuses


def start_server(workers: int, port: int) -> subprocess.Popen:
    cmd = [sys.executable, "-m", "prosfi", "serve", "--port", str(port), "--workers", str(workers),
           "--log-level", "warning", "--max-queue", "1000000"]
    proc = subprocess.Popen(cmd, env=dict(os.environ), stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        try:
            if httpx.get(f"http://127.0.0.1:{port}/health", timeout=1).json().get("status") == "ok":
                return proc
        except httpx.HTTPError:
            time.sleep(0.2)
    proc.kill()
    raise SystemExit("prosfi serve did not start: " + (proc.stderr.read() or b"").decode()[-2000:])


def pct(xs: list[float], q: float) -> float:
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(q * len(xs)))] if xs else 0.0


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.ArgumentDefaultsHelpFormatter)
    ap.add_argument("--problems", type=int, default=40, help="problems (split over 7 groups)")
    ap.add_argument("--repeat", type=int, default=5, help="times the batch is repeated (GRPO groups)")
    ap.add_argument("--clients", type=int, default=200, help="concurrent clients")
    ap.add_argument("--request", type=int, default=8, help="completions per request")
    ap.add_argument("--workers", type=int, default=1, help="verifier worker processes (both sides)")
    ap.add_argument("--rounds", type=int, default=3, help="interleaved in-process/service rounds (medians)")
    args = ap.parse_args()
    from prosfi.serve.runner import free_port

    problems, comps = batch(args.problems, args.repeat)
    n = len(comps)
    print(f"batch: {n} completions of {len(problems)} problems", file=sys.stderr)
    rounds = []
    for k in range(args.rounds):  # interleaved, so a noisy neighbour hits both sides alike
        t_in, want = in_process(problems, comps, args.workers)
        port = free_port()
        proc = start_server(args.workers, port)
        try:
            url = f"http://127.0.0.1:{port}"
            cold = asyncio.run(through_service(url, problems, comps, args.clients, args.request))
            warm = asyncio.run(through_service(url, problems, comps, args.clients, args.request))
        finally:
            proc.terminate()
            proc.wait(30)
        r = {"inprocess_s": t_in, "service_s": [cold[0], warm[0]], "lat_cold": cold[2], "lat_warm": warm[2],
             "status": sorted(set(cold[3] + warm[3])), "match": cold[1] == want and warm[1] == want}
        rounds.append(r)
        print(f"round {k + 1}: in-process {t_in[0]:.2f}/{t_in[1]:.2f} s, service {cold[0]:.2f}/{warm[0]:.2f} s "
              f"(cold/warm)", file=sys.stderr)
    med = statistics.median
    over_cold = med([r["service_s"][0] / r["inprocess_s"][0] - 1 for r in rounds])
    over_warm = med([r["service_s"][1] / r["inprocess_s"][1] - 1 for r in rounds])
    lat_cold = [x for r in rounds for x in r["lat_cold"]]
    lat_warm = [x for r in rounds for x in r["lat_warm"]]
    out = {"completions": n, "clients": args.clients, "request": args.request, "workers": args.workers,
           "rounds": args.rounds,
           "inprocess_per_s": [round(n / med([r["inprocess_s"][i] for r in rounds]), 1) for i in (0, 1)],
           "service_per_s": [round(n / med([r["service_s"][i] for r in rounds]), 1) for i in (0, 1)],
           "overhead_cold": round(over_cold, 3), "overhead_warm": round(over_warm, 3),
           "overhead_per_round": [[round(r["service_s"][i] / r["inprocess_s"][i] - 1, 3) for i in (0, 1)]
                                  for r in rounds],
           "latency_p50_s": round(pct(lat_cold, 0.5), 3), "latency_p99_s": round(pct(lat_cold, 0.99), 3),
           "latency_warm_p50_s": round(pct(lat_warm, 0.5), 3), "latency_warm_p99_s": round(pct(lat_warm, 0.99), 3),
           "status": sorted({s for r in rounds for s in r["status"]}), "rewards_match": all(r["match"] for r in rounds),
           "load_average": [round(x, 2) for x in os.getloadavg()]}
    for k in ("service_per_s", "inprocess_per_s", "overhead_cold", "overhead_warm", "latency_p50_s",
              "latency_p99_s", "rewards_match"):
        print(f"{k}: {out[k]}", file=sys.stderr)
    print(json.dumps(out))
    return 0


if __name__ == "__main__":
    sys.exit(main())
