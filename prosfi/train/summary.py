"""What a finished run tells its user: reward, answer accuracy and chain validity at the start and
at the end of GRPO, and where the run and its logs are.

`MetricsRecorder` keeps every logged row (and appends it to `metrics.jsonl` in the output
directory); `summarize` averages the first and last few rows of each headline metric.
"""

from __future__ import annotations

import json
import math
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from transformers import TrainerCallback

# headline -> substrings that identify its logged key (first match wins; TRL and the reward
# functions decide the exact names, e.g. `reward`, `prosfi/answer_accuracy`, `prosfi/chain_valid_rate`).
HEADLINES: dict[str, tuple[tuple[str, ...], ...]] = {
    "reward": (("reward",),),
    "answer accuracy": (("answer_accuracy",), ("answer", "acc")),
    "chain validity": (("chain_valid",), ("chain", "valid")),
    "format rate": (("format_rate",), ("format", "ok")),
    # vLLM runs with TRL's importance-sampling correction: near 1 when vLLM and the trainer agree on the
    # sampled tokens' probabilities; far below 1 means the loss is being scaled down (see the GPU recipes)
    "vLLM IS ratio": (("sampling/importance_sampling_ratio/mean",),),
}
# headlines only some runs log (not a property of the reward mode)
OPTIONAL = {"vLLM IS ratio"}


class MetricsRecorder(TrainerCallback):
    """Collects the trainer's logged rows; on the main process also appends them to a JSONL file."""

    def __init__(self, path: str | Path | None = None) -> None:
        self.rows: list[dict[str, Any]] = []
        self.path = Path(path) if path else None

    def on_log(self, args, state, control, logs=None, **kwargs):
        if not logs:
            return
        row = {"step": state.global_step, **{k: v for k, v in logs.items() if _number(v) is not None}}
        self.rows.append(row)
        if self.path is not None and state.is_world_process_zero:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            with self.path.open("a") as f:
                f.write(json.dumps(row) + "\n")


def read_rows(path: str | Path) -> list[dict[str, Any]]:
    """Every row of a JSONL log, markers included (empty when the file does not exist; a line torn by a
    killed run is skipped)."""
    p = Path(path)
    if not p.is_file():
        return []
    rows = []
    for line in p.read_text(encoding="utf-8", errors="replace").splitlines():
        try:
            row = json.loads(line)
        except ValueError:
            continue
        if isinstance(row, dict):
            rows.append(row)
    return rows


def mark_run(path: str | Path, run_name: str | None, resume_from_step: int | None, **extra: Any) -> None:
    """Append a `run_start` marker to a JSONL log (created if absent)."""
    p = Path(path)
    p.parent.mkdir(parents=True, exist_ok=True)
    marker = {"event": "run_start", "run_name": run_name, "resume_from_step": resume_from_step,
              "time": time.strftime("%Y-%m-%dT%H:%M:%S"), **extra}
    with p.open("a", encoding="utf-8") as f:
        f.write(json.dumps(marker) + "\n")


def run_rows(path: str | Path) -> list[dict[str, Any]]:
    """The current run's rows of an appended log (metrics.jsonl, the audit): after its last fresh
    `run_start` marker, plus, for a resumed run, the earlier rows up to the step it resumed from (a run
    that went past its last checkpoint logged steps the resume logs again). Markers are left out."""
    return story(read_rows(path))


