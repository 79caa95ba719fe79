"""Issue 27, "a re-run does what the docs say": re-running a finished run trains nothing (no `step 2/1`, no
`checkpoint-2`, no rows appended to the logs) and repeats only its held-out evaluation after GRPO, with the plots
a `prosfi eval` folder has; a larger --max_steps into the same output_dir continues it."""

from __future__ import annotations

import json

import pytest

from prosfi.cli import main as prosfi_main
from prosfi.train.rundir import RunPlan, finished

pytest.importorskip("trl")
pytest.importorskip("matplotlib")


def test_a_resume_at_max_steps_of_a_summarised_run_is_finished(tmp_path):
    resume = RunPlan("resume", str(tmp_path / "checkpoint-60"), "resuming")
    assert finished(resume, tmp_path, 60).mode == "resume"  # no summary: the run did not finish
    (tmp_path / "summary.json").write_text("{}")
    assert finished(resume, tmp_path, 60).mode == "finished"
    assert finished(resume, tmp_path, 100).mode == "resume"  # more steps: it continues
    assert finished(RunPlan("fresh"), tmp_path, 60).mode == "fresh"


def test_rerunning_a_finished_run_repeats_only_its_evaluation(tiny_model, tmp_path, capsys):
    from test_train_rundir import _recipe

    out = tmp_path / "out"
    recipe = _recipe(tmp_path, tiny_model, output_dir=str(out), save_strategy="steps", save_steps=1,
                     eval_held_out=2)
    assert prosfi_main(["train", recipe]) == 0
    logs = {name: (out / name).read_text() for name in ("metrics.jsonl", "audit.jsonl")}
    first = json.loads((out / "summary.json").read_text())
    assert sorted(p.name for p in (out / "eval_after").glob("*.png"))  # the plots a prosfi eval folder has
    (out / "eval_after" / "summary.json").unlink()
    capsys.readouterr()
    assert prosfi_main(["train", recipe, "--dry-run"]) == 0  # the dry run says what the run will do
    assert "# output_dir: " in (dry := capsys.readouterr().out) and "not training again" in dry

    assert prosfi_main(["train", recipe]) == 0
    printed = capsys.readouterr().out
    assert "finished at step 1" in printed and "not training again" in printed
    assert not (out / "checkpoint-2").exists()
    assert {name: (out / name).read_text() for name in logs} == logs  # nothing appended
    again = json.loads((out / "summary.json").read_text())
    assert again["steps"] == first["steps"] == 1
    assert (out / "eval_after" / "summary.json").is_file()  # evaluated again
