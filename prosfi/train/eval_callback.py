"""Eval curves during training: every `eval_steps` optimizer steps, generate greedily on a small
held-out set, score it, and log `eval_accuracy`, `eval_reward_hit`, ... to the trainer's loggers
(metrics.jsonl, wandb shows them as `eval/accuracy`, `eval/reward_hit`, ...).

Recipe keys: `eval_data` (--data specs separated by spaces or `;`), `eval_limit` (problems per
source and difficulty), `eval_steps` (TrainingArguments' own key: an int, or a fraction of max_steps).
Every process generates its share of the problems (so ZeRO-3 works); the main process summarises.
The metrics go through `transformers.Trainer.log` (not GRPOTrainer.log, which would fold in and clear
the training metrics it is averaging).

A failure (generation or scoring raising on one process) stops the run on every process: before the
records are gathered the processes add up one error flag each (`failed_ranks`), and each raises
`EvalFailed` naming the failing ranks. Swallowing it on the failing process alone would leave the others
waiting in the gather until the NCCL timeout (30 minutes by default), with the cause in one rank's log.
"""

from __future__ import annotations

import logging
import math
from typing import Any

from transformers import TrainerCallback

log = logging.getLogger(__name__)

class EvalFailed(RuntimeError):
    """The evaluation raised on at least one process; raised on every process alike."""


def failed_ranks(acc: Any, failed: bool) -> list[int]:
    """The process indices whose evaluation failed, the same list on every process (one all-reduce of a
    flag per process: a collective every process reaches, whether its own share failed or not)."""
    if acc.num_processes <= 1:
        return [acc.process_index] if failed else []
    import torch

    flags = torch.zeros(acc.num_processes, device=acc.device)
    flags[acc.process_index] = 1.0 if failed else 0.0
    flags = acc.reduce(flags, reduction="sum")
    return [i for i, flag in enumerate(flags.tolist()) if flag > 0]


def gather_records(records: list) -> list:
    from accelerate.utils import gather_object

    return gather_object(records)


LOGGED = ("accuracy", "reward_hit", "format_rate", "step_validity", "unknown_rate", "mean_steps", "mean_tokens")


def split_specs(text: str | None) -> list[str]:
    return [s for s in (text or "").replace(";", " ").split() if s]


