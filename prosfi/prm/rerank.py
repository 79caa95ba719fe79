"""Best-of-K: pick one of K sampled completions per problem by aggregated PRM step scores.

Works on `prosfi eval` scored records (`prosfi.eval.score_generations`) that also carry
`step_scores` (one PRM score per step of the completion, `prosfi prm score`). Aggregations of a
completion's step scores: `min` (default: a chain is as good as its weakest step), `mean`, `last`,
`product`. With verifier filtering, only completions whose chain the verifier fully verifies
compete (all of them when none is). A completion with no step array aggregates to -inf (never
picked over one with steps). Ties go to the earlier sample.

The picks are measured by the eval code (`prosfi.eval.metrics`), next to the baselines on the same
candidates: majority vote over answers, a uniformly random pick (its expectation: per problem the
share of its K samples that are right, averaged over problems, so a problem weighs the same whatever
its K) and the oracle (a right, verified sample when there is one: pass@K for accuracy and for
reward hit).
"""

from __future__ import annotations

import math
from collections import Counter, defaultdict
from collections.abc import Sequence
from typing import Any

AGGREGATIONS = ("min", "mean", "last", "product")
Record = dict[str, Any]


def aggregate(scores: Sequence[float], how: str = "min") -> float:
    """One number per completion from its step scores (-inf for a completion without steps)."""
    if how not in AGGREGATIONS:
        raise ValueError(f"aggregation {how!r} is not one of {', '.join(AGGREGATIONS)}")
    if not scores:
        return -math.inf
    if how == "min":
        return min(scores)
    if how == "mean":
        return sum(scores) / len(scores)
    if how == "last":
        return scores[-1]
    return math.prod(scores)


def group(records: Sequence[Record]) -> dict[str, list[Record]]:
    """Records by problem id (first-seen order), each group in sample order."""
    out: dict[str, list[Record]] = defaultdict(list)
    for r in records:
        out[str(r["problem_id"])].append(r)
    return {pid: sorted(rs, key=lambda r: int(r.get("sample") or 0)) for pid, rs in out.items()}


def pick(candidates: Sequence[Record], how: str = "min", verifier_filter: bool = False) -> Record:
    """The Best-of-K choice among one problem's records (ties: the earliest)."""
    if not candidates:
        raise ValueError("no candidates to pick from")
    pool = [c for c in candidates if c.get("chain_valid")] if verifier_filter else list(candidates)
    pool = pool or list(candidates)
    best = max(range(len(pool)), key=lambda i: (aggregate(pool[i].get("step_scores") or [], how), -i))
    return pool[best]


def majority(candidates: Sequence[Record]) -> Record:
    """The first record carrying the most frequent readable answer (the first record when none is readable)."""
    answers = [c.get("answer") if c.get("format_ok") else None for c in candidates]
    votes = Counter(a for a in answers if a is not None)
    if not votes:
        return candidates[0]
    top = max(votes.values())
    winner = next(a for a in answers if a is not None and votes[a] == top)
    return candidates[answers.index(winner)]


def oracle(candidates: Sequence[Record]) -> Record:
    """A verified right sample if any, else a right one, else the first (the pass@K upper bound)."""
    return max(candidates, key=lambda c: (bool(c.get("chain_valid")) and bool(c.get("answer_correct")),
                                          bool(c.get("answer_correct"))))


def picks(records: Sequence[Record], how: str = "min", verifier_filter: bool = False) -> list[Record]:
    return [pick(c, how, verifier_filter) for c in group(records).values()]


def rerank_table(records: Sequence[Record], aggregations: Sequence[str] = AGGREGATIONS, n_boot: int = 1000,
                 ) -> list[dict[str, Any]]:
    """Rows `{method, problems, accuracy, reward_hit, *_ci}` through `prosfi.eval.metrics.metrics`:
    every aggregation without and with the verifier filter, then majority, random and oracle."""
    from prosfi.eval.metrics import metrics

    groups = group(records)
    sizes = [len(c) for c in groups.values()] or [0]
    k = min(sizes) if min(sizes) == max(sizes) else f"{min(sizes)}-{max(sizes)}"  # candidates per problem

    def row(method: str, chosen: Sequence[Record]) -> dict[str, Any]:
        m = metrics(list(chosen), n_boot=n_boot)
        return {"method": method, "problems": m["n_problems"], "k": k, "accuracy": m["accuracy"],
                "accuracy_ci": m["accuracy_ci"], "reward_hit": m["reward_hit"], "reward_hit_ci": m["reward_hit_ci"]}

    rows = [row(f"prm:{how}" + ("+verifier" if vf else ""), picks(records, how, vf))
            for vf in (False, True) for how in aggregations]
    rows.append(row("majority", [majority(c) for c in groups.values()]))
    rows.append(_random_row(groups, k, n_boot))
    rows.append(row("oracle (pass@K)", [oracle(c) for c in groups.values()]))
    return rows


def _random_row(groups: dict[str, list[Record]], k: Any, n_boot: int, seed: int = 0) -> dict[str, Any]:
    """The expected metrics of a uniform pick among each problem's K candidates, averaged over problems
    (each problem weighs the same whatever its K), with percentile intervals over resampled problems."""
    import numpy as np

    from prosfi.eval.metrics import bootstrap_ci

    acc = np.array([np.mean([bool(c.get("answer_correct")) for c in cs]) for cs in groups.values()], float)
    hit = np.array([np.mean([bool(c.get("answer_correct")) and bool(c.get("chain_valid")) for c in cs])
                    for cs in groups.values()], float)
    rng = np.random.default_rng(seed)
    idx = rng.integers(0, len(acc), size=(n_boot, len(acc))) if len(acc) else None
    ones = np.ones_like(acc)

    def mean(v):
        return round(float(v.mean()), 4) if len(v) else None

    return {"method": "random (expected)", "problems": len(acc), "k": k, "accuracy": mean(acc),
            "accuracy_ci": bootstrap_ci(acc, ones, rng, n_boot, idx=idx), "reward_hit": mean(hit),
            "reward_hit_ci": bootstrap_ci(hit, ones, rng, n_boot, idx=idx)}


def table_markdown(rows: Sequence[dict[str, Any]]) -> str:
    def pct(v, ci) -> str:
        if v is None:
            return "–"
        return f"{100 * v:.1f}" + (f" [{100 * ci[0]:.1f}, {100 * ci[1]:.1f}]" if ci and None not in ci else "")

    lines = ["| method | problems | K | accuracy % [95% CI] | reward hit % [95% CI] |", "|---|---|---|---|---|"]
    lines += [f"| {r['method']} | {r['problems']} | {r['k']} | {pct(r['accuracy'], r.get('accuracy_ci'))} | "
              f"{pct(r['reward_hit'], r.get('reward_hit_ci'))} |" for r in rows]
    return "\n".join(lines)


__all__ = ["AGGREGATIONS", "aggregate", "group", "majority", "oracle", "pick", "picks", "rerank_table",
           "table_markdown"]
