"""Does a policy read the problems, or give them all the same answer? (issue #36)

A policy that gives (nearly) every problem one answer has learnt nothing about the problems: its accuracy is
the share of problems whose answer that happens to be, and a change in it is a change of constant. The CPU
demo's warm-up once answered True to all 200 held-out problems before and after GRPO (accuracy 0.52 = the
share of True problems) while its verdict said "holds". An evaluation therefore reports, over each problem's
first sample (the held-out evaluations are greedy, one sample):

- `top_answer`, `top_share`: the most frequent answer given and the share of problems it was given to (a
  completion out of format gives no answer: it counts in the share's denominator, never as an answer);
- `majority_answer`, `majority_baseline`: the most frequent right answer and the accuracy of always giving it,
  the best constant answerer's accuracy (from the records' `gold_answer`; None for records without it);
- `constant`: `top_share >= CONSTANT_SHARE`, the policy is (nearly) a constant answerer.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterable
from typing import Any

CONSTANT_SHARE = 0.95  # one answer on at least 95 % of the problems: a constant answerer


def _label(value: Any) -> str:
    return value if isinstance(value, str) else json.dumps(value, sort_keys=True, ensure_ascii=False)


def answer_spread(records: Iterable[dict[str, Any]]) -> dict[str, Any] | None:
    """The spread of answers over problems (first sample of each); None without a scored record."""
    first: dict[str, tuple[int, Any, Any]] = {}
    for r in records:
        if r.get("source") is None:  # a completion for a problem not evaluated
            continue
        pid, sample = str(r["problem_id"]), int(r.get("sample") or 0)
        if pid not in first or sample < first[pid][0]:
            first[pid] = (sample, r.get("answer") if r.get("format_ok") else None, r.get("gold_answer"))
    n = len(first)
    if not n:
        return None
    given = Counter(_label(a) for _, a, _ in first.values() if a is not None)
    top, count = given.most_common(1)[0] if given else (None, 0)
    golds = Counter(_label(g) for _, _, g in first.values() if g is not None)
    majority, right = golds.most_common(1)[0] if golds else (None, 0)
    return {"n_problems": n, "top_answer": top, "top_share": round(count / n, 4),
            "majority_answer": majority, "majority_baseline": round(right / n, 4) if golds else None,
            "constant": count / n >= CONSTANT_SHARE}


def constant_line(spread: dict[str, Any] | None, who: str = "the policy", accuracy: float | None = None) -> str | None:
    """One sentence when `spread` is a constant answerer's, else None."""
    if not spread or not spread.get("constant"):
        return None
    n, share = spread["n_problems"], spread["top_share"]
    line = (f"constant answering: {who} gives the answer {spread['top_answer']!r} to {round(share * n)} of {n} "
            f"problems ({100 * share:.0f} % >= {100 * CONSTANT_SHARE:.0f} %)")
    baseline = spread.get("majority_baseline")
    if baseline is not None:
        acc = "" if accuracy is None else f"its accuracy {accuracy:.3f} next to "
        line += (f"; {acc}the majority-answer baseline {baseline:.3f} (always {spread['majority_answer']!r}): "
                 "the accuracy says nothing about reading the problems")
    return line


def spread_cell(spread: dict[str, Any] | None) -> str:
    """`1.000 (True) CONSTANT` / `0.540 (False)`: the top answer's share, for tables."""
    if not spread or spread.get("top_answer") is None:
        return "n/a"
    return f"{spread['top_share']:.3f} ({spread['top_answer']})" + (" CONSTANT" if spread["constant"] else "")


__all__ = ["CONSTANT_SHARE", "answer_spread", "constant_line", "spread_cell"]
