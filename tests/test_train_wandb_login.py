"""`report_to: wandb` without a wandb login stops a run in one line before any model loads (issue #25, "GSM8K
GPU recipes"): otherwise wandb stops at its login prompt when the first trainer starts, after the models (and
at 7B a warm-up of hours) are loaded. With WANDB_MODE=offline the run says it logs offline. No network: the
login is looked up in the environment and the netrc file `wandb login` writes."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("trl")

ROOT = Path(__file__).resolve().parents[1]
DEMO = ROOT / "recipes" / "demo" / "cpu_chains.yaml"
GPU = ROOT / "recipes" / "qwen2.5-7b-instruct" / "grpo" / "prosfi_kk.yaml"


@pytest.fixture
def no_login(tmp_path, monkeypatch):
    """A machine where wandb was never logged into: no key, an empty home, online mode."""
    for var in ("WANDB_API_KEY", "WANDB_MODE", "WANDB_DISABLED", "NETRC", "WANDB_BASE_URL"):
        monkeypatch.delenv(var, raising=False)
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.chdir(tmp_path)
    return home


def _training(report_to):
    from types import SimpleNamespace

    return SimpleNamespace(report_to=report_to)


def test_login_is_read_from_the_key_or_the_netrc_entry_for_the_wandb_host(tmp_path):
    from prosfi.train.preflight import wandb_credentials

    netrc = tmp_path / "netrc"
    assert wandb_credentials({}, str(netrc)) is None  # no file
    netrc.write_text("machine github.com login me password abc\n")
    assert wandb_credentials({}, str(netrc)) is None  # another host's entry
    netrc.write_text("machine api.wandb.ai\n  login user\n  password 0123abcd\n")
    netrc.chmod(0o600)
    assert wandb_credentials({}, str(netrc)) == f"{netrc} (api.wandb.ai)"
    assert wandb_credentials({"WANDB_BASE_URL": "https://wandb.example.org"}, str(netrc)) is None  # own server
    assert wandb_credentials({"WANDB_API_KEY": "k" * 40}, str(tmp_path / "none")) == "WANDB_API_KEY"
    netrc.write_text("machine api.wandb.ai login\n")  # unreadable: as good as none
    assert wandb_credentials({}, str(netrc)) is None


def test_check_refuses_online_logging_without_a_login_and_names_the_ways_out(tmp_path):
    from prosfi.train.preflight import check_wandb
    from prosfi.train.recipe import RecipeError

    with pytest.raises(RecipeError) as e:
        check_wandb(_training(["wandb"]), env={}, netrc_path=str(tmp_path / "none"))
    line = str(e.value)
    assert "\n" not in line and "report_to wandb" in line
    assert all(w in line for w in ("wandb login", "WANDB_API_KEY", "WANDB_MODE=offline", "--report_to none"))
    assert check_wandb(_training(["wandb"]), env={"WANDB_API_KEY": "x" * 40}) is None
    assert check_wandb(_training(["tensorboard"]), env={}, netrc_path=str(tmp_path / "none")) is None
    assert check_wandb(_training([]), env={}) is None
    assert "offline" in check_wandb(_training(["wandb"]), env={"WANDB_MODE": "offline"})
    assert "disabled" in check_wandb(_training(["wandb"]), env={"WANDB_MODE": "disabled"})


def _one_error(err: str) -> str:
    lines = [line for line in err.splitlines() if line.strip()]
    assert len(lines) == 1 and "Traceback" not in err, err
    return lines[0]


def test_dry_run_of_a_gpu_recipe_without_a_login_fails_in_one_line(no_login, capsys):
    from prosfi.cli import main

    assert main(["train", str(GPU), "--dry-run"]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    assert _one_error(captured.err).startswith("prosfi train: error: report_to wandb: no wandb login here")


def test_real_run_without_a_login_stops_before_any_model_is_built(no_login, tmp_path, capsys):
    from prosfi.cli import main

    assert main(["train", str(DEMO), "--report_to", "wandb", "--output_dir", str(tmp_path / "run")]) == 2
    assert "report_to wandb" in _one_error(capsys.readouterr().err)
    assert not (tmp_path / "runs").exists() and not (tmp_path / "run").exists()  # no tiny model, no run folder


def test_offline_mode_is_said_and_accepted(no_login, monkeypatch, capsys):
    from prosfi.cli import main

    monkeypatch.setenv("WANDB_MODE", "offline")
    assert main(["train", str(DEMO), "--report_to", "wandb", "--dry-run"]) == 0
    assert "[prosfi] wandb logs offline (WANDB_MODE=offline)" in capsys.readouterr().err


def test_launcher_plan_refuses_before_it_starts_a_server(no_login):
    env = {"HOME": str(no_login), "PATH": "/usr/bin:/bin", "PYTHONPATH": str(ROOT)}
    proc = subprocess.run([sys.executable, "-m", "prosfi.train.launch_env", str(GPU), "--num_processes", "4"],
                          capture_output=True, text=True, env=env, timeout=300, check=False)
    assert proc.returncode == 2 and proc.stdout == ""
    assert "report_to wandb: no wandb login here" in proc.stderr.strip().splitlines()[-1]
