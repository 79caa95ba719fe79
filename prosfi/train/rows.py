"""Rows for TRL from problems: GRPO prompt rows (with the `problem` column the rewards read) and
SFT rows on gold traces. Thin wrappers over `prosfi.domains`: each problem's domain owns its prompt and
gold trace.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from prosfi.data.problem import Problem


def grpo_dataset(problems: Sequence[Problem], system_prompt: str | None = None, few_shot: int = 0,
                 reward_mode: str = "prosfi", chain: Any = None):
    """`datasets.Dataset` with `prompt` (conversational) and `problem` (JSON) columns, in the completion
    format `reward_mode` selects (`prosfi.rewards.formats`); `chain` (the run's `ChainConfig`) renders the
    rules a domain's system prompt states. A format without worked examples (direct_lean: a whole Lean
    proof) refuses `few_shot`."""
    from datasets import Dataset

    from prosfi.rewards.formats import format_for

    fmt = format_for(reward_mode)
    if few_shot and not fmt.few_shot:
        raise ValueError(f"few_shot: worked examples are in the steps format; use few_shot: 0 with "
                         f"reward_mode: {reward_mode}")
    return Dataset.from_list(fmt.prompt_rows(list(problems), system_prompt, few_shot, chain))


def sft_dataset(problems: Sequence[Problem], verifier: Any = None, system_prompt: str | None = None,
                few_shot: int = 0, sloppy_fraction: float = 0.0, seed: int = 0, careless_fraction: float = 0.0,
                chain: Any = None):
    """Prompt-completion rows on the gold traces of `problems` (problems without one are skipped).

    `sloppy_fraction` of them (chosen with `seed`) get `gold.sloppy_completion` instead: same answer,
    a chain the verifier rejects (the CPU demo's stand-in for a careless base model).
    `careless_fraction` of the problems that have a careless variant (`Domain.careless_completion`: toy
    problems with a later rule about the goal of the other sign, True and False alike) get it instead, chosen
    independently: a wrong answer, so the warm-up is wrong where the base model was careless and its
    accuracy has room to rise.
    """
    import random

    from datasets import Dataset

    from prosfi.domains import domain_for
    from prosfi.domains.prompts import to_sft_row

    sloppy = set(random.Random(seed).sample(range(len(problems)), round(sloppy_fraction * len(problems))))
    careless_rng = random.Random(f"careless-{seed}")
    rows = []
    for i, problem in enumerate(problems):
        domain = domain_for(problem)
        completion = domain.gold_completion(problem, verifier=verifier)
        if completion and i in sloppy:
            completion = domain.sloppy_completion(problem)
        if completion and careless_fraction > 0:
            careless = domain.careless_completion(problem, sloppy=i in sloppy)
            if careless is not None and careless_rng.random() < careless_fraction:
                completion = careless
        if completion:
            rows.append(to_sft_row(problem, completion, system_prompt=system_prompt, few_shot=few_shot, chain=chain))
    if not rows:
        raise ValueError("no gold traces could be built for the SFT set")
    return Dataset.from_list(rows)


def prompt_text(problem: Problem, system_prompt: str | None = None) -> str:
    """The prompt's messages as plain text (for training the tiny tokenizer)."""
    from prosfi.domains.prompts import to_prompt_row

    row = to_prompt_row(problem, system_prompt) if system_prompt else to_prompt_row(problem)
    return "\n".join(m["content"] for m in row["prompt"])


def gold_text(problem: Problem) -> str | None:
    from prosfi.domains import domain_for

    return domain_for(problem).gold_completion(problem)
