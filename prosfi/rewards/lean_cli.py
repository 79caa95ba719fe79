"""`prosfi lean`: see what prosfi sends to Lean, and check that Lean answers.

  prosfi lean render STEP.json        print the theorem for each step check (JSON or JSONL)
  prosfi lean statement PROBLEMS.jsonl print the direct-Lean statement for each problem
  prosfi lean probe                   resolve the project and REPL, run a known-true and a
                                      known-false theorem, report what happened and how long

It lives above the rewards (not in `prosfi.verify.lean`, the pure backend) because `statement`
reads problems and renders the direct-Lean reward's statements.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Iterator
from pathlib import Path

from prosfi.usage import UsageError
from prosfi.verify.lean.config import LeanConfig


def add_arguments(parser: argparse.ArgumentParser) -> None:
    sub = parser.add_subparsers(dest="action", required=True)
    render = sub.add_parser("render", help="print the Lean theorem for step checks")
    render.add_argument("path", help='JSON or JSONL: {"id", "premises": {"h1": formula, …}, "conclusion"}; - = stdin')
    render.add_argument("--tactics", default=None, help="tactic cascade, '|'-separated (default: the config's)")
    render.add_argument("--max-heartbeats", type=int, default=None)
    statement = sub.add_parser("statement", help="print the direct-Lean theorem statement for problems")
    statement.add_argument("path", help="problems JSONL")
    statement.add_argument("--answer", default=None, help="True or False: the claim to state for true/false/"
                           "uncertain problems (default: the gold label; assignments always state the gold one)")
    probe = sub.add_parser("probe", help="check the toolchain and the REPL with two tiny theorems")
    probe.add_argument("--project", default=None, help="Lake project (default: $PROSFI_LEAN_PROJECT or lean_project/)")
    probe.add_argument("--repl-command", default=None, help="override the REPL command line")
    probe.add_argument("--timeout", type=float, default=60.0, help="seconds per check")


def _records(path: str) -> Iterator[tuple[str, dict | str]]:
    """(where, record) per step check, or (where, why) for one that is not a JSON object: a bad
    line is reported by number and the rest of the file still renders."""
    from prosfi.jsonl import loads

    raw = sys.stdin.buffer.read() if path == "-" else Path(path).read_bytes()
    text = raw.decode("utf-8", errors="replace")
    stripped = text.strip()
    if stripped.startswith("[") or (stripped.startswith("{") and "\n{" not in stripped):
        data, why = loads(stripped)
        if why is not None:
            yield f"{path}", f"not valid JSON: {why}"
            return
        for k, rec in enumerate(data if isinstance(data, list) else [data], 1):
            yield f"{path} item {k}", rec if isinstance(rec, dict) else "not a JSON object"
        return
    for lineno, line in enumerate(text.split("\n"), 1):
        if line.strip():
            rec, why = loads(line)
            if why is None and not isinstance(rec, dict):
                why = "not a JSON object"
            yield f"{path}:{lineno}", rec if why is None else f"not valid JSON: {why}"


def _render(args: argparse.Namespace) -> int:
    from prosfi.logic.parser import parse
    from prosfi.logic.signature import check_signature
    from prosfi.verify.backend import Check
    from prosfi.verify.lean.render import render_step

    config = LeanConfig()
    if args.tactics:
        config.tactics = tuple(t.strip() for t in args.tactics.split("|") if t.strip())
    if args.max_heartbeats is not None:
        config.max_heartbeats = args.max_heartbeats
    status = 0
    for where, rec in _records(args.path):
        if isinstance(rec, str):
            print(f"-- {where}: cannot render: {rec}\n", file=sys.stderr)
            status = 1
            continue
        try:
            premises = tuple((str(k), parse(v)) for k, v in dict(rec["premises"]).items())
            conclusion = parse(rec["conclusion"])
            signature = check_signature([f for _, f in premises] + [conclusion])
            print(f"-- {rec.get('id', '(no id)')}\n{render_step(Check(premises, conclusion), signature, config)}\n")
        except (KeyError, TypeError, ValueError, AttributeError) as exc:
            print(f"-- {where} {rec.get('id', '')}: cannot render: {type(exc).__name__}: {exc}\n", file=sys.stderr)
            status = 1
    return status


def _statement(args: argparse.Namespace) -> int:
    from prosfi.data.problem import read_problems
    from prosfi.rewards.direct_lean import problem_statement

    status = 0
    for problem in read_problems(args.path):
        try:
            statement = problem_statement(problem, args.answer)
        except ValueError as exc:
            print(f"-- {problem.id}: {exc}\n", file=sys.stderr)
            status = 1
            continue
        print(f"-- {problem.id}\n{statement.text} := by\n  sorry\n" if statement else f"-- {problem.id}: "
              "no Lean claim for this answer (Uncertain)\n")
    return status


def _probe(args: argparse.Namespace) -> int:
    from prosfi.verify.lean.pool import ReplPool

    config = LeanConfig(project=args.project, repl_command=tuple(args.repl_command.split()) if args.repl_command
                        else None, workers=1)
    print(f"project:      {config.project_dir()}")
    print(f"REPL command: {' '.join(config.command())}")
    reason = config.unavailable()
    if reason:
        print(f"unavailable:  {reason}")
        return 1
    true_thm = ("theorem probe_true (U : Type) [Nonempty U] (P Q : U → Prop) (a : U) (h1 : ∀ x, P x → Q x) "
                "(h2 : P a) : Q a := by\n  aesop")
    false_thm = "theorem probe_false (U : Type) (P : U → Prop) (a : U) : P a := by\n  aesop (config := { terminal := true })"
    started = time.monotonic()
    with ReplPool(config) as pool:
        first = pool.run(true_thm, args.timeout)
        print(f"start + header + first check: {(time.monotonic() - started):.1f} s")
        second = pool.run(false_thm, args.timeout)
        third = pool.run(true_thm, args.timeout)
        header = pool.run("example : True := Prosfi.header_loaded", args.timeout)
    print(f"true theorem:  {first.kind} {first.detail}  ({first.ms:.0f} ms; warm again: {third.ms:.0f} ms)")
    print(f"false theorem: {second.kind} {second.detail[:200]}  ({second.ms:.0f} ms)")
    print(f"ProsfiHeader:  {'loaded' if header.ok else f'NOT loaded ({header.kind}: {header.detail[:200]})'}")
    good = first.ok and third.ok and header.ok and not second.ok and second.kind in ("error", "sorry")
    print("probe: OK" if good else "probe: FAILED (see above)")
    return 0 if good else 1


def run(args: argparse.Namespace) -> int:
    try:
        return {"render": _render, "statement": _statement, "probe": _probe}[args.action](args)
    except BrokenPipeError:  # `prosfi lean statement X | head`: the reader left (prosfi.cli exits quietly)
        raise
    except (OSError, ValueError) as exc:  # unreadable or malformed input: a message, not a traceback
        raise UsageError(str(exc), command=f"lean {args.action}") from None


__all__ = ["add_arguments", "run"]
