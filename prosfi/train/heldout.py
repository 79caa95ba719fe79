"""Held-out evaluation around GRPO: the same problems, never seen in SFT or GRPO, scored before and after.

A recipe with `eval_held_out: N` draws N problems of its own dataset with a seed far from the
training draws, drops any that equal an SFT or GRPO problem, and evaluates the policy on them
(greedy, `prosfi eval`'s generation, scoring and metrics with bootstrap intervals) right before
GRPO starts and after it ends. The two `overall` summaries go into the run's `summary.json` as
`eval_before` / `eval_after`; each evaluation's records and summary are kept under
`output_dir/eval_before` and `output_dir/eval_after`, so `prosfi eval compare` can pair them.
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

log = logging.getLogger(__name__)

SEED_OFFSET = 1_000_003  # far from the SFT draws (dataset_seed + 1, 2, ...) and GRPO's (dataset_seed)


def held_out_problems(script: Any) -> list:
    """`eval_held_out` problems of the recipe's dataset that are neither SFT nor GRPO problems."""
    from prosfi.train.problems import from_script_args
    from prosfi.train.sft import sft_problems

    count = int(script.eval_held_out)
    # the SFT set is left out even when this run skips SFT (an ablation starting from a shared warm-up)
    seen = {_content_key(p) for p in from_script_args(script) + sft_problems(script)}
    kept, draw = [], 0
    while len(kept) < count and draw < 5:  # a small generated space may need a second draw
        for p in from_script_args(script, count=2 * count, seed_offset=SEED_OFFSET + draw):
            key = _content_key(p)
            if key not in seen:
                seen.add(key)
                kept.append(p)
        draw += 1
    if len(kept) < count:
        log.warning("eval_held_out: only %d held-out problems could be drawn (asked for %d)", len(kept), count)
    return kept[:count]


def _content_key(problem: Any) -> tuple:
    """The problem's content whatever its id (logic: premises as a set, goal; `Domain.content_key`)."""
    from prosfi.domains import domain_for

    return domain_for(problem).content_key(problem)


def evaluate_policy(model: Any, tokenizer: Any, problems: list, script: Any, training: Any, verifier: Any,
                    out_dir: str | Path, label: str) -> dict[str, Any]:
    """Greedy completions of `model` on `problems`, scored with the run's reward settings; the summary."""
    from prosfi.eval import GenerationConfig, PromptSettings, evaluate, generate_hf
    from prosfi.train.config import sub_config

    settings = PromptSettings(script.system_prompt, script.few_shot, script.reward_mode)
    config = GenerationConfig(n=1, temperature=0.0, max_new_tokens=training.max_completion_length or 256,
                              batch_size=max(1, script.eval_batch_size))
    gens = generate_hf(problems, model, tokenizer, config, settings, progress=False)
    # scoring checks every chain whatever reward trained the policy (an outcome run scores as prosfi)
    result = evaluate(problems, gens, verifier=verifier, reward_config=sub_config(script, "reward"),
                      chain_config=sub_config(script, "chain"), out_dir=out_dir, model=label, plots=False)
    return result.summary


def before(script: Any, training: Any, verifier: Any, model_path: str) -> tuple[list, dict[str, Any] | None]:
    """(held-out problems, the starting policy's summary) when the recipe asks for it, else ([], None)."""
    from accelerate import PartialState

    if script.eval_held_out <= 0:
        return [], None
    problems = held_out_problems(script)
    summary = None
    if PartialState().is_main_process:
        from prosfi.eval import load_hf

        print(f"[prosfi] held-out evaluation before GRPO: {len(problems)} problems", flush=True)
        model, tok = load_hf(model_path, "cpu" if training.use_cpu else None)
        summary = evaluate_policy(model, tok, problems, script, training, verifier,
                                  Path(training.output_dir) / "eval_before", f"{model_path} (before GRPO)")
        del model
    PartialState().wait_for_everyone()
    return problems, summary


def after(trainer: Any, problems: list, script: Any, training: Any, verifier: Any) -> dict[str, Any] | None:
    """The trained policy's summary on the same held-out problems (main process; None elsewhere)."""
    if not problems:
        return None
    summary = None
    if trainer.accelerator.is_main_process:
        print(f"[prosfi] held-out evaluation after GRPO: {len(problems)} problems", flush=True)
        model = trainer.accelerator.unwrap_model(trainer.model)
        summary = evaluate_policy(model, trainer.processing_class, problems, script, training, verifier,
                                  Path(training.output_dir) / "eval_after", f"{training.output_dir} (after GRPO)")
    trainer.accelerator.wait_for_everyone()
    return summary
