"""The logic domain's prompt text: the system prompt, the user turn of a problem and worked examples.

The rows built from them (TRL prompt rows, SFT rows, datasets) are `prosfi.domains.prompts`', which
asks each problem's domain for its prompt, so one builder serves every domain.
"""

from __future__ import annotations

import random

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
