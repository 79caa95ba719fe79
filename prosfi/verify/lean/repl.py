"""One long-lived Lean REPL process (leanprover-community/repl) and its JSON protocol.

Requests and responses are JSON objects separated by a blank line. The header (imports) is
sent once without `env`; every check is then `{"cmd": …, "env": <header env>}`, so nothing is
re-imported per check. The wall-clock limit is enforced here by killing the whole process
group (`lake env repl` runs the REPL as a child of lake), never with signals in the caller.
"""

from __future__ import annotations

import json
import os
import select
import signal
import subprocess
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any


class ReplDied(RuntimeError):
    """The process exited, closed its pipe or wrote something that is not the protocol."""


class ReplTimeout(RuntimeError):
    """No complete response before the deadline."""


@dataclass(frozen=True)
class ReplOutcome:
    """What one command did. `ok` is the pass rule: no error message, no sorry, no REPL error."""

    ok: bool
    kind: str  # "ok" | "error" | "sorry" | "repl_error" | "timeout" | "crash" | "start_failed"
    detail: str = ""
    ms: float = 0.0
    messages: tuple[dict, ...] = field(default=(), compare=False)


def judge(response: dict[str, Any], ms: float = 0.0) -> ReplOutcome:
    """Apply the pass rule to a REPL CommandResponse (or its `{"message": …}` error form)."""
    if "env" not in response and "message" in response:
        return ReplOutcome(False, "repl_error", str(response["message"])[:500], ms)
    if not isinstance(response.get("env"), int):  # not a CommandResponse: never a pass
        return ReplOutcome(False, "repl_error", f"not a command response: {str(response)[:200]}", ms)
    messages = tuple(m for m in response.get("messages") or () if isinstance(m, dict))
    errors = [m for m in messages if m.get("severity") == "error"]
    if errors:
        return ReplOutcome(False, "error", str(errors[0].get("data", ""))[:500], ms, messages)
    if response.get("sorries") or any("declaration uses 'sorry'" in str(m.get("data", "")) for m in messages):
        return ReplOutcome(False, "sorry", "the proof uses sorry", ms, messages)
    return ReplOutcome(True, "ok", "", ms, messages)


def process_tree_rss(pid: int) -> int:
    """Resident memory in bytes of `pid` and all its descendants (Linux /proc; 0 elsewhere)."""
    total, stack, seen = 0, [pid], set()
    while stack:
        p = stack.pop()
        if p in seen:
            continue
        seen.add(p)
        try:
            with open(f"/proc/{p}/status", encoding="ascii", errors="replace") as fh:
                for line in fh:
                    if line.startswith("VmRSS:"):
                        total += int(line.split()[1]) * 1024
                        break
            for task in os.listdir(f"/proc/{p}/task"):
                with open(f"/proc/{p}/task/{task}/children", encoding="ascii") as fh:
                    stack.extend(int(c) for c in fh.read().split())
        except (OSError, ValueError):
            continue
    return total


def _skip_noise(buf: bytes) -> bytes:
    """Drop blank lines and lines that cannot start a JSON object (e.g. build progress that
    `lake exe repl` may print before the REPL starts) from the front of the buffer."""
    while buf:
        if buf[:1] in (b"\n", b"\r"):
            buf = buf[1:]
            continue
        if buf[:1] == b"{":
            return buf
        newline = buf.find(b"\n")
        if newline < 0:
            return buf  # an incomplete line: wait for more
        buf = buf[newline + 1:]
    return buf


