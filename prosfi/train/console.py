"""What a training run prints: a progress bar and one short line per logging step.

transformers prints every logged row as a Python dict (a GRPO row is ~1,000 characters), which
breaks the progress bar and hides the four numbers a user watches. `ConsoleCallback` replaces its
printer: GRPO lines show reward, answer accuracy, chain validity, format rate and seconds per
step; SFT lines show loss, learning rate and seconds per step. Full rows still go to
`metrics.jsonl` (`summary.MetricsRecorder`) and to the trainer's loggers (wandb).

Rows a reader could mistake for training progress are told apart: an evaluation row (`eval_*` keys,
from the eval callback or TRL's own evaluation) prints as `eval at step N` and does not restart the
step timer; where one generation of completions serves several optimizer steps (`num_iterations` > 1,
or `steps_per_generation` > `gradient_accumulation_steps`) each line names the generation it
optimised, and a step that re-used earlier completions (no new reward to show) says so. With vLLM
rollouts the importance-sampling ratio and the per-token log-prob gap behind it are shown, and a warning is
printed when either leaves a band (`ratio_warning`: TRL logs the ratio after clipping it, so the gap, which it
logs before any clipping, is what shows a drift the clipping hides).
"""

from __future__ import annotations

import math
import sys
import time
from typing import Any

from transformers import PrinterCallback, ProgressCallback

from prosfi.train.summary import headline_key

# headline -> short label on the console
GRPO_COLUMNS = (("reward", "reward"), ("answer accuracy", "acc"), ("chain validity", "chain"),
                ("format rate", "format"))
# what a GRPO optimisation step without new completions still has to show
REUSED_COLUMNS = (("loss", "loss"), ("kl", "kl"), ("clip_ratio/region_mean", "clip"))
EVAL_COLUMNS = (("eval_accuracy", "accuracy"), ("eval_reward_hit", "reward-hit"), ("eval_step_validity", "step-valid"),
                ("eval_format_rate", "format"))
IS_RATIO = "sampling/importance_sampling_ratio/mean"
# mean |log p_trainer - log p_vLLM| over the completion tokens, computed by TRL before any clipping or masking
LOGP_GAP = "sampling/sampling_logp_difference/mean"
BOOKKEEPING = {"epoch", "step", "num_input_tokens_seen"}


def _num(v: Any) -> str:
    if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v):
        return "n/a"
    return f"{v:.3g}" if abs(v) < 1e-3 and v != 0 else f"{v:.3f}"


def is_eval_row(logs: dict[str, Any]) -> bool:
    """A row of evaluation metrics (`eval_*` keys only): not a training step."""
    keys = [k for k in logs if k not in BOOKKEEPING]
    return bool(keys) and all(k.startswith("eval_") for k in keys)


def generation_of(step: int, args: Any) -> tuple[int, bool] | None:
    """(the generation of completions optimizer step `step` trained on, whether a generation was sampled
    in the logged window ending at `step`), or None where every optimizer step samples its own.

    TRL samples a new generation every `steps_per_generation * num_iterations` micro-steps
    (`GRPOTrainer._prepare_inputs`); an optimizer step is `gradient_accumulation_steps` micro-steps."""
    accumulation = max(1, int(getattr(args, "gradient_accumulation_steps", 1) or 1))
    per_generation = int(getattr(args, "steps_per_generation", None) or accumulation)
    every = per_generation * max(1, int(getattr(args, "num_iterations", 1) or 1))
    if every == accumulation or step < 1:
        return None
    window = max(1, min(int(getattr(args, "logging_steps", 1) or 1), step))
    last_micro = step * accumulation - 1
    first_micro = (step - window) * accumulation
    generation = last_micro // every + 1
    sampled = last_micro // every >= -(-first_micro // every)  # a multiple of `every` in the window
    return generation, sampled


def format_eval_row(logs: dict[str, Any], step: int, stage: str) -> str | None:
    parts = [f"{label} {_num(logs[key])}" for key, label in EVAL_COLUMNS if key in logs]
    if not parts:
        parts = [f"{k[5:]} {_num(v)}" for k, v in sorted(logs.items()) if k.startswith("eval_")][:4]
    return f"[{stage}] eval at step {step}  " + "  ".join(parts) if parts else None


def format_row(logs: dict[str, Any], step: int, max_steps: int, stage: str, s_per_step: float | None,
               generation: tuple[int, bool] | None = None, num_iterations: int = 1) -> str | None:
    """One console line for a logged row, or None for rows that are not training progress.
    `generation`: `generation_of`'s answer for this step (None: each step samples its own)."""
    keys = list(logs)
    head = f"[{stage}] step {step}/{max_steps}" if max_steps > 0 else f"[{stage}] step {step}"
    if "train_runtime" in logs:  # the trainer's closing row
        return f"[{stage}] done: {step} steps in {logs['train_runtime']:.0f} s"
    if is_eval_row(logs):
        return format_eval_row(logs, step, stage)
    parts = []
    if stage == "grpo":
        for name, label in GRPO_COLUMNS:
            key = headline_key(keys, name)
            if key is not None:
                parts.append(f"{label} {_num(logs[key])}")
        if generation is not None:
            number, sampled = generation
            if parts and sampled:
                parts.insert(0, f"gen {number}")
            else:  # optimised again on completions sampled at an earlier step: no new reward to show
                why = f"num_iterations {num_iterations}" if num_iterations > 1 else "steps_per_generation"
                parts = [f"gen {number} re-used ({why}; reward shown when sampled)"]
                parts += [f"{label} {_num(logs[key])}" for key, label in REUSED_COLUMNS if key in logs]
    else:
        for key, label in (("loss", "loss"), ("mean_token_accuracy", "tok-acc"), ("learning_rate", "lr")):
            if key in logs:
                parts.append(f"{label} {_num(logs[key])}")
    if not parts:
        return None
    if IS_RATIO in logs:  # vLLM rollouts with TRL's importance-sampling correction: should stay near 1
        parts.append(f"is-ratio {_num(logs[IS_RATIO])}")
    if LOGP_GAP in logs:
        parts.append(f"logp-gap {_num(logs[LOGP_GAP])}")
    if s_per_step is not None:
        parts.append(f"{s_per_step:.2f} s/step")
    return head + "  " + "  ".join(parts)


