"""What the policy is shown: the system prompt, the problem as the user turn, a rendered completion."""

from __future__ import annotations

from fractions import Fraction
from typing import Any

from prosfi.data.problem import Problem
from prosfi.data.quant_gold import answer_text, render_completion
from prosfi.quant.licensed import ALLOWED_CONSTANTS, ALWAYS, CONSTANT_CONTEXT, MULTIPLE_WORDS



_FORM = """\
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
ceil min max round, and the constants pi and e; or use "op" with "args" (a named primitive such as \
kinetic_energy). "value" and "unit" state the result ("" for a plain number; units such as m/s, km/h, J, \
USD, percent; they convert by themselves). The checker recomputes every step from the givens. """


def system_prompt(rules: Any = None) -> str:
    """The system prompt, its limits and constants rendered from the rules the checker enforces
    (`QuantityRules`, `prosfi.quant.licensed`), so the prompt never promises what the checker rejects."""
    from prosfi.domains.quantity.chain import DEFAULT_RULES

    rules = rules or DEFAULT_RULES
    always = ", ".join(_num(c) for c in ALLOWED_CONSTANTS if c in ALWAYS)
    factors = ", ".join(f"{_num(c)} ({' or '.join(' and '.join(alt) for alt in need)})"
                        for c, need in CONSTANT_CONTEXT.items() if c not in ALWAYS)
    words = "; ".join(f"x{_num(m)}: {', '.join(w[:3])}" for m, w in MULTIPLE_WORDS.items())
    limit = f"At most {rules.max_ops} operations per step; " if rules.max_ops else ""
    return (_FORM + f"Cite the givens by id. Any other number written in an expression must be {always}, or a unit factor "
            f"the problem names both sides of: {factors}. Scaling a value by a count the problem does not state "
            f"is rejected, also as repeated addition (x + x): a multiple needs its word ({words}). {limit}"
            "every value a step cites must change its result; a step may not restate a given or an earlier value "
            "or be a constant; every step must lead to the last step, whose value is the answer. Answer with that "
            "value and its unit, e.g. <answer>18</answer> or <answer>3 m/s</answer>.")


def _num(x: Fraction) -> str:
    return str(x.numerator) if x.denominator == 1 else str(float(x))


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


SYSTEM_PROMPT = system_prompt()

__all__ = ["SYSTEM_PROMPT", "answer_text", "render_completion", "system_prompt", "user_prompt"]
