"""Best-of-K: pick one of K sampled completions per problem by aggregated PRM step scores.

Aggregations of a completion's step scores: `min` (default: a chain is as good as its weakest step),
`mean`, `last`, `product`. With verifier filtering, only completions whose chain the verifier fully
verifies compete (all of them when none is). A completion with no step array scores -inf (never
picked over one with steps). Ties go to the earlier completion. Baselines on the same candidates:
majority vote over answers, a uniformly random pick (its expectation, not one draw) and the oracle
(pass@K: some candidate is right).
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

AGGREGATIONS = ("min", "mean", "last", "product")


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


@dataclass
class Candidate:
    """One of the K completions of a problem, as scored by the verifier (`score` record) and the PRM."""

    index: int
    answer: str | None
    answer_correct: bool
    verified_hit: bool  # right answer with a fully verified chain (the top reward level)
    chain_valid: bool
    step_scores: list[float]


def pick(candidates: Sequence[Candidate], how: str = "min", verifier_filter: bool = False) -> Candidate:
    """The Best-of-K choice (ties: the earliest)."""
    if not candidates:
        raise ValueError("no candidates to pick from")
    pool = [c for c in candidates if c.chain_valid] if verifier_filter else list(candidates)
    pool = pool or list(candidates)
    best = max(range(len(pool)), key=lambda i: (aggregate(pool[i].step_scores, how), -i))
    return pool[best]


def majority(candidates: Sequence[Candidate]) -> Candidate:
    """The first candidate carrying the most frequent readable answer (the first one when none is readable)."""
    votes = Counter(c.answer for c in candidates if c.answer is not None)
    if not votes:
        return candidates[0]
    top = max(votes.values())
    winner = next(c.answer for c in candidates if c.answer is not None and votes[c.answer] == top)
    return next(c for c in candidates if c.answer == winner)


def rerank_table(groups: dict[str, Sequence[Candidate]], aggregations: Sequence[str] = AGGREGATIONS,
                 ) -> list[dict[str, Any]]:
    """Rows `{method, accuracy, reward_hit, n}` for every aggregation with and without the verifier
    filter, plus majority vote, random pick and oracle, over the same problems."""
    n = len(groups)
    rows = []

    def row(method: str, picks: list[tuple[float, float]]) -> None:
        rows.append({"method": method, "problems": n,
                     "accuracy": sum(a for a, _ in picks) / n if n else 0.0,
                     "reward_hit": sum(h for _, h in picks) / n if n else 0.0})

    for verifier_filter in (False, True):
        for how in aggregations:
            chosen = [pick(c, how, verifier_filter) for c in groups.values()]
            name = f"prm:{how}" + ("+verifier" if verifier_filter else "")
            row(name, [(c.answer_correct, c.verified_hit) for c in chosen])
    row("majority", [(m.answer_correct, m.verified_hit) for m in (majority(c) for c in groups.values())])
    row("random", [(sum(x.answer_correct for x in c) / len(c), sum(x.verified_hit for x in c) / len(c))
                   for c in groups.values()])
    row("oracle", [(any(x.answer_correct for x in c), any(x.verified_hit for x in c)) for c in groups.values()])
    return rows


__all__ = ["AGGREGATIONS", "Candidate", "aggregate", "majority", "pick", "rerank_table"]
