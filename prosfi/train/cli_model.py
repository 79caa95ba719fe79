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
    from prosfi.train.tiny import TinyModelConfig, build_tiny_model

    config = TinyModelConfig(**{f.name: getattr(args, f.name) for f in dataclasses.fields(TinyModelConfig)})
    out = build_tiny_model(args.out, config)
    print(f"tiny model saved to {out} (load with AutoModelForCausalLM.from_pretrained({str(out)!r}))")
    return 0
