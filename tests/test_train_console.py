"""Training output a user can read (issue #10, part 5): compact console lines, a bounded
completion text and run markers in the audit, a model card that names the base model."""

from __future__ import annotations

import json

from prosfi.rewards.audit import AuditLog, audit_step, bounded_text, read_audit
from prosfi.train.console import format_row
from prosfi.train.runlog import fix_model_card

GRPO_ROW = {  # the shape of a TRL GRPO row (abridged; a real one has ~40 keys)
    "loss": 0.01, "grad_norm": 0.5, "learning_rate": 5e-5, "num_tokens": 4096.0,
    "completions/mean_length": 120.0, "rewards/prosfi_reward/mean": 0.3, "rewards/prosfi_reward/std": 0.2,
    "reward": 0.3, "reward_std": 0.2, "frac_reward_zero_std": 0.0, "prosfi/format_rate": 0.5,
    "prosfi/answer_accuracy": 0.25, "prosfi/chain_valid_rate": 0.125, "prosfi/verified_step_fraction": 0.4,
    "epoch": 0.1,
}


def test_a_grpo_row_is_one_short_line_with_the_four_headlines():
    line = format_row(GRPO_ROW, 12, 30, "grpo", 1.5)
    assert line == "[grpo] step 12/30  reward 0.300  acc 0.250  chain 0.125  format 0.500  1.50 s/step"
    assert len(line) < 100 and len(str(GRPO_ROW)) > 2 * len(line)


def test_vllm_rows_show_the_importance_sampling_ratio():
    row = {**GRPO_ROW, "sampling/importance_sampling_ratio/mean": 0.25}
    assert format_row(row, 3, 30, "grpo", None).endswith("format 0.500  is-ratio 0.250")


def test_sft_rows_closing_rows_and_other_rows():
    assert format_row({"loss": 2.5, "learning_rate": 3e-3, "mean_token_accuracy": 0.6}, 5, 400, "sft", None) \
        == "[sft] step 5/400  loss 2.500  tok-acc 0.600  lr 0.003"
    assert format_row({"train_runtime": 61.7, "train_loss": 1.0}, 30, 30, "grpo", None) == \
        "[grpo] done: 30 steps in 62 s"
    assert format_row({"eval_something": 1.0}, 3, 30, "grpo", None) is None  # not a training row: silent
    assert "n/a" in format_row({"reward": float("nan")}, 1, 2, "grpo", None)


def test_completion_text_is_kept_bounded_head_and_tail():
    assert bounded_text("short") == "short"
    long = "<think>" + "x" * 10_000 + "</think><steps>[]</steps><answer>A</answer>"
    kept = bounded_text(long, 400)
    assert kept.startswith("<think>xxx") and kept.endswith("<answer>A</answer>")
    assert f"{len(long) - 400} characters left out" in kept and len(kept) < 460


def test_audit_run_markers_are_skipped_unless_asked_for(tmp_path):
    from prosfi.rewards.score import ScoreResult

    path = tmp_path / "audit.jsonl"
    with AuditLog(path, max_text_chars=50) as log:
        log.mark("run_start", run_name="r", resume_from_step=None)
        log.write([ScoreResult("p1", "prosfi", 1.0)], ["y" * 200], step=audit_step(type("S", (), {"global_step": 0})))
    assert [r["event"] for r in read_audit(path, events=True) if "event" in r] == ["run_start"]
    (record,) = list(read_audit(path))
    assert record["step"] == 1  # the first optimizer step, as metrics.jsonl numbers it
    assert record["completion"].startswith("y" * 25) and "left out" in record["completion"]
    assert audit_step(None) is None


def test_model_card_names_the_base_model(tmp_path):
    card = tmp_path / "README.md"
    card.write_text('This model is a fine-tuned version of [None](https://huggingface.co/None).\n'
                    'generator = pipeline("text-generation", model="None", device_map="auto")\n')
    fix_model_card(tmp_path, "Qwen/Qwen2.5-7B-Instruct", warmed_up=True)
    text = card.read_text()
    assert "[Qwen/Qwen2.5-7B-Instruct](https://huggingface.co/Qwen/Qwen2.5-7B-Instruct)" in text
    assert "SFT warm-up" in text and "None" not in text and f'model="{tmp_path}"' in text
    json.dumps(text)  # plain text
