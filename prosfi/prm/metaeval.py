"""Step-level meta-evaluation of a PRM against the verifier's labels (held-out labelled chains).

- step accuracy: a step is predicted correct when its score is at least the threshold;
- ProcessBench-style first-error F1: the predicted first error is the first step scored below the
  threshold (None when there is none); accuracy on chains with an error (predicted index = true
  index) and on chains without (predicted None), and F1 = their harmonic mean.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any


def first_below(scores: Sequence[float], threshold: float = 0.5) -> int | None:
    return next((i for i, s in enumerate(scores) if s < threshold), None)


def meta_eval(records: Sequence[dict[str, Any]], scores: Sequence[Sequence[float]], threshold: float = 0.5,
              ) -> dict[str, Any]:
    """Step accuracy and first-error F1 of `scores[i]` (one per labelled step of `records[i]`)."""
    if len(records) != len(scores):
        raise ValueError(f"{len(records)} records for {len(scores)} score lists")
    steps = hits = 0
    err_total = err_hit = ok_total = ok_hit = 0
    tp = fp = fn = 0  # per-step detection of incorrect steps
    for rec, sc in zip(records, scores):
        labels = rec["labels"]
        if len(labels) != len(sc):
            raise ValueError(f"problem {rec.get('problem_id')}: {len(labels)} labels for {len(sc)} scores")
        for label, s in zip(labels, sc):
            predicted = s >= threshold
            steps += 1
            hits += predicted == bool(label)
            tp += (not predicted) and not label
            fp += (not predicted) and bool(label)
            fn += predicted and not label
        truth = next((i for i, ok in enumerate(labels) if not ok), None)
        guess = first_below(sc, threshold)
        if truth is None:
            ok_total += 1
            ok_hit += guess is None
        else:
            err_total += 1
            err_hit += guess == truth
    acc_err = err_hit / err_total if err_total else None
    acc_ok = ok_hit / ok_total if ok_total else None
    if acc_err is None or acc_ok is None:
        f1 = None  # ProcessBench's F1 needs chains with and without an error
    else:
        f1 = 2 * acc_err * acc_ok / (acc_err + acc_ok) if acc_err + acc_ok > 0 else 0.0
    return {"chains": len(records), "steps": steps, "threshold": threshold,
            "step_accuracy": hits / steps if steps else None,
            "error_step_precision": tp / (tp + fp) if tp + fp else None,
            "error_step_recall": tp / (tp + fn) if tp + fn else None,
            "first_error_accuracy_erroneous": acc_err, "first_error_accuracy_correct": acc_ok,
            "first_error_f1": f1, "chains_with_error": err_total, "chains_without_error": ok_total}


__all__ = ["first_below", "meta_eval"]
