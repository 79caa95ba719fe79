"""Prompts and TRL rows: conversational `prompt` messages plus the columns the reward functions read.

The `problem` column carries `json.dumps(problem.to_dict())`, so a reward function can rebuild the
Problem from the row alone.
"""

from __future__ import annotations

import json
import random
from typing import Callable, Iterable

from prosfi.data.problem import Problem

SYSTEM_PROMPT = """\
You solve logic problems with steps a formal verifier can check. Reply in exactly this form:
<think>
your reasoning in plain language
</think>
<steps>
[{"id": "s1", "dependencies": ["h1", "h2"], "conclusion": "<formula>", "rule": "<rule name>"}, ...]
</steps>
<answer>your answer</answer>
Write nothing after </answer>. Each step cites at most 4 ids: premises (h1, h2, ...) or earlier steps \
(s1, s2, ...). Its conclusion must follow from the cited formulas alone, need every one of them, be \
new, not be true by logic alone, and use only the problem's names. Keep steps small: one premise \
rule per step, at most two facts per conclusion, no bundling premises into conjunctions.
Formulas use Lean 4 syntax with the problem's own names: `P a`, `R a b`, `¬ A`, `A ∧ B`, `A ∨ B`, \
`A → B`, `A ↔ B`, `Xor' A B` (exactly one of A, B), `∀ x, P x → Q x`, `∃ x, P x`.
True/False/Uncertain questions: answer with the option letter. True needs a step concluding the \
statement, False a step concluding its negation (¬ statement); Uncertain means neither follows: \
derive every fact the premises about the statement force about its subject, with no other steps \
(when no premise names a predicate of the statement, nothing bears on it: the step array is []).
Knights and knaves: answer `(1) Name is a knight (2) Name is a knave ...` (in the puzzle's own words \
when it has them, e.g. saint/sinner), and conclude each `Knight name` or `¬ Knight name` in a step."""


def user_prompt(problem: Problem) -> str:
    """The problem as the user turn: premises `hN: text` with `Formal: formula`, question, options."""
    lines = []
    if problem.kind == "assignment" and problem.context:
        intro = problem.context.split(" You meet ")[0]
        lines += [intro, ""]
    lines.append("Premises:")
    for p in problem.premises:
        lines.append(f"{p.id}: {p.text}" if p.text else f"{p.id}:")
        lines.append(f"Formal: {p.formal}")
    lines.append("")
    if problem.kind == "true_false_uncertain":
        lines.append(f"Question: {problem.question}" if problem.question else "Question: is the statement "
                     "true, false, or uncertain?")
        lines.append(f"Statement (formal): {problem.goal}")
        lines.append("Options:")
        lines += [f"{k}) {v}" for k, v in problem.options.items()]
        lines.append("Answer with the option letter.")
    else:
        from prosfi.data.kk import article, question_for, roles_of

        roles = roles_of(problem)
        lines.append(f"Question: {problem.question or question_for(roles)}")
        names = problem.extra.get("names") or [a.split()[-1].capitalize() for a in problem.atoms]
        lines.append("Assign every atom: " + ", ".join(f"{a} ({n})" for a, n in zip(problem.atoms, names)))
        if roles != ("knight", "knave"):
            lines.append(f"`Knight name` means: name is {article(roles[0])}; `¬ Knight name`: name is "
                         f"{article(roles[1])}.")
        shape = " ".join(f"({i + 1}) {n} is {article(roles[0])}/{roles[1]}" for i, n in enumerate(names))
        lines.append(f"Answer as: {shape}")
    return "\n".join(lines)


def few_shot_examples(kind: str, k: int) -> list[tuple[Problem, str]]:
    """k small solved examples of one kind (fixed seeds, gold completions)."""
    if k <= 0:
        return []
    from prosfi.data.gold import gold_completion

    out: list[tuple[Problem, str]] = []
    seed = 0
    while len(out) < k and seed < 100:
        if kind == "assignment":
            from prosfi.data.kk import NAMES, KKConfig, build_problem, sample_statements

            rng = random.Random(10_000 + seed)
            cfg = KKConfig(people=2)
            names = rng.sample(NAMES, 2)
            p = build_problem(f"example-{seed}", names, sample_statements(rng, cfg), rng)
        else:
            from prosfi.data.pqa_gen import LABELS, FOLGenConfig, generate_one

            rng = random.Random(10_000 + seed)
            p = generate_one(rng, FOLGenConfig(difficulty="easy", distractor_rules=1, distractor_facts=1),
                             LABELS[seed % 3], f"example-{seed}")
        text = gold_completion(p)
        if text is not None:
            out.append((p, text))
        seed += 1
    return out


def prompt_messages(problem: Problem, system_prompt: str = SYSTEM_PROMPT, few_shot: int = 0,
                    examples: list[tuple[Problem, str]] | None = None,
                    user_suffix: Callable[[Problem], str] | None = None) -> list[dict[str, str]]:
    """System prompt, optional worked examples (user/assistant turns), then the problem (plus
    `user_suffix(problem)`, e.g. the Lean statement of the direct-Lean baseline)."""
    msgs = [{"role": "system", "content": system_prompt}]
    shots = examples if examples is not None else few_shot_examples(problem.kind, few_shot)
    for ex, completion in shots:
        msgs.append({"role": "user", "content": user_prompt(ex)})
        msgs.append({"role": "assistant", "content": completion})
    tail = f"\n\n{user_suffix(problem)}" if user_suffix is not None else ""
    msgs.append({"role": "user", "content": user_prompt(problem) + tail})
    return msgs


def to_sft_row(problem: Problem, completion: str, system_prompt: str | None = None,
               few_shot: int = 0) -> dict:
    """A conversational SFT row: the prompt messages plus the assistant's completion."""
    return {"prompt": prompt_messages(problem, system_prompt or SYSTEM_PROMPT, few_shot),
            "completion": [{"role": "assistant", "content": completion}]}


def gold_answer(problem: Problem) -> str:
    from prosfi.data.gold import answer_text

    return answer_text(problem)


def to_prompt_row(problem: Problem, system_prompt: str = SYSTEM_PROMPT, few_shot: int = 0,
                  examples: list[tuple[Problem, str]] | None = None,
                  user_suffix: Callable[[Problem], str] | None = None) -> dict:
    """A TRL row: `prompt` (messages), `problem` (JSON the rewards read), `problem_id`, `kind`, `answer`."""
    return {
        "prompt": prompt_messages(problem, system_prompt, few_shot, examples, user_suffix),
        "problem": json.dumps(problem.to_dict(), ensure_ascii=False),
        "problem_id": problem.id,
        "kind": problem.kind,
        "answer": gold_answer(problem),
    }


def prompt_rows(problems: Iterable[Problem], system_prompt: str = SYSTEM_PROMPT,
                few_shot: int = 0, user_suffix: Callable[[Problem], str] | None = None) -> list[dict]:
    """Rows for many problems; few-shot examples are built once per kind."""
    shots: dict[str, list] = {}
    rows = []
    for p in problems:
        if p.kind not in shots:
            shots[p.kind] = few_shot_examples(p.kind, few_shot)
        rows.append(to_prompt_row(p, system_prompt, examples=shots[p.kind], user_suffix=user_suffix))
    return rows


def build_dataset(problems: Iterable[Problem], system_prompt: str = SYSTEM_PROMPT, few_shot: int = 0,
                  user_suffix: Callable[[Problem], str] | None = None):
    """A `datasets.Dataset` of prompt rows (imports `datasets` only here)."""
    from datasets import Dataset

    return Dataset.from_list(prompt_rows(problems, system_prompt, few_shot, user_suffix))
