"""The one way a test runs the `prosfi` command in a fresh process, as a user runs it (`python -m prosfi.cli`):
this checkout on PYTHONPATH, the hub and wandb offline, and never `check=True` (the tests read the exit code).

    from cli_subprocess import prosfi      # tests/cli_subprocess.py
    proc = prosfi("check", "steps.jsonl", "--workers", "1", cwd=tmp_path)
    one_line_error(proc, "--workers")      # failed with exit 2, no traceback, one stderr line naming the words
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def prosfi(*args: object, cwd: Path | str | None = None, stdin: str | bytes | None = None, timeout: float = 300,
           text: bool = True) -> subprocess.CompletedProcess:
    """`prosfi ARGS...` in a subprocess; output as text, or as bytes with `text=False` (to see invalid UTF-8)."""
    env = {**os.environ, "PYTHONPATH": str(ROOT), "HF_HUB_OFFLINE": "1", "WANDB_MODE": "offline"}
    return subprocess.run([sys.executable, "-m", "prosfi.cli", *map(str, args)], check=False, cwd=cwd, env=env,
                          input=stdin, capture_output=True, text=text, timeout=timeout)


def no_traceback(proc: subprocess.CompletedProcess, code: int = 0) -> None:
    """The run exited with `code` and printed no traceback."""
    assert proc.returncode == code, (proc.returncode, proc.stderr[-3000:])
    assert "Traceback" not in proc.stderr, proc.stderr[-3000:]


def one_line_error(proc: subprocess.CompletedProcess, *words: str, code: int = 2) -> str:
    """Failed with `code`, no traceback, one stderr line (warnings aside) that names every word."""
    no_traceback(proc, code)
    lines = [line for line in proc.stderr.splitlines() if line.strip() and "WARNING" not in line]
    assert len(lines) == 1, proc.stderr
    for word in words:
        assert word in lines[0], lines[0]
    return lines[0]
