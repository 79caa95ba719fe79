"""The README's example commands, extracted from its ```bash blocks and run, so it cannot drift.

Every `prosfi …` command of the README is collected. It runs (in a scratch folder where
`examples/` and `recipes/` are the shipped ones) when every file it reads is shipped or was
written by an earlier README command; otherwise it is reported as skipped with the reason (a
placeholder such as `steps.jsonl`, the hub, Lean). Two adjustments keep the suite fast, both
visible here: generator counts are cut to `FAST_COUNT`, and `prosfi train` runs the recipe as a
dry run, except the README's main command, which really trains (shortened, marked `slow`). The
placeholder `RECIPE.yaml` stands for the shipped demo recipe.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"
DOCS = [README, *sorted((ROOT / "docs").glob("*.md"))]
SHIPPED = ("examples", "recipes")
FAST_COUNT = "6"
MAIN_COMMAND = "prosfi train recipes/demo/cpu_chains.yaml"
# what the main command gets appended so that a test run takes seconds, not minutes
MAIN_SHORTENED = ["--sft_max_steps", "2", "--sft_size", "16", "--max_steps", "1", "--dataset_size", "8",
                  "--per_device_train_batch_size", "8", "--eval_held_out", "8", "--save_strategy", "no",
                  "--tiny.corpus_problems", "20", "--disable_tqdm", "true"]
NEEDS = {"--hub": "needs the Hugging Face hub", "data proverqa": "needs the Hugging Face hub",
         "lean probe": "needs a Lean toolchain"}
PLACEHOLDERS = {"RECIPE.yaml": "recipes/demo/cpu_chains.yaml"}
MODEL_FLAGS = ("--model", "--prm", "--policy")
FILE_RE = re.compile(r"\.(jsonl|json|yaml|yml)$")


def readme_commands() -> list[str]:
    """The `prosfi` commands of the README's bash blocks, in order, continuation lines joined,
    trailing comments dropped; a `a && b` chain contributes its `prosfi` parts."""
    commands: list[str] = []
    fence = None
    pending = ""
    lines = [line for doc in DOCS for line in ["```", *doc.read_text(encoding="utf-8").splitlines(), "```"][1:-1]]
    for line in lines:
        if line.startswith("```"):
            fence = None if fence is not None else (line[3:].strip() or "text")
            continue
        if fence not in ("bash", "sh"):
            continue
        text = pending + line.strip()
        if text.endswith("\\"):
            pending = text[:-1] + " "
            continue
        pending = ""
        text = re.sub(r"\s+#.*$", "", text)
        for part in text.split("&&"):
            part = part.strip()
            if part.startswith("prosfi ") and part not in commands:
                commands.append(part)
    return commands


COMMANDS = readme_commands()


def _why_not(argv: list[str], written: set[str]) -> str | None:
    joined = " ".join(argv)
    for needle, why in NEEDS.items():
        if needle in joined:
            return why
    if any(tok.startswith("[") or tok == "..." for tok in argv):
        return "shows optional arguments, not a runnable command"
    outputs = {argv[i + 1] for i, tok in enumerate(argv[:-1]) if tok in ("-o", "--output")}
    for i, tok in enumerate(argv[:-1]):
        if tok in ("--endpoint",):
            return "needs a served model (an OpenAI-compatible endpoint)"
        if tok in MODEL_FLAGS and argv[i + 1] not in written and not (ROOT / argv[i + 1]).exists():
            return f"{argv[i + 1]} is a model the README trains or downloads (not run here)"
    if argv[:3] == ["prosfi", "eval", "compare"]:
        missing = [d for d in argv[3:] if not d.startswith("-") and d not in outputs and d not in written]
        if missing:
            return f"{missing[0]} is an evaluation folder no earlier README command wrote here"
    for tok in argv:
        shipped = tok.split("/")[0] in SHIPPED and (ROOT / tok).is_file()
        if FILE_RE.search(tok) and tok not in outputs and not shipped and tok not in written:
            return f"{tok} is a placeholder (not shipped, not written by an earlier README command)"
    return None


def _adjusted(argv: list[str]) -> list[str]:
    argv = list(argv)
    for i, tok in enumerate(argv[:-1]):
        if tok == "--count":
            argv[i + 1] = FAST_COUNT
    is_train = argv[:2] in (["prosfi", "train"], ["prosfi", "sft"]) and " ".join(argv) != MAIN_COMMAND
    if is_train and "--help" not in argv and "--dry-run" not in argv:
        argv.append("--dry-run")
    return argv


def _run(argv: list[str], cwd: Path, timeout: float) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": str(ROOT), "HF_HUB_OFFLINE": "1", "WANDB_MODE": "offline"}
    cmd = [sys.executable, "-m", "prosfi.cli", *argv[1:]]
    return subprocess.run(cmd, check=False, cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout)


@pytest.fixture(scope="module")
def workspace(tmp_path_factory):
    """A scratch folder with the shipped inputs, and the files README commands have written so far."""
    where = tmp_path_factory.mktemp("readme")
    for name in SHIPPED:
        (where / name).symlink_to(ROOT / name)
    return where, set()


def test_the_readme_stands_alone():
    text = README.read_text(encoding="utf-8")
    assert "DESIGN.md" not in text and "../shared" not in text  # not in the repository


def test_the_readme_has_example_commands():
    assert MAIN_COMMAND in COMMANDS
    assert any(c.startswith("prosfi check examples/") for c in COMMANDS)
    assert sum(c.startswith("prosfi data ") for c in COMMANDS) >= 5


@pytest.mark.parametrize("command", [c for c in COMMANDS if c != MAIN_COMMAND])
def test_readme_command_runs(command, workspace):
    where, written = workspace
    argv = [PLACEHOLDERS.get(tok, tok) for tok in shlex.split(command)]
    why = _why_not(argv, written)
    if why:
        pytest.skip(why)
    argv = _adjusted(argv)
    proc = _run(argv, where, timeout=300)
    assert proc.returncode == 0, f"{' '.join(argv)}\n{proc.stderr[-3000:]}"
    assert "Traceback" not in proc.stderr
    for i, tok in enumerate(argv[:-1]):
        if tok in ("-o", "--output"):
            assert (where / argv[i + 1]).exists()  # a file, or a folder (prosfi eval -o DIR)
            written.add(argv[i + 1])


@pytest.mark.slow
def test_readme_main_command_trains(tmp_path):
    """The README's main command, shortened by MAIN_SHORTENED, trains and prints its summary."""
    for name in SHIPPED:
        (tmp_path / name).symlink_to(ROOT / name)
    argv = shlex.split(MAIN_COMMAND) + MAIN_SHORTENED
    proc = _run(argv, tmp_path, timeout=900)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "Traceback" not in proc.stderr
    assert "== prosfi run summary" in proc.stdout and "held-out problems (8," in proc.stdout
    (run,) = [d for d in (tmp_path / "runs").glob("cpu_chains*") if (d / "summary.json").is_file()]
    assert (run / "metrics.jsonl").is_file() and (run / "reward_curve.png").is_file()
    summary = json.loads((run / "summary.json").read_text(encoding="utf-8"))
    assert summary["eval_before"]["n"] == summary["eval_after"]["n"] == 8
