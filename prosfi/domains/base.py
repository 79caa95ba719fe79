"""The `Domain` interface: everything about a problem kind that rewards, eval, training and the PRM
tools need, behind one object, so those layers stay domain-free (no `if kind == ...`).

A domain reads a completion's steps, builds the chain check of one completion for the batched
chain protocol (`prosfi.chain.ChainBatch`: `key()`, `round1()`, `round2(verdicts)`,
`finish(verdicts)`; a domain whose steps are checked in-process returns no entailments from its
rounds), reads and matches the answer, builds gold traces, formats the prompt and says what the
problem's content is (for de-duplication). `prosfi.domains.domain_for(problem)` picks one.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Protocol, runtime_checkable

from prosfi.data.problem import Problem
from prosfi.trace.schema import ParsedTrace


@runtime_checkable
class Claim(Protocol):
    """A read `<answer>`: `ok` (readable), `reason` (why not), `render()` (what reports show)."""

    @property
    def ok(self) -> bool: ...

    reason: str

    def render(self) -> str: ...


class Domain:
    """One family of problem kinds. Subclasses implement every method; see `prosfi.domains.logic`
    and `prosfi.domains.quantity`."""

    name: str = ""
    kinds: tuple[str, ...] = ()
    system_prompt: str = ""
    # the PRM tools' groundedness (CSP twins, natural negatives: `prosfi.prm.ground`) is defined for its steps
    step_grounding: bool = False

    # ------------------------------------------------------------------ the completion
    def parse_trace(self, problem: Problem, completion: Any) -> ParsedTrace:
        """Completion (text or TRL messages) -> its blocks and schema-checked steps, or a format failure
        with a reason (never raises)."""
        raise NotImplementedError

    def as_step(self, raw: Any) -> Any:
        """One step object (a dict in the step schema, or an already parsed step) as the chain check takes it."""
        raise NotImplementedError

    def step_object(self, step: Any) -> dict[str, Any]:
        """A step as the policy writes it (a JSON object), e.g. for PRM records."""
        return dict(step) if isinstance(step, dict) else step.to_json()

    def parse_answer(self, problem: Problem, text: str) -> Claim:
        """The `<answer>` text read against the problem; an unreadable answer has a reason (a wrong answer,
        not a format failure)."""
        raise NotImplementedError

    def answer_correct(self, problem: Problem, claim: Claim) -> bool:
        raise NotImplementedError

    def no_claim(self, problem: Problem) -> Claim:
        """A claim that establishes nothing (for checking steps only, e.g. PRM candidates)."""
        return self.parse_answer(problem, "")

    # ------------------------------------------------------------------ the chain
    def batch_state(self) -> Any:
        """Shared, per-batch memo for this domain's chain checks (parsed formulas, evaluated expressions)."""
        return None

    def chain_check(self, problem: Problem, steps: Sequence[Any], claim: Claim, config: Any, state: Any,
                    establish: bool = True) -> Any:
        """The check of one chain in the `ChainBatch` protocol. `config` is the `ChainConfig`;
        `establish=False` checks the steps only (the answer is known to be wrong)."""
        raise NotImplementedError

    # ------------------------------------------------------------------ gold traces
    def gold_steps(self, problem: Problem) -> list[dict[str, Any]] | None:
        """The step array of a gold completion, or None when none is known."""
        raise NotImplementedError

    def gold_completion(self, problem: Problem, verifier: Any = None) -> str | None:
        """A gold completion (None when no derivation is known, or a check rejects a gold step)."""
        raise NotImplementedError

    def sloppy_completion(self, problem: Problem) -> str | None:
        """The gold answer with a chain the checks reject (the CPU demo's careless-model stand-in)."""
        raise NotImplementedError

    def careless_completion(self, problem: Problem, sloppy: bool = False) -> str | None:
        """A wrong answer with the chain that leads to it (the CPU demo's `sft_careless_fraction`), or None
        where the domain has none for this problem (the default)."""
        return None

    def answer_text(self, problem: Problem) -> str:
        """The gold `<answer>` content."""
        raise NotImplementedError

    # ------------------------------------------------------------------ counterfactual negatives (NS-PRM CSP)
    def perturbations(self, problem: Problem, prefix: Sequence[dict[str, Any]], chosen: dict[str, Any]
                      ) -> list[tuple[str, dict[str, Any]]]:
        """(kind, step) twins of the gold step `chosen` after `prefix` that a checker may pass but that are
        wrong for the problem (`wrong_operand`, `wrong_principle`). Empty where the domain has none here;
        the logic domain's live in `prosfi.prm.negatives` (they need its groundedness)."""
        return []

    # ------------------------------------------------------------------ prompts
    def user_prompt(self, problem: Problem) -> str:
        raise NotImplementedError

    def few_shot_examples(self, kind: str, k: int) -> list[tuple[Problem, str]]:
        """k small solved examples of `kind` (fixed seeds, gold completions)."""
        raise NotImplementedError

    # ------------------------------------------------------------------ eval
    def step_categories(self) -> dict[str, tuple[str, ...]]:
        """Eval record column -> the step `guard` values it counts (e.g. quantity's `dimension_errors`);
        empty for a domain whose steps carry no guard categories."""
        return {}

    # ------------------------------------------------------------------ identity
    def content_key(self, problem: Problem) -> tuple:
        """What makes two problems the same problem whatever their ids (held-out and disjointness checks)."""
        raise NotImplementedError

    def __repr__(self) -> str:
        return f"<Domain {self.name}>"


__all__ = ["Claim", "Domain"]
