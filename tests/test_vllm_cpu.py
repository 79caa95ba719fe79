"""vLLM rollouts with the trainer on the CPU (`prosfi.train.vllm_cpu`, the `vllm-cpu` build).

The `vllm` tests run for real where vLLM is installed (CI installs vllm-cpu): a colocated engine and a
`vllm serve` process each follow the trainer's weights after a sync (log-probs of a fixed text, checked
stale before the sync so the test can tell), and `prosfi train` runs GRPO with vLLM rollouts in both modes.
The others check the module's logic without vLLM.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from prosfi.train import vllm_cpu

ROOT = Path(__file__).resolve().parents[1]
FOLLOW = Path(__file__).with_name("vllm_follow.py")


class _Args:
    def __init__(self, **kw):
        self.__dict__.update(kw)


def test_wanted_only_for_vllm_runs_off_cuda(monkeypatch):
    import torch

    assert not vllm_cpu.wanted(_Args(use_vllm=False, use_cpu=True))
    assert vllm_cpu.wanted(_Args(use_vllm=True, use_cpu=True))
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    assert not vllm_cpu.wanted(_Args(use_vllm=True, use_cpu=False))  # GPU runs keep TRL's own sync
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    assert vllm_cpu.wanted(_Args(use_vllm=True, use_cpu=False))


def test_patched_swaps_trl_backend_only_while_building():
    pytest.importorskip("trl")
    import trl.trainer.grpo_trainer as grpo_module

    original = grpo_module.VLLMGeneration
    with vllm_cpu.patched(_Args(use_vllm=True, use_cpu=True)) as cls:
        assert grpo_module.VLLMGeneration is cls and issubclass(cls, original)
    assert grpo_module.VLLMGeneration is original
    with vllm_cpu.patched(_Args(use_vllm=False)) as cls:
        assert cls is None and grpo_module.VLLMGeneration is original


def test_written_weights_read_back(tmp_path):
    import torch
    from safetensors.torch import load_file

    weights = [("a.weight", torch.arange(6.0).reshape(2, 3)), ("b.bias", torch.ones(3))]
    vllm_cpu.write_weights(weights, tmp_path / "w")
    back = load_file(str(tmp_path / "w" / "model.safetensors"))
    assert sorted(back) == ["a.weight", "b.bias"] and torch.equal(back["a.weight"], weights[0][1])
    assert not list((tmp_path / "w").glob("*.tmp"))


def test_weights_dir_override(monkeypatch, tmp_path):
    monkeypatch.setenv("PROSFI_VLLM_WEIGHTS_DIR", str(tmp_path))
    assert vllm_cpu.weights_dir(8000).parent == tmp_path


class _Reply:
    def __init__(self, status, text=""):
        self.status_code, self.text = status, text


class _Session:
    def __init__(self, reply):
        self.reply, self.sent = reply, []

    def post(self, url, json):
        self.sent.append((url, json))
        return self.reply


def test_reload_on_server_sends_the_folder_and_names_what_is_missing(tmp_path):
    ok = _Session(_Reply(200))
    vllm_cpu.reload_on_server(ok, "http://h:1", tmp_path)
    assert ok.sent == [("http://h:1/collective_rpc", {"method": "prosfi_reload", "args": [str(tmp_path)]})]
    with pytest.raises(RuntimeError, match="VLLM_SERVER_DEV_MODE=1"):
        vllm_cpu.reload_on_server(_Session(_Reply(404)), "http://h:1", tmp_path)
    with pytest.raises(RuntimeError, match="worker-extension-cls prosfi.train.vllm_cpu.ReloadExtension"):
        vllm_cpu.reload_on_server(_Session(_Reply(500, "no method prosfi_reload")), "http://h:1", tmp_path)


# --- for real, with vLLM ------------------------------------------------------------------------------------


def _env() -> dict[str, str]:
    env = {**os.environ, "VLLM_CPU_KVCACHE_SPACE": os.environ.get("VLLM_CPU_KVCACHE_SPACE", "1"),
           "WANDB_MODE": "offline", "PYTHONUNBUFFERED": "1"}
    for key in ("RANK", "LOCAL_RANK", "WORLD_SIZE", "MASTER_ADDR", "MASTER_PORT"):
        env.pop(key, None)
    return env


@pytest.fixture(scope="module")
def vllm_model(tmp_path_factory):
    """A tiny random Qwen2 vLLM's CPU attention takes (head size 32; the default tiny model's 16 it refuses)."""
    pytest.importorskip("vllm")
    from prosfi.train.tiny import TinyModelConfig, build_tiny_model

    out = tmp_path_factory.mktemp("vllm") / "tiny"
    return build_tiny_model(out, TinyModelConfig(num_attention_heads=2, num_key_value_heads=1, corpus_problems=60))


def _follow(args: list[str], timeout: float) -> dict:
    proc = subprocess.run([sys.executable, str(FOLLOW), *args], check=False, env=_env(), capture_output=True, text=True,
                          timeout=timeout, cwd=ROOT)
    assert proc.returncode == 0, proc.stderr[-4000:]
    return json.loads(proc.stdout.strip().splitlines()[-1])


def _assert_follows(r: dict) -> None:
    moved = abs(r["trainer_after"] - r["trainer_before"])
    assert moved > 0.5, r  # the trainer's change is visible in the log-prob
    assert abs(r["engine_before"] - r["trainer_before"]) < 0.05 * moved, r  # same model (vLLM in bf16)
    assert r["engine_stale"] == pytest.approx(r["engine_before"], abs=1e-3), r  # nothing moves without a sync
    assert abs(r["engine_after"] - r["trainer_after"]) < 0.05 * moved, r  # the sync took, every layer


@pytest.mark.vllm
@pytest.mark.timeout(900)
def test_colocated_engine_follows_the_trainer(vllm_model):
    _assert_follows(_follow([str(vllm_model), "colocate"], timeout=840))


@pytest.fixture(scope="module")
def vllm_server(vllm_model, tmp_path_factory):
    """`vllm serve` (as launch/vllm_cpu_server.sh starts it) on a free port; stopped with its process group."""
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    log = tmp_path_factory.mktemp("server") / "server.log"
    env = {**_env(), "MODEL": str(vllm_model), "PORT": str(port), "HOST": "127.0.0.1", "MAX_MODEL_LEN": "512"}
    with open(log, "w") as out:
        proc = subprocess.Popen(["bash", str(ROOT / "launch" / "vllm_cpu_server.sh")], env=env, stdout=out,
                                stderr=subprocess.STDOUT, start_new_session=True)
    url = f"http://127.0.0.1:{port}"
    try:
        import requests

        deadline = time.monotonic() + 780
        while True:
            if proc.poll() is not None:
                pytest.fail(f"vllm server exited {proc.returncode}:\n{log.read_text()[-4000:]}")
            try:
                if requests.get(f"{url}/health", timeout=5).status_code == 200:
                    break
            except requests.RequestException:
                pass
            if time.monotonic() > deadline:
                pytest.fail(f"vllm server not up after 780 s:\n{log.read_text()[-4000:]}")
            time.sleep(3)
        yield url, log
    finally:
        os.killpg(proc.pid, signal.SIGTERM)
        try:
            proc.wait(timeout=60)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)


@pytest.mark.vllm
@pytest.mark.timeout(1500)
def test_vllm_server_follows_the_trainer(vllm_model, vllm_server):
    url, _ = vllm_server
    _assert_follows(_follow([str(vllm_model), "server", url], timeout=600))


def _train(args: list[str], out: Path, timeout: float) -> dict:
    cmd = [sys.executable, "-m", "prosfi", "train", str(ROOT / "recipes" / "demo" / "cpu_chains.yaml"),
           "--use_vllm", "true", "--max_steps", "2", "--eval_held_out", "0", "--output_dir", str(out),
           "--vllm_max_model_length", "1024", *args]
    proc = subprocess.run(cmd, check=False, env=_env(), capture_output=True, text=True, timeout=timeout, cwd=ROOT)
    assert proc.returncode == 0, (proc.stdout[-2000:], proc.stderr[-4000:])
    return json.loads((out / "summary.json").read_text())


def _is_ratio(out: Path) -> list[float]:
    rows = [json.loads(line) for line in (out / "metrics.jsonl").read_text().splitlines() if line.strip()]
    return [r["sampling/importance_sampling_ratio/mean"] for r in rows
            if "sampling/importance_sampling_ratio/mean" in r]


@pytest.mark.vllm
@pytest.mark.timeout(900)
def test_prosfi_train_with_colocated_vllm_on_cpu(vllm_model, tmp_path):
    out = tmp_path / "run"
    _train(["--vllm_mode", "colocate", "--sft", "false", "--model_name_or_path", str(vllm_model)], out, 840)
    ratios = _is_ratio(out)
    assert len(ratios) == 2 and all(0.9 < r < 1.1 for r in ratios), ratios  # vLLM samples what the trainer holds


@pytest.mark.vllm
@pytest.mark.timeout(1500)
def test_prosfi_train_with_a_vllm_server_on_cpu(vllm_model, vllm_server, tmp_path):
    url, log = vllm_server
    out = tmp_path / "run"
    _train(["--vllm_mode", "server", "--vllm_server_base_url", url, "--sft", "false",
            "--model_name_or_path", str(vllm_model)], out, 840)
    ratios = _is_ratio(out)
    assert len(ratios) == 2 and all(0.9 < r < 1.1 for r in ratios), ratios
    assert "/collective_rpc" in log.read_text()  # the trainer's weights went to the server
