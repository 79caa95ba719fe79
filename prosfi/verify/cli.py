"""`prosfi check STEPS.jsonl`: verify step entailments from a JSONL file.

Input line:  {"id": …, "premises": {"h1": "<formula>", …}, "conclusion": "<formula>"}
         or  {"id": …, "quantities": {"d": "120 km", "t": "1.5 h"}, "expr": "d / t", "claim": "80 km/h"}
             (a quantity check, `op` + `args` instead of `expr` for a primitive; see prosfi.verify.quantity)
Output line: {"id": …, "verdict": "valid|invalid|unknown|error", "backend": …, "ms": …, "detail": …}

Every input line yields exactly one output line, in order: a line that is not JSON, not an
object, or lacks a field yields an `error` line (with its `id` when one can be read). Lines end
at `\n` only (`prosfi.jsonl`). The file is read in chunks, so memory stays bounded however long
it is. With `-o`, a one-line summary goes to stderr.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from collections import Counter
from typing import IO, Any

from prosfi import jsonl
from prosfi.configflags import Flags
from prosfi.quant import Tolerance
from prosfi.usage import UsageError
from prosfi.verify.config import VerifierConfig
from prosfi.verify.lean.config import LeanConfig
from prosfi.verify.lines import check_lines, output_record, read_line

PROGRESS_MIN_LINES = 1000


# The flags of the configs a check reads (prosfi.configflags): VerifierConfig's, LeanConfig's as --lean-* (its
# time limit in milliseconds, like every other limit on the command line), and the quantity tolerance.
VERIFIER_FLAGS = Flags(VerifierConfig, ("backends", "timeout_ms", "workers", "truth_table", "herbrand"))
LEAN_FLAGS = Flags(LeanConfig, ("project", "workers", "repl_command"),
                   names={"project": "--lean-project", "workers": "--lean-workers",
                          "repl_command": "--lean-repl-command"},
                   types={"repl_command": str})  # one command line, split by LeanConfig like a shell
TOLERANCE_FLAGS = Flags(Tolerance, ("rel", "sigfigs"), names={"rel": "--rel-tol"},
                        notes={"rel": "(a line's `rel` wins)", "sigfigs": "(default: off)"})


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("steps", help="input JSONL of step checks ('-' reads stdin)")
    parser.add_argument("-o", "--output", help="output JSONL (default: stdout)")
    add_verifier_arguments(parser)
    parser.add_argument("--chunk-size", type=int, default=4096,
                        help="lines verified per batch; bounds memory (default: %(default)s)")
    parser.add_argument("--no-progress", action="store_true", help="never show a progress bar")
    TOLERANCE_FLAGS.add(parser.add_argument_group("quantity checks (lines with `claim`)"))


def add_verifier_arguments(parser: argparse.ArgumentParser, defaults: dict[str, Any] | None = None) -> None:
    """The verifier's flags, shared by every command that checks steps (see `verifier_config`); `defaults`:
    VerifierConfig field -> this command's own default."""
    VERIFIER_FLAGS.add(parser, defaults)
    lean = parser.add_argument_group("Lean (backends lean, lean_dojo)")
    LEAN_FLAGS.add(lean)
    lean.add_argument("--lean-timeout-ms", type=int, default=None,
                      help="wall-clock limit per Lean check in milliseconds; the REPL is killed past it "
                      f"(default: {int(LeanConfig().timeout_s * 1000)})")


def _count_lines(path: str) -> int | None:
    try:
        with open(path, "rb") as fh:
            return sum(chunk.count(b"\n") for chunk in iter(lambda: fh.read(1 << 20), b""))
    except OSError:
        return None


def lean_config(args: argparse.Namespace) -> LeanConfig | None:
    """A LeanConfig from the --lean-* flags, or None when none is given (LeanConfig's defaults)."""
    given = {k: v for k, v in LEAN_FLAGS.kwargs(args).items() if v is not None}
    if args.lean_timeout_ms is not None:
        if args.lean_timeout_ms <= 0:
            raise ValueError(f"--lean-timeout-ms must be > 0, got {args.lean_timeout_ms}")
        given["timeout_s"] = args.lean_timeout_ms / 1000
    return LeanConfig(**given) if given else None


def verifier_config(args: argparse.Namespace) -> VerifierConfig:
    """The VerifierConfig of `add_verifier_arguments`' flags; ValueError names a bad one."""
    overrides = VERIFIER_FLAGS.kwargs(args)
    lean = lean_config(args)
    if lean is not None:
        overrides["lean"] = lean
    return VerifierConfig(**overrides)


def run(args: argparse.Namespace) -> int:
    from prosfi.verify.verifier import Verifier

    if args.chunk_size <= 0:
        raise UsageError("--chunk-size must be > 0")
    try:
        tol = Tolerance(**TOLERANCE_FLAGS.kwargs(args))
    except ValueError as exc:
        raise UsageError(f"--rel-tol/--sigfigs: {exc}") from None
    try:
        config = verifier_config(args)
    except ValueError as exc:
        raise UsageError(str(exc)) from None
    from_stdin = args.steps == "-"
    if not from_stdin and os.path.isdir(args.steps):
        raise UsageError(f"{args.steps} is a folder; give a JSONL file of step checks")
    if not from_stdin and not os.path.isfile(args.steps):
        raise UsageError(f"no such file: {args.steps}")
    # counting the lines reads the file once more: only worth it when a bar can be shown
    want_bar = not args.no_progress and sys.stderr.isatty() and not from_stdin
    total = _count_lines(args.steps) if want_bar else None
    show = total is not None and total >= PROGRESS_MIN_LINES
    try:
        out: IO[str] = open(args.output, "w", encoding="utf-8") if args.output else sys.stdout
    except OSError as exc:
        raise UsageError(f"cannot write {args.output}: {exc.strerror or exc} "
                         "(is the path right and does its folder exist?)") from None
    try:
        verifier = Verifier(config)
    except ValueError as exc:  # e.g. an unknown backend name
        raise UsageError(str(exc)) from None
    started = time.perf_counter()
    counts: Counter = Counter()
    try:
        src = jsonl.open_lines(args.steps)
    except OSError as exc:
        raise UsageError(f"cannot read {args.steps}: {exc.strerror or exc}") from None
    try:
        with verifier:
            lines = (text for _, text, _ in jsonl.read_lines(src))
            records = check_lines(lines, verifier, args.chunk_size, tol)
            if show:
                from tqdm import tqdm

                records = tqdm(records, total=total, unit="step", file=sys.stderr, desc="prosfi check")
            for record in records:
                counts[record["verdict"]] += 1
                out.write(jsonl.dumps(record) + "\n")
            out.flush()
    finally:
        if not from_stdin:
            src.close()
        if out is not sys.stdout:
            out.close()
    n = sum(counts.values())
    if n == 0:
        print(f"prosfi check: {args.steps} is empty: no lines to check", file=sys.stderr)
    elif args.output:
        tally = ", ".join(f"{counts[k]} {k}" for k in ("valid", "invalid", "unknown", "error") if counts[k])
        print(f"prosfi check: {n} line(s) -> {args.output}: {tally} ({time.perf_counter() - started:.1f} s)",
              file=sys.stderr)
    return 0


__all__ = ["add_arguments", "check_lines", "output_record", "read_line", "run"]
