"""Generations -> scored records (one per completion), through the completion format's `score` (the steps
format's is `prosfi.rewards.score.score_batch`).

A record is the `completions.jsonl` line of `prosfi eval`: the format's scored record (the steps format's is
the `prosfi score` record: answer, per-step verdicts, reward, reason; the direct-Lean format's has the proof's
verdict instead of steps) plus what the metrics need (source, difficulty, sample, completion tokens, the
format's own columns: `CompletionFormat.eval_record`, e.g. step counts) and the completion text itself.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from prosfi.data.problem import Problem
from prosfi.eval.generate import Generation
from prosfi.eval.sources import group_of


def score_generations(problems: Mapping[str, Problem] | Sequence[Problem], generations: Sequence[Generation],
                      verifier, reward_config=None, chain_config=None, batch_size: int = 2048,
                      progress: bool = False) -> list[dict[str, Any]]:
    """Score every generation against its problem; a generation for an unknown problem id gets a
    record with `reason: "unknown problem"` and no group (it is left out of the metrics). The completion
    format the reward mode selects scores them (`CompletionFormat.score`); the steps format always checks
    the chain: a mode that would skip it (format, outcome) scores as prosfi."""
    from prosfi.rewards.config import RewardConfig
    from prosfi.rewards.formats import format_for

    by_id = problems if isinstance(problems, Mapping) else {p.id: p for p in problems}
    reward_config = reward_config or RewardConfig()
    fmt = format_for(reward_config.mode)
    out: list[dict[str, Any]] = []
    from tqdm.auto import tqdm

    bar = tqdm(total=len(generations), desc="scoring", unit="completion", disable=not progress)
    try:
        for start in range(0, len(generations), batch_size):
            batch = generations[start:start + batch_size]
            probs = [by_id.get(g.problem_id) for g in batch]
            results = fmt.score(probs, [g.completion for g in batch], verifier, reward_config, chain_config)
            for g, p, res in zip(batch, probs, results):
                out.append(record(g, p, res, fmt))
            bar.update(len(batch))
    finally:
        bar.close()
    return out


def record(gen: Generation, problem: Problem | None, result, fmt=None) -> dict[str, Any]:
    """The completions.jsonl line for one generation scored by the completion format `fmt` (default: the
    steps format)."""
    if fmt is None:
        from prosfi.rewards.formats import format_of

        fmt = format_of(None)
    rec = result.to_json()
    rec["problem_id"] = gen.problem_id
    source, difficulty = group_of(problem) if problem is not None else (None, None)
    steps = rec.get("steps") or []
    rec.update(sample=gen.sample, source=source, difficulty=difficulty, **fmt.eval_record(rec),
               tokens=gen.tokens, completion=gen.completion)
    if problem is not None:  # the right answer, as `answer` writes it for a label (prosfi.eval.answers)
        rec["gold_answer"] = problem.answer_label if problem.answer_label is not None else problem.answer
    columns = _eval_columns(problem)
    if columns:  # the domain reports step rates (`Domain.eval_columns`; quantity: dimension errors, grounding)
        rec.update(guarded_steps=len(steps), **{c.record: c.count(steps) for c in columns})
    return rec


def _eval_columns(problem: Problem | None) -> tuple:
    if problem is None:
        return ()
    from prosfi.domains import domain_for

    try:
        return domain_for(problem).eval_columns
    except ValueError:
        return ()


__all__ = ["record", "score_generations"]
