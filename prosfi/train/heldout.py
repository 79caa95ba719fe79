"""Held-out evaluation around GRPO: the same problems, never seen in SFT or GRPO, scored before and after.

A recipe with `eval_held_out: N` draws N problems of its own dataset with a seed far from the
training draws, drops any that equal an SFT or GRPO problem, and evaluates the policy on them
(greedy, `prosfi eval`'s generation, scoring and metrics with bootstrap intervals) right before
GRPO starts and after it ends. Every process generates its share (with several processes under
ZeRO-3 the trained model's weights are gathered by all ranks together, so a main-process-only
evaluation would hang); the main process scores them. The two `overall` summaries go into the run's `summary.json` as
`eval_before` / `eval_after`; each evaluation's records and summary are kept under
`output_dir/eval_before` and `output_dir/eval_after`, so `prosfi eval compare` can pair them.
"""

from __future__ import annotations

import logging
from contextlib import contextmanager
from pathlib import Path
from typing import Any

log = logging.getLogger(__name__)

SEED_OFFSET = 1_000_003  # far from the SFT draws (dataset_seed + 1, 2, ...) and GRPO's (dataset_seed)
GATE_SEED_OFFSET = 2_000_029  # the warm-up's format gate: its own draw, apart from the held-out evaluation's
ROLES = ("eval", "gate")


def held_out_problems(script: Any, count: int | None = None, role: str = "eval", training: list | None = None) -> list:
    """`eval_held_out` (or `count`) problems of the recipe's dataset that are neither SFT nor GRPO problems:
    the held-out evaluation's (`role` eval) or the warm-up format gate's (`role` gate, disjoint from the
    evaluation's too). A file dataset has them cut from its end (`problems.file_split`); a generated one draws
    them with seeds far from training's. `training` (GRPO and SFT problems already drawn) saves drawing them
    again."""
    from prosfi.train.problems import file_split, from_script_args, is_file_dataset
    from prosfi.train.sft import sft_problems

    if role not in ROLES:
        raise ValueError(f"role: {role!r} is not one of {', '.join(ROLES)}")
    count = int(script.eval_held_out if count is None else count)
    if is_file_dataset(script):
        # the gate serves a warm-up, also `prosfi sft` on a recipe that says sft: false
        split = file_split(script, sft=True if role == "gate" else None)
        return list(split.held_out if role == "eval" else split.gate)[:count]
    if training is None:
        # the SFT set is left out even when this run skips SFT (an ablation starting from a shared warm-up);
        # a run without SFT whose sft_size the generator cannot fill (2-person K&K has ~400 puzzles) has no
        # such set to leave out
        try:
            warm_up = sft_problems(script)
        except ValueError:
            if script.sft:
                raise
            warm_up = []
        training = from_script_args(script) + warm_up
    seen = {_content_key(p) for p in training}
    offset = SEED_OFFSET
    if role == "gate":
        offset = GATE_SEED_OFFSET
        if script.eval_held_out > 0:
            seen |= {_content_key(p) for p in held_out_problems(script, training=training)}
    kept, draw = [], 0
    while len(kept) < count and draw < 5:  # a small generated space may need a second draw
        for p in from_script_args(script, count=2 * count, seed_offset=offset + draw):
            key = _content_key(p)
            if key not in seen:
                seen.add(key)
                kept.append(p)
        draw += 1
    if len(kept) < count:
        log.warning("%s: only %d held-out problems could be drawn (asked for %d)",
                    "eval_held_out" if role == "eval" else "sft_format_check", len(kept), count)
    return kept[:count]


def _content_key(problem: Any) -> tuple:
    """The problem's content whatever its id (logic: premises as a set, goal; `Domain.content_key`)."""
    from prosfi.domains import domain_for

    return domain_for(problem).content_key(problem)


def evaluate_policy(model: Any, tokenizer: Any, problems: list, script: Any, training: Any, verifier: Any,
                    out_dir: str | Path, label: str) -> dict[str, Any] | None:
    """Greedy completions of `model` on `problems`, scored with the run's reward settings: the summary on
    the main process, None elsewhere. Every process generates its share (a ZeRO-3 model needs all ranks to
    gather its weights, and a long evaluation on one rank while the others wait at a barrier would outlast
    the collective timeout); the main process scores them all."""
    return score(generate(model, tokenizer, problems, script, training), problems, script, verifier, out_dir, label)


