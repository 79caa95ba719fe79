"""The top-level `prosfi` command: lists its subcommands, rejects unknown ones, survives a closed pipe."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from prosfi.cli import COMMANDS, main

ROOT = Path(__file__).resolve().parents[1]


def test_help_lists_every_command(capsys):
    with pytest.raises(SystemExit) as exc:
        main(["--help"])
    assert exc.value.code == 0
    out = capsys.readouterr().out
    for name, (_, help_text) in COMMANDS.items():
        assert f"{name}" in out and help_text in out


def test_unknown_command_is_a_usage_error(capsys):
    with pytest.raises(SystemExit) as exc:
        main(["nope"])
    assert exc.value.code == 2
    assert "invalid choice" in capsys.readouterr().err


def test_every_command_module_defines_the_subcommand_interface():
    import importlib

    for name, (module_name, _) in COMMANDS.items():
        if name in ("train", "sft", "model"):  # import torch; covered by tests/test_train_*.py
            continue
        module = importlib.import_module(module_name)
        assert callable(module.add_arguments) and callable(module.run), name


def test_a_reader_that_leaves_early_is_no_traceback(tmp_path):
    lines = "".join(f'{{"id": "{i}", "premises": {{"h1": "P a"}}, "conclusion": "P a"}}\n' for i in range(3000))
    steps = tmp_path / "steps.jsonl"
    steps.write_text(lines)
    proc = subprocess.run(
        f"{sys.executable} -m prosfi check {steps} --workers 0 --no-progress | head -1",
        shell=True, capture_output=True, text=True, cwd=ROOT,
    )
    assert proc.stdout.count("\n") == 1 and '"verdict": "valid"' in proc.stdout
    assert "Traceback" not in proc.stderr and "BrokenPipe" not in proc.stderr


def test_a_usage_error_raised_by_a_command_is_one_line_and_exit_2(monkeypatch, capsys):
    """Commands raise prosfi.usage.UsageError for a usage mistake; the entry point alone prints and exits."""
    import types

    from prosfi.usage import UsageError

    fake = types.ModuleType("prosfi_fake_cmd")
    fake.add_arguments = lambda parser: parser.add_argument("--n", type=int, default=1)

    def run(args):
        raise UsageError(f"--n must be > 1, got {args.n}")

    fake.run = run
    monkeypatch.setitem(sys.modules, "prosfi_fake_cmd", fake)
    monkeypatch.setitem(COMMANDS, "fake", ("prosfi_fake_cmd", "a command that refuses its input"))
    assert main(["fake", "--n", "0"]) == 2
    err = capsys.readouterr().err
    assert err == "prosfi fake: --n must be > 1, got 0\n"


def test_a_usage_error_can_name_the_subcommand(monkeypatch, capsys):
    """`prosfi model tiny: …`, not `prosfi model: …`: a command with sub-commands names the one that refused."""
    import types

    from prosfi.usage import UsageError

    fake = types.ModuleType("prosfi_fake_cmd2")
    fake.add_arguments = lambda parser: None

    def run(args):
        raise UsageError("--out x is a file", command="fake tiny")

    fake.run = run
    monkeypatch.setitem(sys.modules, "prosfi_fake_cmd2", fake)
    monkeypatch.setitem(COMMANDS, "fake", ("prosfi_fake_cmd2", "a command with sub-commands"))
    assert main(["fake"]) == 2
    assert capsys.readouterr().err == "prosfi fake tiny: --out x is a file\n"


# Where `return 2` is still right: the entry point itself, `prosfi data` (its own sources helper), the
# `usage: …` lines of train/prm train (no `prosfi CMD:` prefix), and the `python -m` scripts that have their
# own main and never pass through prosfi.cli.
RETURN_2_KEPT = {"prosfi/cli.py": 3, "prosfi/train/cli_train.py": 1, "prosfi/prm/cli.py": 1,
                 "prosfi/train/host_ip.py": 1, "prosfi/train/launch_env.py": 2, "prosfi/train/verdict.py": 1,
                 "prosfi/train/comparison.py": 1, "prosfi/integrations/verl_check.py": 1}


def test_commands_raise_usage_error_rather_than_print_and_return_2():
    found = {}
    for path in sorted((ROOT / "prosfi").rglob("*.py")):
        rel = path.relative_to(ROOT).as_posix()
        n = sum(1 for line in path.read_text(encoding="utf-8").splitlines() if line.strip() == "return 2")
        if n and rel != "prosfi/data/cli.py":
            found[rel] = n
    assert found == RETURN_2_KEPT
