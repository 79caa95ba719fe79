"""A newcomer's mistakes, tried as a new user would (issue #10, part 4): each ends in one line on
stderr that says what to do, exit 2, and no traceback. Commands run as subprocesses."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from cli_subprocess import one_line_error, prosfi  # tests/cli_subprocess.py

ROOT = Path(__file__).resolve().parents[1]
DEMO = str(ROOT / "recipes" / "demo" / "cpu_kk.yaml")


@pytest.fixture(scope="module")
def problems(tmp_path_factory) -> Path:
    where = tmp_path_factory.mktemp("newcomer")
    assert prosfi("data", "kk", "--people", "3", "--count", "300", "-o", "p.jsonl", cwd=where).returncode == 0
    return where


def test_recipe_with_a_yaml_syntax_error(tmp_path):
    bad = tmp_path / "bad.yaml"
    bad.write_text("model_name_or_path: runs/tiny-model\n  dataset: [kk\n")
    one_line_error(prosfi("train", str(bad)), "not valid YAML", "line 2")


def test_dataset_size_beyond_the_distinct_puzzles_is_caught_by_the_dry_run(tmp_path):
    line = one_line_error(prosfi("train", DEMO, "--dataset_size", "5000", "--dry-run", cwd=tmp_path),
                          "dataset_size", "399")
    assert "dataset_difficulty" in line  # says what to change


def test_a_model_path_that_points_nowhere(tmp_path):
    one_line_error(prosfi("train", DEMO, "--model_name_or_path", "./no-such-model", "--tiny_model_if_absent",
                          "false", "--dry-run", cwd=tmp_path), "no model at ./no-such-model")


def test_a_mistyped_model_path_in_the_demo_is_not_silently_a_random_tiny_model(tmp_path):
    """The demo recipe builds its tiny model where none is (tiny_model_if_absent): a typo in the path is said
    by the dry run, and a hub id (which would become a random model at that path) is refused."""
    proc = prosfi("train", DEMO, "--model_name_or_path", "runs/tiny-modle", "--dry-run", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert "# model: nothing at runs/tiny-modle: the run builds prosfi's random tiny model there" in proc.stdout
    line = one_line_error(prosfi("train", DEMO, "--model_name_or_path", "Qwen/Qwen2.5-0.5B-Instrutc", "--dry-run",
                                 cwd=tmp_path), "looks like a hub id")
    assert "--no_tiny_model_if_absent" in line


@pytest.mark.slow
def test_a_hub_model_that_cannot_be_loaded(tmp_path):
    proc = prosfi("train", DEMO, "--model_name_or_path", "no-such-org/no-such-model", "--tiny_model_if_absent",
                  "false", "--sft", "false", "--max_steps", "1", cwd=tmp_path)
    assert proc.returncode == 2 and "Traceback" not in proc.stderr, proc.stderr[-3000:]
    assert "cannot load model_name_or_path 'no-such-org/no-such-model'" in proc.stderr


@pytest.mark.parametrize("command", ["gold", "prompts", "validate"])
def test_data_commands_on_a_missing_file(command, tmp_path):
    args = ["data", command, "missing.jsonl"] + (["-o", "out.jsonl"] if command != "validate" else [])
    one_line_error(prosfi(*args, cwd=tmp_path), "missing.jsonl")


@pytest.mark.parametrize("args", [
    ["data", "kk", "--count", "2", "-o", "no/such/dir/kk.jsonl"],
    ["data", "gold", "p.jsonl", "-o", "no/such/dir/gold.jsonl"],
    ["check", str(ROOT / "examples" / "steps.jsonl"), "-o", "no/such/dir/v.jsonl", "--workers", "1"],
    ["score", "p.jsonl", "p.jsonl", "-o", "no/such/dir/s.jsonl", "--workers", "1"],
])
def test_output_into_a_folder_that_does_not_exist(args, problems):
    one_line_error(prosfi(*args, cwd=problems), "no/such/dir")


@pytest.mark.parametrize("out", ["/proc/prosfi-no-such/tiny", "a_file"])
def test_model_tiny_out_to_a_bad_path(out, tmp_path):
    (tmp_path / "a_file").write_text("x")
    one_line_error(prosfi("model", "tiny", "--out", out, cwd=tmp_path), out)


def test_lean_statement_into_head_prints_no_broken_pipe(problems):
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    proc = subprocess.run(f"{sys.executable} -m prosfi.cli lean statement p.jsonl | head -n 2", shell=True, check=False,
                          cwd=problems, env=env, capture_output=True, text=True, timeout=120)
    assert len(proc.stdout.splitlines()) == 2
    assert proc.stderr == "", proc.stderr  # no "[Errno 32] Broken pipe", no traceback


def test_lean_render_names_the_bad_json_line_and_renders_the_rest(tmp_path):
    good = {"id": "ok", "premises": {"h1": "P a"}, "conclusion": "P a"}
    path = tmp_path / "steps.jsonl"
    path.write_text(json.dumps(good) + "\n{not json\n" + json.dumps({**good, "id": "ok2"}) + "\n")
    proc = prosfi("lean", "render", str(path))
    one_line_error(proc, f"{path}:2", "not valid JSON", code=1)
    assert proc.stdout.count("theorem prosfi_step") == 2
