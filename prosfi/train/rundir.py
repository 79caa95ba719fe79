"""What `prosfi train` does with an output directory that already holds something: never a silent mix.

- empty or absent: a fresh run;
- a checkpoint in it (`checkpoint-N`): the run is resumed from the last one ("resuming from ...");
- a finished SFT warm-up and no finished GRPO stage: resumed from the warm-up (GRPO starts over);
- anything else: refused in one line naming `--overwrite` and `--output_dir`;
- a checkpoint at or past `max_steps` and the run's summary: the run is finished, so a re-run trains nothing
  and only repeats the held-out evaluation after GRPO and the summary (`finished`); a larger `--max_steps`
  with the same `--output_dir` continues it;
- `--overwrite`: a fresh run; the old run's checkpoints, warm-up, held-out evaluations and summary are
  removed first, and its logs (metrics.jsonl, audit.jsonl) are kept and appended to.

Logs are never truncated: each run appends a `run_start` marker (`mark_run`), and readers take the
current run's story from the markers (`summary.run_rows`).
"""

from __future__ import annotations

import shutil
from dataclasses import dataclass
from pathlib import Path

from prosfi.train.summary import mark_run  # noqa: F401 (re-exported: the logs' markers)

# what a fresh run replaces (logs are not in this list: they are appended to)
RUN_ARTEFACTS = ("sft", "eval_before", "eval_after", "summary.json", "reward_curve.png")


class RunDirError(ValueError):
    """An output directory that holds another run; the message names --overwrite and --output_dir."""


@dataclass
class RunPlan:
    mode: str  # "fresh", "resume" (from a GRPO checkpoint), "warm-up" (finished SFT reused), "overwrite"
    checkpoint: str | None = None
    line: str = ""  # what the run prints about it (empty for a plain fresh run)


def last_checkpoint(out: str | Path) -> str | None:
    out = Path(out)
    if not out.is_dir():
        return None
    from transformers.trainer_utils import get_last_checkpoint

    return get_last_checkpoint(str(out))


def _contents(out: Path) -> list[str]:
    return sorted(p.name for p in out.iterdir()) if out.is_dir() else []


def plan(output_dir: str | Path, resume_from_checkpoint: str | None, overwrite: bool, sft_only: bool = False,
         resume_refused: bool = False) -> RunPlan:
    """The plan for a run into `output_dir` (RunDirError when it would mix two runs).

    `resume_from_checkpoint` is the resolved value (a checkpoint path or None); `resume_refused` says the
    user set it to false explicitly (then an existing run needs --overwrite)."""
    out = Path(output_dir)
    if resume_from_checkpoint:
        return RunPlan("resume", str(resume_from_checkpoint), f"resuming from {resume_from_checkpoint}")
    contents = _contents(out)
    if not contents:
        return RunPlan("fresh")
    if overwrite:
        return RunPlan("overwrite", None, f"--overwrite: starting a fresh run in {out} (its logs are appended to)")
    from prosfi.train.sft import DONE_MARKER, SFT_SUBDIR

    warmed = (out / SFT_SUBDIR / DONE_MARKER).is_file()
    if sft_only and warmed:
        return RunPlan("warm-up", str(out / SFT_SUBDIR), f"resuming from {out / SFT_SUBDIR} (the warm-up is done)")
    if warmed and not (out / "summary.json").exists() and not resume_refused:
        return RunPlan("warm-up", str(out / SFT_SUBDIR),
                       f"resuming from {out / SFT_SUBDIR} (the finished SFT warm-up; GRPO starts over)")
    shown = ", ".join(contents[:4]) + (", ..." if len(contents) > 4 else "")
    why = "no checkpoint to resume from" if not resume_refused else "resume_from_checkpoint is false"
    raise RunDirError(f"output_dir {out} already holds a run ({shown}) and {why}; add --overwrite to start "
                      "it over (logs are kept and appended to) or give another --output_dir")


def finished(run_plan: RunPlan, output_dir: str | Path, max_steps: int | None) -> RunPlan:
    """`run_plan`, or a "finished" plan when it resumes from a checkpoint at or past `max_steps` in a run that
    wrote its summary: resuming there used to train one more step each time (`step 61/60`, `checkpoint-61`,
    rows appended to the logs)."""
    out = Path(output_dir)
    step = _step_of(run_plan.checkpoint)
    if (run_plan.mode != "resume" or step is None or not max_steps or max_steps <= 0 or step < max_steps
            or not (out / "summary.json").is_file()):
        return run_plan
    return RunPlan("finished", run_plan.checkpoint,
                   f"{out} finished at step {step} (max_steps {max_steps}): not training again; repeating the "
                   "held-out evaluation after GRPO and the summary (a larger --max_steps continues the run, "
                   "--overwrite starts it over)")


def _step_of(checkpoint: str | None) -> int | None:
    name = Path(checkpoint).name if checkpoint else ""
    tail = name.rsplit("-", 1)[-1]
    return int(tail) if name.startswith("checkpoint-") and tail.isdigit() else None


def clear_for_overwrite(output_dir: str | Path) -> None:
    """Remove the old run's checkpoints, warm-up, held-out evaluations and summary (logs stay)."""
    out = Path(output_dir)
    for path in list(out.glob("checkpoint-*")) + [out / name for name in RUN_ARTEFACTS]:
        if path.is_dir():
            shutil.rmtree(path)
        elif path.exists():
            path.unlink()


__all__ = ["RUN_ARTEFACTS", "RunDirError", "RunPlan", "clear_for_overwrite", "finished", "last_checkpoint", "mark_run", "plan"]
