"""Shared test setup: environment-bound markers skip cleanly where the tool is absent.

Fast inner loop: without the `train` extra (a `.[dev]` install), or with PROSFI_NO_TRAIN=1 (which hides it),
every test that needs torch / transformers / TRL is skipped with that reason instead of erroring, at
collection or at run time. Hypothesis: PROSFI_HYPOTHESIS=dev (the default) runs at most DEV_EXAMPLES
examples per property; PROSFI_HYPOTHESIS=ci (`.ci/run`) runs each property's own max_examples.
"""

from __future__ import annotations

import importlib.util
import os
import shutil
import sys
from pathlib import Path

import pytest

import prosfi.domains.quantity  # noqa: F401  (registers the chain rules gold chains are built under)
from prosfi.usage import EXTRA_OF

TRAIN_MODULES = frozenset(m for m, extra in EXTRA_OF.items() if extra == "train")
NEEDS_TRAIN = "needs the `train` extra"
DEV_EXAMPLES = 25


if os.environ.get("PROSFI_NO_TRAIN") == "1":  # as in a `.[dev]` install: find_spec None, import fails
    for _name in TRAIN_MODULES:
        sys.modules[_name] = None  # type: ignore[assignment]
HAS_TRAIN = os.environ.get("PROSFI_NO_TRAIN") != "1" and all(
    importlib.util.find_spec(m) is not None for m in ("torch", "transformers", "trl"))


def _missing_train(exc: BaseException | None, text: str = "") -> bool:
    """A failure whose cause is the train extra missing (an import, or prosfi's one-line message about it)."""
    if isinstance(exc, ModuleNotFoundError) and (exc.name or "").split(".")[0] in TRAIN_MODULES:
        return True
    return NEEDS_TRAIN in text or any(f"No module named '{m}'" in text or f"import of {m} halted" in text
                                      for m in TRAIN_MODULES)


MAX_WORKERS = 4  # `-n auto` (pyproject addopts): more processes than this only add memory and contention


def pytest_xdist_auto_num_workers(config):
    """`-n auto`: one worker per core, at most MAX_WORKERS (several tests start two training processes)."""
    return max(1, min(os.cpu_count() or 1, MAX_WORKERS))


@pytest.hookimpl(hookwrapper=True)
def pytest_make_collect_report(collector):
    outcome = yield
    report = outcome.get_result()
    if not HAS_TRAIN and report.failed and _missing_train(None, str(report.longrepr)):
        report.outcome = "skipped"
        report.longrepr = (str(collector.path), 0, f"Skipped: {NEEDS_TRAIN} (torch, transformers, TRL)")


_SKIPPED_FAILURES: set[int] = set()  # exceptions already turned into a skip (ids; the objects stay cached)


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    report = outcome.get_result()
    if HAS_TRAIN or not report.failed or call.excinfo is None:
        return
    text = str(report.longrepr) + "".join(content for _, content in report.sections)
    # a module-scoped fixture that failed so is failed again, silently, for the module's next tests
    if id(call.excinfo.value) in _SKIPPED_FAILURES or _missing_train(call.excinfo.value, text):
        _SKIPPED_FAILURES.add(id(call.excinfo.value))
        report.outcome = "skipped"
        report.longrepr = (str(item.path), item.location[1] or 0, f"Skipped: {NEEDS_TRAIN} (torch, transformers, TRL)")


def _scale_hypothesis(items) -> None:
    """The dev profile: each @settings(max_examples=N) property runs min(N, DEV_EXAMPLES) examples."""
    if os.environ.get("PROSFI_HYPOTHESIS", "dev") == "ci":
        return
    try:
        from hypothesis import settings
    except ImportError:
        return
    for item in items:
        fn = getattr(item, "obj", None)
        inner = getattr(getattr(fn, "hypothesis", None), "inner_test", None)
        own = getattr(fn, "_hypothesis_internal_use_settings", None)
        if inner is not None and own is not None and own.max_examples > DEV_EXAMPLES:
            fn._hypothesis_internal_use_settings = settings(own, max_examples=DEV_EXAMPLES)

# tests never log to wandb's servers (the README's test command is run without it); tests of the login check
# set or unset WANDB_MODE themselves
os.environ.setdefault("WANDB_MODE", "offline")


def _has_gpu() -> bool:
    if importlib.util.find_spec("torch") is None:
        return False
    import torch

    return torch.cuda.is_available()


def pytest_collection_modifyitems(config, items):
    _scale_hypothesis(items)
    # slow tests (a two-process training run) run by default; deselect them with -m "not slow"
    # or PROSFI_SKIP_SLOW=1 for a quicker loop
    skip_slow = os.environ.get("PROSFI_SKIP_SLOW") == "1"
    reasons = {
        "slow": "slow: PROSFI_SKIP_SLOW=1 is set" if skip_slow else None,
        "lean": None if shutil.which("lake") else "lean: no `lake` on PATH (no Lean toolchain here)",
        "vllm": None if importlib.util.find_spec("vllm") else "vllm: the vllm package is not installed",
        "verl": None if all(importlib.util.find_spec(m) for m in ("verl", "hydra", "tensordict"))
        else "verl: verl (pip install --no-deps verl==0.9.1), hydra-core or tensordict is not installed",
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

    if not HAS_TRAIN:
        pytest.skip(NEEDS_TRAIN)
    out = tmp_path_factory.mktemp("tiny") / "model"
    assert main(["model", "tiny", "--out", str(out), "--vocab-size", "1024", "--hidden-size", "64",
                 "--intermediate-size", "128", "--num-hidden-layers", "2", "--corpus-problems", "60"]) == 0
    return out