class ReplProcess:
    """A started REPL with its header loaded. Not thread-safe: the pool lends it to one thread."""

    def __init__(self, command: Sequence[str], cwd: str | Path | None, header: str,
                 start_timeout_s: float, env: dict[str, str] | None = None):
        self.command = list(command)
        self.checks_done = 0
        self._buf = b""
        self._stderr = tempfile.TemporaryFile()  # noqa: SIM115 - lives as long as the process; closed in kill()
        started = time.monotonic()
        try:
            self._proc = subprocess.Popen(
                self.command, cwd=cwd, env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                stderr=self._stderr, start_new_session=True,
            )
        except OSError as exc:
            self._stderr.close()
            raise ReplDied(f"cannot start {self.command[0]!r} in {cwd}: {exc}") from exc
        try:
            response = self.request({"cmd": header}, start_timeout_s)
        except (ReplDied, ReplTimeout) as exc:
            tail = self.stderr_tail()
            self.kill()
            raise ReplDied(f"REPL header failed: {exc}" + (f"; stderr: {tail}" if tail else "")) from exc
        outcome = judge(response)
        if not outcome.ok or not isinstance(response.get("env"), int):
            self.kill()
            raise ReplDied(f"REPL header failed ({outcome.kind}): {outcome.detail or response}")
        self.header_env: int = response["env"]
        self.start_ms = (time.monotonic() - started) * 1000

    @property
    def pid(self) -> int:
        return self._proc.pid

    def alive(self) -> bool:
        return self._proc.poll() is None

    def rss_bytes(self) -> int:
        return process_tree_rss(self._proc.pid) if self.alive() else 0

    def run(self, cmd: str, timeout_s: float) -> ReplOutcome:
        """Run one command against the header environment and judge it. Raises on timeout/death."""
        started = time.monotonic()
        response = self.request({"cmd": cmd, "env": self.header_env}, timeout_s)
        self.checks_done += 1
        return judge(response, (time.monotonic() - started) * 1000)

    def request(self, payload: dict[str, Any], timeout_s: float) -> dict[str, Any]:
        if not self.alive():
            raise ReplDied(f"process exited with code {self._proc.returncode}")
        data = json.dumps(payload, ensure_ascii=False).encode("utf-8") + b"\n\n"
        try:
            assert self._proc.stdin is not None
            self._proc.stdin.write(data)
            self._proc.stdin.flush()
        except (BrokenPipeError, OSError) as exc:
            raise ReplDied(f"cannot write to the REPL: {exc}") from exc
        return self._read_response(time.monotonic() + timeout_s)

    def _read_response(self, deadline: float) -> dict[str, Any]:
        """Read up to the blank line that ends a response; bytes after it stay buffered."""
        assert self._proc.stdout is not None
        try:
            return self._read_response_from(self._proc.stdout.fileno(), deadline)
        except (OSError, ValueError) as exc:  # pipe closed under us (close() from another thread)
            raise ReplDied(f"reading the REPL failed: {exc!r}") from exc

    def _read_response_from(self, fd: int, deadline: float) -> dict[str, Any]:
        while True:
            text = _skip_noise(self._buf)
            end = text.find(b"\n\n")
            if end >= 0:
                self._buf = text[end + 2:]
                try:
                    obj = json.loads(text[:end].decode("utf-8", errors="replace"))
                except json.JSONDecodeError as exc:
                    raise ReplDied(f"not a JSON response: {text[:200]!r}") from exc
                if not isinstance(obj, dict):
                    raise ReplDied(f"not a JSON object: {text[:200]!r}")
                return obj
            left = deadline - time.monotonic()
            if left <= 0:
                raise ReplTimeout("no response before the deadline")
            ready, _, _ = select.select([fd], [], [], left)
            if not ready:
                continue
            chunk = os.read(fd, 1 << 16)
            if not chunk:
                raise ReplDied(f"the REPL closed its output (exit code {self._proc.poll()})")
            self._buf += chunk

    def stderr_tail(self, chars: int = 400) -> str:
        try:
            self._stderr.seek(0, os.SEEK_END)
            size = self._stderr.tell()
            self._stderr.seek(max(0, size - chars))
            return self._stderr.read().decode("utf-8", errors="replace").strip()
        except (OSError, ValueError):
            return ""

    def kill(self) -> None:
        """Kill the process group (lake and the REPL under it) and reap it."""
        try:  # the group outlives its leader when lake has exited but the REPL under it has not
            os.killpg(self._proc.pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            if self._proc.poll() is None:
                self._proc.kill()
        for pipe in (self._proc.stdin, self._proc.stdout):
            try:
                if pipe is not None:
                    pipe.close()
            except OSError:
                pass
        try:
            self._proc.wait(timeout=5)
        except subprocess.TimeoutExpired:  # pragma: no cover - SIGKILL is not ignorable
            pass
        try:
            self._stderr.close()
        except OSError:  # pragma: no cover
            pass


__all__ = ["ReplDied", "ReplOutcome", "ReplProcess", "ReplTimeout", "judge", "process_tree_rss"]
