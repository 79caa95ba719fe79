"""Ctrl-C during a training stage: finish the current optimizer step, save, stop; never a traceback.

`GracefulStop` is a `TrainerCallback`: while its trainer trains, the first SIGINT only sets a flag (one
line says so); at the end of that step the trainer stops and, for GRPO, saves a checkpoint (so
re-running the command resumes it). A second Ctrl-C stops at once (KeyboardInterrupt). Under several
processes the flag is shared (max over ranks) at each step end, so every rank stops at the same step.
`prosfi train` then ends with one line and exit status 130.
"""

from __future__ import annotations

import signal
import sys
import threading
from typing import Any

from transformers import TrainerCallback

EXIT_INTERRUPTED = 130  # 128 + SIGINT, what a shell reports for a program stopped by Ctrl-C


class Interrupted(Exception):
    """A stage stopped on Ctrl-C after saving what it could; the message says what was saved."""


class GracefulStop(TrainerCallback):
    """Stop (and optionally save) at the end of the step during which SIGINT arrived."""

    def __init__(self, stage: str, save: bool = True) -> None:
        self.stage = stage
        self.save = save
        self.requested = False
        self.stopped_at: int | None = None
        self._previous: Any = None

    # -- signal handling (main thread only: signal.signal refuses elsewhere) ----------------------------
    def _handler(self, signum, frame) -> None:
        if self.requested:  # second Ctrl-C: stop now
            self._restore()
            raise KeyboardInterrupt
        self.requested = True
        what = "save a checkpoint and stop" if self.save else "stop"
        print(f"\n[prosfi] Ctrl-C: the {self.stage} stage will {what} after this step (Ctrl-C again to stop now)",
              file=sys.stderr, flush=True)

    def _restore(self) -> None:
        if self._previous is not None:
            signal.signal(signal.SIGINT, self._previous)
            self._previous = None

    def on_train_begin(self, args, state, control, **kwargs):
        if threading.current_thread() is threading.main_thread():
            self._previous = signal.signal(signal.SIGINT, self._handler)

    def on_step_end(self, args, state, control, **kwargs):
        if _any_rank(self.requested, args):
            self.requested = True
            self.stopped_at = state.global_step
            control.should_training_stop = True
            control.should_save = self.save
        return control

    def on_train_end(self, args, state, control, **kwargs):
        self._restore()


def _any_rank(flag: bool, args: Any) -> bool:
    """`flag` or'ed over the training processes (itself when there is one)."""
    import torch.distributed as dist

    if not (dist.is_available() and dist.is_initialized()) or dist.get_world_size() == 1:
        return flag
    import torch

    device = args.device if dist.get_backend() == "nccl" else "cpu"
    t = torch.tensor([1 if flag else 0], device=device)
    dist.all_reduce(t, op=dist.ReduceOp.MAX)
    return bool(t.item())


__all__ = ["EXIT_INTERRUPTED", "GracefulStop", "Interrupted"]
