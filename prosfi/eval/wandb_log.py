"""`--wandb`: the same summary, table and plots in a wandb run (project from $WANDB_PROJECT, default prosfi;
`WANDB_MODE=offline` works without a network)."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any


def _metrics(summary: dict[str, Any]) -> list[str]:
    """accuracy, reward_hit, format_rate and the summary's completion format's own metrics (the steps format's
    step_validity, unknown_rate, mean_steps)."""
    from prosfi.eval.report import HEAD, summary_format

    return [k for k, _ in HEAD] + [c.metric for c in summary_format(summary).eval_columns]


def _flat(summary: dict[str, Any]) -> dict[str, float]:
    out = {}
    per_group = _metrics(summary)[:4]
    for k, v in (summary.get("overall") or {}).items():
        if isinstance(v, (int, float)) and not isinstance(v, bool):
            out[f"eval/{k}"] = v
    for g in summary.get("groups") or []:
        name = g["source"] + ("" if g.get("difficulty") is None else f"_{g['difficulty']}")
        for k in per_group:
            if g.get(k) is not None:
                out[f"eval/{name}/{k}"] = g[k]
    return out


def log_summary(summary: dict[str, Any], out_dir: str | Path, name: str | None = None) -> None:
    import wandb

    run = wandb.init(project=os.environ.get("WANDB_PROJECT", "prosfi"), name=name, job_type="eval",
                     dir=str(out_dir), config={"model": summary.get("model"), "judge": summary.get("judge")})
    try:
        run.log(_flat(summary))
        cols = ["source", "difficulty", "n", *_metrics(summary)]
        rows = [[g.get(c) for c in cols] for g in summary.get("groups", [])]
        run.log({"eval/table": wandb.Table(columns=cols, data=rows)})
        for png in Path(out_dir).glob("*.png"):
            run.log({f"eval/plot/{png.stem}": wandb.Image(str(png))})
    finally:
        run.finish()


def log_compare(result: dict[str, Any], out_dir: str | Path) -> None:
    import wandb

    run = wandb.init(project=os.environ.get("WANDB_PROJECT", "prosfi"), job_type="eval-compare", dir=str(out_dir))
    try:
        cols = ["run", "baseline", "source", "difficulty", "metric", "n", "diff", "p"]
        run.log({"compare/tests": wandb.Table(columns=cols, data=[[t.get(c) for c in cols]
                                                                 for t in result["tests"]])})
        for png in Path(out_dir).glob("*.png"):
            run.log({f"compare/plot/{png.stem}": wandb.Image(str(png))})
    finally:
        run.finish()


__all__ = ["log_compare", "log_summary"]
