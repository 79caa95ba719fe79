"""Prompt and SFT rows for problems of any domain: each problem gets its domain's system prompt
(unless one is given), user turn, worked examples and gold answer.

The one row builder (the old logic-only copies in `prosfi.data.prompts` are gone): a logic problem's
messages are `prosfi.data.prompts`' system prompt, user turn and worked examples.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable
from typing import Any

from prosfi.data.problem import Problem
from prosfi.domains import domain_for


def prompt_messages(problem: Problem, system_prompt: str | None = None, few_shot: int = 0,
                    examples: list[tuple[Problem, str]] | None = None,
                    user_suffix: Callable[[Problem], str] | None = None, chain: Any = None) -> list[dict[str, str]]:
    """System prompt (the domain's under `chain`, a `ChainConfig`, unless given), worked examples
    (user/assistant turns), the problem."""
    domain = domain_for(problem)
    msgs = [{"role": "system", "content": system_prompt or domain.prompt_for(chain)}]
    shots = examples if examples is not None else domain.few_shot_examples(problem.kind, few_shot)
    for ex, completion in shots:
        msgs.append({"role": "user", "content": domain.user_prompt(ex)})
        msgs.append({"role": "assistant", "content": completion})
    tail = f"\n\n{user_suffix(problem)}" if user_suffix is not None else ""
    msgs.append({"role": "user", "content": domain.user_prompt(problem) + tail})
    return msgs


def to_prompt_row(problem: Problem, system_prompt: str | None = None, few_shot: int = 0,
                  examples: list[tuple[Problem, str]] | None = None,
                  user_suffix: Callable[[Problem], str] | None = None, chain: Any = None) -> dict:
    """A TRL row: `prompt` (messages), `problem` (JSON the rewards read), `problem_id`, `kind`, `answer`."""
    return {
        "prompt": prompt_messages(problem, system_prompt, few_shot, examples, user_suffix, chain),
        "problem": json.dumps(problem.to_dict(), ensure_ascii=False),
        "problem_id": problem.id,
        "kind": problem.kind,
        "answer": domain_for(problem).answer_text(problem),
    }


def prompt_rows(problems: Iterable[Problem], system_prompt: str | None = None, few_shot: int = 0,
                user_suffix: Callable[[Problem], str] | None = None, chain: Any = None) -> list[dict]:
    """Rows for many problems (of any domains); few-shot examples are built once per kind."""
    shots: dict[str, list] = {}
    rows = []
    for p in problems:
        if p.kind not in shots:
            shots[p.kind] = domain_for(p).few_shot_examples(p.kind, few_shot)
        rows.append(to_prompt_row(p, system_prompt, examples=shots[p.kind], user_suffix=user_suffix, chain=chain))
    return rows


def to_sft_row(problem: Problem, completion: str, system_prompt: str | None = None, few_shot: int = 0,
               chain: Any = None) -> dict:
    """A conversational SFT row: the prompt messages plus the assistant's completion."""
    return {"prompt": prompt_messages(problem, system_prompt, few_shot, chain=chain),
            "completion": [{"role": "assistant", "content": completion}]}


def build_dataset(problems: Iterable[Problem], system_prompt: str | None = None, few_shot: int = 0,
                  user_suffix: Callable[[Problem], str] | None = None, chain: Any = None):
    """A `datasets.Dataset` of prompt rows (imports `datasets` only here)."""
    from datasets import Dataset

    return Dataset.from_list(prompt_rows(problems, system_prompt, few_shot, user_suffix, chain))


__all__ = ["build_dataset", "prompt_messages", "prompt_rows", "to_prompt_row", "to_sft_row"]
