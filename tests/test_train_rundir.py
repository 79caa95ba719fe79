"""A run directory is never silently mixed (issue #22): re-running into it resumes (from a checkpoint)
or refuses in one line; --overwrite starts over with the logs appended to; Ctrl-C saves a checkpoint
and exits 130 without a traceback (a real subprocess, a real SIGINT to its process group)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
import yaml

from prosfi.cli import main as prosfi_main

pytest.importorskip("trl")


def _recipe(tmp_path: Path, model: Path, **extra) -> str:
    body = {
        "model_name_or_path": str(model), "dataset": "kk", "dataset_difficulty": "2", "dataset_size": 16,
        "reward_mode": "prosfi", "verifier": {"backends": ["z3"], "workers": 1, "timeout_ms": 1000},
        "torch_threads": 1, "use_cpu": True, "bf16": False, "gradient_checkpointing": False,
        "dataloader_num_workers": 0, "per_device_train_batch_size": 4, "num_generations": 2,
        "max_completion_length": 16, "max_steps": 1, "learning_rate": 1e-4, "logging_steps": 1,
        "save_strategy": "no", "report_to": "none", "seed": 0, "disable_tqdm": True, "audit_path": "audit.jsonl",
        **extra,
    }
    path = tmp_path / "tiny.yaml"
    path.write_text(yaml.safe_dump(body))
    return str(path)


def _lines(path: Path) -> list[dict]:
    return [json.loads(x) for x in path.read_text().splitlines() if x.strip()]


def test_rerun_without_checkpoint_refuses_then_overwrite_appends_the_logs(tiny_model, tmp_path, capsys):
    out = tmp_path / "out"
    recipe = _recipe(tmp_path, tiny_model, output_dir=str(out))
    assert prosfi_main(["train", recipe]) == 0
    first_metrics, first_audit = (out / "metrics.jsonl").read_text(), (out / "audit.jsonl").read_text()
    summary = (out / "summary.json").read_text()
    capsys.readouterr()

    for argv in (["train", recipe], ["train", recipe, "--dry-run"], ["train", recipe, "--resume_from_checkpoint",
                                                                     "false"]):
        assert prosfi_main(argv) == 2
        err = capsys.readouterr().err.strip()
        assert len(err.splitlines()) == 1 and "--overwrite" in err and "--output_dir" in err, err
    assert (out / "metrics.jsonl").read_text() == first_metrics and (out / "summary.json").read_text() == summary

    assert prosfi_main(["train", recipe, "--overwrite"]) == 0
    assert "--overwrite: starting a fresh run" in capsys.readouterr().out
    metrics = (out / "metrics.jsonl").read_text()
    assert metrics.startswith(first_metrics)  # appended to, not truncated
    markers = [r for r in _lines(out / "metrics.jsonl") if r.get("event") == "run_start"]
    assert [m["resume_from_step"] for m in markers] == [None, None]
    audit = (out / "audit.jsonl").read_text()
    assert audit.startswith(first_audit) and audit.count('"run_start"') == 2
    # the summary is the second run's alone (one GRPO step), not a mix of both
    assert json.loads((out / "summary.json").read_text())["steps"] == 1


def test_rerun_into_a_run_with_a_checkpoint_resumes_it(tiny_model, tmp_path, capsys):
    out = tmp_path / "out"
    recipe = _recipe(tmp_path, tiny_model, output_dir=str(out), save_strategy="steps", save_steps=1)
    assert prosfi_main(["train", recipe]) == 0
    capsys.readouterr()
    assert prosfi_main(["train", recipe, "--max_steps", "2", "--dry-run"]) == 0
    assert f"# output_dir: resuming from {out / 'checkpoint-1'}" in capsys.readouterr().out
    assert prosfi_main(["train", recipe, "--max_steps", "2"]) == 0
    assert f"resuming from {out / 'checkpoint-1'}" in capsys.readouterr().out
    rows = _lines(out / "metrics.jsonl")
    assert [r["resume_from_step"] for r in rows if r.get("event")] == [None, 1]
    assert [r["step"] for r in rows if "reward" in r] == [1, 2]
    assert (out / "checkpoint-2").is_dir()


def test_dry_run_checks_backends_and_the_model_path(tiny_model, tmp_path, capsys, monkeypatch):
    recipe = _recipe(tmp_path, tiny_model, output_dir=str(tmp_path / "out"))
    cases = {
        ("--verifier.backends", "z3,nope"): "unknown verifier backend 'nope'",
        ("--model_name_or_path", "./no_such_dir"): "no model at ./no_such_dir",
        ("--model_name_or_path", "/no/such/dir"): "no model at /no/such/dir",
    }
    (tmp_path / "runs").mkdir()
    monkeypatch.chdir(tmp_path)
    cases[("--model_name_or_path", "runs/no_such_dir")] = "no model at runs/no_such_dir"
    for flags, message in cases.items():
        assert prosfi_main(["train", recipe, "--dry-run", *flags]) == 2
        err = capsys.readouterr().err.strip()
        assert len(err.splitlines()) == 1 and message in err, err
    if not __import__("shutil").which("lake"):
        assert prosfi_main(["train", recipe, "--dry-run", "--verifier.backends", "z3,lean"]) == 2
        assert "'lean' was asked for but cannot run here" in capsys.readouterr().err
        assert prosfi_main(["train", recipe, "--dry-run", "--reward_mode", "direct_lean"]) == 2
        assert "direct_lean needs Lean" in capsys.readouterr().err


def test_eval_and_prm_label_refuse_a_folder_that_holds_files(tmp_path, capsys):
    out = tmp_path / "eval"
    out.mkdir()
    (out / "summary.json").write_text("{}")
    completions = tmp_path / "c.jsonl"
    completions.write_text(json.dumps({"problem_id": "x", "completion": "no"}) + "\n")
    for argv in (["eval", "--data", "kk:2", "--count", "2", "--completions", str(completions), "-o", str(out)],
                 ["prm", "label", "--data", "kk:2", "--count", "2", "--completions", str(completions), "-o", str(out)],
                 ["eval", "compare", str(out), str(out), "-o", str(out)]):
        assert prosfi_main(argv) == 2
        err = capsys.readouterr().err.strip()
        assert len(err.splitlines()) == 1 and "already holds files" in err and "--overwrite" in err, err
    assert (out / "summary.json").read_text() == "{}"


def test_prm_label_with_no_chain_is_an_error_with_the_reason(tmp_path, capsys):
    from prosfi.eval.sources import load_sources

    problems = load_sources(["kk:2"], count=2)[0].problems
    completions = tmp_path / "c.jsonl"
    completions.write_text("".join(json.dumps({"problem_id": p.id, "completion": "I think so."}) + "\n"
                                   for p in problems))
    out = tmp_path / "label"
    assert prosfi_main(["prm", "label", "--data", "kk:2", "--count", "2", "--completions", str(completions),
                        "-o", str(out), "--no-progress"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "no chain to label" in err[0] and "malformed" in err[0], err
    assert not (out / "train.jsonl").exists() and (out / "completions.jsonl").is_file()


def test_ctrl_c_saves_a_checkpoint_and_exits_130_without_a_traceback(tiny_model, tmp_path):
    out = tmp_path / "out"
    recipe = _recipe(tmp_path, tiny_model, output_dir=str(out), max_steps=500)
    env = {**os.environ, "CUDA_VISIBLE_DEVICES": "", "PYTHONPATH": str(Path(__file__).resolve().parents[1])}
    proc = subprocess.Popen([sys.executable, "-m", "prosfi", "train", recipe], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, env=env, start_new_session=True)
    try:
        deadline = time.monotonic() + 240
        metrics = out / "metrics.jsonl"
        while time.monotonic() < deadline and proc.poll() is None:
            if metrics.is_file() and sum('"reward"' in line for line in metrics.read_text().splitlines()) >= 1:
                break
            time.sleep(0.2)
        assert proc.poll() is None, proc.communicate()[1][-3000:]
        os.killpg(proc.pid, signal.SIGINT)  # what Ctrl-C in a terminal does: the whole process group
        _, err = proc.communicate(timeout=240)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
    assert proc.returncode == 130, err[-3000:]
    assert "Traceback" not in err and "KeyboardInterrupt" not in err, err[-3000:]
    last = err.strip().splitlines()[-1]
    assert last.startswith("prosfi train: interrupted at GRPO step") and "checkpoint saved at" in last
    step = max(r["step"] for r in _lines(out / "metrics.jsonl") if "reward" in r)  # the step Ctrl-C ended
    assert (out / f"checkpoint-{step}" / "trainer_state.json").is_file()
    assert not (out / "summary.json").exists()  # an interrupted run has no summary to be mistaken for its result
    # re-running the same command resumes from it
    assert prosfi_main(["train", recipe, "--max_steps", str(step + 1)]) == 0
    rows = _lines(out / "metrics.jsonl")
    assert [r["resume_from_step"] for r in rows if r.get("event")] == [None, step]


def test_an_endpoint_cache_in_the_folder_resumes_instead_of_refusing(tmp_path):
    import argparse

    from prosfi.eval.cli import resumes_from_cache
    from prosfi.usage import output_folder

    out = tmp_path / "eval"
    out.mkdir()
    (out / "requests.jsonl").write_text("")
    args = argparse.Namespace(endpoint="http://localhost:8000/v1", cache=None)
    assert resumes_from_cache(args, out) and output_folder(out, resume=True) == out
    assert not resumes_from_cache(argparse.Namespace(endpoint=None, cache=None), out)
    with pytest.raises(ValueError, match="already holds files"):
        output_folder(out)
    assert output_folder(out, overwrite=True) == out
    assert output_folder(tmp_path / "empty") == tmp_path / "empty"  # created; an empty folder is fine too
    assert output_folder(tmp_path / "empty") == tmp_path / "empty"


def test_optional_lean_is_one_warning_line_without_python_source(tmp_path):
    if __import__("shutil").which("lake"):
        pytest.skip("Lean is installed here")
    steps = Path(__file__).resolve().parents[1] / "examples" / "steps.jsonl"
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[1])}
    env.pop("PYTHONWARNINGS", None)
    proc = subprocess.run([sys.executable, "-m", "prosfi", "check", str(steps), "--backends", "z3,lean?",
                           "--workers", "2"], capture_output=True, text=True, env=env, timeout=120)
    assert proc.returncode == 0, proc.stderr
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("warning: prosfi verifier: backend 'lean' skipped"), lines
    assert "RuntimeWarning" not in proc.stderr and "warnings.warn" not in proc.stderr


def test_a_local_looking_model_path_that_is_not_there_fails_at_once(tmp_path, capsys, monkeypatch):
    from prosfi.usage import looks_local

    (tmp_path / "runs").mkdir()
    monkeypatch.chdir(tmp_path)
    for model in ("runs/no_such_dir", "./x", "/abs/x", "~/x", "a/b/c"):
        assert looks_local(model)
        assert prosfi_main(["eval", "--data", "kk:2", "--count", "1", "--model", model, "-o", "out"]) == 2
        err = capsys.readouterr().err.strip()
        assert len(err.splitlines()) == 1 and "no such folder" in err, err
    assert not looks_local("Qwen/Qwen2.5-0.5B-Instruct")  # a hub id is left to the hub
