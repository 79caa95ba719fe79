"""Label every step of sampled chains with the verifier (FoVer), in TRL's stepwise-supervision format.

valid → correct; invalid, error (does not parse, bad citation) or rejected by a chain guard → incorrect;
unknown → left out (and counted): the verifier could not decide, so there is no label to learn from.
A step after the first incorrect one is labelled as the verifier says; `first_error` is the index
of the first incorrect labelled step (ProcessBench convention), None when there is none.
Completions whose format fails (no step array to label) are counted and skipped.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from prosfi.data.problem import Problem
from prosfi.prm.inputs import step_object, step_text

CORRECT_VERDICTS = frozenset({"valid"})
SKIPPED_VERDICTS = frozenset({"unknown"})


def step_label(verdict: str) -> bool | None:
    """True (correct), False (incorrect) or None (left out) for one chain-check verdict."""
    if verdict in CORRECT_VERDICTS:
        return True
    if verdict in SKIPPED_VERDICTS:
        return None
    return False


@dataclass
class LabelStats:
    completions: int = 0
    chains: int = 0
    format_failures: int = 0
    unknown_steps: int = 0
    steps: Counter = field(default_factory=Counter)  # verdict -> count (labelled steps)

    def to_json(self) -> dict[str, Any]:
        correct = self.steps["valid"]
        total = sum(self.steps.values())
        return {"completions": self.completions, "chains": self.chains, "format_failures": self.format_failures,
                "unknown_steps_left_out": self.unknown_steps, "labelled_steps": total, "correct_steps": correct,
                "incorrect_steps": total - correct, "verdicts": dict(sorted(self.steps.items()))}


def chain_record(problem: Problem, steps: Sequence[Any], verdicts: Sequence[str], ground=None, **provenance: Any
                 ) -> tuple[dict[str, Any], int]:
    """(stepwise-supervision record, number of unknown steps left out) for one checked chain.

    With `ground` (the domain's `Grounding`, `Domain.groundedness`), the record also carries `grounded`: per
    labelled step True/False for a valid step, None for an incorrect one or a problem without a gold derivation.
    """
    from prosfi.domains import domain_for

    domain = domain_for(problem)
    kept_steps, labels, kept_verdicts, positions = [], [], [], []
    unknown = 0
    for i, (step, verdict) in enumerate(zip(steps, verdicts)):
        label = step_label(verdict)
        if label is None:
            unknown += 1
            continue
        kept_steps.append(step_object(step))
        labels.append(label)
        kept_verdicts.append(verdict)
        positions.append(i)
    first_error = next((i for i, ok in enumerate(labels) if not ok), None)
    record = {
        "prompt": domain.user_prompt(problem),
        "completions": [step_text(s) for s in kept_steps],
        "labels": labels,
        "steps": kept_steps,
        "problem_id": problem.id,
        "first_error": first_error,
        "verdicts": kept_verdicts,
        "positions": positions,  # index of each labelled step in the completion's step array
        **provenance,
    }
    if ground is not None:
        record["grounded"] = [ground.grounded(s, v) for s, v in zip(kept_steps, kept_verdicts)]
    return record, unknown


def label_completions(problems: dict[str, Problem], completions: Iterable[dict[str, Any]], verifier,
                      chain_config=None, batch_size: int = 256) -> tuple[list[dict[str, Any]], LabelStats]:
    """Records for `{"problem_id", "completion", ...}` items; the verifier is called once per batch.

    Items whose problem is unknown are skipped and counted as format failures.
    """
    from prosfi.domains import Grounding, domain_for
    from prosfi.rewards.score import score_batch

    stats = LabelStats()
    grounds: dict[str, Grounding | None] = {}  # per problem: its domain's groundedness (None: it has none)
    records: list[dict[str, Any]] = []
    batch: list[tuple[int, dict[str, Any]]] = []

    def flush() -> None:
        todo = [(i, item) for i, item in batch if item.get("problem_id") in problems]
        stats.format_failures += len(batch) - len(todo)
        results = score_batch([problems[item["problem_id"]] for _, item in todo],
                              [item["completion"] for _, item in todo], verifier, chain_config=chain_config)
        for (index, item), result in zip(todo, results):
            problem = problems[item["problem_id"]]
            if not result.format_ok or not result.steps:
                stats.format_failures += 1
                continue
            domain = domain_for(problem)
            trace = domain.parse_trace(problem, item["completion"]).trace
            verdicts = [s.verdict for s in result.steps]
            if problem.id not in grounds:
                grounds[problem.id] = domain.groundedness(problem)
            record, unknown = chain_record(
                problem, trace.steps, verdicts, grounds.get(problem.id), completion_index=item.get("index", index),
                answer=result.answer, answer_correct=result.answer_correct, chain_valid=result.chain_valid,
                reward=result.reward)
            stats.unknown_steps += unknown
            if not record["labels"]:
                continue
            stats.chains += 1
            stats.steps.update(record["verdicts"])
            records.append(record)
        batch.clear()

    for index, item in enumerate(completions):
        stats.completions += 1
        batch.append((index, item))
        if len(batch) >= batch_size:
            flush()
    if batch:
        flush()
    return records, stats


__all__ = ["LabelStats", "chain_record", "label_completions", "step_label"]
