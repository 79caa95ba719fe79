"""Stage boundaries of one recipe (SFT warm-up, then GRPO) in one process.

Each stage gets its own `Accelerator` (and DeepSpeed engine) and its own wandb run:
- `end_stage` releases a finished trainer (its DeepSpeed engine is destroyed, the model and optimizer
  freed) and resets accelerate's shared state, so the next trainer can create an `Accelerator` with its
  own DeepSpeed plugin (accelerate refuses a second plugin otherwise). It is what transformers itself
  does between hyperparameter-search trials under DeepSpeed; the process group is kept.
- `wandb_run` opens the stage's wandb run before its trainer does (TRL's WandbCallback adopts an open
  run) and finishes it after, so the warm-up and GRPO are two runs, `<run>-sft` and `<run>-grpo`, grouped
  under the recipe's run name.
"""

from __future__ import annotations

import gc
import os
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any


def end_stage(trainer: Any) -> None:
    """Free a finished stage's trainer and let the next stage build its own Accelerator."""
    from accelerate.state import AcceleratorState

    trainer.accelerator.free_memory()  # destroys the DeepSpeed engine, drops prepared models/optimizers
    for holder in (trainer, getattr(trainer, "callback_handler", None)):
        for attr in ("model", "model_wrapped", "deepspeed", "optimizer", "lr_scheduler", "ref_model",
                     "train_dataloader"):
            if getattr(holder, attr, None) is not None:
                setattr(holder, attr, None)
    release_memory()
    # the next stage's TrainingArguments carries its own DeepSpeed plugin; accelerate accepts it only on
    # a fresh AcceleratorState. PartialState (the process group) stays.
    AcceleratorState._reset_state(reset_partial_state=False)


def release_memory() -> None:
    """Collect what a finished stage left and hand cached device memory back (vLLM colocate mode sizes
    its cache from the free memory it sees)."""
    gc.collect()
    _empty_device_cache()


def point_deepspeed_at(training: Any) -> None:
    """Make `training`'s DeepSpeed config the one transformers consults when loading a model (ZeRO-3
    `zero.Init`): every TrainingArguments built later (the SFT stage's) had replaced it."""
    plugin = getattr(training, "deepspeed_plugin", None)
    if plugin is not None and hasattr(plugin, "set_deepspeed_weakref"):
        plugin.set_deepspeed_weakref()


def _empty_device_cache() -> None:
    import torch

    if torch.cuda.is_available():
        torch.cuda.empty_cache()


def wants_wandb(training: Any) -> bool:
    return "wandb" in (training.report_to or [])


@contextmanager
def wandb_run(training: Any, stage: str, directory: str | Path) -> Iterator[dict[str, str]]:
    """One wandb run for `stage`, named `<run_name>-<stage>`, grouped under `run_name` (or
    $WANDB_RUN_GROUP); yields a dict that holds the run's directory once it is finished."""
    found: dict[str, str] = {}
    if not wants_wandb(training) or not _is_main_process():
        yield found
        return
    import wandb

    base = training.run_name or Path(training.output_dir).name
    Path(directory).mkdir(parents=True, exist_ok=True)
    if wandb.run is not None:  # a run left open by a caller: it is not this stage's
        wandb.finish()
    wandb.init(
        project=os.environ.get("WANDB_PROJECT", "prosfi"),
        name=f"{base}-{stage}",
        group=os.environ.get("WANDB_RUN_GROUP") or base,
        job_type=stage,
        dir=os.environ.get("WANDB_DIR") or str(directory),
    )
    try:
        yield found
    finally:
        run_dir = finish_wandb()
        if run_dir:
            found["dir"] = run_dir


def finish_wandb() -> str | None:
    """Close this process's wandb run (flushes offline files) and return its directory, if any."""
    wandb = sys.modules.get("wandb")
    run = getattr(wandb, "run", None) if wandb else None
    if run is None:
        return None
    run_dir = str(Path(run.dir).parent)
    wandb.finish()
    return run_dir


def _is_main_process() -> bool:
    from accelerate import PartialState

    return PartialState().is_main_process