def generate(model: Any, tokenizer: Any, problems: list, script: Any, training: Any) -> list | None:
    from prosfi.eval import GenerationConfig, PromptSettings
    from prosfi.train.config import sub_config

    settings = PromptSettings(script.system_prompt, script.few_shot, script.reward_mode, sub_config(script, "chain"))
    config = GenerationConfig(n=1, temperature=0.0, max_new_tokens=training.max_completion_length or 256,
                              batch_size=max(1, script.eval_batch_size))
    return generate_on_every_rank(problems, model, tokenizer, config, settings)


def score(gens: list | None, problems: list, script: Any, verifier: Any, out_dir: str | Path,
          label: str) -> dict[str, Any] | None:
    """The summary of `gens` (main process; None where `gens` is None), written under `out_dir`."""
    if gens is None:
        return None
    from prosfi.eval import evaluate
    from prosfi.train.config import sub_config

    # scored in the run's completion format (`CompletionFormat.score`): the steps format checks every chain
    # whatever reward trained the policy (an outcome run scores as prosfi); a direct-Lean run's proofs go to
    # Lean under the run's lean_* keys (the verifier's `lean`), `unknown` where Lean is missing
    result = evaluate(problems, gens, verifier=verifier, reward_config=sub_config(script, "reward"),
                      chain_config=sub_config(script, "chain"), out_dir=out_dir, model=label, plots=True)
    return result.summary


