"""Child process for the `lean_dojo` backend: one LeanDojo command-mode Dojo behind the REPL protocol.

Run by `LeanDojoBackend` as `python -m prosfi.verify.lean.dojo_worker --project DIR`; it reads
blank-line-separated JSON requests on stdin and answers like the Lean REPL, so the REPL pool's
hard timeouts (kill the process group), respawns and recycling apply to LeanDojo unchanged.

The first request (no `env`) carries the header: its `import` lines become the Dojo's extra
imports; the Dojo is opened in command mode at the end of `ProsfiHeader.lean`. Every later
command runs from that initial command state (like `env 0` in the REPL).

LeanDojo needs `--project` to be a git repository with a commit (LeanGitRepo.from_path) and
traces it on first use (minutes); see docs/lean.md.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

ENTRY_FILE = "ProsfiHeader.lean"


def _read_request() -> dict | None:
    lines: list[str] = []
    for line in sys.stdin:
        if not line.strip():
            if lines:
                break
            continue
        lines.append(line)
    if not lines:
        return None
    return json.loads("".join(lines))


def _send(obj: dict) -> None:
    sys.stdout.write(json.dumps(obj, ensure_ascii=False) + "\n\n")
    sys.stdout.flush()


def _message(severity: str, data: str) -> dict:
    pos = {"line": 0, "column": 0}
    return {"pos": pos, "endPos": pos, "severity": severity, "data": data}


def command_response(result, env: int) -> dict:
    """A LeanDojo CommandResult as a REPL CommandResponse (errors as error-severity messages)."""
    error = getattr(result, "error", None)
    if error is not None:  # LeanError / TimeoutError
        return {"env": env, "messages": [_message("error", str(error))]}
    text = str(getattr(result, "message", "") or "")
    if "error" in text.lower():
        return {"env": env, "messages": [_message("error", text)]}
    if "sorry" in text:
        return {"env": env, "messages": [_message("warning", "declaration uses 'sorry'")]}
    return {"env": env, "messages": [_message("info", text)] if text else []}


def main() -> int:
    parser = argparse.ArgumentParser(description="LeanDojo command mode behind the Lean REPL protocol")
    parser.add_argument("--project", required=True, help="the Lake project (a git repository) to trace")
    args = parser.parse_args()
    header = _read_request()
    if header is None:
        return 0
    try:
        from lean_dojo import Dojo, LeanGitRepo
    except ImportError as exc:
        _send({"message": f"lean_dojo is not installed: {exc}"})
        return 1
    project = Path(args.project).resolve()
    entry = project / ENTRY_FILE
    imports = [line.split(None, 1)[1].strip() for line in str(header.get("cmd", "")).splitlines()
               if line.startswith("import ") and line.split(None, 1)[1].strip() != ENTRY_FILE[:-5]]
    try:
        repo = LeanGitRepo.from_path(str(project))
        line_nb = len(entry.read_text(encoding="utf-8").splitlines())  # before the last line (`end Prosfi`)
        dojo_cm = Dojo((repo, Path(ENTRY_FILE), line_nb), additional_imports=imports)
        dojo, state0 = dojo_cm.__enter__()
    except Exception as exc:  # noqa: BLE001 - tracing or start-up failed: answer the header with the reason
        _send({"message": f"LeanDojo could not start on {project}: {type(exc).__name__}: {exc}"[:2000]})
        return 1
    env = 0
    _send({"env": env})
    try:
        while True:
            request = _read_request()
            if request is None:
                return 0
            env += 1
            if request.get("env") != 0:
                _send({"message": "Unknown environment."})
                continue
            _send(command_response(dojo.run_cmd(state0, str(request.get("cmd", ""))), env))
    finally:
        dojo_cm.__exit__(None, None, None)


if __name__ == "__main__":
    sys.exit(main())
