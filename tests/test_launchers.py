"""The GPU launchers, run here with stand-ins for `vllm`, `trl`, `accelerate`, `curl`, `srun` and `scontrol`
that record how they were called: the vLLM server gets the model the trainers get (overrides included) and a
tensor-parallel size Qwen2.5-7B's 28 heads / 4 KV heads allow, the warm-up runs as its own launch before
GRPO, a dead server stops the launcher at once, and the SLURM log path needs no directory made first.
The server is `vllm serve` with the settings TRL 1.16's deprecated `trl vllm-serve` adds
(trl/scripts/vllm_serve.py `build_command`): dev mode, the NCCL weight-transfer engine, processed log-probs.
"""

from __future__ import annotations

import os
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
RECIPE = "recipes/qwen2.5-7b-instruct/grpo/prosfi_proverqa.yaml"  # sft: true

pytestmark = pytest.mark.skipif(shutil.which("bash") is None, reason="needs bash")


def _stubs(tmp_path: Path, server_dies: bool = False) -> tuple[Path, Path]:
    bin_dir, calls = tmp_path / "bin", tmp_path / "calls.log"
    bin_dir.mkdir()
    record = f'printf "%s\\n" "$(basename "$0") $*" >> {shlex.quote(str(calls))}\n'
    server = (f'printf "%s\\n" "$(basename "$0") $* [dev_mode=${{VLLM_SERVER_DEV_MODE:-unset}}]" '
              f'>> {shlex.quote(str(calls))}\n')
    stubs = {
        "vllm": server + ("exit 1\n" if server_dies else "exec sleep 30\n"),
        "trl": record + "exit 1\n",  # deprecated in TRL 1.16: the launchers must not call it
        # with the address the trainers' weight-sync group is announced at (vLLM reads VLLM_HOST_IP)
        "accelerate": f'printf "%s\\n" "$(basename "$0") $* [host_ip=${{VLLM_HOST_IP:-unset}}]" '
                      f'>> {shlex.quote(str(calls))}\n',
        "curl": record + ("exit 1\n" if server_dies else "exit 0\n"),
        "srun": record + 'while [[ "$1" == --* ]]; do shift; done; exec "$@"\n',
        "scontrol": 'printf "node1\\nnode2\\nnode3\\n"\n',
        "python": f'exec {shlex.quote(sys.executable)} "$@"\n',  # the launchers' `python -m prosfi...`
    }
    for name, body in stubs.items():
        path = bin_dir / name
        path.write_text("#!/usr/bin/env bash\n" + body)
        path.chmod(0o755)
    return bin_dir, calls


def _env(bin_dir: Path, tmp_path: Path, **extra: str) -> dict[str, str]:
    return {**os.environ, "PATH": f"{bin_dir}:{os.environ['PATH']}", "PYTHONPATH": str(ROOT),
            "LOG_DIR": str(tmp_path / "logs"), "HEALTH_TIMEOUT_S": "60",
            "HEALTH_POLL_S": "1", "WANDB_MODE": "offline", **extra}  # the recipe logs to wandb: no login here


def _launch(script: str, tmp_path: Path, *args: str, server_dies: bool = False, recipe: str = RECIPE, **env: str):
    bin_dir, calls = _stubs(tmp_path, server_dies)
    proc = subprocess.run(["bash", str(ROOT / "launch" / script), recipe, *args], cwd=tmp_path,
                          env=_env(bin_dir, tmp_path, **env), capture_output=True, text=True, timeout=300, check=False)
    lines = calls.read_text().splitlines() if calls.exists() else []
    return proc, lines


def _flag(line: str, name: str) -> str:
    words = line.split()
    return words[words.index(name) + 1]


def _serve(calls: list[str]) -> str:
    """The server's command line, checked for what TRL's server mode needs."""
    assert not [c for c in calls if c.startswith("trl ")]  # not the deprecated `trl vllm-serve`
    serve = next(c for c in calls if c.startswith("vllm serve "))
    assert serve.endswith("[dev_mode=1]")  # VLLM_SERVER_DEV_MODE=1: the weight-sync endpoints
    assert '--weight-transfer-config {"backend": "nccl"}' in serve  # the trainers push weights over NCCL
    assert _flag(serve, "--logprobs-mode") == "processed_logprobs"  # for the importance-sampling correction
    assert _flag(serve, "--max-logprobs") == "-1"
    assert _flag(serve, "--data-parallel-size") == "1"  # TRL: > 1 errors out for dense models
    return serve


def test_single_node_serves_the_overridden_model_and_runs_the_warm_up_first(tmp_path):
    proc, calls = _launch("single_node.sh", tmp_path, "--model_name_or_path", "my/local-model")
    assert proc.returncode == 0, proc.stderr[-3000:]
    serve = _serve(calls)
    assert serve.split()[2] == "my/local-model"  # `vllm serve MODEL`
    tp = int(_flag(serve, "--tensor-parallel-size"))
    assert 28 % tp == 0 and 4 % tp == 0 and tp == 4  # Qwen2.5-7B's heads; all 4 server GPUs used
    assert any(c.startswith("curl ") and c.endswith(f"localhost:{8000}/health") for c in calls)  # vLLM's route
    launches = [c for c in calls if c.startswith("accelerate launch")]
    assert len(launches) == 2
    assert " -m prosfi.cli sft " in launches[0] and " -m prosfi.train " in launches[1]  # warm-up: own process
    for launch in launches:
        assert "--model_name_or_path my/local-model" in launch and "--num_processes 4" in launch
    assert "64 completions" in proc.stdout  # the batch of 4 processes x 8 x 2
    assert _host_ip(launches) == [_this_node()] * 2


