"""Training output a user can read (issue #10, part 5): compact console lines, a bounded
completion text and run markers in the audit, a model card that names the base model."""

from __future__ import annotations

import json

import pytest

from prosfi.rewards.audit import AuditLog, audit_step, bounded_text, read_audit
from prosfi.train.console import format_row, generation_of
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
    assert format_row({"eval_something": 1.0}, 3, 30, "grpo", None) == "[grpo] eval at step 3  something 1.000"
    assert format_row({"grad_norm": 1.0}, 3, 30, "grpo", None) is None  # no headline: silent
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


# --- issue #21 items 11 and 14: eval rows, generations, the importance-sampling ratio --------------------------

def _args(**kw):
    from types import SimpleNamespace

    base = {"gradient_accumulation_steps": 2, "steps_per_generation": 2, "num_iterations": 1, "logging_steps": 1}
    return SimpleNamespace(**{**base, **kw})


EVAL_ROW = {"eval_accuracy": 0.5, "eval_reward_hit": 0.25, "eval_format_rate": 0.75, "eval_mean_steps": 3.0,
            "epoch": 0.2}


def test_an_eval_row_is_not_printed_as_a_training_row():
    line = format_row(EVAL_ROW, 10, 30, "grpo", 2.0)
    assert line == "[grpo] eval at step 10  accuracy 0.500  reward-hit 0.250  format 0.750"
    assert "reward 0.250" not in line and "s/step" not in line


def test_eval_rows_do_not_restart_the_step_timer(monkeypatch, capsys):
    from types import SimpleNamespace

    from prosfi.train import console

    clock = iter([0.0, 10.0, 15.0, 20.0])
    monkeypatch.setattr(console.time, "perf_counter", lambda: next(clock))
    cb = console.ConsoleCallback("grpo", show_bar=False)
    state = SimpleNamespace(global_step=0, max_steps=30, is_world_process_zero=True)
    args = _args(gradient_accumulation_steps=1, steps_per_generation=1)
    cb.on_train_begin(args, state, None)  # t = 0
    state.global_step = 2
    cb.on_log(args, state, None, logs=dict(GRPO_ROW))  # t = 10: 5 s/step
    cb.on_log(args, state, None, logs=dict(EVAL_ROW))  # t = 15: an evaluation, the timer runs on
    state.global_step = 4
    cb.on_log(args, state, None, logs=dict(GRPO_ROW))  # t = 20: (20 - 10) / 2 steps
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].endswith("5.00 s/step") and lines[1].startswith("[grpo] eval at step 2")
    assert lines[2].endswith("5.00 s/step")  # not 2.50 (timed from the eval row)


def test_generation_of_follows_trls_schedule():
    # num_iterations 2, steps_per_generation = gradient_accumulation_steps = 2: a generation every 4
    # micro-steps = every 2 optimizer steps; steps 1, 3, 5 sample, 2, 4, 6 re-use
    args = _args(num_iterations=2)
    assert [generation_of(s, args) for s in range(1, 7)] == [(1, True), (1, False), (2, True), (2, False),
                                                              (3, True), (3, False)]
    assert generation_of(4, _args(num_iterations=2, logging_steps=2)) == (2, True)  # the window holds step 3
    assert generation_of(5, _args()) is None  # one generation per optimizer step: nothing to tell apart
    # steps_per_generation 4 with 2 accumulation steps: one generation serves 2 optimizer steps
    assert [generation_of(s, _args(steps_per_generation=4)) for s in (1, 2, 3)] == [(1, True), (1, False),
                                                                                    (2, True)]


def test_num_iterations_rows_name_the_generation_and_reused_steps_say_so():
    trained = {k: v for k, v in GRPO_ROW.items() if not k.startswith(("reward", "rewards/", "prosfi/", "frac_"))}
    trained["kl"] = 0.002
    sampled = format_row(GRPO_ROW, 3, 30, "grpo", None, (2, True), 2)
    assert sampled == "[grpo] step 3/30  gen 2  reward 0.300  acc 0.250  chain 0.125  format 0.500"
    reused = format_row(trained, 4, 30, "grpo", 1.0, (2, False), 2)
    assert reused.startswith("[grpo] step 4/30  gen 2 re-used (num_iterations 2")
    assert "loss 0.010" in reused and "kl 0.002" in reused and "reward" not in reused.split(";")[0]
    assert reused.endswith("1.00 s/step")


