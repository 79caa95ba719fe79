"""Confirm True/False/Uncertain labels with the verifier.

True: premises ⊢ goal is valid and premises ⊢ ¬ goal is invalid (so the premises are consistent);
False: the reverse; Uncertain: both invalid (a countermodel each way). Anything else (unknown,
error, both valid) confirms nothing and yields None.
"""

from __future__ import annotations

from typing import Sequence

from prosfi.data.problem import Problem
from prosfi.verdict import Entailment, Status


def label_entailments(problem: Problem) -> tuple[Entailment, Entailment]:
    premises = problem.premise_map
    return (Entailment(premises, problem.goal, id=f"{problem.id}:goal"),
            Entailment(premises, f"¬ ({problem.goal})", id=f"{problem.id}:not-goal"))


def verified_labels(problems: Sequence[Problem], verifier) -> list[str | None]:
    """The label the verifier establishes for each true_false_uncertain problem (None if it cannot)."""
    checks = []
    for p in problems:
        if p.kind != "true_false_uncertain":
            raise ValueError(f"{p.id}: only true_false_uncertain problems have a label to confirm")
        checks.extend(label_entailments(p))
    verdicts = verifier.check_many(checks)
    out = []
    for i in range(len(problems)):
        pos, neg = verdicts[2 * i].status, verdicts[2 * i + 1].status
        if pos is Status.VALID and neg is Status.INVALID:
            out.append("True")
        elif pos is Status.INVALID and neg is Status.VALID:
            out.append("False")
        elif pos is Status.INVALID and neg is Status.INVALID:
            out.append("Uncertain")
        else:
            out.append(None)
    return out


def label_mismatches(problems: Sequence[Problem], verifier) -> list[tuple[str, str, str | None]]:
    """(problem id, gold label, verified label) for every problem whose label is not confirmed."""
    return [(p.id, p.answer_label, got) for p, got in zip(problems, verified_labels(problems, verifier))
            if got != p.answer_label]
