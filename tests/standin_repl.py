#!/usr/bin/env python3
"""STAND-IN for the Lean REPL (leanprover-community/repl). It is NOT Lean and proves nothing.

It speaks the REPL's JSON protocol (requests and responses separated by a blank line; the
first command, without `env`, is the header and returns env 0; later commands name an env and
get a fresh env number; messages carry a severity) so the tests can exercise prosfi's
*process management* — timeouts, crashes, respawns, recycling, memory caps, ordering, threads —
where no Lean toolchain exists. Its answers are decided by markers in the command text, never
by logic: a test that uses it tests plumbing only, never verdicts.

Markers (Lean-identifier-shaped, so they can sit inside a tactic proof):
  standin_hang          never answer (the caller's wall-clock limit must kill us)
  standin_crash         exit(3) without answering
  standin_garbage       write a response that is not JSON (`{not json`) and nothing else
  standin_noise         print a build-progress line before a normal answer (as `lake exe` may)
  standin_error         answer with an error-severity message
  standin_sorry         answer with a `sorries` entry and the "declaration uses 'sorry'" warning
  standin_leak_<MB>     allocate and touch <MB> MiB, keep it, then answer ok
  standin_slow_<MS>     sleep <MS> ms, then answer ok
  standin_nonstd        `#print axioms` (below) also lists sorryAx
A command containing `#print axioms NAME` also gets the info message
"'NAME' depends on axioms: [propext, Classical.choice, Quot.sound]" that Lean would print.
Anything else is answered ok, with an info message "standin pid=<pid> n=<checks so far>".

Options:
  --header-fails        the header command gets an error (a broken Lean project)
  --log DIR             append "<pid> <event>" lines to DIR/standin.log (start, cmd, exit)
"""

from __future__ import annotations

import argparse
import json
import os
import re
import sys
import time

_LEAK: list[bytes] = []


def _log(log_dir: str | None, event: str) -> None:
    if log_dir:
        with open(os.path.join(log_dir, "standin.log"), "a", encoding="utf-8") as fh:
            fh.write(f"{os.getpid()} {event}\n")


def _read_request(stdin) -> str | None:
    """Lines up to a blank line (one request); None at end of input."""
    lines: list[str] = []
    for line in stdin:
        if not line.strip():
            if lines:
                return "".join(lines)
            continue
        lines.append(line)
    return "".join(lines) if lines else None


def _send(obj: dict) -> None:
    sys.stdout.write(json.dumps(obj, ensure_ascii=False, indent=1) + "\n\n")
    sys.stdout.flush()


def _answer(cmd: str, env: int, n: int) -> dict | None:
    """The response for one check command, or None for 'do not answer'."""
    if "standin_hang" in cmd:
        time.sleep(3600)
        return None
    if "standin_crash" in cmd:
        sys.stdout.flush()
        os._exit(3)
    if "standin_garbage" in cmd:
        sys.stdout.write("{not json\n\n")
        sys.stdout.flush()
        return None
    if "standin_noise" in cmd:
        sys.stdout.write("✔ [3/7] Built REPL.Main\n")
    leak = re.search(r"standin_leak_(\d+)", cmd)
    if leak:
        _LEAK.append(b"x" * (int(leak.group(1)) * 1024 * 1024))
    slow = re.search(r"standin_slow_(\d+)", cmd)
    if slow:
        time.sleep(int(slow.group(1)) / 1000)
    pos = {"line": 1, "column": 0}
    info = {"pos": pos, "endPos": pos, "severity": "info", "data": f"standin pid={os.getpid()} n={n}"}
    axioms = re.search(r"#print axioms (\S+)", cmd)
    if axioms:
        names = "propext, Classical.choice, Quot.sound" + (", sorryAx" if "standin_nonstd" in cmd else "")
        info = [info, {"pos": pos, "endPos": pos, "severity": "info",
                       "data": f"'{axioms.group(1)}' depends on axioms: [{names}]"}]
    else:
        info = [info]
    if "standin_error" in cmd:
        err = {"pos": pos, "endPos": pos, "severity": "error", "data": "standin: unsolved goals"}
        return {"env": env, "messages": [*info, err]}
    if "standin_sorry" in cmd:
        warn = {"pos": pos, "endPos": pos, "severity": "warning", "data": "declaration uses 'sorry'"}
        sorry = {"pos": pos, "endPos": pos, "goal": "⊢ False", "proofState": 0}
        return {"env": env, "messages": [*info, warn], "sorries": [sorry]}
    return {"env": env, "messages": info}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--header-fails", action="store_true")
    parser.add_argument("--log", default=None)
    args = parser.parse_args()
    _log(args.log, "start")
    envs = 0  # number of environments created so far
    checks = 0
    while True:
        raw = _read_request(sys.stdin)
        if raw is None:
            _log(args.log, "exit")
            return 0
        try:
            req = json.loads(raw)
        except json.JSONDecodeError as exc:
            _send({"message": f"Could not parse JSON: {exc}"})
            continue
        cmd = str(req.get("cmd", ""))
        if "env" not in req:
            if args.header_fails:
                pos = {"line": 1, "column": 0}
                _send({"env": envs, "messages": [
                    {"pos": pos, "endPos": pos, "severity": "error", "data": "unknown module prefix 'Aesop'"}]})
            else:
                _send({"env": envs})
            envs += 1
            continue
        if not isinstance(req["env"], int) or not 0 <= req["env"] < envs:
            _send({"message": "Unknown environment."})
            continue
        checks += 1
        _log(args.log, "cmd")
        response = _answer(cmd, envs, checks)
        envs += 1
        if response is not None:
            _send(response)


if __name__ == "__main__":
    sys.exit(main())
