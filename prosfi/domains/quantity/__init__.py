"""The quantity domain (kind `quantity`): numeric steps with units, checked in-process by `prosfi.quant`
(exact arithmetic, dimensions), guarded by the chain rules of docs/quantity.md ("Chain rules").

One module a concern: `steps` (the `<steps>` array), `answer` (reading and grading `<answer>`), `chain`
(the chain rules), `perturbations` (NS-PRM twins), `prompts` (what the policy sees), `gold` (gold traces).
Quantity chains need no prover: both `ChainBatch` rounds send nothing.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from prosfi.chain import ChainConfig, ChainResult
from prosfi.data import quant_gold
from prosfi.data.problem import Problem, kinds_of
from prosfi.domains.base import Domain, EvalColumn
from prosfi.domains.quantity import gold
from prosfi.domains.quantity.answer import (QuantityAnswer, answer_tolerance, gold_value, matches, read_answer,
                                            read_in)
from prosfi.domains.quantity.chain import (DEFAULT_RULES, DIMENSION, GROUNDING_GUARDS, QuantityChainCheck,
                                           QuantityRules, QuantityState, QuantityStepResult)
from prosfi.domains.quantity.perturbations import perturbations
from prosfi.domains.quantity.prompts import (SYSTEM_PROMPT, answer_text, render_completion, system_prompt,
                                             user_prompt)
from prosfi.domains.quantity.steps import QuantityStep, claimed_value, parse_steps
from prosfi.quant.licensed import ALLOWED_CONSTANTS
from prosfi.trace.schema import ParsedTrace, parse_trace


class QuantityDomain(Domain):
    name = "quantity"
    kinds = kinds_of("quantity")  # prosfi.data.problem.KINDS, the one list of kinds
    system_prompt = SYSTEM_PROMPT
    completion_formats = ("prosfi", "gsm8k")
    pair_margin = 0.5  # NS-PRM's γ for its CSP pairs
    eval_columns = (
        EvalColumn("dimension_error_rate", "dimension_errors", "dimension errors", (DIMENSION,)),
        EvalColumn("grounding_failure_rate", "grounding_failures", "grounding failures", GROUNDING_GUARDS),
    )

    def prompt_for(self, chain: Any = None) -> str:
        rules = chain.quantity_rules(DEFAULT_RULES) if chain is not None else DEFAULT_RULES
        return self.system_prompt if rules is DEFAULT_RULES else system_prompt(rules)

    def parse_trace(self, problem: Problem, completion: Any) -> ParsedTrace:
        return parse_trace(completion, [str(g.get("id")) for g in problem.givens], parse_steps)

    def as_step(self, raw: Any) -> QuantityStep:
        if isinstance(raw, QuantityStep):
            return raw
        steps, errors = parse_steps(json.dumps([raw]))
        if errors:
            raise ValueError(errors[0])
        return steps[0]

    def step_object(self, step: Any) -> dict[str, Any]:
        return self.as_step(step).to_json()

    def parse_answer(self, problem: Problem, text: str) -> QuantityAnswer:
        return read_answer(text)

    def answer_correct(self, problem: Problem, claim: QuantityAnswer) -> bool:
        gold = gold_value(problem)
        if gold is None or not claim.ok:
            return False
        unit = str((problem.answer or {}).get("unit") or "") if isinstance(problem.answer, dict) else ""
        return matches(gold, unit, claim, answer_tolerance(problem))[0]

    def no_claim(self, problem: Problem) -> QuantityAnswer:
        return QuantityAnswer(reason="no answer")

    def batch_state(self) -> QuantityState:
        return QuantityState()

    def chain_check(self, problem: Problem, steps: Sequence[Any], claim: QuantityAnswer, config: Any,
                    state: QuantityState | None, establish: bool = True) -> QuantityChainCheck:
        return QuantityChainCheck(problem, steps, claim, config or ChainConfig(),
                                  state if state is not None else QuantityState(), establish)

    def check_chain(self, problem: Problem, steps: Sequence[Any], claim: QuantityAnswer | None = None,
                    config: ChainConfig | None = None) -> ChainResult:
        """The chain's result directly (no verifier needed for quantity chains)."""
        claim = claim if claim is not None else QuantityAnswer(reason="no answer")
        check = self.chain_check(problem, [self.as_step(s) for s in steps], claim, config or ChainConfig(),
                                 None, establish=claim.ok)
        return check.finish([])

    # ------------------------------------------------------------------ gold (prosfi.domains.quantity.gold)
    def gold_steps(self, problem: Problem) -> list[dict[str, Any]] | None:
        return gold.gold_steps(problem)

    def gold_completion(self, problem: Problem, verifier: Any = None) -> str | None:
        """The gold completion, kept only when it earns the top level under these chain rules."""
        return gold.gold_completion(problem, self)

    def sloppy_completion(self, problem: Problem) -> str | None:
        return gold.sloppy_completion(problem)

    def answer_text(self, problem: Problem) -> str:
        return answer_text(problem)

    def perturbations(self, problem: Problem, prefix: Sequence[dict[str, Any]], chosen: dict[str, Any],
                      per_kind: int | None = None) -> list[tuple[str, dict[str, Any]]]:
        return perturbations(problem, prefix, chosen, self.as_step, self.gold_steps(problem) or ())

    def pair_context(self, problem: Problem) -> dict[str, Any]:
        """The givens: a pair is re-checkable without the problem (`g1` means something)."""
        return {"givens": [dict(g) for g in problem.givens]}

    def user_prompt(self, problem: Problem) -> str:
        return user_prompt(problem)

    def few_shot_examples(self, kind: str, k: int) -> list[tuple[Problem, str]]:
        return gold.few_shot_examples(k)

    def content_key(self, problem: Problem) -> tuple:
        answer = problem.answer if isinstance(problem.answer, dict) else {"value": problem.answer}
        return (problem.kind, problem.question.strip(),
                tuple((str(g.get("id")), str(g.get("value")), str(g.get("unit") or "")) for g in problem.givens),
                str(answer.get("value")), str(answer.get("unit") or ""))


quant_gold.use_chain_rules(QuantityDomain())  # gold chains are built and kept under these rules

__all__ = ["ALLOWED_CONSTANTS", "DEFAULT_RULES", "DIMENSION", "GROUNDING_GUARDS", "SYSTEM_PROMPT", "QuantityAnswer",
           "QuantityChainCheck", "QuantityDomain", "QuantityRules", "QuantityState", "QuantityStep",
           "QuantityStepResult", "answer_text", "answer_tolerance", "claimed_value", "gold_value", "matches",
           "parse_steps", "read_answer", "read_in", "render_completion", "user_prompt"]