def test_single_node_keeps_a_vllm_host_ip_given(tmp_path):
    proc, calls = _launch("single_node.sh", tmp_path, "--sft", "false", VLLM_HOST_IP="10.1.2.3")
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert _host_ip([c for c in calls if c.startswith("accelerate launch")]) == ["10.1.2.3"]


def _host_ip(launches: list[str]) -> list[str]:
    return [c.rsplit("[host_ip=", 1)[1].rstrip("]") for c in launches]


def _this_node() -> str:
    from prosfi.train.host_ip import host_ip

    address = host_ip()
    assert address and address != "0.0.0.0"
    return address


def test_single_node_stops_when_the_server_dies(tmp_path):
    proc, calls = _launch("single_node.sh", tmp_path, "--sft", "false", server_dies=True)
    assert proc.returncode == 1 and "vLLM server exited" in proc.stderr
    # no training against a dead server (and with --sft false no warm-up launch before the health check)
    assert not [c for c in calls if c.startswith("accelerate")]


def test_single_node_checks_a_file_dataset_before_it_starts_the_server(tmp_path):
    # the GSM8K recipe's data file is not shipped: one line, and no server or warm-up is started for nothing
    proc, calls = _launch("single_node.sh", tmp_path, recipe="recipes/qwen2.5-7b-instruct/grpo/prosfi_gsm8k.yaml")
    assert proc.returncode == 2 and "dataset_path: no such file data/gsm8k/train.jsonl" in proc.stderr
    assert not calls  # neither `vllm serve` nor `accelerate launch`


def test_single_node_says_when_server_gpus_go_unused(tmp_path):
    proc, calls = _launch("single_node.sh", tmp_path, VLLM_GPUS="0,1,2,3,4,5", TRAIN_GPUS="6,7", VLLM_TP="2")
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "the server uses 2 of the 6 VLLM_GPUS" in proc.stderr
    assert _flag(_serve(calls), "--tensor-parallel-size") == "2"


def _slurm_env() -> dict[str, str]:
    return {"SLURM_SUBMIT_DIR": str(ROOT), "SLURM_JOB_NODELIST": "node[1-3]", "SLURM_JOB_ID": "42"}


def test_slurm_defaults_start_on_8_gpu_nodes(tmp_path):
    proc, calls = _launch("slurm_multinode.sbatch", tmp_path, "--gradient_accumulation_steps", "1",
                          "--model_name_or_path", "my/local-model", **_slurm_env())
    assert proc.returncode == 0, proc.stderr[-3000:]
    serve = _serve(calls)
    assert serve.split()[2] == "my/local-model" and _flag(serve, "--host") == "0.0.0.0"  # reached from other nodes
    tp = int(_flag(serve, "--tensor-parallel-size"))
    assert 28 % tp == 0 and 4 % tp == 0 and tp <= 8
    assert any(c.startswith("curl ") and c.endswith("node3:8000/health") for c in calls)
    launches = [c for c in calls if c.startswith("accelerate launch")]
    assert len(launches) == 2  # (srun's stand-in runs one task for all trainer nodes)
    assert " -m prosfi.cli sft " in launches[0] and " -m prosfi.train " in launches[1]
    assert all("--num_processes 16" in c and "--num_machines 2" in c for c in launches)
    assert "128 completions" in proc.stdout  # 16 processes x 8 x 1
    # each trainer node's own address (here node3 does not resolve: this machine's), never 0.0.0.0 or unset
    assert _host_ip(launches) == [_this_node()] * 2


def test_slurm_stops_when_the_server_dies(tmp_path):
    proc, calls = _launch("slurm_multinode.sbatch", tmp_path, "--sft", "false", server_dies=True,
                          **_slurm_env())
    assert proc.returncode == 1 and "vLLM server exited" in proc.stderr
    assert not [c for c in calls if c.startswith("accelerate")]


def test_slurm_job_log_needs_no_directory_before_submission():
    # sbatch opens --output before the job runs: a path under a directory the job would create fails
    lines = (ROOT / "launch" / "slurm_multinode.sbatch").read_text().splitlines()
    output = next(line.split("=", 1)[1] for line in lines if line.startswith("#SBATCH --output="))
    assert "/" not in output  # the submission directory, which exists


@pytest.mark.gpu
@pytest.mark.timeout(1900)  # its own limit is 1800 s, above the suite's 600 s backstop (pyproject)
def test_gpu_smoke_script_passes_on_cuda(tmp_path):
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    proc = subprocess.run(["bash", str(ROOT / "launch" / "gpu_smoke.sh"), str(tmp_path / "smoke")], env=env,
                          capture_output=True, text=True, timeout=1800, check=False)
    last = proc.stdout.strip().splitlines()[-1] if proc.stdout.strip() else ""
    assert proc.returncode == 0 and last.startswith("gpu_smoke: PASS [cuda bf16]"), last + proc.stderr[-3000:]


def test_host_ip_prefers_the_route_to_the_server_and_never_says_0_0_0_0(monkeypatch, capsys):
    from prosfi.train import host_ip as h

    assert h.host_ip("127.0.0.1") == "127.0.0.1"  # the server on this node: loopback is its route
    monkeypatch.setattr(h, "_route_to", lambda peer: "0.0.0.0")
    monkeypatch.setattr(h, "_by_name", lambda: ["127.0.1.1", "10.0.0.7"])  # Debian's 127.0.1.1 name entry
    assert h.host_ip("node3") == "10.0.0.7"
    monkeypatch.setattr(h, "_by_name", list)
    assert h.host_ip("node3") is None
    assert h.main(["node3"]) == 1
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "VLLM_HOST_IP" in err[0]
