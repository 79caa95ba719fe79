"""Shared fixtures data for the PRM tests: problems, gold completions and corrupted ones."""

from __future__ import annotations

import json

from prosfi.data.gold import gold_steps, render_completion
from prosfi.data.problem import Problem


def problems(n_kk: int = 3, n_fol: int = 3, seed: int = 0) -> list[Problem]:
    from prosfi.train.problems import generate_problems

    kk = generate_problems("kk", n_kk, seed=seed, difficulty="2") if n_kk else []
    return kk + (generate_problems("proverqa_gen", n_fol, seed=seed, difficulty="easy") if n_fol else [])


def negate(formula: str) -> str:
    return formula[2:] if formula.startswith("¬ ") else f"¬ ({formula})"


def corrupted(problem: Problem, at: int) -> str | None:
    """The gold completion with step `at`'s conclusion negated (an invalid step, a wrong path after)."""
    steps = gold_steps(problem)
    if not steps or at >= len(steps):
        return None
    steps = [dict(s) for s in steps]
    steps[at]["conclusion"] = negate(steps[at]["conclusion"])
    return render_completion(problem, steps)


def completions(problem_list: list[Problem]) -> list[dict]:
    """Per problem: the gold completion, and the gold completion corrupted at step 0 and at the last step."""
    out = []
    for p in problem_list:
        steps = gold_steps(p)
        if not steps:
            continue
        out.append({"problem_id": p.id, "completion": render_completion(p, steps)})
        for at in sorted({0, len(steps) - 1}):
            text = corrupted(p, at)
            if text:
                out.append({"problem_id": p.id, "completion": text})
    return out


def write_jsonl(path, rows) -> str:
    with open(path, "w", encoding="utf-8") as fh:
        fh.writelines(json.dumps(r, ensure_ascii=False) + "\n" for r in rows)
    return str(path)
