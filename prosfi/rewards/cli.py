"""`prosfi score PROBLEMS.jsonl COMPLETIONS.jsonl [--reward MODE] [-o OUT.jsonl]`.

One output line per completion line, in order, blank lines included. A line we cannot use (bad
JSON, bytes that are not UTF-8, unknown `problem_id`, no `completion`) gets an output line with a
reason and a null reward: the command never stops on a completion. Lines end at `\n` only
(`prosfi.jsonl`). A problems file that does not load is a usage error. With `-o`, a one-line
summary goes to stderr.
"""

from __future__ import annotations

import argparse
import sys
import time
from contextlib import ExitStack
from typing import IO

from prosfi import jsonl
from prosfi.chain.config import ChainConfig
from prosfi.configflags import Flags
from prosfi.rewards.config import REWARD_MODES, RewardConfig
from prosfi.usage import UsageError

# The flags of the configs a score reads (prosfi.configflags): the reward mode, the chain guards a user tunes
# most, and the quantity chain's rules (`eval` and `prm label` share those).
REWARD_FLAGS = Flags(RewardConfig, ("mode",), names={"mode": "--reward"}, choices={"mode": REWARD_MODES})
CHAIN_FLAGS = Flags(ChainConfig, ("max_dependencies", "max_steps", "uncertain"))
QUANTITY_RULE_FLAGS = Flags(ChainConfig, ("quantity_max_ops", "quantity_rel_tol", "quantity_trials", "quantity_off",
                                          "quantity_reference"),
                            metavars={"quantity_max_ops": "N", "quantity_rel_tol": "X", "quantity_trials": "N",
                                      "quantity_off": "RULES"},
                            choices={"quantity_reference": ("auto", "off")})


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("problems", help="problems JSONL (one prosfi.data.problem.Problem per line, as `prosfi data` writes them)")
    parser.add_argument("completions", help='completions JSONL: {"problem_id": ..., "completion": ...} per line')
    REWARD_FLAGS.add(parser)
    parser.add_argument("-o", "--output", default="-", help="output JSONL (default: stdout)")
    from prosfi.verify.cli import add_verifier_arguments

    add_verifier_arguments(parser)  # used by the modes prosfi and step_fraction
    parser.add_argument("--batch-size", type=int, default=512, help="completions scored per verifier pass")
    parser.add_argument("--audit", default=None, help="also append audit records to this JSONL file")
    CHAIN_FLAGS.add(parser.add_argument_group("chain guards (docs/rewards.md)"))
    add_quantity_rule_arguments(parser)


def add_quantity_rule_arguments(parser: argparse.ArgumentParser) -> None:
    """`--quantity-max-ops`, `--quantity-rel-tol`, `--quantity-trials`: the quantity chain rules of
    `ChainConfig` (the recipe keys `chain_quantity_*`), shared by `prosfi score`, `eval` and `prm label`."""
    QUANTITY_RULE_FLAGS.add(parser.add_argument_group("quantity chain rules (docs/quantity.md; unset: the "
                                                      "documented defaults)"))


def quantity_rule_kwargs(args: argparse.Namespace) -> dict:
    """The `ChainConfig` keywords of the quantity rule flags that were given."""
    return {k: v for k, v in QUANTITY_RULE_FLAGS.kwargs(args).items() if v is not None}


def chain_config_from_args(args: argparse.Namespace, **kwargs):
    """`ChainConfig` from the chain flags given (ValueError naming the flag for a value it refuses)."""
    kwargs = {**{k: v for k, v in kwargs.items() if v is not None}, **quantity_rule_kwargs(args)}
    try:
        config = ChainConfig(**kwargs)
        from prosfi.domains.quantity import DEFAULT_RULES

        config.quantity_rules(DEFAULT_RULES)  # the domain's own checks (e.g. trials in 0..16), now
    except (TypeError, ValueError) as exc:
        said = {"quantity_max_ops": "max_ops", "quantity_rel_tol": "rel", "quantity_trials": "trials",
                "quantity_off": "off", "quantity_reference": "reference"}
        flag = next((f"--{k.replace('_', '-')}" for k in kwargs if k in str(exc) or said.get(k, k) in str(exc)),
                    "chain flags")
        raise ValueError(f"{flag}: {exc}") from exc
    return config