def story(rows: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """`run_rows` over rows already read."""
    kept: list[dict[str, Any]] = []
    for row in rows:
        if row.get("event") == "run_start":
            step = row.get("resume_from_step")
            kept = [] if step is None else [r for r in kept if (r.get("step") or 0) <= step]
        elif "event" not in row:
            kept.append(row)
    return kept


def checkpoint_step(checkpoint: str | None) -> int | None:
    if not checkpoint:
        return None
    name = Path(checkpoint).name
    return int(name.rsplit("-", 1)[1]) if name.startswith("checkpoint-") and name.rsplit("-", 1)[1].isdigit() else 0


def _number(v: Any) -> float | None:
    if isinstance(v, bool):
        return float(v)
    if isinstance(v, (int, float)) and math.isfinite(v):
        return float(v)
    return None


def headline_key(keys: Sequence[str], name: str) -> str | None:
    """The logged key that carries headline `name` (exact `reward` preferred for the reward)."""
    if name == "reward" and "reward" in keys:
        return "reward"
    for parts in HEADLINES[name]:
        for key in sorted(keys):
            low = key.lower()
            if name != "reward" and ("std" in low or low.startswith("rewards/")):
                continue
            if all(p in low for p in parts):
                return key
    return None


@dataclass
class Summary:
    run_name: str
    steps: int
    window: int
    rows: dict[str, tuple[str, float | None, float | None]] = field(default_factory=dict)
    where: dict[str, str] = field(default_factory=dict)
    eval_before: dict[str, Any] | None = None  # held-out `overall` metrics (prosfi eval) before GRPO
    eval_after: dict[str, Any] | None = None
    eval_n_problems: int | None = None
    eval_mode: str | None = None  # the held-out summaries' reward_mode: its completion format's metrics are shown
    verdict: dict[str, Any] | None = None  # prosfi.train.verdict.judge: the claim against the held-out changes
    # prosfi.eval.answers.answer_spread of each held-out evaluation: is the policy a constant answerer?
    answers: dict[str, dict[str, Any] | None] = field(default_factory=dict)

    def add_held_out(self, before: dict[str, Any] | None, after: dict[str, Any] | None) -> None:
        """Attach the held-out evaluations (`prosfi eval` summaries) made before and after GRPO."""
        if before is not None:
            self.eval_before = before.get("overall", before)
            self.eval_n_problems = before.get("n_problems")
        if after is not None:
            self.eval_after = after.get("overall", after)
        self.eval_mode = next((s.get("reward_mode") for s in (before, after) if s is not None), None)
        self.answers = {stage: s.get("answers") for stage, s in (("before", before), ("after", after))
                        if s is not None and s.get("answers") is not None}

    def plot_reward(self, rows: Sequence[dict[str, Any]], path: str | Path) -> Path | None:
        """The training reward per GRPO step (and its moving mean) as a PNG; None without matplotlib/rows."""
        made = plot_reward_curve(rows, path, title=self.run_name)
        if made is not None:
            self.where["reward curve"] = str(made)
        return made

    def to_text(self) -> str:
        w = self.window
        lines = [f"== prosfi run summary: {self.run_name} ==",
                 f"GRPO steps: {self.steps}; start = mean of the first {w} logged steps, end = the last {w}"]
        lines.append(f"{'':<18}{'start':>10}{'end':>10}   logged as")
        for name, (key, start, end) in self.rows.items():
            lines.append(f"{name:<18}{_fmt(start):>10}{_fmt(end):>10}   {key}")
        missing = [n for n in HEADLINES if n not in self.rows and n not in OPTIONAL]
        if missing:
            lines.append(f"(not logged by this reward mode: {', '.join(missing)})")
        lines += self._held_out_lines()
        for label, path in self.where.items():
            lines.append(f"{label + ':':<18}{path}")
        if self.verdict is not None:
            lines.append(self.verdict["line"])
        return "\n".join(lines)

    def _held_out_lines(self) -> list[str]:
        if self.eval_before is None and self.eval_after is None:
            return []
        n = self.eval_n_problems or (self.eval_before or self.eval_after or {}).get("n")
        lines = [f"held-out problems ({n}, never seen in SFT or GRPO; greedy; 95% bootstrap intervals):",
                 f"{'':<18}{'before GRPO':>22}{'after GRPO':>22}"]
        from prosfi.rewards.formats import format_of

        for key in HELD_OUT_METRICS + tuple(c.metric for c in format_of(self.eval_mode).eval_columns):
            cells = [_cell(m, key) for m in (self.eval_before, self.eval_after)]
            lines.append(f"{key:<18}{cells[0]:>22}{cells[1]:>22}")
        return lines + self._answer_lines()

    def _answer_lines(self) -> list[str]:
        """The most frequent answer's share and the majority-answer baseline, and a line for each evaluation
        whose policy gives one answer to (nearly) every problem."""
        from prosfi.eval.answers import constant_line, spread_cell

        if not self.answers:
            return []
        spreads = [self.answers.get(stage) for stage in ("before", "after")]
        baselines = [f"{a['majority_baseline']:.3f} ({a['majority_answer']})"
                     if a and a.get("majority_baseline") is not None else "n/a" for a in spreads]
        lines = [f"{'top answer share':<18}{spread_cell(spreads[0]):>22}{spread_cell(spreads[1]):>22}",
                 f"{'majority baseline':<18}{baselines[0]:>22}{baselines[1]:>22}"]
        for spread, metrics, when in zip(spreads, (self.eval_before, self.eval_after), ("before", "after")):
            line = constant_line(spread, f"the policy {when} GRPO", (metrics or {}).get("accuracy"))
            if line:
                lines.append(line)
        return lines

    def as_dict(self) -> dict[str, Any]:
        out = {"run_name": self.run_name, "steps": self.steps, "window": self.window,
               "metrics": {n: {"key": k, "start": s, "end": e} for n, (k, s, e) in self.rows.items()},
               "where": self.where}
        if self.eval_before is not None or self.eval_after is not None:
            out["eval_before"] = self.eval_before
            out["eval_after"] = self.eval_after
        if self.answers:
            out["answers"] = self.answers
        if self.verdict is not None:
            out["verdict"] = self.verdict
        return out


# every format's; the held-out summaries' completion format adds its own (the steps format's step_validity,
# unknown_rate, mean_steps; direct-Lean's proof_verified_rate, proof_unknown_rate)
HELD_OUT_METRICS = ("reward_hit", "accuracy", "format_rate")


def _cell(metrics: dict[str, Any] | None, key: str) -> str:
    if not metrics or metrics.get(key) is None:
        return "n/a"
    value = metrics[key]
    ci = metrics.get(f"{key}_ci")
    if key.startswith("mean_") or not ci or None in ci:
        return f"{value:.3f}"
    return f"{value:.3f} [{ci[0]:.2f}, {ci[1]:.2f}]"


def plot_reward_curve(rows: Sequence[dict[str, Any]], path: str | Path, title: str = "") -> Path | None:
    """Reward per logged GRPO step and a moving mean over ~a tenth of the run, saved as a PNG."""
    points = [(r.get("step", i), r["reward"]) for i, r in enumerate(rows) if "reward" in r]
    if not points:
        return None
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return None
    steps, rewards = zip(*points)
    w = max(1, len(rewards) // 10)
    smooth = [sum(rewards[max(0, i - w + 1):i + 1]) / len(rewards[max(0, i - w + 1):i + 1]) for i in range(len(rewards))]
    fig, ax = plt.subplots(figsize=(6, 3.5))
    ax.plot(steps, rewards, alpha=0.35, label="reward (batch mean)")
    ax.plot(steps, smooth, label=f"moving mean ({w} steps)")
    ax.set_xlabel("GRPO step")
    ax.set_ylabel("reward")
    ax.set_title(title or "training reward")
    ax.legend(loc="lower right")
    fig.tight_layout()
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=100)
    plt.close(fig)
    return path


def _fmt(v: float | None) -> str:
    return "n/a" if v is None else f"{v:.3f}"


def _mean(values: list[float]) -> float | None:
    return sum(values) / len(values) if values else None


def summarize(rows: Sequence[dict[str, Any]], run_name: str, window: int = 2,
              where: dict[str, str] | None = None) -> Summary:
    """Start/end means of the headline metrics over the training rows (those that carry a reward)."""
    train_rows = [r for r in rows if "reward" in r]
    keys = sorted({k for r in train_rows for k in r})
    summary = Summary(run_name=run_name, steps=max((r.get("step", 0) for r in train_rows), default=0),
                      window=window, where=dict(where or {}))
    for name in HEADLINES:
        key = headline_key(keys, name)
        if key is None:
            continue
        series = [r[key] for r in train_rows if key in r]
        summary.rows[name] = (key, _mean(series[:window]), _mean(series[-window:]))
    return summary