def test_is_ratio_warning_outside_the_band_once_per_excursion(capsys):
    from types import SimpleNamespace

    from prosfi.train.console import ConsoleCallback, is_ratio_band, ratio_warning

    assert ratio_warning({"sampling/importance_sampling_ratio/mean": 0.95}, 1, (0.8, 1.25)) is None
    line = ratio_warning({"sampling/importance_sampling_ratio/mean": 0.4}, 7, (0.8, 1.25))
    assert line.startswith("[prosfi] warning at step 7: vLLM importance-sampling ratio mean 0.400")
    assert ratio_warning({"sampling/importance_sampling_ratio/mean": 0.4}, 7, None) is None
    assert is_ratio_band(SimpleNamespace(is_ratio_warn_min=0.0, is_ratio_warn_max=0.0)) is None
    assert is_ratio_band(SimpleNamespace(is_ratio_warn_min=0.7, is_ratio_warn_max=1.5)) == (0.7, 1.5)
    cb = ConsoleCallback("grpo", show_bar=False, is_ratio_band=(0.8, 1.25))
    state = SimpleNamespace(global_step=0, max_steps=9, is_world_process_zero=True)
    args = _args(gradient_accumulation_steps=1, steps_per_generation=1)
    cb.on_train_begin(args, state, None)
    for step, ratio in enumerate([1.0, 0.5, 0.45, 1.0, 2.0], start=1):
        state.global_step = step
        cb.on_log(args, state, None, logs={**GRPO_ROW, "sampling/importance_sampling_ratio/mean": ratio})
    err = capsys.readouterr().err.splitlines()
    assert [line.split(" at step ")[1].split(":")[0] for line in err] == ["2", "5"]  # 0.45 is the same excursion


def test_grpo_config_of_the_recipes_defaults_warns_on_a_drifting_ratio():
    from prosfi.train.config import ProsfiScriptArguments
    from prosfi.train.console import is_ratio_band

    assert is_ratio_band(ProsfiScriptArguments()) == (0.8, 1.25)


def test_is_ratio_warning_sees_the_gap_trls_clipping_hides(capsys):
    # TRL 1.16 logs the ratio mean after token_truncate clamps each token to [0.5, 2]: half the tokens at
    # 0.4 and half at 2.5 log a mean of (0.5 + 2.0) / 2 = 1.25, inside the band. The log-prob gap, logged
    # before clipping, is (|ln 0.4| + |ln 2.5|) / 2 = 0.916: a drift far outside it.
    import math
    from types import SimpleNamespace

    from prosfi.train.console import ConsoleCallback, gap_band, ratio_warning

    band = (0.8, 1.25)
    assert gap_band(band) == pytest.approx(math.log(1.25))
    assert gap_band((0.9, math.inf)) == pytest.approx(-math.log(0.9)) and gap_band((0.0, math.inf)) == math.inf
    clipped = {"sampling/importance_sampling_ratio/mean": 1.25, "sampling/sampling_logp_difference/mean": 0.916}
    line = ratio_warning(clipped, 4, band)
    assert line is not None and "log-prob gap 0.916 (token ratios 0.400..2.499 before clipping)" in line
    assert "importance-sampling ratio mean" not in line  # the damped value alone would have passed
    assert ratio_warning({**clipped, "sampling/sampling_logp_difference/mean": 0.1}, 4, band) is None
    both = ratio_warning({"sampling/importance_sampling_ratio/mean": 0.3,
                          "sampling/sampling_logp_difference/mean": 1.2}, 5, band)
    assert "ratio mean 0.300" in both and "log-prob gap 1.200" in both and "\n" not in both
    row = format_row({**GRPO_ROW, **clipped}, 4, 30, "grpo", None)
    assert row.endswith("is-ratio 1.250  logp-gap 0.916")
    cb = ConsoleCallback("grpo", show_bar=False, is_ratio_band=band)
    state = SimpleNamespace(global_step=0, max_steps=9, is_world_process_zero=True)
    args = _args(gradient_accumulation_steps=1, steps_per_generation=1)
    cb.on_train_begin(args, state, None)
    for step, gap in enumerate([0.05, 0.9, 0.05, 0.5], start=1):  # only the gap is logged: still one per excursion
        state.global_step = step
        cb.on_log(args, state, None, logs={**GRPO_ROW, "sampling/sampling_logp_difference/mean": gap})
    err = capsys.readouterr().err.splitlines()
    assert [line.split(" at step ")[1].split(":")[0] for line in err] == ["2", "4"]
