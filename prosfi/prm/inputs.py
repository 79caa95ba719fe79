"""What a PRM reads: the problem, the steps so far and the step to judge, as text.

One rendering for every objective, so a dataset, a trainer and a scorer cannot disagree:
- `sft` (FoVer): a chat turn asking whether the last step is correct; the answer is one label word.
- `pairwise` (NS-PRM): plain text ending with the step itself, so the reward head reads the step's
  last token.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

CORRECT = "correct"
INCORRECT = "incorrect"
STEP_KEYS = ("id", "dependencies", "conclusion", "rule")


def step_object(step: Any) -> dict[str, Any]:
    """A step as written in a completion: `{"id", "dependencies", "conclusion", "rule"}` (logic), or another
    domain's step object as it writes it (`Domain.step_object`, e.g. a quantity step's `expr`, `value`)."""
    if isinstance(step, dict) and "conclusion" not in step and "dependencies" not in step and "id" in step:
        return dict(step)  # another domain's step, already in its written form
    if not isinstance(step, dict) and hasattr(step, "to_json") and not hasattr(step, "conclusion"):
        return step.to_json()
    if isinstance(step, dict):
        return {"id": str(step.get("id", "")), "dependencies": [str(d) for d in step.get("dependencies", [])],
                "conclusion": str(step.get("conclusion", "")), "rule": str(step.get("rule", ""))}
    return {"id": step.id, "dependencies": list(step.dependencies), "conclusion": step.conclusion,
            "rule": step.rule}


def step_text(step: Any) -> str:
    """One step as one line of JSON, exactly as the policy writes it."""
    return json.dumps(step_object(step), ensure_ascii=False)


def _context(problem_prompt: str, prefix: Sequence[Any]) -> str:
    lines = [step_text(s) for s in prefix] or ["(none)"]
    return f"{problem_prompt}\n\nSteps so far:\n" + "\n".join(lines)


def judge_messages(problem_prompt: str, prefix: Sequence[Any], step: Any) -> list[dict[str, str]]:
    """FoVer-style input: the user turn that asks for a verdict on the last step."""
    text = (f"{_context(problem_prompt, prefix)}\n\nLast step:\n{step_text(step)}\n\n"
            f"Is the last step correct? Answer {CORRECT} or {INCORRECT}.")
    return [{"role": "user", "content": text}]


def label_message(label: bool) -> list[dict[str, str]]:
    return [{"role": "assistant", "content": CORRECT if label else INCORRECT}]


def pairwise_text(problem_prompt: str, prefix: Sequence[Any], step: Any) -> tuple[str, str]:
    """(context, step) for the reward head: the sequence is context + step, scored on its last token."""
    return f"{_context(problem_prompt, prefix)}\n\nNext step:\n", step_text(step)


__all__ = ["CORRECT", "INCORRECT", "judge_messages", "label_message", "pairwise_text", "step_object",
           "step_text"]
