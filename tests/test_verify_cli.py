"""`prosfi check` end to end: stdout and -o, malformed lines, ids, the shipped example."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from prosfi.cli import main

ROOT = Path(__file__).resolve().parents[1]
EXAMPLE = ROOT / "examples" / "steps.jsonl"

LINES = [
    '{"id": "mp", "premises": {"h1": "∀ x, Kind x → Nice x", "h2": "Kind candy"}, '
    '"conclusion": "Nice candy"}',
    '{"id": 7, "premises": {"h1": "∀ x, Kind x → Nice x", "h2": "Nice candy"}, "conclusion": "Kind candy"}',
    '{"id": "no-conclusion", "premises": {"h1": "A"}}',
    '{"id": "broken", "premises": {"h1": "A"',
    "",
    '["not", "an", "object"]',
    '{"premises": {"h1": "A"}, "conclusion": "A"}',
    '{"id": "bad-formula", "premises": {"h1": "A ∧"}, "conclusion": "A"}',
    '{"id": "premise-not-string", "premises": {"h1": 1}, "conclusion": "A"}',
    '{"id": "kk", "premises": {"h1": "Knight a ↔ ¬ Knight b", "h2": "Knight b"}, "conclusion": "¬ Knight a"}',
]
EXPECTED = [("mp", "valid"), (7, "invalid"), ("no-conclusion", "error"), ("broken", "error"), (None, "error"),
            (None, "error"), (None, "valid"), ("bad-formula", "error"), ("premise-not-string", "error"),
            ("kk", "valid")]


def _records(text: str) -> list[dict]:
    return [json.loads(line) for line in text.splitlines()]


def test_check_to_stdout_one_line_per_input_in_order(tmp_path, capsys):
    steps = tmp_path / "steps.jsonl"
    steps.write_text("\n".join(LINES) + "\n", encoding="utf-8")
    assert main(["check", str(steps), "--workers", "0", "--backends", "z3"]) == 0
    out = _records(capsys.readouterr().out)
    assert [(r["id"], r["verdict"]) for r in out] == EXPECTED
    assert set(out[0]) == {"id", "verdict", "backend", "ms", "detail"}
    assert "conclusion" in out[2]["detail"] and "JSON" in out[3]["detail"]


def test_check_to_file_with_pool_and_small_chunks(tmp_path, capsys):
    steps, result = tmp_path / "steps.jsonl", tmp_path / "out.jsonl"
    steps.write_text("\n".join(LINES * 3), encoding="utf-8")  # no final newline
    code = main(["check", str(steps), "-o", str(result), "--workers", "1", "--chunk-size", "4",
                 "--timeout-ms", "1000"])
    assert code == 0 and capsys.readouterr().out == ""
    out = _records(result.read_text(encoding="utf-8"))
    assert len(out) == 3 * len(LINES)
    assert [r["id"] for r in out] == [i for i, _ in EXPECTED] * 3


def test_shipped_example_through_the_console_command(tmp_path):
    """The README's main job: `prosfi check examples/steps.jsonl` in a fresh process."""
    proc = subprocess.run([sys.executable, "-m", "prosfi", "check", str(EXAMPLE), "--workers", "1"],
                          capture_output=True, text=True, timeout=120, cwd=ROOT)
    assert proc.returncode == 0, proc.stderr
    out = _records(proc.stdout)
    lines = EXAMPLE.read_text(encoding="utf-8").splitlines()
    assert len(out) == len(lines)
    by_id = {r["id"]: r["verdict"] for r in out}
    for ident, verdict in by_id.items():
        if ident.startswith("bad-"):
            assert verdict == "error", ident
        elif "wrong" in ident or ident in ("kk-3-wrong", "pqa-7-affirm-consequent", "prec-2"):
            assert verdict == "invalid", ident
        else:
            assert verdict == "valid", ident


def test_usage_errors_exit_2(tmp_path, capsys):
    assert main(["check", str(tmp_path / "missing.jsonl")]) == 2
    steps = tmp_path / "s.jsonl"
    steps.write_text("{}\n")
    assert main(["check", str(steps), "--backends", "z4", "--workers", "0"]) == 2
    assert "z4" in capsys.readouterr().err


def test_lean_named_without_lean_exits_2_saying_what_to_do(tmp_path, capsys):
    steps = tmp_path / "s.jsonl"
    steps.write_text(LINES[0] + "\n", encoding="utf-8")
    nowhere = str(tmp_path / "no_lean_project")  # unavailable whether or not lake is installed
    assert main(["check", str(steps), "--backends", "z3,lean", "--lean-project", nowhere, "--workers", "0"]) == 2
    err = capsys.readouterr().err
    assert "'lean' was asked for but cannot run here" in err
    assert "PROSFI_LEAN_PROJECT" in err and "lake build" in err and "'lean?'" in err
    # optional: reported on stderr as a warning, skipped, the rest of the cascade answers (the
    # truth table, which would prove this step first, is off)
    with pytest.warns(RuntimeWarning, match="'lean' skipped"):
        assert main(["check", str(steps), "--backends", "lean?,z3", "--lean-project", nowhere, "--workers", "0",
                     "--no-truth-table"]) == 0
    assert [(r["id"], r["verdict"], r["backend"]) for r in _records(capsys.readouterr().out)] == [
        ("mp", "valid", "z3")]
    assert main(["check", str(steps), "--lean-timeout-ms", "0"]) == 2
    assert "--lean-timeout-ms" in capsys.readouterr().err


def test_lean_flags_reach_the_lean_backend(tmp_path, capsys):
    # Plumbing only: tests/standin_repl.py stands in for the REPL (it is not Lean), so a `lean`
    # verdict here says the flags built a working LeanConfig, nothing about the step.
    standin = Path(__file__).with_name("standin_repl.py").resolve()
    steps = tmp_path / "s.jsonl"
    # a quantified conclusion keeps the truth table off the first step (and --no-herbrand the Herbrand
    # stage, which would prove it); the table takes the K&K one
    quantified = LINES[0].replace('"conclusion": "Nice candy"', '"conclusion": "∃ x, Nice x"')
    steps.write_text(quantified + "\n" + LINES[-1] + "\n", encoding="utf-8")
    args = ["check", str(steps), "--backends", "lean,z3", "--workers", "0", "--lean-workers", "1",
            "--no-herbrand",
            "--lean-timeout-ms", "60000", "--lean-repl-command", f"{sys.executable} {standin} --log {tmp_path}"]
    assert main(args) == 0
    out = _records(capsys.readouterr().out)
    assert [(r["id"], r["backend"]) for r in out] == [("mp", "lean"), ("kk", "truthtable")]
    log = (tmp_path / "standin.log").read_text().split()
    assert log.count("cmd") == 1 and log.count("start") == 1  # one REPL; the truth table took the K&K step
