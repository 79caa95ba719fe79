"""Issue 21, item 8: a command that needs an optional extra (`train`, `vllm`, `lean`) says which one and how
to install it, in one line, exit 2, no traceback. The modules are hidden in a subprocess
(`sys.modules[name] = None` makes `import name` fail as if it were not installed)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
HIDE = ("import sys\nfor m in sys.argv[1].split(','):\n    sys.modules[m] = None\n"
        "from prosfi.cli import main\nsys.exit(main(sys.argv[2:]))\n")


def _run(hidden: str, *args: str, cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", HIDE, hidden, *args], cwd=cwd, capture_output=True, text=True,
                          timeout=300, env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin", "HOME": str(cwd)})


@pytest.mark.parametrize("hidden, args, extra", [
    ("trl", ["train", str(ROOT / "recipes" / "demo" / "cpu_kk.yaml")], "train"),
    ("trl", ["sft", str(ROOT / "recipes" / "demo" / "cpu_kk.yaml")], "train"),
    ("transformers,tokenizers", ["model", "tiny", "--out", "m"], "train"),
    ("trl", ["prm", "train", str(ROOT / "recipes" / "prm" / "cpu_fover.yaml")], "train"),
    ("vllm", ["eval", "--data", "kk:2", "--count", "1", "--model", "Qwen/x", "--engine", "vllm", "-o", "o"], "vllm"),
])
def test_a_missing_extra_is_one_line_naming_it(tmp_path, hidden, args, extra):
    proc = _run(hidden, *args, cwd=tmp_path)
    assert proc.returncode == 2, proc.stderr[-2000:]
    assert "Traceback" not in proc.stderr and "ModuleNotFoundError" not in proc.stderr, proc.stderr[-2000:]
    lines = [x for x in proc.stderr.splitlines()  # progress lines (`[prosfi eval] kk:2: 1 problems`) aside
             if x.strip() and "warn" not in x.lower() and not x.startswith("[prosfi")]
    assert len(lines) == 1, proc.stderr
    assert f"`{extra}` extra" in lines[0] and f"pip install -e '.[{extra}]'" in lines[0]
    assert hidden.split(",")[0] in lines[0]


def test_a_missing_module_of_no_extra_still_raises(tmp_path):
    # prosfi's own modules are not an extra: a broken install must show its traceback
    proc = _run("prosfi.domains", "data", "gold", "x.jsonl", "-o", "y.jsonl", cwd=tmp_path)
    assert proc.returncode != 0 and "Traceback" in proc.stderr
