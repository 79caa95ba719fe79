"""launch/serve_ray.sbatch with stand-ins for srun, scontrol, ray, curl and python: a Ray head on the first
node, workers on the others, `prosfi serve --ray` on the head, the URL written once /health answers."""

from __future__ import annotations

import os
import shlex
import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
pytestmark = pytest.mark.skipif(shutil.which("bash") is None, reason="needs bash")


def _run(tmp_path: Path, token: str | None = "t0k", *args: str):
    bin_dir, calls = tmp_path / "bin", tmp_path / "calls.log"
    bin_dir.mkdir()
    record = f'printf "%s\\n" "$(basename "$0") $*" >> {shlex.quote(str(calls))}\n'
    stubs = {"srun": record + 'while [[ "$1" == --* ]]; do shift; done; exec "$@"\n',
             "scontrol": 'printf "cpu1\\ncpu2\\ncpu3\\n"\n', "ray": record, "curl": "exit 0\n",
             "python": record + "sleep 1\n"}  # serve runs a while: the ray stubs record first
    for name, body in stubs.items():
        (bin_dir / name).write_text("#!/usr/bin/env bash\n" + body)
        (bin_dir / name).chmod(0o755)
    env = {**os.environ, "PATH": f"{bin_dir}:{os.environ['PATH']}", "LOG_DIR": str(tmp_path / "logs"),
           "URL_FILE": str(tmp_path / "url"), "RAY_HEAD_WAIT_S": "0", "HEALTH_POLL_S": "1",
           "SLURM_JOB_NODELIST": "cpu[1-3]", "SLURM_SUBMIT_DIR": str(tmp_path)}
    env.pop("PROSFI_SERVE_TOKEN", None)
    if token:
        env["PROSFI_SERVE_TOKEN"] = token
    proc = subprocess.run(["bash", str(ROOT / "launch" / "serve_ray.sbatch"), *args], cwd=tmp_path, env=env,
                          capture_output=True, text=True, timeout=60, check=False)
    return proc, calls.read_text().splitlines() if calls.exists() else []


def test_head_workers_and_replicas(tmp_path):
    proc, calls = _run(tmp_path, "t0k", "--data", "kk:2..4")
    assert proc.returncode == 0, proc.stderr
    assert "ray start --head --port=6379 --block" in calls
    assert [c for c in calls if c.startswith("ray start --address")] == ["ray start --address=cpu1:6379 --block"] * 2
    serve = [c for c in calls if c.startswith("python -m prosfi serve")]
    assert len(serve) == 1 and "--ray --address auto --replicas 12" in serve[0] and "--data kk:2..4" in serve[0]
    assert "--host 0.0.0.0" in serve[0]
    assert (tmp_path / "url").read_text().strip() == "http://cpu1:8000"


def test_refuses_to_listen_beyond_the_node_without_a_token(tmp_path):
    proc, calls = _run(tmp_path, None)
    assert proc.returncode == 2 and "PROSFI_SERVE_TOKEN" in proc.stderr and not calls
