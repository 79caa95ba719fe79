"""Shared test setup: environment-bound markers skip cleanly where the tool is absent."""

from __future__ import annotations

import importlib.util
import os
import shutil

import pytest


def pytest_addoption(parser):
    parser.addoption("--runslow", action="store_true", default=False, help="also run tests marked slow")


def _has_gpu() -> bool:
    if importlib.util.find_spec("torch") is None:
        return False
    import torch

    return torch.cuda.is_available()


def pytest_collection_modifyitems(config, items):
    run_slow = config.getoption("--runslow") or os.environ.get("PROSFI_RUN_SLOW") == "1"
    reasons = {
        "slow": None if run_slow else "slow: run with --runslow or PROSFI_RUN_SLOW=1",
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
