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
            "error_step_f1": 2 * tp / (2 * tp + fp + fn) if tp + fp + fn else None,
            "first_error_accuracy_erroneous": acc_err, "first_error_accuracy_correct": acc_ok,
            "first_error_f1": f1, "chains_with_error": err_total, "chains_without_error": ok_total}


def ablation_table(records: Sequence[dict[str, Any]], scores: Sequence[Sequence[float]], threshold: float = 0.5,
                   ) -> list[dict[str, Any]]:
    """NS-PRM's ablation on held-out chains with verifier and groundedness labels.

    Target: a step is good when it is valid *and* grounded (records need `grounded`; chains of
    problems without a gold derivation are left out). Judges: the verifier alone (valid), the PRM
    alone (score ≥ threshold), both (valid and score ≥ threshold). Each row is `meta_eval` of that
    judge's 1/0 verdicts against the target.
    """
    kept, targets, judged = [], [], {"verifier only": [], "PRM only": [], "verifier + PRM": []}
    for rec, sc in zip(records, scores):
        grounded = rec.get("grounded")
        if grounded is None or any(g is None and ok for g, ok in zip(grounded, rec["labels"])):
            continue
        target = [bool(ok) and g is True for ok, g in zip(rec["labels"], grounded)]
        kept.append({"labels": target})
        targets.append(target)
        judged["verifier only"].append([1.0 if ok else 0.0 for ok in rec["labels"]])
        judged["PRM only"].append([1.0 if s >= threshold else 0.0 for s in sc])
        judged["verifier + PRM"].append([1.0 if ok and s >= threshold else 0.0 for ok, s in zip(rec["labels"], sc)])
    if not kept:
        return []
    return [{"judge": name, **meta_eval(kept, preds, 0.5)} for name, preds in judged.items()]


__all__ = ["ablation_table", "first_below", "meta_eval"]
