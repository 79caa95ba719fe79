"""GSM-Symbolic templates through `reasoning-gym` -> quantity problems (docs/quantity.md "Data").

`reasoning_gym.create_dataset("gsm_symbolic", size=N, seed=S)` draws grade-school problems from
symbolic templates; each entry has `question`, `answer` and `metadata` (`answer_cot`: a worked solution
in plain-text equations ending in `#### N`; `variables`: the template's values). The answer we store is
checked against the library's own (`dataset.score_answer(answer, entry) == 1.0`); an entry that fails
the check is skipped with the reason. Gold chains are read from `answer_cot` like GSM8K's
(`prosfi.data.gsm8k.equations` + `quant_gold.attach_gold`); entries whose solution leans on a number
the question never states get no gold chain (the reason is in `extra["gold_issue"]`).
"""

from __future__ import annotations

import re
from typing import Any

from prosfi.data.problem import Problem

_INSTRUCTION = re.compile(r"\s*Give the (?:result|answer) as your final answer\.?\s*Do not include units\.?\s*$",
                          re.IGNORECASE)


class GymUnavailable(RuntimeError):
    """reasoning-gym is not installed (pip install reasoning-gym)."""


def _dataset(count: int, seed: int):
    try:
        import reasoning_gym
    except ImportError:
        raise GymUnavailable("GSM-Symbolic needs reasoning-gym: pip install 'reasoning-gym>=0.1.25'") from None
    return reasoning_gym.create_dataset("gsm_symbolic", size=count, seed=seed)


def problem_from_entry(entry: dict[str, Any], pid: str, dataset=None) -> Problem:
    """One reasoning-gym entry -> a quantity Problem; ValueError with the reason when it cannot be used."""
    from prosfi.data.gsm8k import answer_unit, equations, final_answer, number_text
    from prosfi.data.quant_gold import attach_gold
    from prosfi.quant import extract_givens

    question = _INSTRUCTION.sub("", str(entry.get("question", ""))).strip()
    if not question:
        raise ValueError("no question text")
    meta = entry.get("metadata") or {}
    from prosfi.data.gsm8k import parse_number

    answer = parse_number(str(entry.get("answer", "")))
    if answer is None:
        raise ValueError(f"answer {entry.get('answer')!r} is not a number")
    if dataset is not None and dataset.score_answer(number_text(answer), entry) != 1.0:
        raise ValueError(f"the library does not accept {number_text(answer)!r} as the answer")
    cot = str(meta.get("answer_cot") or "")
    cot_answer = final_answer(cot)
    givens = [{"id": g.id, "value": g.value, "unit": g.unit, "text": g.text, "start": g.start, "end": g.end}
              for g in extract_givens(question, units="money")]
    eqs = equations(cot)
    unit = answer_unit(question, cot, answer)  # the same rule as GSM8K's, from the entry alone
    problem = Problem(
        id=pid, kind="quantity", premises=[], source="gsm_symbolic", question=question, givens=givens,
        target={"name": "answer", "unit": unit}, answer={"value": number_text(answer), "unit": unit},
        difficulty=max(1, min(8, len(eqs))) if eqs else None,
        extra={"solution": cot, "template_index": meta.get("source_index")},
    )
    if cot_answer is not None and cot_answer != answer:
        problem.extra["gold_issue"] = f"solution: its #### {number_text(cot_answer)} is not the answer"
        return problem
    attach_gold(problem, eqs, answer)
    return problem


def generate(count: int, seed: int = 0, skipped: list | None = None) -> list[Problem]:
    """`count` GSM-Symbolic problems (ids `gsm_symbolic-<seed>-NNNN`); unusable entries go to `skipped`."""
    if count < 0:
        raise ValueError("count must be >= 0")
    if count == 0:
        return []
    ds = _dataset(count, seed)
    out = []
    for i in range(count):
        entry = ds[i]
        try:
            out.append(problem_from_entry(entry, f"gsm_symbolic-{seed}-{i:04d}", ds))
        except (ValueError, TypeError) as exc:
            if skipped is not None:
                skipped.append((i, str(exc)))
    return out
