"""`prosfi train`: one recipe, its stages in order, then a summary.

Stages: build the tiny model (if asked and absent) -> reward functions (so a missing prover fails
before any model is loaded) -> SFT warm-up on gold traces (if `sft: true`) -> GRPO with the chosen
reward. The verifier's worker pool and the reward functions' resources live exactly as long as the
run (closed in `finally`). Configuration is in `config`/`recipe`, rows in `problems`/`rows`, the
warm-up in `sft`, the report in `summary`.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

from prosfi.train.recipe import ResolvedRecipe


class SetupError(RuntimeError):
    """The environment cannot run this recipe (e.g. Lean missing for reward_mode direct_lean); says what to fix."""


def ensure_model(script: Any, model_args: Any) -> None:
    """Build the tiny local model at model_name_or_path when the recipe asks for it and it is absent."""
    from prosfi.train.config import sub_config
    from prosfi.train.tiny import build_tiny_model, is_model_dir

    path = model_args.model_name_or_path
    if not path:
        raise SetupError("model_name_or_path: set it in the recipe or on the command line")
    if not script.tiny_model_if_absent or is_model_dir(path):
        return
    from accelerate import PartialState

    with PartialState().main_process_first():
        if not is_model_dir(path):
            print(f"[prosfi] building the tiny model at {path}", flush=True)
            build_tiny_model(path, sub_config(script, "tiny"), system_prompt=script.system_prompt)


def make_verifier(script: Any):
    """The verifier the reward functions and gold traces check steps with (its pool starts on first use)."""
    import dataclasses

    from prosfi.train.config import sub_config
    from prosfi.verify.verifier import Verifier

    # the recipe's lean_* keys reach a Lean backend in the cascade (VerifierConfig.lean is not mirrored)
    return Verifier(dataclasses.replace(sub_config(script, "verifier"), lean=sub_config(script, "lean")))


def make_rewards(script: Any, training: Any, verifier: Any) -> list:
    from prosfi.rewards import make_reward_funcs
    from prosfi.train.config import sub_config

    audit = script.audit_path
    if audit and not os.path.isabs(audit):
        audit = str(Path(training.output_dir) / audit)
    if getattr(script, "reward_url", None):  # the reward is scored by `prosfi serve` (docs/serving.md)
        from prosfi.rewards.remote import make_remote_reward_funcs

        try:
            return make_remote_reward_funcs(script.reward_url, script.reward_mode)
        except ValueError as e:
            raise SetupError(f"reward_url: {e}") from e
    try:
        return make_reward_funcs(
            script.reward_mode, sub_config(script, "reward"), sub_config(script, "chain"), verifier,
            audit_path=audit, asynchronous=script.reward_asynchronous, lean_config=sub_config(script, "lean"),
        )
    except (RuntimeError, ImportError) as e:
        raise SetupError(str(e)) from e


def _init_kwargs(model_args: Any, training: Any) -> dict[str, Any]:
    from prosfi.train.sft import model_init_kwargs

    return {**model_init_kwargs(model_args), **(training.model_init_kwargs or {})}


def _close(objects: list) -> None:
    for obj in objects:
        close = getattr(obj, "close", None)
        if callable(close):
            close()


def _run_plan(resolved: ResolvedRecipe, sft_only: bool):
    """The output_dir plan preflight made (or makes now, for a caller that skipped preflight)."""
    if resolved.run_plan is not None:
        return resolved.run_plan
    from prosfi.train.rundir import RunDirError, plan

    try:
        resolved.run_plan = plan(resolved.training.output_dir, resolved.training.resume_from_checkpoint,
                                 bool(getattr(resolved.script, "overwrite", False)), sft_only=sft_only,
                                 resume_refused=resolved.resume_refused)
    except RunDirError as e:
        raise SetupError(str(e)) from e
    return resolved.run_plan


def _held_out_before(heldout: Any, plan: Any, script: Any, training: Any, verifier: Any, model_path: str):
    """`heldout.before`, except that a resumed run reuses the evaluation its first run made."""
    saved = Path(training.output_dir) / "eval_before" / "summary.json"
    if plan.mode == "resume" and script.eval_held_out > 0 and saved.is_file():
        print(f"[prosfi] held-out evaluation before GRPO: reusing {saved}", flush=True)
        return heldout.held_out_problems(script), json.loads(saved.read_text())
    return heldout.before(script, training, verifier, model_path)


def _check_file_sets(script: Any, sft_only: bool) -> None:
    """A file dataset's sets (GRPO, warm-up, format gate, held-out) fit in the file, before any model loads:
    a hub file the dry run could not read is read here (a local one is cached from the preflight)."""
    from prosfi.train.problems import file_split, is_file_dataset

    if not is_file_dataset(script):
        return
    try:
        file_split(script, sft=script.sft or sft_only)
    except (OSError, ValueError) as e:
        raise SetupError(str(e)) from e


def _report_batch(resolved: ResolvedRecipe) -> None:
    """The batch arithmetic of this launch, and a note where the recipe was meant for another count."""
    from accelerate import PartialState

    batch, meant = resolved.batch, resolved.script.num_processes
    if batch is None or not PartialState().is_main_process:
        return
    print(f"[prosfi] GRPO batch: {batch.line()}", flush=True)
    if meant and meant != batch.num_processes:
        print(f"[prosfi] note: the recipe's batch is meant for {meant} processes (num_processes); this launch "
              f"has {batch.num_processes}", file=sys.stderr, flush=True)


def _check_warm_up(script: Any, training: Any, verifier: Any, model_path: str) -> None:
    """Stop before GRPO when the warm-up model rarely writes the steps format (`sft_min_format_rate`)."""
    from accelerate import PartialState

    from prosfi.train import heldout

    rate = heldout.warm_up_format_rate(script, training, verifier, model_path)
    if rate is None:
        return
    verdict = heldout.warm_up_verdict(rate, script, training)
    if verdict is not None:
        raise SetupError(verdict)
    if PartialState().is_main_process:
        print(f"[prosfi] SFT warm-up format rate {rate:.0%} on {script.sft_format_check} held-out prompts "
              f"(sft_min_format_rate {script.sft_min_format_rate:g})", flush=True)


def run(resolved: ResolvedRecipe, sft_only: bool = False) -> dict[str, Any]:
    """Run the recipe's stages; return the summary (also written to output_dir/summary.json)."""
    from accelerate import PartialState
    from trl import GRPOTrainer, get_peft_config

    from prosfi.train import vllm_cpu
    from prosfi.train.config import sub_config
    from prosfi.train.console import install as install_console
    from prosfi.train.console import is_ratio_band
    from prosfi.train.interrupt import GracefulStop, Interrupted
    from prosfi.train.problems import from_script_args
    from prosfi.train.rows import grpo_dataset
    from prosfi.train.rundir import clear_for_overwrite
    from prosfi.train.runlog import start_audit, write_model_card
    from prosfi.train.sft import run_sft, sft_done
    from prosfi.train.stages import point_deepspeed_at, wandb_run
    from prosfi.train.summary import MetricsRecorder, checkpoint_step, mark_run, run_rows, summarize

    script, training, model_args = resolved.script, resolved.training, resolved.model
    out = Path(training.output_dir)
    plan = _run_plan(resolved, sft_only)
    if not sft_only:
        from prosfi.train.rundir import finished

        plan = finished(plan, out, training.max_steps)
    # every process has looked at output_dir before the main one writes into it
    PartialState().wait_for_everyone()
    if PartialState().is_main_process:
        if plan.mode == "overwrite":
            clear_for_overwrite(out)
        if plan.line:
            print(f"[prosfi] {plan.line}", flush=True)
    if "wandb" in (training.report_to or []):
        os.environ.setdefault("WANDB_DIR", str(out))
        os.environ.setdefault("WANDB_PROJECT", "prosfi")
    _check_file_sets(script, sft_only)
    if script.torch_threads > 0:
        import torch

        torch.set_num_threads(script.torch_threads)
    ensure_model(script, model_args)
    if PartialState().is_main_process:
        resolved.write()

    verifier = make_verifier(script)
    if plan.mode == "finished":  # nothing to train and no log to append to (prosfi.train.finished)
        from prosfi.train.finished import repeat_evaluation

        try:
            return repeat_evaluation(resolved, verifier)
        finally:
            verifier.close()
    reward_funcs: list = []
    try:
        if not sft_only:
            start_audit(script, training, PartialState().is_main_process)
            reward_funcs = make_rewards(script, training, verifier)
        model_path = model_args.model_name_or_path
        if script.sft or sft_only:
            if sft_done(training):
                print(f"[prosfi] SFT warm-up: already done, starting from {out / 'sft'}", flush=True)
            else:
                print(f"[prosfi] SFT warm-up on gold traces -> {out / 'sft'}", flush=True)
            sft_stop = GracefulStop("SFT warm-up", save=False)
            model_path = run_sft(script, training, model_args, model_path, verifier=verifier, callbacks=[sft_stop])
            if sft_stop.requested:
                raise Interrupted(f"interrupted during the SFT warm-up (not saved); run the same command with "
                                  f"--overwrite to start {out} over")
            _check_warm_up(script, training, verifier, model_path)
            if sft_only:
                return {"run_name": training.run_name, "where": {"sft model": model_path}}
        from prosfi.train import heldout

        held_out, eval_before = _held_out_before(heldout, plan, script, training, verifier, model_path)
        problems = from_script_args(script)
        dataset = grpo_dataset(problems, script.system_prompt, script.few_shot, script.reward_mode,
                               chain=sub_config(script, "chain"))
        training.model_init_kwargs = _init_kwargs(model_args, training)
        metrics_path = out / "metrics.jsonl"
        if PartialState().is_main_process:  # appended to, never truncated: the marker starts this run's rows
            mark_run(metrics_path, training.run_name, checkpoint_step(training.resume_from_checkpoint))
        recorder = MetricsRecorder(metrics_path)
        stop = GracefulStop("GRPO")
        print(f"[prosfi] GRPO: {len(problems)} problems, reward {script.reward_mode}, "
              f"model {model_path} -> {out}", flush=True)
        _report_batch(resolved)
        point_deepspeed_at(training)  # the SFT stage's config had replaced it (ZeRO-3 loading)
        with wandb_run(training, "grpo", out) as wandb_found, vllm_cpu.patched(training):
            trainer = GRPOTrainer(
                model=model_path,
                reward_funcs=reward_funcs,
                args=training,
                train_dataset=dataset,
                peft_config=get_peft_config(model_args),
                callbacks=[recorder, stop],
            )
            install_console(trainer, "grpo", is_ratio_band(script))
            from prosfi.train.eval_callback import from_script as eval_callback

            evaluator = eval_callback(script, training, verifier)  # recipe key eval_data: eval curves
            if evaluator is not None:
                evaluator.attach(trainer)
            trainer.train(resume_from_checkpoint=training.resume_from_checkpoint)
            if stop.requested:
                step = trainer.state.global_step
                raise Interrupted(f"interrupted at GRPO step {step}/{trainer.state.max_steps}; checkpoint saved at "
                                  f"{out / f'checkpoint-{step}'}; run the same command again to resume")
            trainer.save_model(str(out))
            write_model_card(trainer, out, model_args.model_name_or_path,
                             model_path != model_args.model_name_or_path)
            eval_after = heldout.after(trainer, held_out, script, training, verifier)
            vllm_cpu.close(trainer)
    finally:
        _close(reward_funcs)
        verifier.close()

    where = {"model": str(out), "config": str(out / "prosfi_config.yaml"), "metrics": str(out / "metrics.jsonl")}
    if script.audit_path:
        where["verdicts"] = str(out / script.audit_path) if not os.path.isabs(script.audit_path) else script.audit_path
    if wandb_found.get("dir"):
        where["wandb"] = wandb_found["dir"]
    # the file also holds the rows logged before a resume; the recorder only this process's
    rows = run_rows(metrics_path) or recorder.rows
    summary = summarize(rows, training.run_name or out.name, script.summary_window, where)
    if trainer.accelerator.is_main_process:
        summary.add_held_out(eval_before, eval_after)
        if eval_before is not None and eval_after is not None:
            from prosfi.train.verdict import run_verdict

            summary.verdict = run_verdict(out)
        summary.plot_reward(rows, out / "reward_curve.png")
        (out / "summary.json").write_text(json.dumps(summary.as_dict(), indent=2) + "\n")
        print(summary.to_text(), flush=True)
        if (out / "adapter_config.json").is_file():  # vLLM and plain from_pretrained need one full model
            print(f"[prosfi] {out} holds a LoRA adapter: `prosfi model merge --adapter {out} -o {out}-merged` "
                  "writes the full model `prosfi eval --engine vllm` loads", flush=True)
    return summary.as_dict()
