"""Verdicts of step lists in context (the reward's chain check: verifier plus guards), many at once.

Used where there is no whole completion to score: CSP candidates and search candidates are judged
as the last step of `prefix + [step]`, exactly as `prosfi score` would judge that step.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from prosfi.data.problem import Problem


def as_step(step: Any):
    from prosfi.trace.schema import Step

    if isinstance(step, Step):
        return step
    return Step(str(step["id"]), tuple(str(d) for d in step["dependencies"]), str(step["conclusion"]),
                str(step.get("rule", "")))


def chain_verdicts(problems: Sequence[Problem], chains: Sequence[Sequence[Any]], verifier, chain_config=None,
                   ) -> list[list[str]]:
    """Per chain, the verdict of every step (`valid`, `invalid`, `unknown`, `error`, `rejected`)."""
    from prosfi.chain import ChainBatch, ChainCheck, ChainConfig, Formulas
    from prosfi.trace.answer import parse_answer

    config = chain_config or ChainConfig()
    formulas = Formulas()
    checks = [ChainCheck(p, tuple(as_step(s) for s in chain), parse_answer(p, ""), config, formulas, establish=False)
              for p, chain in zip(problems, chains)]
    results = ChainBatch(checks).check(verifier)
    out = []
    for chain, result in zip(chains, results):
        if result.failed:
            out.append(["error"] * len(chain))
        else:
            out.append([s.verdict for s in result.steps])
    return out


__all__ = ["as_step", "chain_verdicts"]
