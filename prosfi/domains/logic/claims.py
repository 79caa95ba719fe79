"""What a logic problem's answer claims, as a formula: the claim a direct-Lean proof must prove.

The kinds differ (a true/false question claims its goal or its negation, a Knights & Knaves puzzle the
conjunction of its gold literals), so the claim is built here, in the logic domain, and the direct-Lean
format (`prosfi.rewards.direct_lean`) asks for it without knowing a kind.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from prosfi.data.problem import Problem
from prosfi.logic.ast import And, Formula, Not
from prosfi.logic.parser import parse
from prosfi.logic.render_lean import to_lean


def answer_claim(problem: Problem, label: str | None = None) -> Formula | None:
    """The formula the answer `label` ("True"/"False"/"Uncertain"; the gold label by default) claims, or None
    for Uncertain (no claim to prove). An assignment puzzle always claims its gold assignment. ValueError when
    the problem cannot state one (a data error, not the policy's)."""
    if problem.kind == "assignment":
        if not problem.atoms or set(problem.assignment) != set(problem.atoms):
            raise ValueError(f"problem {problem.id}: the assignment does not cover the atoms")
        literals = [parse(a) if problem.assignment[a] else Not(parse(a)) for a in problem.atoms]
        claim = literals[-1]
        for lit in reversed(literals[:-1]):
            claim = And(lit, claim)
        return claim
    label = label or problem.answer_label
    if problem.goal is None or label not in ("True", "False", "Uncertain"):
        raise ValueError(f"problem {problem.id}: no goal or no True/False/Uncertain answer")
    if label == "Uncertain":
        return None
    goal = parse(problem.goal)
    return goal if label == "True" else Not(goal)


def open_claim(problem: Problem, statement: Callable[[str | None], Any]) -> tuple[Any, str]:
    """(a stated theorem, how the prompt describes its open claim) without leaking the gold answer:
    `statement(label)` renders the theorem for an answer label. A true/false question shows both claims; an
    assignment puzzle names its atoms in order, each negated where the answer makes it false."""
    if problem.kind == "assignment":
        shown = statement(None)
        atoms = " ∧ ".join(to_lean(parse(a), names=shown.symbols) for a in problem.atoms)
        return shown, (f"the conjunction of your answer's literals in this order, `{atoms}` with `¬` before each "
                       "atom your answer makes false")
    shown, negated = statement("True"), statement("False")
    return shown, f"`{shown.claim}` if you answer True, `{negated.claim}` if you answer False (Uncertain needs no proof)"


__all__ = ["answer_claim", "open_claim"]
