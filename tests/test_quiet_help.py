"""Issue 27, "errors are quick and quiet": every sub-subcommand's --help starts with what it does, `eval compare
--help` shows compare's options only, and library noise the user cannot act on (DeepSpeed's no-GPU line on stdout,
transformers' deprecation of TRL's own gradient-checkpointing calls) is silenced, and nothing else."""

from __future__ import annotations

import subprocess
import sys
import warnings
from pathlib import Path

import pytest

from prosfi.cli import main

ROOT = Path(__file__).resolve().parents[1]


@pytest.mark.parametrize("argv,first", [
    (["data", "kk"], "Knights & Knaves puzzles"), (["data", "gold"], "Gold completions"),
    (["model", "tiny"], "Build a tiny random Qwen2"), (["lean", "render"], None),
])
def test_sub_subcommand_help_starts_with_what_it_does(capsys, argv, first):
    with pytest.raises(SystemExit):
        main(argv + ["--help"])
    text = capsys.readouterr().out
    after_usage = text.split("\n\n", 1)[1].strip()
    assert not after_usage.startswith(("options:", "positional arguments:")), text
    if first:
        assert after_usage.startswith(first), after_usage


def test_eval_compare_help_shows_compare_options_only(capsys):
    assert main(["eval", "compare", "--help"]) == 0
    text = capsys.readouterr().out
    assert text.startswith("usage: prosfi eval compare") and "--bootstrap" in text
    assert "--data" not in text and "--model" not in text and "--judge-endpoint" not in text


def test_library_noise_is_silenced_and_nothing_else():
    from prosfi.cli import quiet_library_noise

    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        quiet_library_noise()
        warnings.warn("`gradient_checkpointing_enable` is deprecated and will be removed in v6.", FutureWarning)
        warnings.warn("`foo` in your recipe is deprecated", FutureWarning)
    assert [str(w.message) for w in seen] == ["`foo` in your recipe is deprecated"]


def test_deepspeed_says_nothing_on_stdout_about_a_missing_gpu():
    pytest.importorskip("deepspeed")
    code = "from prosfi.cli import quiet_library_noise; quiet_library_noise(); import deepspeed; print('done')"
    proc = subprocess.run([sys.executable, "-c", code], check=False, capture_output=True, text=True, timeout=120,
                          env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin", "CUDA_VISIBLE_DEVICES": ""})
    assert proc.stdout.strip() == "done", proc.stdout
    assert "Setting accelerator to CPU" not in proc.stderr