def run(args: argparse.Namespace) -> int:
    from prosfi.data.problem import read_problems
    from prosfi.rewards.audit import AuditLog
    from prosfi.rewards.records import read_completion_line, score_entries
    from prosfi.rewards.score import ScoreResult

    try:
        problems = {p.id: p for p in read_problems(args.problems)}
    except (OSError, ValueError) as exc:
        raise UsageError(f"cannot load problems: {exc}") from None
    reward_config = RewardConfig(**REWARD_FLAGS.kwargs(args))
    try:
        chain_config = chain_config_from_args(args, **CHAIN_FLAGS.kwargs(args))
    except ValueError as exc:
        raise UsageError(str(exc)) from None
    with ExitStack() as stack:
        verifier = None
        if args.reward in ("prosfi", "step_fraction"):
            from prosfi.verify.cli import verifier_config
            from prosfi.verify.verifier import Verifier

            try:
                verifier = stack.enter_context(Verifier(verifier_config(args)))
            except ValueError as exc:  # a backend that cannot run here, a bad setting
                raise UsageError(str(exc)) from None
        try:
            src = jsonl.open_lines(args.completions)
            if src is not sys.stdin.buffer:
                stack.enter_context(src)
        except OSError as exc:
            raise UsageError(f"cannot read completions {args.completions}: {exc.strerror or exc}") from None
        try:
            out: IO[str] = sys.stdout if args.output == "-" else stack.enter_context(
                open(args.output, "w", encoding="utf-8"))
        except OSError as exc:
            raise UsageError(f"cannot write {args.output}: {exc.strerror or exc} "
                             "(is the path right and does its folder exist?)") from None
        audit = stack.enter_context(AuditLog(args.audit)) if args.audit else None

        batch: list[tuple[str | None, dict | None, str]] = []  # (problem_id, error record, text)
        rewards: list[float] = []
        unknown: list = []  # problem ids not in the problems file: said once at the end (`unknown_ids_note`)
        unreadable: list[str] = []  # lines that are no completion record (not JSON, bad bytes, empty, no id)
        lines_read = 0
        started = time.perf_counter()

        def flush() -> None:
            records, scored, texts = score_entries(batch, problems, verifier, reward_config, chain_config)
            for (pid, err, _), rec in zip(batch, records):
                if rec.get("reward") is not None:
                    rewards.append(rec["reward"])
                elif err is not None and pid not in problems and "unknown problem_id" in str(err.get("reason")):
                    unknown.append(pid)
                reason = str(err.get("reason") or "") if err is not None else ""
                if err is not None and (pid is None or "unknown problem_id" not in reason):
                    unreadable.append(reason)  # not a completion record: not JSON, bad bytes, no id or text
                out.write(jsonl.dumps(rec) + "\n")
            if audit is not None and scored:
                audit.write(scored, texts)
            out.flush()
            batch.clear()

        try:
            for lineno, line, bad_bytes in jsonl.read_lines(src):
                lines_read += 1
                if bad_bytes:
                    err = ScoreResult(None, args.reward, None, reason=f"line {lineno}: {bad_bytes}").to_json()
                    batch.append((None, err, ""))
                else:
                    batch.append(read_completion_line(line, lineno, problems, args.reward))
                if len(batch) >= args.batch_size:
                    flush()
        except OSError as exc:
            raise UsageError(f"cannot read completions: {exc}") from None
        flush()
    if unknown:
        from prosfi.data.problem import unknown_ids_note

        print(f"prosfi score: {unknown_ids_note(unknown, problems)}", file=sys.stderr)
    if unreadable:  # said on stderr whether the records go to a file or to stdout
        print(f"prosfi score: {len(unreadable)} of {lines_read} line(s) unreadable: no reward, a reason only "
              f"(first: {unreadable[0][:200]})", file=sys.stderr)
    if lines_read == 0:
        print(f"prosfi score: {args.completions} is empty: no completions to score", file=sys.stderr)
    elif args.output != "-":
        mean = f"mean reward {sum(rewards) / len(rewards):.3f}" if rewards else "no reward"
        print(f"prosfi score: {lines_read} line(s) -> {args.output}: {len(rewards)} scored, {mean}, "
              f"{lines_read - len(rewards)} with a reason only ({time.perf_counter() - started:.1f} s)",
              file=sys.stderr)
    return 0


__all__ = ["add_arguments", "add_quantity_rule_arguments", "chain_config_from_args", "quantity_rule_kwargs", "run"]
