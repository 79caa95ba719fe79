"""SFT warm-up on gold traces (TRL `SFTTrainer`): teaches the output format before GRPO.

Runs alone (`prosfi sft`) or as the first stage of a recipe (`sft: true`). The stage writes a
full model to `<output_dir>/sft` (LoRA adapters are merged), which GRPO then starts from; a stage
that already finished there is not run again, so a resumed recipe goes straight to GRPO.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

SFT_SUBDIR = "sft"
DONE_MARKER = "prosfi_sft_done"


def sft_dir(training: Any) -> Path:
    return Path(training.output_dir) / SFT_SUBDIR


def sft_done(training: Any) -> bool:
    return (sft_dir(training) / DONE_MARKER).is_file()


def sft_config(script: Any, training: Any):
    """SFTConfig for the stage: the recipe's sft_* keys plus the device/precision/logging of GRPO."""
    from trl import SFTConfig

    return SFTConfig(
        output_dir=str(sft_dir(training)),
        max_steps=script.sft_max_steps,
        num_train_epochs=script.sft_num_train_epochs,
        learning_rate=script.sft_learning_rate,
        per_device_train_batch_size=script.sft_per_device_train_batch_size,
        max_length=script.sft_max_length,
        completion_only_loss=script.sft_completion_only_loss,
        gradient_accumulation_steps=1,
        lr_scheduler_type="cosine",
        adam_beta2=training.adam_beta2,  # the recipe's optimizer for both stages (the CPU demo uses 0.95)
        warmup_steps=0.05,
        logging_steps=max(1, training.logging_steps),
        save_strategy="no",
        report_to=training.report_to,
        run_name=f"{training.run_name}-sft" if training.run_name else None,
        use_cpu=training.use_cpu,
        bf16=training.bf16,
        fp16=training.fp16,
        seed=training.seed,
        dataloader_num_workers=training.dataloader_num_workers,
        gradient_checkpointing=training.gradient_checkpointing,
        disable_tqdm=training.disable_tqdm,
    )


def run_sft(script: Any, training: Any, model_args: Any, model_path: str, verifier: Any = None,
            callbacks: list | None = None) -> str:
    """Train on gold traces of a problem set disjoint from GRPO's; return the model directory."""
    from trl import SFTTrainer, get_peft_config

    from prosfi.train.config import sub_config
    from prosfi.train.rows import sft_dataset
    from prosfi.train.stages import end_stage, release_memory, wandb_run

    out = sft_dir(training)
    if sft_done(training):
        return str(out)
    problems = sft_problems(script)
    dataset = sft_dataset(problems, verifier=verifier, system_prompt=script.system_prompt, few_shot=script.few_shot,
                          sloppy_fraction=getattr(script, "sft_sloppy_fraction", 0.0), seed=training.seed,
                          careless_fraction=getattr(script, "sft_careless_fraction", 0.0),
                          chain=sub_config(script, "chain"))
    args = sft_config(script, training)
    args.model_init_kwargs = model_init_kwargs(model_args)
    trainer = SFTTrainer(
        model=model_path,
        args=args,
        train_dataset=dataset,
        peft_config=get_peft_config(model_args),
        callbacks=callbacks,
    )
    _console_and_rows(trainer, out)
    with wandb_run(training, "sft", training.output_dir):
        trainer.train()
        if any(getattr(cb, "requested", False) for cb in callbacks or []):  # Ctrl-C (interrupt.GracefulStop)
            end_stage(trainer)
            return str(out)  # not saved, not marked done: the caller reports the interruption
        save_merged(trainer, out)
        if trainer.accelerator.is_main_process:
            trainer.processing_class.save_pretrained(out)
            (out / DONE_MARKER).write_text(f"{len(dataset)} gold traces, {trainer.state.global_step} steps\n")
        trainer.accelerator.wait_for_everyone()
    end_stage(trainer)  # GRPO builds its own Accelerator (and DeepSpeed engine)
    del trainer
    release_memory()  # the warm-up model is gone before GRPO loads its own
    return str(out)


def save_merged(trainer: Any, out: Path) -> None:
    """Write the trained model to `out` as a full model (a LoRA adapter merged into its base)."""
    model = trainer.accelerator.unwrap_model(trainer.model)
    if not hasattr(model, "merge_and_unload"):
        trainer.save_model(str(out))  # gathers ZeRO-3 shards where needed
        return
    # a LoRA warm-up: GRPO (and its own LoRA) starts from the merged weights. Under ZeRO-3 each rank
    # holds a shard of every parameter: gather them (on every rank, a collective) before merging.
    with _gathered(trainer, model):
        if trainer.accelerator.is_main_process:
            model.merge_and_unload().save_pretrained(out)


def _gathered(trainer: Any, model: Any):
    """Full parameters for the duration of the block under ZeRO-3 (they are discarded after it)."""
    from contextlib import nullcontext

    plugin = getattr(trainer.accelerator.state, "deepspeed_plugin", None)
    if plugin is None or plugin.zero_stage != 3:
        return nullcontext()
    import deepspeed

    return deepspeed.zero.GatheredParameters(list(model.parameters()), modifier_rank=None)


def _console_and_rows(trainer: Any, out: Path) -> None:
    """Compact console lines, and every logged row in <output_dir>/sft/metrics.jsonl (appended to after a
    `run_start` marker: an interrupted warm-up starts over, its earlier rows stay readable)."""
    from prosfi.train.console import install
    from prosfi.train.summary import MetricsRecorder, mark_run

    install(trainer, "sft")
    rows = out / "metrics.jsonl"
    if trainer.accelerator.is_main_process:
        mark_run(rows, trainer.args.run_name, None, stage="sft")
    trainer.add_callback(MetricsRecorder(rows))


def sft_problems(script: Any) -> list:
    """`sft_draws` sets of `sft_size` problems (seed offsets 1, 2, ...), duplicates and GRPO's problems removed;
    for a file dataset, the `sft_size` problems after GRPO's share of the file (`problems.file_split`)."""
    from prosfi.train.problems import file_split, from_script_args, is_file_dataset

    if is_file_dataset(script):
        return list(file_split(script, sft=True).sft)

    pooled, seen = [], set()
    for draw in range(max(1, getattr(script, "sft_draws", 1))):
        for problem in from_script_args(script, count=script.sft_size, seed_offset=1 + draw):
            key = _content_key(problem)
            if key not in seen:
                seen.add(key)
                pooled.append(problem)
    return disjoint(pooled, from_script_args(script))


def _content_key(problem: Any) -> tuple:
    from prosfi.domains import domain_for

    return domain_for(problem).content_key(problem)


def disjoint(sft_problems: list, grpo_problems: list) -> list:
    """The SFT problems that GRPO will not see (small generated spaces, e.g. 2-person K&K, overlap)."""
    seen = {_content_key(p) for p in grpo_problems}
    return [p for p in sft_problems if _content_key(p) not in seen]


def model_init_kwargs(model_args: Any) -> dict[str, Any]:
    """`from_pretrained` keywords from ModelConfig, shared by the SFT and GRPO stages."""
    kwargs = {"revision": model_args.model_revision, "dtype": model_args.dtype}
    if model_args.attn_implementation:
        kwargs["attn_implementation"] = model_args.attn_implementation
    return kwargs
