"""GRPO's batch arithmetic for a number of training processes.

TRL derives `generation_batch_size` and `steps_per_generation` from the process count when its config
is built, which in a dry run (no launcher) is 1. `grpo_batch` redoes that derivation, with TRL's rules
and errors, for the count the run will have, so `prosfi train RECIPE --dry-run` prints the numbers of
the real launch; a real run prints the same line for its own count.
"""

from __future__ import annotations

import os
from dataclasses import asdict, dataclass
from typing import Any

# set by torchrun / `accelerate launch` in every process they start
LAUNCH_ENV = ("WORLD_SIZE", "RANK", "LOCAL_RANK", "LOCAL_WORLD_SIZE", "GROUP_RANK", "ROLE_RANK",
              "TORCHELASTIC_RUN_ID", "TORCHELASTIC_USE_AGENT_STORE")


@dataclass(frozen=True)
class GrpoBatch:
    num_processes: int
    per_device_train_batch_size: int
    gradient_accumulation_steps: int
    num_generations: int
    generation_batch_size: int
    steps_per_generation: int

    @property
    def completions_per_step(self) -> int:
        """Completions behind one optimizer step (all processes, all accumulation steps)."""
        return self.per_device_train_batch_size * self.num_processes * self.gradient_accumulation_steps

    @property
    def prompts_per_step(self) -> float:
        return self.completions_per_step / self.num_generations

    def as_dict(self) -> dict[str, Any]:
        return {**asdict(self), "completions_per_step": self.completions_per_step,
                "prompts_per_step": _num(self.prompts_per_step)}

    def line(self) -> str:
        return (f"{self.num_processes} process{'es' if self.num_processes != 1 else ''} x "
                f"{self.per_device_train_batch_size} x {self.gradient_accumulation_steps} accumulation = "
                f"{self.completions_per_step} completions = {_num(self.prompts_per_step)} prompts x "
                f"{self.num_generations} per optimizer step; generation batch {self.generation_batch_size} "
                f"(every {self.steps_per_generation} micro-step{'s' if self.steps_per_generation != 1 else ''})")


def _num(x: float) -> float | int:
    return int(x) if float(x).is_integer() else round(x, 3)


def launch_processes(environ: dict[str, str] | None = None) -> int | None:
    """The process count of the launch this process belongs to (torchrun / accelerate set WORLD_SIZE)."""
    value = (os.environ if environ is None else environ).get("WORLD_SIZE", "")
    return int(value) if value.strip().isdigit() and int(value) > 0 else None


def grpo_batch(training: Any, num_processes: int, explicit: set[str] | frozenset[str] = frozenset()) -> GrpoBatch:
    """TRL's derivation (GRPOConfig.__post_init__) for `num_processes`; `explicit` = the keys the recipe or
    command line set (a derived value is recomputed, a given one is checked). Raises ValueError as TRL would."""
    pdbs, gas, n = training.per_device_train_batch_size, training.gradient_accumulation_steps, num_processes
    gbs = training.generation_batch_size if "generation_batch_size" in explicit else None
    spg = training.steps_per_generation if "steps_per_generation" in explicit else None
    if gbs is not None and spg is not None:
        raise ValueError("'generation_batch_size' and 'steps_per_generation' can not be both configured at the "
                         "same time")
    if gbs is None and spg is None:
        spg = gas
    if gbs is None:
        gbs = pdbs * n * spg
    else:
        if gbs % (pdbs * n):
            raise ValueError(f"generation_batch_size ({gbs}) must be divisible by the global batch size "
                             f"({pdbs} x {n} processes = {pdbs * n})")
        spg = gbs // (pdbs * n)
    if gbs % training.num_generations:
        raise ValueError(f"generation_batch_size ({gbs} = {pdbs} x {n} processes x {spg}) must be divisible by "
                         f"num_generations ({training.num_generations})")
    return GrpoBatch(n, pdbs, gas, training.num_generations, gbs, spg)
