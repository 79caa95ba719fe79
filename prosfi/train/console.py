"""What a training run prints: a progress bar and one short line per logging step.

transformers prints every logged row as a Python dict (a GRPO row is ~1,000 characters), which
breaks the progress bar and hides the four numbers a user watches. `ConsoleCallback` replaces its
printer: GRPO lines show reward, answer accuracy, chain validity, format rate and seconds per
step; SFT lines show loss, learning rate and seconds per step. Full rows still go to
`metrics.jsonl` (`summary.MetricsRecorder`) and to the trainer's loggers (wandb).
"""

from __future__ import annotations

import math
import time
from typing import Any

from transformers import PrinterCallback, ProgressCallback

from prosfi.train.summary import headline_key

# headline -> short label on the console
GRPO_COLUMNS = (("reward", "reward"), ("answer accuracy", "acc"), ("chain validity", "chain"),
                ("format rate", "format"))
IS_RATIO = "sampling/importance_sampling_ratio/mean"


def _num(v: Any) -> str:
    if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v):
        return "n/a"
    return f"{v:.3g}" if abs(v) < 1e-3 and v != 0 else f"{v:.3f}"


def format_row(logs: dict[str, Any], step: int, max_steps: int, stage: str, s_per_step: float | None) -> str | None:
    """One console line for a logged row, or None for rows that are not training progress."""
    keys = list(logs)
    head = f"[{stage}] step {step}/{max_steps}" if max_steps > 0 else f"[{stage}] step {step}"
    if "train_runtime" in logs:  # the trainer's closing row
        return f"[{stage}] done: {step} steps in {logs['train_runtime']:.0f} s"
    parts = []
    if stage == "grpo":
        for name, label in GRPO_COLUMNS:
            key = headline_key(keys, name)
            if key is not None:
                parts.append(f"{label} {_num(logs[key])}")
    else:
        for key, label in (("loss", "loss"), ("mean_token_accuracy", "tok-acc"), ("learning_rate", "lr")):
            if key in logs:
                parts.append(f"{label} {_num(logs[key])}")
    if not parts:
        return None
    if IS_RATIO in logs:  # vLLM rollouts with TRL's importance-sampling correction: should stay near 1
        parts.append(f"is-ratio {_num(logs[IS_RATIO])}")
    if s_per_step is not None:
        parts.append(f"{s_per_step:.2f} s/step")
    return head + "  " + "  ".join(parts)


class ConsoleCallback(ProgressCallback):
    """transformers' progress bar, with a compact line per logging step instead of the raw dict."""

    def __init__(self, stage: str = "grpo", show_bar: bool = True) -> None:
        super().__init__()
        self.stage, self.show_bar = stage, show_bar
        self._last: tuple[float, int] | None = None

    def on_train_begin(self, args, state, control, **kwargs):
        self._last = (time.perf_counter(), state.global_step)
        if self.show_bar:
            super().on_train_begin(args, state, control, **kwargs)

    def on_step_end(self, args, state, control, **kwargs):
        if self.show_bar:
            super().on_step_end(args, state, control, **kwargs)

    def on_log(self, args, state, control, logs=None, **kwargs):
        if not state.is_world_process_zero or not logs:
            return
        now, step = time.perf_counter(), state.global_step
        rate = None
        if self._last is not None and step > self._last[1]:
            rate = (now - self._last[0]) / (step - self._last[1])
        line = format_row(logs, step, state.max_steps, self.stage, rate)
        if line is None:
            return
        self._last = (now, step)
        bar = getattr(self, "training_bar", None)
        if bar is not None:
            bar.write(line)
        else:
            print(line, flush=True)

    def on_train_end(self, args, state, control, **kwargs):
        if self.show_bar:
            super().on_train_end(args, state, control, **kwargs)


def install(trainer: Any, stage: str) -> Any:
    """Swap the trainer's dict printer for a `ConsoleCallback`; returns the trainer."""
    trainer.remove_callback(ProgressCallback)
    trainer.remove_callback(PrinterCallback)
    trainer.add_callback(ConsoleCallback(stage, show_bar=not trainer.args.disable_tqdm))
    return trainer


__all__ = ["ConsoleCallback", "format_row", "install"]
