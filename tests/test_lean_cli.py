"""`prosfi lean`: render, statement and probe from the command line."""

from __future__ import annotations

import json
import sys
from pathlib import Path

from prosfi.cli import main

GOLDEN = Path(__file__).parent / "golden" / "lean_theorems"
STANDIN = str(Path(__file__).with_name("standin_repl.py").resolve())


def test_render_prints_the_golden_theorem(capsys):
    assert main(["lean", "render", str(GOLDEN / "modus_ponens.json")]) == 0
    out = capsys.readouterr().out
    assert (GOLDEN / "modus_ponens.lean").read_text(encoding="utf-8").strip() in out


def test_render_reports_bad_records_and_keeps_going(tmp_path, capsys):
    path = tmp_path / "steps.jsonl"
    path.write_text(json.dumps({"id": "bad", "premises": {"h1": "P ∧"}, "conclusion": "P"}) + "\n"
                    + json.dumps({"id": "good", "premises": {"h1": "P"}, "conclusion": "P"}) + "\n")
    assert main(["lean", "render", str(path), "--tactics", "assumption", "--max-heartbeats", "7"]) == 1
    captured = capsys.readouterr()
    assert "bad: cannot render" in captured.err
    assert "-- good" in captured.out and "(assumption; done)" in captured.out and "maxHeartbeats 7" in captured.out


def test_statement_prints_direct_lean_claims(tmp_path, capsys):
    problem = {"id": "p1", "kind": "true_false_uncertain", "premises": [{"id": "h1", "formal": "A"}],
               "goal": "A", "options": {"A": "True", "B": "False", "C": "Uncertain"}, "answer": "B"}
    path = tmp_path / "problems.jsonl"
    path.write_text(json.dumps(problem) + "\n")
    assert main(["lean", "statement", str(path)]) == 0
    assert "theorem prosfi_direct (U : Type) [Nonempty U] (A : Prop) (h1 : A) :\n    ¬A := by" in capsys.readouterr().out


def test_probe_catches_a_repl_that_proves_everything(capsys):
    # The stand-in answers ok to the known-false theorem too: the probe must call that a failure.
    assert main(["lean", "probe", "--repl-command", f"{sys.executable} {STANDIN}", "--timeout", "20"]) == 1
    out = capsys.readouterr().out
    assert "true theorem:  ok" in out and "false theorem: ok" in out and "probe: FAILED" in out
