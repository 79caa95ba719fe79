"""Shared test setup: environment-bound markers skip cleanly where the tool is absent."""

from __future__ import annotations

import importlib.util
import os
import shutil

import pytest


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
