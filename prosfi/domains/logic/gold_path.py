"""Groundedness of a valid logic step (NS-PRM's "semantic groundedness", made exact for prosfi's logic
tasks): `LogicDomain.groundedness`, the `prosfi.domains.base.Grounding` the PRM tools ask for.

Definition: a step of a problem is **grounded** when the verifier finds it valid in its chain and its
conclusion (alpha-normalised) is on the problem's gold derivation — a conclusion of one of the gold
steps (`prosfi.data.gold.gold_steps`: the generator's stored proof for ProverQA-style problems,
forward chaining over ground instances for other True/False/Uncertain problems, the propositional
search for Knights & Knaves) — or is the goal, its negation, or (K&K) a literal of the gold
assignment. It is **ungrounded** when it is valid but none of these.

Limits: the gold derivation is one proof, not every proof. Where the answer has several proofs
(common in Knights & Knaves, rare in the generated rule chains, whose distractors never decide the
goal), a valid step on another proof is called ungrounded; a problem with no gold derivation has
no groundedness (None) and is skipped. Groundedness says nothing about invalid steps.
"""

from __future__ import annotations

from typing import Any

from prosfi.data.problem import Problem


def canonical_text(formula: str) -> str | None:
    from prosfi.logic import FormulaError, canonical, parse

    try:
        return canonical(parse(formula))
    except (FormulaError, ValueError, RecursionError):
        return None


class Groundedness:
    """The grounded conclusions of one problem (built once, asked per step)."""

    def __init__(self, problem: Problem, gold: list[dict[str, Any]] | None = None) -> None:
        from prosfi.data.gold import gold_steps

        self.problem = problem
        self.gold = gold if gold is not None else gold_steps(problem)
        self.conclusions: set[str] = set()
        if self.gold is None:
            return
        texts = [s["conclusion"] for s in self.gold]
        if problem.kind == "true_false_uncertain" and problem.goal:
            texts += [problem.goal, f"¬ ({problem.goal})"]
        else:
            texts += [a if v else f"¬ {a}" for a, v in problem.assignment.items()]
        self.conclusions = {c for c in (canonical_text(t) for t in texts) if c is not None}

    @property
    def defined(self) -> bool:
        return self.gold is not None

    def on_gold_path(self, step: str | dict[str, Any]) -> bool:
        """Whether a step (a step dict, or its conclusion) concludes what the gold derivation does."""
        key = canonical_text(_conclusion(step))
        return key is not None and key in self.conclusions

    def grounded(self, step: str | dict[str, Any], verdict: str) -> bool | None:
        """True/False for a valid step (a step dict, or its conclusion), None for an invalid one or a problem
        without a gold derivation."""
        if not self.defined or verdict != "valid":
            return None
        return self.on_gold_path(step)


def _conclusion(step: str | dict[str, Any]) -> str:
    return str(step.get("conclusion", "")) if isinstance(step, dict) else step


__all__ = ["Groundedness", "canonical_text"]
