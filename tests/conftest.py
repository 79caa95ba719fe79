"""Shared test setup: environment-bound markers skip cleanly where the tool is absent."""

from __future__ import annotations

import importlib.util
import os
import shutil
from pathlib import Path

import pytest

import prosfi.domains.quantity  # noqa: F401  (registers the chain rules gold chains are built under)

# tests never log to wandb's servers (the README's test command is run without it); tests of the login check
# set or unset WANDB_MODE themselves
os.environ.setdefault("WANDB_MODE", "offline")


def _has_gpu() -> bool:
    if importlib.util.find_spec("torch") is None:
        return False
    import torch

    return torch.cuda.is_available()


def pytest_collection_modifyitems(config, items):
    # slow tests (a two-process training run) run by default; deselect them with -m "not slow"
    # or PROSFI_SKIP_SLOW=1 for a quicker loop
    skip_slow = os.environ.get("PROSFI_SKIP_SLOW") == "1"
    reasons = {
        "slow": "slow: PROSFI_SKIP_SLOW=1 is set" if skip_slow else None,
        "lean": None if shutil.which("lake") else "lean: no `lake` on PATH (no Lean toolchain here)",
        "vllm": None if importlib.util.find_spec("vllm") else "vllm: the vllm package is not installed",
    }
    gpu_reason = None
    for item in items:
        for marker, reason in reasons.items():
            if reason and marker in item.keywords:
                item.add_marker(pytest.mark.skip(reason=reason))
        if "gpu" in item.keywords:
            if gpu_reason is None:
                gpu_reason = "" if _has_gpu() else "gpu: no CUDA device"
            if gpu_reason:
                item.add_marker(pytest.mark.skip(reason=gpu_reason))


@pytest.fixture(scope="session")
def tiny_model(tmp_path_factory) -> Path:
    """A tiny random Qwen2 model and its tokenizer, built once per test session by `prosfi model tiny`
    (read-only for the tests that use it)."""
    from prosfi.cli import main

    out = tmp_path_factory.mktemp("tiny") / "model"
    assert main(["model", "tiny", "--out", str(out), "--vocab-size", "1024", "--hidden-size", "64",
                 "--intermediate-size", "128", "--num-hidden-layers", "2", "--corpus-problems", "60"]) == 0
    return out
