"""Hard negatives for a groundedness PRM (NS-PRM): (prefix, chosen, rejected) step pairs, each side checked
by the reward's chain check, for any domain.

- **CSP** pairs (`csp_pairs`): along a problem's gold steps (`Domain.gold_steps`), the domain's
  counterfactual twins of each gold step (`Domain.perturbations`: logic's rule applications on another
  constant or by another rule, `prosfi.domains.logic.perturbations`; quantity's wrong operands and
  principles, `prosfi.domains.quantity.perturbations`). A twin is kept when it is `valid` as the last
  step of `prefix + [twin]` where its gold step is valid too; the pair's margin is the domain's
  `pair_margin` unless given, and it carries the domain's `pair_context` (quantity: the givens).
- **natural** pairs (`natural_pairs`): from sampled chains, for a domain with a groundedness
  (`Domain.groundedness`, logic): a valid but ungrounded step against the gold step its prefix could
  have taken (`Domain.natural_negatives`), kept when that gold step is valid there.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from prosfi.data.problem import Problem
from prosfi.prm.inputs import step_object


def _pair(problem: Problem, prefix, chosen, rejected, margin: float, kind: str) -> dict[str, Any]:
    return {"problem_id": problem.id, "prefix": [step_object(s) for s in prefix], "chosen": step_object(chosen),
            "rejected": step_object(rejected), "margin": float(margin), "kind": kind}


def _verified(problem: Problem, jobs: list[tuple[list, dict]], verifier, chain_config) -> list[str]:
    """Verdict of the last step of each `prefix + [step]` job."""
    from prosfi.prm.steps import chain_verdicts

    if not jobs:
        return []
    verdicts = chain_verdicts([problem] * len(jobs), [list(p) + [s] for p, s in jobs], verifier, chain_config)
    return [v[-1] if v else "error" for v in verdicts]


def csp_pairs(problem: Problem, verifier, margin: float | None = None, per_kind: int = 2, chain_config=None,
              stats: dict | None = None) -> list[dict[str, Any]]:
    """CSP pairs along the gold steps of `problem` (empty when it has none): at most `per_kind` twins of each
    kind per gold step, each `valid` as the last step of `prefix + [twin]` where the gold step is too.
    `margin`: the domain's `pair_margin` when None. `stats` counts candidates and drops per kind, the gold
    steps and those that got any pair (the yield per gold step)."""
    from prosfi.domains import domain_for

    domain = domain_for(problem)
    gold = domain.gold_steps(problem)
    if gold is None:
        return []
    gold = [domain.step_object(s) for s in gold]
    jobs, meta = [], []
    for i, chosen in enumerate(gold):
        prefix = gold[:i]
        jobs.append((prefix, chosen))
        meta.append((i, None))
        per: dict[str, int] = {}
        for kind, cand in domain.perturbations(problem, prefix, chosen, per_kind=per_kind):
            if per.get(kind, 0) >= per_kind:  # a domain that ignores `per_kind` is capped here
                continue
            per[kind] = per.get(kind, 0) + 1
            jobs.append((prefix, cand))
            meta.append((i, kind))
    margin = domain.pair_margin if margin is None else margin
    context = domain.pair_context(problem)
    pairs = [{**p, **context} for p in _verified_pairs(problem, gold, jobs, meta, verifier, chain_config, margin,
                                                        stats)]
    if stats is not None:  # the yield per gold step (how many gold steps get any twin at all)
        stats["gold_steps"] = stats.get("gold_steps", 0) + len(gold)
        stats["gold_steps_with_pairs"] = stats.get("gold_steps_with_pairs", 0) + len(
            {tuple(s["id"] for s in p["prefix"]) for p in pairs})
    return pairs


def _verified_pairs(problem: Problem, gold, jobs, meta, verifier, chain_config, margin: float,
                    stats: dict | None) -> list[dict[str, Any]]:
    """Check every (prefix, step) job once; keep the twins that are `valid` where their gold step is too,
    counting candidates and drops per kind in `stats`. `meta[j]` is (gold index, kind or None for the gold)."""
    verdicts = _verified(problem, jobs, verifier, chain_config)
    chosen_ok = {i: v == "valid" for (i, kind), v in zip(meta, verdicts) if kind is None}
    pairs = []
    for (i, kind), (prefix, cand), v in zip(meta, jobs, verdicts):
        if kind is None:
            continue
        if stats is not None:
            stats[f"{kind}_candidates"] = stats.get(f"{kind}_candidates", 0) + 1
        if v != "valid" or not chosen_ok.get(i):
            if stats is not None:
                stats[f"{kind}_dropped"] = stats.get(f"{kind}_dropped", 0) + 1
            continue
        pairs.append(_pair(problem, prefix, gold[i], cand, margin, kind))
    return pairs


def natural_pairs(problem: Problem, chains: Iterable[Sequence[Any]], verifier, margin: float = 0.5,
                  chain_config=None, stats: dict | None = None) -> list[dict[str, Any]]:
    """Pairs from sampled chains: each valid but ungrounded step against the gold step its prefix allows
    (`Domain.natural_negatives`); none for a domain without a groundedness."""
    from prosfi.domains import domain_for
    from prosfi.prm.steps import chain_verdicts

    domain = domain_for(problem)
    ground = domain.groundedness(problem)
    chains = [[step_object(s) for s in c] for c in chains]
    if ground is None or not ground.defined or not chains:
        return []
    all_verdicts = chain_verdicts([problem] * len(chains), chains, verifier, chain_config)
    found = domain.natural_negatives(problem, chains, all_verdicts, ground)
    verdicts = _verified(problem, [(prefix, chosen) for prefix, chosen, _ in found], verifier, chain_config)
    pairs = []
    for (prefix, chosen, bad), v in zip(found, verdicts):
        if v == "valid" and ground.on_gold_path(chosen):
            pairs.append(_pair(problem, prefix, chosen, bad, margin, "natural"))
        elif stats is not None:
            stats["natural_dropped"] = stats.get("natural_dropped", 0) + 1
    return pairs


__all__ = ["csp_pairs", "natural_pairs"]
