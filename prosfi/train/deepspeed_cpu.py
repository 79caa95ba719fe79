"""DeepSpeed on a machine without a GPU, without the shared-memory op it would compile and lock.

On CPU, DeepSpeed's communication backend JIT-builds `deepspeed_shm_comm` (a C++ extension) the first time
a process starts it, under torch's build lock `<TORCH_EXTENSIONS_DIR or ~/.cache/torch_extensions>/py*_cpu/
deepspeed_shm_comm/lock`. Every later DeepSpeed process takes that lock too, even with the op built. A process
killed while it held it (a timeout's SIGKILL, the OOM killer) leaves the file behind, and from then on every
DeepSpeed process of that user waits for it, forever and idle: issue #36's ZeRO-2/ZeRO-3 runs that hung at
5 % CPU until their tests' timeouts. Training never calls the op (it serves DeepSpeed inference's all-reduce;
the process group's gloo carries training's collectives), so prosfi marks it unavailable before the process
group starts: no compiler needed, no build on a fresh machine, no lock to wait on.
"""

from __future__ import annotations

import importlib.util
import os

SHM_OP = "deepspeed_shm_comm"
TRUE = ("1", "true", "yes")


def uses_deepspeed() -> bool:
    """Whether this process was launched to run DeepSpeed (`accelerate launch` with a DeepSpeed config, or a
    TrainingArguments `deepspeed` config, both set ACCELERATE_USE_DEEPSPEED)."""
    return os.environ.get("ACCELERATE_USE_DEEPSPEED", "").lower() in TRUE


def skip_shm_op() -> bool:
    """Mark DeepSpeed's shared-memory op unavailable when DeepSpeed runs on the CPU here; True when it did.
    Call it before the first `PartialState()` (the process group, and DeepSpeed's backend, start there)."""
    if not uses_deepspeed() or importlib.util.find_spec("deepspeed") is None:
        return False
    try:
        from deepspeed.accelerator import get_accelerator

        if get_accelerator().device_name() != "cpu":
            return False
        import deepspeed.ops

        compatible = deepspeed.ops.__compatible_ops__  # one dict per process; DeepSpeed reads it when it builds
    except (ImportError, AttributeError, RuntimeError):  # another DeepSpeed: it builds the op as it always did
        return False
    if not isinstance(compatible, dict):
        return False
    compatible[SHM_OP] = False
    return True


__all__ = ["SHM_OP", "skip_shm_op", "uses_deepspeed"]
