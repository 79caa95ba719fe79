"""Verdicts of step lists in context (the reward's chain check: verifier plus guards), many at once.

Used where there is no whole completion to score: CSP candidates and search candidates are judged
as the last step of `prefix + [step]`, exactly as `prosfi score` would judge that step.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from prosfi.data.problem import Problem


def chain_verdicts(problems: Sequence[Problem], chains: Sequence[Sequence[Any]], verifier, chain_config=None,
                   ) -> list[list[str]]:
    """Per chain, the verdict of every step (`valid`, `invalid`, `unknown`, `error`, `rejected`)."""
    return [[v for v, _ in chain] for chain in chain_reasons(problems, chains, verifier, chain_config)]


def chain_reasons(problems: Sequence[Problem], chains: Sequence[Sequence[Any]], verifier, chain_config=None,
                  ) -> list[list[tuple[str, str]]]:
    """Per chain, (verdict, reason) of every step: what a retry prompt tells the policy."""
    from prosfi.chain import ChainBatch, ChainConfig
    from prosfi.domains import domain_for

    config = chain_config or ChainConfig()
    states: dict[str, Any] = {}
    checks = []
    for p, chain in zip(problems, chains):
        domain = domain_for(p)
        if domain.name not in states:
            states[domain.name] = domain.batch_state()
        checks.append(domain.chain_check(p, tuple(domain.as_step(s) for s in chain), domain.no_claim(p), config,
                                         states[domain.name], establish=False))
    results = ChainBatch(checks).check(verifier)
    out = []
    for chain, result in zip(chains, results):
        if result.failed:
            out.append([("error", "the chain check failed")] * len(chain))
        else:
            out.append([(s.verdict, s.reason) for s in result.steps])
    return out


__all__ = ["chain_reasons", "chain_verdicts"]