def generate_on_every_rank(problems: list, model: Any, tokenizer: Any, config: Any, settings: Any) -> list | None:
    """Each process generates for problems[rank::world]; the main process gets every generation, in
    problem order (None elsewhere). The shares are padded to one length so every rank makes the same
    generate() calls: under ZeRO-3 transformers runs them in lockstep (`synced_gpus`)."""
    from accelerate import PartialState

    from prosfi.eval import generate_hf

    state = PartialState()
    rank, world = state.process_index, state.num_processes
    share = problems[rank::world]
    size = -(-len(problems) // world)
    padded = share + [problems[0]] * (size - len(share))
    gens = generate_hf(padded, model, tokenizer, config, settings, progress=False)[:len(share) * config.n]
    if world > 1:
        from accelerate.utils import gather_object

        gathered = gather_object([gens])  # one list per rank, in rank order
    else:
        gathered = [gens]
    if not state.is_main_process:
        return None
    order = {p.id: i for i, p in enumerate(problems)}
    flat = [g for part in gathered for g in part]
    return sorted(flat, key=lambda g: (order.get(g.problem_id, len(order)), g.sample))


@contextmanager
def _without_zero3_init():
    """Load a model whole, outside ZeRO-3's `zero.Init` (transformers consults the last TrainingArguments'
    DeepSpeed config): the starting policy is evaluated as a plain model on every rank."""
    from transformers.integrations import deepspeed as hf_ds

    ref = hf_ds._hf_deepspeed_config_weak_ref
    hf_ds.unset_hf_deepspeed_config()
    try:
        yield
    finally:
        hf_ds._hf_deepspeed_config_weak_ref = ref


def before(script: Any, training: Any, verifier: Any, model_path: str) -> tuple[list, dict[str, Any] | None]:
    """(held-out problems, the starting policy's summary on the main process) when the recipe asks for it,
    else ([], None). Every process loads the starting model whole and generates its share."""
    from accelerate import PartialState

    if script.eval_held_out <= 0:
        return [], None
    problems = held_out_problems(script)
    state = PartialState()
    if state.is_main_process:
        print(f"[prosfi] held-out evaluation before GRPO: {len(problems)} problems", flush=True)
    from prosfi.eval import load_hf

    with _without_zero3_init():
        model, tok = load_hf(model_path, "cpu" if training.use_cpu else str(state.device))
        summary = evaluate_policy(model, tok, problems, script, training, verifier,
                                  Path(training.output_dir) / "eval_before", f"{model_path} (before GRPO)")
    del model
    from prosfi.train.stages import release_memory

    release_memory()  # GRPO loads its own copy next
    state.wait_for_everyone()
    return problems, summary


def after(trainer: Any, problems: list, script: Any, training: Any, verifier: Any) -> dict[str, Any] | None:
    """The trained policy's summary on the same held-out problems (main process; None elsewhere).
    Every process generates its share with the trained model (ZeRO-3: weights gathered as TRL gathers
    them for generation)."""
    if not problems:
        return None
    from trl.models import unwrap_model_for_generation

    if trainer.accelerator.is_main_process:
        print(f"[prosfi] held-out evaluation after GRPO: {len(problems)} problems", flush=True)
    with unwrap_model_for_generation(trainer.model_wrapped, trainer.accelerator,
                                     gather_deepspeed3_params=getattr(training, "ds3_gather_for_generation", True),
                                     gradient_checkpointing_kwargs=training.gradient_checkpointing_kwargs) as model:
        gens = generate(model, trainer.processing_class, problems, script, training)
    # scored after the gathered weights are released; the other processes wait at the barrier
    summary = score(gens, problems, script, verifier, Path(training.output_dir) / "eval_after",
                    f"{training.output_dir} (after GRPO)")
    trainer.accelerator.wait_for_everyone()
    return summary


GATE_RECORD = "gate.json"  # in output_dir/sft/format_check: the gate's measured rate and what it was measured on


def gate_key(script: Any, training: Any, model_path: str, problems: list) -> dict[str, Any]:
    """What the warm-up's format rate depends on: the model, the gate's problems, the generation and prompt
    settings. A record made under another key is measured again."""
    import hashlib

    ids = hashlib.sha256("\n".join(p.id for p in problems).encode()).hexdigest()[:16]
    return {"model": str(model_path), "prompts": len(problems), "problems_sha": ids,
            "max_completion_length": training.max_completion_length, "few_shot": script.few_shot,
            "system_prompt": script.system_prompt, "reward_mode": script.reward_mode}


def recorded_rate(where: Path, key: dict[str, Any]) -> float | None:
    """The rate a gate recorded in `where` under the same `key`, or None."""
    import json

    try:
        record = json.loads((where / GATE_RECORD).read_text())
    except (OSError, ValueError):
        return None
    if not isinstance(record, dict) or record.get("key") != key or not isinstance(record.get("rate"), (int, float)):
        return None
    return float(record["rate"])


def warm_up_format_rate(script: Any, training: Any, verifier: Any, model_path: str) -> float | None:
    """The warm-up model's format rate on `sft_format_check` held-out prompts (greedy), the same on every
    process; None when the recipe sets no `sft_min_format_rate`. Records go to output_dir/sft/format_check.

    Measured once per warm-up: the rate is recorded there (`gate.json`) and a later stage of the same run
    reuses it. The launchers run `prosfi sft` (which checks the gate) and then `prosfi train`, which finds
    the warm-up done; measuring again would reload the model and repeat every generation (for a 7B
    warm-up, 64 greedy completions of up to 4,096 tokens). The main process reads the record and
    broadcasts it, so every process agrees on whether to generate."""
    import json

    from accelerate import PartialState

    if script.sft_min_format_rate <= 0:
        return None
    problems = held_out_problems(script, max(1, int(script.sft_format_check)), role="gate")
    state = PartialState()
    where = Path(training.output_dir) / "sft" / "format_check"
    key = gate_key(script, training, model_path, problems)
    recorded = [recorded_rate(where, key) if state.is_main_process else None]
    if state.num_processes > 1:
        from accelerate.utils import broadcast_object_list

        broadcast_object_list(recorded, from_process=0)
    if recorded[0] is not None:
        if state.is_main_process:
            print(f"[prosfi] SFT warm-up format rate: measured already ({where / GATE_RECORD})", flush=True)
        return recorded[0]
    from prosfi.eval import load_hf

    with _without_zero3_init():
        model, tok = load_hf(model_path, "cpu" if training.use_cpu else str(state.device))
        summary = evaluate_policy(model, tok, problems, script, training, verifier, where, f"{model_path} (warm-up)")
    del model
    from prosfi.train.stages import release_memory

    release_memory()
    rate = [None if summary is None else float(summary["overall"].get("format_rate") or 0.0)]
    if state.num_processes > 1:
        from accelerate.utils import broadcast_object_list

        broadcast_object_list(rate, from_process=0)
    if state.is_main_process and rate[0] is not None:
        where.mkdir(parents=True, exist_ok=True)
        (where / GATE_RECORD).write_text(json.dumps({"rate": rate[0], "key": key}, indent=2) + "\n")
    return rate[0]


def warm_up_verdict(rate: float, script: Any, training: Any) -> str | None:
    """The one-line reason to stop before GRPO (the warm-up's format rate below the recipe's bound), or None."""
    if rate >= script.sft_min_format_rate:
        return None
    where = Path(training.output_dir) / "sft" / "format_check"
    return (f"the SFT warm-up writes the steps format on {rate:.0%} of {script.sft_format_check} held-out prompts, "
            f"below sft_min_format_rate {script.sft_min_format_rate:g}: GRPO would start from a policy that rarely "
            "earns a reward; train the warm-up longer (sft_num_train_epochs, sft_learning_rate) or lower "
            f"sft_min_format_rate (completions in {where})")
