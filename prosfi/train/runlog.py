"""One story across a run's files when a recipe is run again in the same output directory.

`metrics.jsonl` and the verdict audit are only ever appended to: each run appends a `run_start`
marker (run name, the step it resumes from; the audit's also names the reward mode), and a reader
takes one run's story from the markers (`summary.run_rows`: a fresh start drops what came before, a
resume keeps the earlier rows up to its checkpoint's step). Audit and metrics number steps alike
(1 = the first optimizer step). The saved model card names the base model
(TRL writes `None` for a local folder) and loads the run's own folder in its quick start.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any


def audit_file(script: Any, training: Any) -> Path | None:
    """This process's audit file (`{rank}` resolved), or None when the recipe keeps none."""
    if not script.audit_path:
        return None
    from prosfi.rewards.audit import audit_path_for_rank

    path = script.audit_path
    if not os.path.isabs(path):
        path = str(Path(training.output_dir) / path)
    return audit_path_for_rank(path)


def start_audit(script: Any, training: Any, is_main: bool = True) -> Path | None:
    """Append this run's `run_start` marker to the audit (the file is never truncated: a reader takes a
    run's verdicts from the markers, `summary.run_rows`). A shared file (no `{rank}`) is marked by the main
    process only."""
    path = audit_file(script, training)
    if path is None or (not is_main and "{rank}" not in str(script.audit_path)):
        return path
    from prosfi.rewards.audit import AuditLog
    from prosfi.train.summary import checkpoint_step

    resume = checkpoint_step(training.resume_from_checkpoint)
    with AuditLog(path) as log:
        log.mark("run_start", run_name=training.run_name, output_dir=str(training.output_dir),
                 reward_mode=script.reward_mode, resume_from_step=resume)
    return path


def write_model_card(trainer: Any, output_dir: str | Path, base_model: str, warmed_up: bool) -> None:
    """TRL's model card for the final model, with the base model named (`fix_model_card`)."""
    try:
        trainer.create_model_card(model_name=Path(output_dir).name)
        if trainer.is_world_process_zero():
            fix_model_card(output_dir, base_model, warmed_up)
    except Exception as exc:  # noqa: BLE001 - a model card must never fail a finished run
        print(f"[prosfi] model card not written: {exc}", flush=True)


def fix_model_card(output_dir: str | Path, base_model: str, warmed_up: bool) -> None:
    """Name the base model in TRL's README.md (it writes `[None]` for a local model folder) and
    make the quick start load this folder instead of `model="None"`."""
    card = Path(output_dir) / "README.md"
    if not card.is_file():
        return
    text = card.read_text(encoding="utf-8")
    local = os.path.isdir(base_model)
    named = f"`{base_model}` (a local folder)" if local else f"[{base_model}](https://huggingface.co/{base_model})"
    if warmed_up:
        named += ", after prosfi's SFT warm-up on gold traces"
    text = text.replace("[None](https://huggingface.co/None)", named)
    text = text.replace('model="None"', f'model="{Path(output_dir)}"')
    card.write_text(text, encoding="utf-8")


__all__ = ["audit_file", "fix_model_card", "start_audit", "write_model_card"]
