"""Issue 27, "an output never destroys an input": every writer refuses, in one line with exit 2 and before any
work, an output path that is one of its inputs; `prosfi model tiny` refuses a folder that holds files."""

from __future__ import annotations

import os

import pytest

from prosfi.cli import main

STEP = '{"id": "a", "premises": ["P(a)", "all x (P(x) -> Q(x))"], "conclusion": "Q(a)"}\n'


@pytest.fixture()
def files(tmp_path):
    problems, gold = tmp_path / "toy.jsonl", tmp_path / "gold.jsonl"
    assert main(["data", "toy", "--count", "2", "-o", str(problems)]) == 0
    assert main(["data", "gold", str(problems), "--no-verify", "-o", str(gold)]) == 0
    return problems, gold


def _refused(argv, capsys, *kept):
    before = [p.read_bytes() for p in kept]
    capsys.readouterr()
    assert main(argv) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "is also an input" in err, err
    assert [p.read_bytes() for p in kept] == before


def test_check_refuses_to_write_over_its_input(tmp_path, capsys):
    steps = tmp_path / "steps.jsonl"
    steps.write_text(STEP)
    _refused(["check", str(steps), "-o", str(steps)], capsys, steps)
    os.symlink(steps, tmp_path / "link.jsonl")  # the same file under another name
    _refused(["check", str(tmp_path / "link.jsonl"), "-o", str(steps)], capsys, steps)


def test_score_refuses_to_write_over_completions_or_problems(files, capsys):
    problems, gold = files
    _refused(["score", str(problems), str(gold), "-o", str(gold)], capsys, problems, gold)
    _refused(["score", str(problems), str(gold), "-o", str(problems)], capsys, problems, gold)


def test_data_gold_and_prompts_refuse_to_replace_the_problems(files, capsys):
    problems, _ = files
    _refused(["data", "gold", str(problems), "-o", str(problems)], capsys, problems)
    _refused(["data", "prompts", str(problems), "-o", str(problems)], capsys, problems)


def test_a_fresh_output_is_still_written(files, tmp_path):
    problems, gold = files
    assert main(["score", str(problems), str(gold), "-o", str(tmp_path / "scores.jsonl")]) == 0
    assert (tmp_path / "scores.jsonl").read_text().count("\n") == 2


def test_check_says_a_folder_is_a_folder(tmp_path, capsys):
    assert main(["check", str(tmp_path)]) == 2
    assert "is a folder" in capsys.readouterr().err


def test_model_tiny_refuses_a_folder_with_files_without_overwrite(tmp_path, capsys):
    trained = tmp_path / "model"
    trained.mkdir()
    (trained / "model.safetensors").write_bytes(b"weights")
    assert main(["model", "tiny", "--out", str(trained)]) == 2
    err = capsys.readouterr().err
    assert "--overwrite" in err and "model.safetensors" in err
    assert (trained / "model.safetensors").read_bytes() == b"weights"
