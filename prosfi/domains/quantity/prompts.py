"""What the policy is shown: the system prompt, the problem as the user turn, a rendered completion."""

from __future__ import annotations

from typing import Any

from prosfi.data.problem import Problem
from prosfi.data.quant_gold import answer_text, render_completion



SYSTEM_PROMPT = """\
You solve quantitative word problems with steps a checker can verify. Reply in exactly this form:
<think>
your reasoning in plain language
</think>
<steps>
[{"id": "s1", "expr": "g1 - g2", "value": 9, "unit": "", "name": "eggs_left"}, ...]
</steps>
<answer>your answer</answer>
Write nothing after </answer>. Each step computes one value. "expr" is arithmetic over the givens \
(g1, g2, ...) and earlier steps (s1, s2, ...) with + - * / ** ( ) and sqrt exp log sin cos tan abs floor \
ceil min max round; or use "op" with "args" (a named primitive such as kinetic_energy). "value" and \
"unit" state the result ("" for a plain number; units such as m/s, km/h, J, USD, percent; they convert by \
themselves). A number written in an expression must be a given's number or one of 0-10, 0.5, 7, 12, 24, \
52, 60, 100, 365, 1000, 3600. At most 4 operations per step; every value a step cites must change its \
result; a step may not just restate a value; every step must lead to the last step, whose value is the \
answer. Answer with that value and its unit, e.g. <answer>18</answer> or <answer>3 m/s</answer>."""


def _given_line(g: dict[str, Any]) -> str:
    value = str(g.get("value", ""))
    unit = str(g.get("unit") or "")
    text = str(g.get("text") or "")
    shown = f"{value}{' ' + unit if unit else ''}"
    line = f"{g.get('id')} = {shown}"
    return f"{line}  (\"{text}\")" if text and text.strip() != shown else line


def user_prompt(problem: Problem) -> str:
    """The problem as the user turn: the question, the givens with their ids, what to find."""
    lines = [f"Question: {problem.question}", "", "Givens:"]
    lines += [_given_line(g) for g in problem.givens] or ["(none)"]
    target = problem.target or {}
    name, unit = target.get("name"), target.get("unit")
    if name or unit:
        lines += ["", f"Find: {name or 'the answer'}" + (f" (in {unit})" if unit else "")]
    return "\n".join(lines)


__all__ = ["SYSTEM_PROMPT", "answer_text", "render_completion", "user_prompt"]
