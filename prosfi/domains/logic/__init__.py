"""The logic domain (kinds `true_false_uncertain`, `assignment`): Lean-syntax formula steps checked
by the provers, guarded by `prosfi.chain`.

Mostly a thin wrapper: the behaviour lives where it always has (`prosfi.trace` for the completion format
and the answer, `prosfi.chain` for the chain check, `prosfi.data.gold` for gold traces,
`prosfi.data.prompts` for prompts). What only the PRM tools need lives here: `gold_path` (which valid steps
are on the gold derivation) and `perturbations` (the CSP twins and natural negatives built on it).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from prosfi.chain import ChainCheck, Formulas
from prosfi.data import gold, prompts
from prosfi.data.problem import Problem, kinds_of
from prosfi.domains.base import Domain
from prosfi.domains.logic import perturbations as csp
from prosfi.domains.logic.gold_path import Groundedness
from prosfi.trace.answer import ParsedAnswer, answer_correct, parse_answer
from prosfi.trace.schema import ParsedTrace, Step, parse_trace


class LogicDomain(Domain):
    name = "logic"
    kinds = kinds_of("logic")  # prosfi.data.problem.KINDS, the one list of kinds
    pair_margin = 1.0

    def __init__(self) -> None:
        self._ground: tuple[Problem, Groundedness] | None = None  # the last problem's (its twins are asked per step)

    @property
    def system_prompt(self) -> str:  # read live: the prompt text is owned by prosfi.data.prompts
        return prompts.SYSTEM_PROMPT

    def parse_trace(self, problem: Problem, completion: Any) -> ParsedTrace:
        return parse_trace(completion, [p.id for p in problem.premises])

    def as_step(self, raw: Any) -> Step:
        if isinstance(raw, Step):
            return raw
        return Step(str(raw["id"]), tuple(str(d) for d in raw["dependencies"]), str(raw["conclusion"]),
                    str(raw.get("rule", "")))

    def step_object(self, step: Any) -> dict[str, Any]:
        s = self.as_step(step)
        return {"id": s.id, "dependencies": list(s.dependencies), "conclusion": s.conclusion, "rule": s.rule}

    def parse_answer(self, problem: Problem, text: str) -> ParsedAnswer:
        return parse_answer(problem, text)

    def answer_correct(self, problem: Problem, claim: ParsedAnswer) -> bool:
        return answer_correct(problem, claim)

    def batch_state(self) -> Formulas:
        return Formulas()

    def chain_check(self, problem: Problem, steps: Sequence[Any], claim: ParsedAnswer, config: Any,
                    state: Formulas | None, establish: bool = True) -> ChainCheck:
        return ChainCheck(problem, tuple(steps), claim, config, state if state is not None else Formulas(),
                          establish=establish)

    def gold_steps(self, problem: Problem) -> list[dict[str, Any]] | None:
        return gold.gold_steps(problem)

    def gold_completion(self, problem: Problem, verifier: Any = None) -> str | None:
        return gold.gold_completion(problem, verifier)

    def sloppy_completion(self, problem: Problem) -> str | None:
        return gold.sloppy_completion(problem)

    def careless_completion(self, problem: Problem, sloppy: bool = False) -> str | None:
        return gold.careless_completion(problem, sloppy)

    def answer_text(self, problem: Problem) -> str:
        return gold.answer_text(problem)

    def read_step(self, obj: Any) -> tuple[dict[str, Any] | None, str]:
        if not isinstance(obj, dict) or not isinstance(obj.get("conclusion"), str) or not isinstance(
                obj.get("dependencies"), list) or not isinstance(obj.get("id"), str):
            return None, "a logic step has string `id`, list `dependencies`, string `conclusion`"
        return csp.written(obj), ""

    # ------------------------------------------------------------------ PRM (prosfi.domains.logic.perturbations)
    def groundedness(self, problem: Problem) -> Groundedness:
        hit = self._ground  # one read: another thread may replace it
        if hit is None or hit[0] is not problem:
            hit = self._ground = (problem, Groundedness(problem))
        return hit[1]

    def perturbations(self, problem: Problem, prefix: Sequence[dict[str, Any]], chosen: dict[str, Any],
                      per_kind: int | None = None) -> list[tuple[str, dict[str, Any]]]:
        """Rule applications on another constant or by another rule, valid-looking but off the gold path."""
        return csp.twins(problem, prefix, chosen, self.groundedness(problem), per_kind)

    def natural_negatives(self, problem: Problem, chains: Sequence[Sequence[dict[str, Any]]],
                          verdicts: Sequence[Sequence[str]], ground: Groundedness
                          ) -> list[tuple[list[dict[str, Any]], dict[str, Any], dict[str, Any]]]:
        return csp.natural_negatives(problem, chains, verdicts, ground)

    def user_prompt(self, problem: Problem) -> str:
        return prompts.user_prompt(problem)

    def few_shot_examples(self, kind: str, k: int) -> list[tuple[Problem, str]]:
        return prompts.few_shot_examples(kind, k)

    def content_key(self, problem: Problem) -> tuple:
        """Premises (as a set) and goal, atoms: the same problem whatever its id or premise order."""
        return (problem.kind, tuple(sorted(p.formal for p in problem.premises)), problem.goal,
                tuple(problem.atoms))


__all__ = ["LogicDomain"]
