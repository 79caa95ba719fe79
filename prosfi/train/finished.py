"""Re-running a finished run (`rundir.finished`): nothing is trained and no log is appended to; the final
model in output_dir is evaluated again on the same held-out problems (`eval_after/`) and the summary is
written again from the run's own rows. This is what docs/training.md promises for the Quick start's second
run, and what a resume from the last checkpoint did not do (it trained one step past max_steps each time)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any


def repeat_evaluation(resolved: Any, verifier: Any) -> dict[str, Any]:
    """The summary of a finished run, its held-out evaluation after GRPO made again from output_dir's model."""
    from accelerate import PartialState

    from prosfi.train import heldout
    from prosfi.train.summary import run_rows, summarize

    script, training = resolved.script, resolved.training
    out = Path(training.output_dir)
    state = PartialState()
    saved = out / "eval_before" / "summary.json"
    eval_before = json.loads(saved.read_text()) if saved.is_file() else None
    eval_after = None
    if script.eval_held_out > 0:
        problems = heldout.held_out_problems(script)
        if state.is_main_process:
            print(f"[prosfi] held-out evaluation after GRPO: {len(problems)} problems (model {out})", flush=True)
        from prosfi.eval import load_hf

        model, tok = load_hf(str(out), "cpu" if training.use_cpu else str(state.device))
        gens = heldout.generate(model, tok, problems, script, training)
        eval_after = heldout.score(gens, problems, script, verifier, out / "eval_after",
                                   f"{training.output_dir} (after GRPO)")
        state.wait_for_everyone()
    where = {"model": str(out), "config": str(out / "prosfi_config.yaml"), "metrics": str(out / "metrics.jsonl")}
    summary = summarize(run_rows(out / "metrics.jsonl"), training.run_name or out.name, script.summary_window, where)
    if state.is_main_process:
        summary.add_held_out(eval_before, eval_after)
        if eval_before is not None and eval_after is not None:
            from prosfi.train.verdict import run_verdict

            summary.verdict = run_verdict(out)
        summary.plot_reward(run_rows(out / "metrics.jsonl"), out / "reward_curve.png")
        (out / "summary.json").write_text(json.dumps(summary.as_dict(), indent=2) + "\n")
        print(summary.to_text(), flush=True)
    return summary.as_dict()


__all__ = ["repeat_evaluation"]