class EvalCallback(TrainerCallback):
    """Evaluate `problems` every `every` steps with the model being trained (greedy, n=1)."""

    def __init__(self, problems: list, every: int, verifier, prompt_settings=None, max_new_tokens: int = 256,
                 batch_size: int = 8, reward_config=None, chain_config=None, at_start: bool = True):
        self.problems = problems
        self.every = max(1, int(every))
        self.verifier = verifier
        self.settings = prompt_settings
        self.max_new_tokens = max_new_tokens
        self.batch_size = batch_size
        self.reward_config, self.chain_config = reward_config, chain_config
        self.at_start = at_start
        self.trainer = None
        self.history: list[dict[str, Any]] = []

    def attach(self, trainer) -> EvalCallback:
        """Register with a trainer (the callback logs through it)."""
        self.trainer = trainer
        trainer.add_callback(self)
        return self

    def on_train_begin(self, args, state, control, **kwargs):
        if self.at_start and state.global_step == 0:
            self._evaluate(state, control)

    def on_step_end(self, args, state, control, **kwargs):
        if state.global_step % self.every == 0:
            self._evaluate(state, control)

    def evaluate_now(self) -> dict[str, Any]:
        """Generate, score and summarise on this process's share; the full summary on the main process.
        Raises `EvalFailed` on every process when any process's share failed."""
        from prosfi.eval.metrics import summarize

        acc = self.trainer.accelerator
        error: BaseException | None = None
        try:
            records = self._share_records(acc)
        except Exception as exc:  # noqa: BLE001 - reported on every process below, then raised
            error, records = exc, []
        failed = failed_ranks(acc, error is not None)
        if failed:
            here = f"; here (rank {acc.process_index}): {error!r}" if error is not None else ""
            raise EvalFailed(f"eval_data evaluation failed on rank(s) {', '.join(map(str, failed))} of "
                             f"{acc.num_processes}{here}") from error
        if acc.num_processes > 1:
            records = gather_records(records)
        return summarize(records, n_boot=200)

    def _share_records(self, acc: Any) -> list[dict[str, Any]]:
        from prosfi.eval.generate import GenerationConfig, generate_hf
        from prosfi.eval.scoring import score_generations

        trainer = self.trainer
        model = acc.unwrap_model(trainer.model)
        tok = trainer.processing_class
        share = self.problems[acc.process_index::acc.num_processes]
        # every process runs the same number of generate() calls (ZeRO-3 gathers weights in lockstep):
        # pad the short shares with a repeat, dropped before scoring
        size = -(-len(self.problems) // acc.num_processes)
        padded = share + [self.problems[0]] * (size - len(share))
        cfg = GenerationConfig(n=1, temperature=0.0, max_new_tokens=self.max_new_tokens, batch_size=self.batch_size)
        gens = generate_hf(padded, model, tok, cfg, self.settings, progress=False)[:len(share)]
        records = score_generations(share, gens, self.verifier, self.reward_config, self.chain_config)
        for r in records:
            r.pop("completion", None)
        return records

    def _evaluate(self, state, control) -> None:
        if self.trainer is None:
            raise RuntimeError("EvalCallback: call attach(trainer) before training")
        summary = self.evaluate_now()  # EvalFailed stops the run on every process alike
        logs = {}
        for key in LOGGED:
            v = summary["overall"].get(key)
            if isinstance(v, (int, float)) and not (isinstance(v, float) and math.isnan(v)):
                logs[f"eval_{key}"] = v
        self.history.append({"step": state.global_step, **logs})
        from transformers import Trainer

        should_log = control.should_log  # logging resets it; the step's own training log must still happen
        Trainer.log(self.trainer, logs)
        control.should_log = should_log


def held_out(problems: list, script: Any) -> list:
    """Drop eval problems equal (premises and goal) to one of the run's training problems."""
    from prosfi.eval.sources import overlap
    from prosfi.train.problems import from_script_args

    try:
        training = from_script_args(script)
    except Exception as exc:  # noqa: BLE001 - e.g. a hub dataset unreachable here: keep the set, say why
        log.warning("eval_data: cannot rebuild the training problems to check overlap (%s)", exc)
        return problems
    shared = set(overlap(problems, training))
    if shared:
        print(f"[prosfi] eval_data: {len(shared)} of {len(problems)} problems equal training problems and are "
              "left out (held out)", flush=True)
    kept = [p for p in problems if p.id not in shared]
    if not kept:
        raise ValueError("eval_data: every evaluation problem is also a training problem; choose other specs")
    return kept


def from_script(script: Any, training: Any, verifier) -> EvalCallback | None:
    """The callback a recipe asks for (`eval_data` set), or None."""
    specs = split_specs(getattr(script, "eval_data", None))
    if not specs:
        return None
    from prosfi.rewards.formats import format_for

    if not format_for(script.reward_mode).eval_scored:
        log.warning("eval_data: the eval callback does not run with reward_mode %s (the held-out evaluation, "
                    "eval_held_out, scores its completions before and after GRPO)", script.reward_mode)
        return None
    from prosfi.eval.generate import PromptSettings
    from prosfi.eval.sources import load_sources
    from prosfi.train.config import sub_config

    limit = max(1, int(script.eval_limit))
    sources = load_sources(specs, count=limit, limit=limit)
    problems = [p for s in sources for p in s.problems]
    problems = held_out(problems, script)
    every = training.eval_steps or max(1, training.max_steps // 5 if training.max_steps > 0 else 50)
    if every < 1:  # HF convention: a fraction of the run
        every = max(1, math.ceil(every * max(training.max_steps, 1)))
    return EvalCallback(
        problems, int(every), verifier,
        PromptSettings(script.system_prompt, script.few_shot, script.reward_mode, sub_config(script, "chain")),
        max_new_tokens=training.max_completion_length or 256,
        batch_size=max(1, training.per_device_eval_batch_size or 8),
        reward_config=sub_config(script, "reward"), chain_config=sub_config(script, "chain"),
    )


__all__ = ["EvalCallback", "EvalFailed", "failed_ranks", "from_script", "gather_records", "held_out", "split_specs"]
