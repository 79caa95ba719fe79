"""The demo's verdict against the PRoSFI claim "soundness up, accuracy kept", on held-out problems.

A run with `eval_held_out` evaluates the same held-out problems before and after GRPO
(`output_dir/eval_before`, `eval_after`). Per problem, the change in reward hit (right answer by a
fully verified chain) and in accuracy is paired; a bootstrap over problems gives each mean change a
95 % interval (`prosfi eval compare`'s paired bootstrap). The claim holds when
- soundness up: the reward-hit change's interval lies above 0;
- accuracy kept: the accuracy change's interval does not reach below -2 points (`KEPT_MARGIN`);
- the policy after GRPO reads the problems: it is no constant answerer (one answer to >= 95 % of the
  held-out problems, `prosfi.eval.answers`), whose accuracy is only the share of problems with that answer
  (issue #36). A constant answerer before GRPO is said in the line, and does not by itself fail the claim.

`python -m prosfi.train.verdict RUN_DIR ...` prints one row per run and, for several runs (seeds), the
pooled row: every (problem, seed) pair resampled together (200 problems x 3 seeds = 600 pairs).
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

CLAIM = "soundness up, accuracy kept"
KEPT_MARGIN = 0.02  # "accuracy kept": the interval's lower bound is not below -2 points
METRICS = ("reward_hit", "accuracy")
STAGES = ("before", "after")


def paired_values(run_dir: str | Path) -> dict[str, tuple[np.ndarray, np.ndarray]]:
    """metric -> (before, after) per held-out problem, paired by problem id (ValueError without both)."""
    from prosfi.eval.compare import per_problem
    from prosfi.eval.evaluate import read_records

    run = Path(run_dir)
    tables = []
    for name in ("eval_before", "eval_after"):
        if not (run / name / "completions.jsonl").is_file():
            raise ValueError(f"{run}: no {name}/completions.jsonl (a run with eval_held_out > 0 that finished)")
        tables.append(per_problem(read_records(run / name)))
    before, after = tables
    shared = sorted(pid for pid in before if pid in after)
    if not shared:
        raise ValueError(f"{run}: eval_before and eval_after share no problem")
    return {m: (np.array([before[p][m] for p in shared]), np.array([after[p][m] for p in shared])) for m in METRICS}


def run_answers(run_dir: str | Path) -> dict[str, dict[str, Any] | None]:
    """The answer spread (`prosfi.eval.answers`) of a run's held-out evaluations: {"before": ..., "after": ...}
    (None for an evaluation that is missing)."""
    from prosfi.eval.answers import answer_spread
    from prosfi.eval.evaluate import read_records

    run = Path(run_dir)
    return {stage: answer_spread(read_records(run / f"eval_{stage}"))
            if (run / f"eval_{stage}" / "completions.jsonl").is_file() else None for stage in STAGES}


def judge(values: dict[str, tuple[np.ndarray, np.ndarray]], n_boot: int = 10_000, seed: int = 0,
          answers: Sequence[dict[str, Any] | None] = ()) -> dict[str, Any]:
    """The changes with their intervals and the verdict, from paired (before, after) arrays. `answers`: each
    run's `run_answers` (one for a run, one per seed for a pooled verdict); a constant answerer after GRPO in
    any of them fails the claim."""
    from prosfi.eval.compare import paired_bootstrap

    out: dict[str, Any] = {"claim": CLAIM, "kept_margin": KEPT_MARGIN}
    for metric in METRICS:
        a, b = values[metric]
        res = paired_bootstrap(a, b, n_boot, seed)
        out[metric] = {"before": round(float(a.mean()), 4), "after": round(float(b.mean()), 4), **res}
    hit, acc = out["reward_hit"], out["accuracy"]
    out["soundness_up"] = bool(hit["diff_ci"] and hit["diff_ci"][0] > 0)
    out["accuracy_kept"] = bool(acc["diff_ci"] and acc["diff_ci"][0] >= -KEPT_MARGIN - 1e-9)
    runs = [a for a in answers if a]
    out["answers"] = runs
    for stage in STAGES:  # how many runs' policies gave one answer to >= 95 % of the problems
        out[f"constant_{stage}"] = sum(bool((a.get(stage) or {}).get("constant")) for a in runs)
    out["reads_problems"] = out["constant_after"] == 0
    out["holds"] = out["soundness_up"] and out["accuracy_kept"] and out["reads_problems"]
    out["line"] = verdict_line(out)
    return out


def _pts(v: float) -> str:
    return f"{100 * v:+.1f}"


def verdict_line(v: dict[str, Any]) -> str:
    """One plain line: both changes with their intervals, and whether each half of the claim holds."""
    hit, acc = v["reward_hit"], v["accuracy"]
    (hl, hh), (al, ah) = hit["diff_ci"], acc["diff_ci"]
    soundness = "up" if v["soundness_up"] else "NOT shown up"
    if v["accuracy_kept"]:
        kept = f"accuracy kept (lower bound {_pts(al)} >= -{100 * KEPT_MARGIN:.0f} points)"
    else:
        kept = f"accuracy NOT kept (lower bound {_pts(al)} < -{100 * KEPT_MARGIN:.0f} points)"
    head = "holds" if v["holds"] else "does not hold"
    return (f"verdict: the claim \"{CLAIM}\" {head} on {hit['n']} held-out problems: reward hit "
            f"{_pts(hit['diff'])} points [{_pts(hl)}, {_pts(hh)}] ({soundness}); accuracy {_pts(acc['diff'])} "
            f"points [{_pts(al)}, {_pts(ah)}]: {kept}{constant_clause(v)}")


def constant_clause(v: dict[str, Any]) -> str:
    """`; ...` naming constant answerers (after GRPO: why the claim fails; before: a warning), or ''."""
    from prosfi.eval.answers import CONSTANT_SHARE, constant_line

    runs, parts = v.get("answers") or [], []
    for stage, when in (("after", "after GRPO"), ("before", "before GRPO")):
        n = v.get(f"constant_{stage}", 0)
        if not n:
            continue
        if len(runs) == 1:
            parts.append(constant_line(runs[0][stage], f"the policy {when}", v["accuracy"][stage]))
        else:
            parts.append(f"constant answering: the policy {when} gives one answer to >= "
                         f"{100 * CONSTANT_SHARE:.0f} % of the problems on {n} of {len(runs)} runs")
    if v.get("constant_after"):
        parts[0] = "NOT read: " + parts[0]
    return "".join(f"; {p}" for p in parts)


def run_verdict(run_dir: str | Path, n_boot: int = 10_000) -> dict[str, Any] | None:
    """The verdict of one finished run, or None when it has no held-out evaluations."""
    try:
        return judge(paired_values(run_dir), n_boot, answers=[run_answers(run_dir)])
    except ValueError:
        return None


def pooled(run_dirs: Sequence[str | Path], n_boot: int = 10_000) -> dict[str, Any]:
    """Per run and pooled over runs (every problem-run pair resampled together)."""
    per_run = {str(d): paired_values(d) for d in run_dirs}
    answers = {str(d): run_answers(d) for d in run_dirs}
    rows = {d: judge(v, n_boot, answers=[answers[d]]) for d, v in per_run.items()}
    pooled_values = {m: (np.concatenate([v[m][0] for v in per_run.values()]),
                         np.concatenate([v[m][1] for v in per_run.values()])) for m in METRICS}
    return {"runs": rows, "pooled": judge(pooled_values, n_boot, answers=list(answers.values()))}


def table(result: dict[str, Any]) -> str:
    """The per-run and pooled table, plain text."""
    def cell(m: dict[str, Any]) -> str:
        lo, hi = m["diff_ci"]
        return f"{m['before']:.3f} -> {m['after']:.3f}  {_pts(m['diff'])} [{_pts(lo)}, {_pts(hi)}]"

    lines = [f"{'run':<28}{'n':>5}  {'reward hit (change in points, 95% CI)':<42}{'accuracy':<42}verdict"]
    items = list(result["runs"].items()) + [("pooled", result["pooled"])]
    for name, v in items:
        label = Path(name).name if name != "pooled" else "pooled"
        mark = ("hit up" if v["soundness_up"] else "hit NOT up") + ", " + \
            ("acc kept" if v["accuracy_kept"] else "acc NOT kept") + \
            (", CONSTANT answers after GRPO" if v.get("constant_after") else "")
        lines.append(f"{label:<28}{v['reward_hit']['n']:>5}  {cell(v['reward_hit']):<42}{cell(v['accuracy']):<42}{mark}")
    lines.append(result["pooled"]["line"].replace("verdict:", "pooled verdict:", 1))
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m prosfi.train.verdict",
                                     description="held-out verdict per run and pooled over runs (seeds)")
    parser.add_argument("runs", nargs="+", help="run folders (prosfi train output_dir with eval_held_out)")
    parser.add_argument("--min-hit-gain", type=float, default=0.10,
                        help="every run's reward hit must rise at least this much (default: %(default)s)")
    parser.add_argument("--json", default=None, help="also write the result here")
    args = parser.parse_args(argv)
    try:
        result = pooled(args.runs)
    except ValueError as e:
        print(f"verdict: {e}", file=sys.stderr)
        return 2
    print(table(result))
    gains = {Path(d).name: v["reward_hit"]["diff"] for d, v in result["runs"].items()}
    every = all(g >= args.min_hit_gain for g in gains.values())
    print(f"reward hit up by >= {args.min_hit_gain:.2f} on every run: {'yes' if every else 'no'} "
          f"({', '.join(f'{k} {g:+.3f}' for k, g in gains.items())})")
    if args.json:
        Path(args.json).write_text(json.dumps(result, indent=2) + "\n")
    return 0 if every and result["pooled"]["holds"] else 1


if __name__ == "__main__":
    sys.exit(main())
