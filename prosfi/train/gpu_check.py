"""`python -m prosfi.train.gpu_check`: what a GPU session needs, checked before it spends minutes, in one line.

The GPU scripts (`launch/gpu_smoke.sh`, `launch/gpu_experiment.sh`) run this first. It checks, in order,
that torch sees a CUDA device, that the device does bf16, that it has `--min-free-gib` free, and that the
Python packages a run imports are importable (`--need`; a device image may lack TRL, PEFT, accelerate,
datasets, Z3, ...: carry them as wheels, docs/multi-gpu.md). Everything missing is named in ONE line
(`NAME: FAIL [preflight] missing: ...`, exit 1); otherwise one `NAME: preflight ok: ...` line (exit 0)
naming the device, its free memory, the packages' versions and whether vLLM is there (else generation
is Hugging Face's). `--cpu` skips the device checks (a CPU run of a script, to check the script).
"""

from __future__ import annotations

import argparse
import importlib.util
import sys
from typing import Any

# what a prosfi training run imports (import name -> the package to carry when it is missing)
DEFAULT_NEED = ("trl", "peft", "accelerate", "datasets", "transformers", "z3", "lark", "pint", "yaml", "numpy")
PACKAGE = {"z3": "z3-solver", "yaml": "pyyaml"}


def device_problems(torch: Any, min_free_gib: float) -> tuple[list[str], str]:
    """(what is missing on the device, a description of it when there is one)."""
    if not torch.cuda.is_available():
        return [f"CUDA (torch {torch.__version__} sees no GPU; bf16 and free memory not checked)"], ""
    name = torch.cuda.get_device_name(0)
    problems = []
    if not torch.cuda.is_bf16_supported():
        problems.append(f"bf16 ({name} does not support it)")
    free, total = torch.cuda.mem_get_info(0)
    free_gib = free / 2**30
    if free_gib < min_free_gib:
        problems.append(f"free GPU memory ({free_gib:.1f} of {total / 2**30:.1f} GiB free, {min_free_gib:g} needed)")
    return problems, f"{name}, bf16, {free_gib:.1f} GiB free"


def package_problems(need: list[str]) -> tuple[list[str], list[str]]:
    """(the packages not found, 'name version' of those found). Found, not imported: importing TRL and
    PEFT takes seconds, and a session's first minute should not go on a check."""
    from importlib import metadata, util

    missing, found = [], []
    for name in need:
        if util.find_spec(name) is None:
            missing.append(PACKAGE.get(name, name))
            continue
        try:
            version = metadata.version(PACKAGE.get(name, name))
        except metadata.PackageNotFoundError:
            version = "?"
        found.append(f"{name} {version}")
    return missing, found


def check(name: str, need: list[str], min_free_gib: float, cpu: bool, model: str | None = None,
          model_hint: str | None = None) -> tuple[bool, str]:
    """(ok, the one line to print). `model`: a Hugging Face folder the run needs (its config.json), with
    `model_hint` (the command that makes it) named when it is not there."""
    from pathlib import Path

    missing: list[str] = []
    if model and not (Path(model) / "config.json").is_file():
        missing.append(f"the model folder {model} (no config.json)" + (f": run `{model_hint}`" if model_hint else ""))
    device = "cpu (--cpu: device not checked)"
    try:
        import torch
    except ImportError as exc:
        return False, f"{name}: FAIL [preflight] missing: {'; '.join([f'torch ({exc})', *missing])}"
    if not cpu:
        problems, device = device_problems(torch, min_free_gib)
        missing += problems
    absent, found = package_problems(need)
    missing += absent
    if missing:
        hint = " (carry missing packages as wheels: WHEELS=DIR, docs/multi-gpu.md)" if absent else ""
        return False, f"{name}: FAIL [preflight] missing: {'; '.join(missing)}{hint}"
    vllm = "vLLM present" if importlib.util.find_spec("vllm") is not None else "no vLLM (HF generation)"
    return True, f"{name}: preflight ok: {device}; torch {torch.__version__}, {', '.join(found)}; {vllm}"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m prosfi.train.gpu_check", description=__doc__.split("\n\n")[0])
    parser.add_argument("--name", default="gpu_check", help="the script's name, first word of the line")
    parser.add_argument("--need", default=",".join(DEFAULT_NEED), help="comma-separated import names")
    parser.add_argument("--min-free-gib", type=float, default=8.0, help="free GPU memory needed (default %(default)s)")
    parser.add_argument("--cpu", action="store_true", help="skip the CUDA, bf16 and memory checks")
    parser.add_argument("--model", default=None, help="a model folder the run needs (checked for config.json)")
    parser.add_argument("--model-hint", default=None, help="the command that makes --model, named when it is missing")
    args = parser.parse_args(argv)
    ok, line = check(args.name, [n for n in args.need.split(",") if n], args.min_free_gib, args.cpu, args.model,
                     args.model_hint)
    print(line, flush=True)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
