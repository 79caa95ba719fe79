"""The `Domain` interface: everything about a problem kind that rewards, eval, training and the PRM
tools need, behind one object, so those layers stay domain-free (no `if kind == ...`, no
`if domain.name == ...`; `tests/test_domain_seam.py` adds a third domain in a test and greps the layers).

A domain reads a completion's steps, builds the chain check of one completion for the batched
chain protocol (`prosfi.chain.ChainBatch`: `key()`, `round1()`, `round2(verdicts)`,
`finish(verdicts)`; a domain whose steps are checked in-process returns no entailments from its
rounds), reads and matches the answer, builds gold traces, formats the prompt and says what the
problem's content is (for de-duplication). For the PRM tools it proposes counterfactual twins of gold
steps (`perturbations`, `pair_margin`, `pair_context`) and, where it has one, a groundedness
(`groundedness`, `natural_negatives`); for eval it declares the step rates it reports
(`eval_columns`). `prosfi.domains.domain_for(problem)` picks one; `prosfi.domains.register` adds one.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
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


@runtime_checkable
class Grounding(Protocol):
    """A problem's groundedness (NS-PRM): which valid steps are on its gold derivation. `defined` is False
    where the problem has no gold derivation; steps are step dicts as the policy writes them."""

    gold: list[dict[str, Any]] | None

    @property
    def defined(self) -> bool: ...

    def on_gold_path(self, step: dict[str, Any]) -> bool: ...

    def grounded(self, step: dict[str, Any], verdict: str) -> bool | None:
        """True/False for a valid step, None for an invalid one or where undefined."""


@dataclass(frozen=True)
class EvalColumn:
    """One step rate a domain reports in `prosfi eval`: each scored record of its problems carries the column
    `record` (its steps whose chain-check `guard` is one of `guards`; `count`) and `guarded_steps` (all its
    steps); `summary.json` reports `metric` = sum of `record` / sum of `guarded_steps` over problems (with a
    bootstrap interval), left out of groups without such steps; `summary.md` heads it `heading`, and
    `plots.py` draws `<metric>.png`. A domain with a rate that is not a guard count overrides `count`."""

    metric: str  # summary.json key, e.g. "dimension_error_rate"
    record: str  # completions.jsonl column, e.g. "dimension_errors"
    heading: str  # summary.md column and plot title, e.g. "dimension errors"
    guards: tuple[str, ...] = ()

    def count(self, steps: Sequence[dict[str, Any]]) -> int:
        """The record's value from its scored steps (`{"verdict", "guard", ...}`)."""
        return sum(1 for s in steps if s.get("guard") in self.guards)


class Domain:
    """One family of problem kinds. Subclasses implement every method that raises NotImplementedError; the
    rest have defaults that fit a domain without the capability (no twins, no groundedness, no eval rates).
    See `prosfi.domains.logic` and `prosfi.domains.quantity`, and the toy domain of
    tests/test_domain_seam.py for the least a domain needs."""

    name: str = ""
    kinds: tuple[str, ...] = ()
    system_prompt: str = ""
    # the `prosfi prm label --completion-format` values its problems can be labelled in (quantity adds
    # `gsm8k`: GSM8K-style `<<expr=value>>` solutions, `prosfi.prm.quant_label`)
    completion_formats: tuple[str, ...] = ("prosfi",)
    # the margin of its CSP pairs when `prosfi prm negatives` is given none (`--margin`)
    pair_margin: float = 1.0
    # the step rates `prosfi eval` reports for its problems (summary.json, summary.md, plots)
    eval_columns: tuple[EvalColumn, ...] = ()

    def prompt_for(self, chain: Any = None) -> str:
        """The system prompt under a chain configuration (`ChainConfig`, e.g. a recipe's `chain_*` keys): a
        domain whose prompt states limits the configuration can change renders them from it, so the prompt
        never promises what the checker rejects. By default the fixed `system_prompt`."""
        return self.system_prompt

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

    def read_step(self, obj: Any) -> tuple[dict[str, Any] | None, str]:
        """A JSON value a model proposed as one step (`prosfi search`) -> (the step as written, "") or
        (None, why not)."""
        if not isinstance(obj, dict):
            return None, "a step is a JSON object"
        try:
            return self.step_object(self.as_step(obj)), ""
        except (ValueError, TypeError, KeyError) as exc:
            return None, f"schema: {str(exc)[:160]}"

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

    # ------------------------------------------------------------------ PRM hard negatives (NS-PRM)
    def perturbations(self, problem: Problem, prefix: Sequence[dict[str, Any]], chosen: dict[str, Any],
                      per_kind: int | None = None) -> list[tuple[str, dict[str, Any]]]:
        """(kind, step) counterfactual twins of the gold step `chosen` after `prefix` that a checker may pass
        but that are wrong for the problem (`wrong_operand`, `wrong_principle`), best first; at most
        `per_kind` of each kind when given (the PRM tools cap them too). Empty where the domain has none.
        `prosfi.prm.negatives.csp_pairs` keeps those the chain check finds valid."""
        return []

    def pair_context(self, problem: Problem) -> dict[str, Any]:
        """What a PRM pair of this domain carries beside its steps so that it can be re-checked on its own
        (quantity: the givens); empty by default."""
        return {}

    def groundedness(self, problem: Problem) -> Grounding | None:
        """The problem's groundedness (which valid steps are on its gold derivation; logic), for PRM
        records' `grounded` and natural negatives; None for a domain without one."""
        return None

    def natural_negatives(self, problem: Problem, chains: Sequence[Sequence[dict[str, Any]]],
                          verdicts: Sequence[Sequence[str]], ground: Grounding
                          ) -> list[tuple[list[dict[str, Any]], dict[str, Any], dict[str, Any]]]:
        """(prefix, grounded step, rejected step) from sampled chains (steps as written, with their verdicts):
        a valid but ungrounded step against the gold step its prefix could have taken. Empty by default."""
        return []

    # ------------------------------------------------------------------ prompts
    def user_prompt(self, problem: Problem) -> str:
        raise NotImplementedError

    def few_shot_examples(self, kind: str, k: int) -> list[tuple[Problem, str]]:
        """k small solved examples of `kind` (fixed seeds, gold completions)."""
        raise NotImplementedError

    # ------------------------------------------------------------------ identity
    def content_key(self, problem: Problem) -> tuple:
        """What makes two problems the same problem whatever their ids (held-out and disjointness checks)."""
        raise NotImplementedError

    def __repr__(self) -> str:
        return f"<Domain {self.name}>"


__all__ = ["Claim", "Domain", "EvalColumn", "Grounding"]