def _finite(v: Any) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool)


def gap_band(band: tuple[float, float]) -> float:
    """The largest mean per-token log-prob gap inside the ratio band: a token whose ratio is e^gap (or e^-gap)
    is outside [low, high] exactly when gap > min(ln high, -ln low) (a side at 0 or inf is off)."""
    low, high = band
    limits = [math.log(high)] if 0 < high < math.inf else []
    if low > 0:
        limits.append(-math.log(low))
    return min(limits) if limits else math.inf


def ratio_warning(logs: dict[str, Any], step: int, band: tuple[float, float] | None) -> str | None:
    """A one-line warning when the vLLM importance-sampling correction sees vLLM and the trainer disagree.

    Two logged values are read. TRL 1.16 (`GRPOTrainer._generate_and_score_completions`) logs
    `sampling/importance_sampling_ratio/mean` after `token_truncate` has clamped every token's ratio to
    [clip_min, clip_max] (the `*_mask` modes zero the outliers): a damped value that can sit inside the band
    while many tokens are clipped. `sampling/sampling_logp_difference/mean` is the mean |log-prob gap| per
    token before any clipping; a gap g means a typical token's ratio is e^g or e^-g, so the band's
    [0.8, 1.25] is g <= 0.223. Either outside the band warns."""
    if band is None:
        return None
    low, high = band
    reasons = []
    ratio, gap = logs.get(IS_RATIO), logs.get(LOGP_GAP)
    if _finite(ratio) and not (math.isfinite(ratio) and low <= ratio <= high):
        reasons.append(f"importance-sampling ratio mean {_num(ratio)} (after TRL's clipping)")
    if _finite(gap) and not (math.isfinite(gap) and gap <= gap_band(band)):
        spread = f"{math.exp(-gap):.3f}..{math.exp(gap):.3f}" if math.isfinite(gap) and gap < 50 else "n/a"
        reasons.append(f"per-token log-prob gap {_num(gap)} (token ratios {spread} before clipping)")
    if not reasons:
        return None
    return (f"[prosfi] warning at step {step}: vLLM {' and '.join(reasons)} outside [{low:g}, {high:g}] "
            "(is_ratio_warn_min/max): vLLM's and the trainer's log-probs of the sampled tokens disagree, so TRL is "
            "reweighting (down-weighting) the loss; see docs/multi-gpu.md")


class ConsoleCallback(ProgressCallback):
    """transformers' progress bar, with a compact line per logging step instead of the raw dict."""

    def __init__(self, stage: str = "grpo", show_bar: bool = True,
                 is_ratio_band: tuple[float, float] | None = None) -> None:
        super().__init__()
        self.stage, self.show_bar = stage, show_bar
        self.is_ratio_band = is_ratio_band
        self._last: tuple[float, int] | None = None
        self._ratio_out = False  # warn once per excursion out of the band

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
        if is_eval_row(logs):  # not a training step: the step timer keeps running
            self._write(format_eval_row(logs, step, self.stage))
            return
        rate = None
        if self._last is not None and step > self._last[1]:
            rate = (now - self._last[0]) / (step - self._last[1])
        generation = generation_of(step, args) if self.stage == "grpo" else None
        line = format_row(logs, step, state.max_steps, self.stage, rate, generation,
                          int(getattr(args, "num_iterations", 1) or 1))
        if line is None:
            return
        self._last = (now, step)
        self._write(line)
        warning = ratio_warning(logs, step, self.is_ratio_band)
        if warning is not None and not self._ratio_out:
            self._write(warning, sys.stderr)
        if IS_RATIO in logs or LOGP_GAP in logs:
            self._ratio_out = warning is not None

    def _write(self, line: str | None, file=None) -> None:
        if line is None:
            return
        bar = getattr(self, "training_bar", None)
        if bar is not None:
            bar.write(line, file=file)
        else:
            print(line, file=file, flush=True)

    def on_train_end(self, args, state, control, **kwargs):
        if self.show_bar:
            super().on_train_end(args, state, control, **kwargs)


def install(trainer: Any, stage: str, is_ratio_band: tuple[float, float] | None = None) -> Any:
    """Swap the trainer's dict printer for a `ConsoleCallback`; returns the trainer."""
    trainer.remove_callback(ProgressCallback)
    trainer.remove_callback(PrinterCallback)
    trainer.add_callback(ConsoleCallback(stage, show_bar=not trainer.args.disable_tqdm, is_ratio_band=is_ratio_band))
    return trainer


def is_ratio_band(script: Any) -> tuple[float, float] | None:
    """The recipe's `is_ratio_warn_min` / `is_ratio_warn_max` band (None when both are 0: no warning)."""
    low = float(getattr(script, "is_ratio_warn_min", 0.0) or 0.0)
    high = float(getattr(script, "is_ratio_warn_max", 0.0) or 0.0)
    if low <= 0 and high <= 0:
        return None
    return low, high if high > 0 else math.inf


__all__ = ["ConsoleCallback", "format_eval_row", "format_row", "gap_band", "generation_of", "install",
           "is_eval_row", "is_ratio_band", "ratio_warning"]
