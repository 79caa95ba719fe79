"""`prosfi model tiny --out DIR`: a tiny random Qwen2 model plus a locally trained tokenizer."""

from __future__ import annotations

import argparse
import dataclasses


def add_arguments(parser: argparse.ArgumentParser) -> None:
    from prosfi.train.tiny import TinyModelConfig

    parser.add_argument("kind", choices=["tiny"], help="which model to build (only 'tiny' for now)")
    parser.add_argument("--out", required=True, help="directory to save the model and tokenizer in")
    for f in dataclasses.fields(TinyModelConfig):
        parser.add_argument(f"--{f.name.replace('_', '-')}", dest=f.name, type=type(f.default),
                            default=f.default, help=f.metadata.get("help"))


def run(args: argparse.Namespace) -> int:
    import sys
    from pathlib import Path

    from prosfi.train.tiny import TinyModelConfig, build_tiny_model

    try:
        config = TinyModelConfig(**{f.name: getattr(args, f.name) for f in dataclasses.fields(TinyModelConfig)})
    except ValueError as exc:
        print(f"prosfi model tiny: {exc}", file=sys.stderr)
        return 2
    target = Path(args.out)
    if target.exists() and not target.is_dir():
        print(f"prosfi model tiny: --out {args.out} is a file; give a folder to create or reuse", file=sys.stderr)
        return 2
    try:  # before the tokenizer is trained: a bad path costs nothing
        target.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        print(f"prosfi model tiny: cannot create --out {args.out}: {exc.strerror or exc}", file=sys.stderr)
        return 2
    try:
        out = build_tiny_model(args.out, config)
    except OSError as exc:
        print(f"prosfi model tiny: cannot write the model to {args.out}: {exc.strerror or exc}", file=sys.stderr)
        return 2
    print(f"tiny model saved to {out} (load with AutoModelForCausalLM.from_pretrained({str(out)!r}))")
    return 0
