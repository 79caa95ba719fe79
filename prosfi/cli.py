"""The `prosfi` command. Subcommands live in their own modules and are imported only when
used, so `prosfi check` never pays for importing torch.

Each subcommand module defines `add_arguments(parser)` and `run(args) -> int`.
"""

from __future__ import annotations

import argparse
import importlib
import os
import sys
import warnings

from prosfi.usage import UsageError

# name -> (module, one-line help)
COMMANDS: dict[str, tuple[str, str]] = {
    "check": ("prosfi.verify.cli", "verify step entailments from a JSONL file"),
    "score": ("prosfi.rewards.cli", "score completions against problems with a reward"),
    "data": ("prosfi.data.cli", "generate or load problems, gold traces and TRL prompt rows"),
    "train": ("prosfi.train.cli_train", "GRPO training from a YAML recipe plus overrides"),
    "sft": ("prosfi.train.cli_sft", "SFT warm-up on gold traces"),
    "model": ("prosfi.train.cli_model", "tiny local model; SmolLM2 converted offline; merge a LoRA adapter"),
    "lean": ("prosfi.rewards.lean_cli", "Lean 4 backend utilities (render a step, probe the REPL)"),
    "prm": ("prosfi.prm.cli", "process reward models: label, train, score, rerank, negatives"),
    "search": ("prosfi.prm.search_cli", "verifier-first beam search with a PRM"),
    "eval": ("prosfi.eval.cli", "evaluate a model, an endpoint or completions: tables, plots, compare"),
    "serve": ("prosfi.serve.cli", "serve the verified reward over HTTP (verl, OpenRLHF, TRL, NeMo-Gym; Ray Serve)"),
}


def _top_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="prosfi",
        description="RL training of LLM reasoners on formally verified process rewards.",
        epilog="commands:\n" + "\n".join(f"  {k:<7} {v[1]}" for k, v in COMMANDS.items())
        + "\n\n`prosfi COMMAND --help` shows a command's options.",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("command", choices=sorted(COMMANDS), help="subcommand")
    parser.add_argument("--version", action="version", version=_version())
    return parser


def _version() -> str:
    from prosfi import __version__

    return f"prosfi {__version__}"


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if not argv or argv[0] in ("-h", "--help") or argv[0] == "--version" or argv[0] not in COMMANDS:
        _top_parser().parse_args(argv or ["--help"])
        return 2
    name, rest = argv[0], argv[1:]
    module_name, help_text = COMMANDS[name]
    try:
        module = importlib.import_module(module_name)
        parser = argparse.ArgumentParser(prog=f"prosfi {name}", description=help_text)
        module.add_arguments(parser)
        describe_subcommands(parser)
        own_help = getattr(module, "help_parser", None)  # `prosfi eval compare --help`: compare's own options
        if own_help is not None and ("-h" in rest or "--help" in rest) and own_help(rest) is not None:
            own_help(rest).print_help()
            return 0
        args = parser.parse_args(rest)
        from prosfi.usage import clobbered_input

        refusal = clobbered_input(args)  # before any work: an output that is an input would be destroyed
        if refusal is not None:
            raise UsageError(refusal)
        quiet_library_noise()
        _one_line_warnings()
        return int(module.run(args) or 0)
    except UsageError as exc:  # raised by any command for a usage mistake: one line, exit 2
        print(f"prosfi {exc.command or name}: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:  # Ctrl-C outside a stage that saves on it (prosfi train does): one line
        print(f"\nprosfi {name}: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:  # `prosfi check … | head`: the reader left; exit quietly
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return 141
    except ModuleNotFoundError as exc:  # an optional extra not installed: say which, in one line
        from prosfi.usage import missing_extra

        message = missing_extra(exc, f"prosfi {name}")
        if message is None:
            raise
        print(message, file=sys.stderr)
        return 2


# Library messages about the libraries themselves, which no prosfi user can act on: transformers 5 reports
# TRL's own use of gradient checkpointing as deprecated (`prm train`, `eval --recipe`, `train`); DeepSpeed,
# imported by accelerate and TRL, logs to stdout that it found no GPU (stdout carries a dry run's YAML).
LIBRARY_NOISE = r"`(is_)?gradient_checkpointing(_enable|_disable)?` is deprecated"
DEEPSPEED_NOISE = "Setting accelerator to CPU"


def quiet_library_noise() -> None:
    """Silence LIBRARY_NOISE (FutureWarning) and DeepSpeed's no-GPU line, and nothing else: a deprecation the
    user's recipe causes is the user's business and still shows."""
    import logging

    warnings.filterwarnings("ignore", message=LIBRARY_NOISE, category=FutureWarning)
    ds = logging.getLogger("DeepSpeed")  # the logger DeepSpeed creates on import: the same object
    if not any(getattr(f, "prosfi_noise", False) for f in ds.filters):
        class _NoGpuLine(logging.Filter):
            prosfi_noise = True

            def filter(self, record: logging.LogRecord) -> bool:
                return not str(record.getMessage()).startswith(DEEPSPEED_NOISE)

        ds.addFilter(_NoGpuLine())


def describe_subcommands(parser: argparse.ArgumentParser) -> None:
    """Give every sub-subcommand's parser (`prosfi data kk`, `prosfi prm train`) its one-line help as the
    description, so its --help starts with what it does, not with a bare list of options."""
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            helps = {a.dest: a.help for a in action._choices_actions}
            for choice, sub in action.choices.items():
                if sub.description is None and helps.get(choice):
                    sub.description = helps[choice][0].upper() + helps[choice][1:] + "."
                describe_subcommands(sub)


def _one_line_warnings() -> None:
    """prosfi's own warnings (`lean?` skipped where Lean is missing) as one `warning:` line on stderr,
    without Python's file:line and source line. Left alone where someone records warnings (pytest)."""
    recording = getattr(getattr(warnings, "_showwarnmsg_impl", None), "__module__", None) != "warnings"
    if recording or warnings.showwarning is not getattr(warnings, "_showwarning_orig", None):
        return  # catch_warnings(record=True) (pytest.warns) or someone's own showwarning
    original = warnings.showwarning

    def show(message, category, filename, lineno, file=None, line=None):
        if str(message).startswith("prosfi"):
            print(f"warning: {message}", file=file or sys.stderr)
        else:
            original(message, category, filename, lineno, file, line)

    warnings.showwarning = show


if __name__ == "__main__":
    sys.exit(main())
