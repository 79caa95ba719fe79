"""Launching training processes from a test so that a hang names itself and nothing outlives the test.

A training subprocess (one DeepSpeed rank, or `torchrun` with its ranks) runs in its own session with
faulthandler on and its output in files, not pipes (a grandchild that keeps a pipe open, such as a verifier
worker in its own session, cannot make the test wait for EOF). Past its timeout every process of the session
gets SIGABRT, so each Python process prints where every thread stands (faulthandler), then SIGKILL; the test
fails at once with the command, the time, those stacks and the tail of its stderr, and with any torch
extension build lock found (a lock left by a killed build makes every later DeepSpeed process wait, idle).
"""

from __future__ import annotations

import os
import signal
import subprocess
import tempfile
import time
from pathlib import Path

import pytest

TAIL = 6000  # characters of stderr (the stacks come last) and 2000 of stdout in a failure's message


def _descendants(pid: int) -> list[int]:
    """Every live process below `pid` (from /proc; empty where there is none), whatever their session."""
    children: dict[int, list[int]] = {}
    for entry in Path("/proc").iterdir() if Path("/proc").is_dir() else ():
        if not entry.name.isdigit():
            continue
        try:
            ppid = int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1])
        except (OSError, IndexError, ValueError):
            continue
        children.setdefault(ppid, []).append(int(entry.name))
    out, todo = [], [pid]
    while todo:
        for child in children.get(todo.pop(), []):
            out.append(child)
            todo.append(child)
    return out


def _is_python(pid: int) -> bool:
    try:
        argv0 = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0", 1)[0]
    except OSError:
        return False
    return Path(argv0.decode(errors="replace")).name.startswith("python")


def _signal_all(proc: subprocess.Popen, pids: list[int], sig: int) -> None:
    try:
        os.killpg(proc.pid, sig)
    except (ProcessLookupError, PermissionError):
        pass
    for pid in pids:  # those that left the session (a verifier pool's workers start their own)
        try:
            os.kill(pid, sig)
        except (ProcessLookupError, PermissionError):
            pass


def _dump_stacks(proc: subprocess.Popen) -> None:
    """SIGABRT to every Python process of the launch (faulthandler prints each thread's stack, then it dies);
    others (wandb's Go service would print every goroutine) are left to the SIGKILL that follows."""
    for pid in [proc.pid, *_descendants(proc.pid)]:
        if _is_python(pid):
            try:
                os.kill(pid, signal.SIGABRT)
            except (ProcessLookupError, PermissionError):
                pass


def build_locks(env: dict[str, str] | None = None) -> list[str]:
    """torch extension build locks present now (the launch's TORCH_EXTENSIONS_DIR or torch's default root), with
    their age."""
    root = (env or os.environ).get("TORCH_EXTENSIONS_DIR") or str(Path.home() / ".cache" / "torch_extensions")
    now = time.time()
    return [f"{lock} ({now - lock.stat().st_mtime:.0f} s old)" for lock in Path(root).glob("*/*/lock")]


def _popen_without_core_files(*args, **kwargs) -> subprocess.Popen:
    """Popen with a core-file size limit of 0, which the child inherits (the SIGABRT that makes a hung
    process print its stacks writes no core file); this process's own limit is put back at once."""
    import resource

    soft, hard = resource.getrlimit(resource.RLIMIT_CORE)
    resource.setrlimit(resource.RLIMIT_CORE, (0, hard))
    try:
        return subprocess.Popen(*args, **kwargs)
    finally:
        resource.setrlimit(resource.RLIMIT_CORE, (soft, hard))


def launch_env(env: dict[str, str]) -> dict[str, str]:
    """The environment of a launch: faulthandler on, and gloo on the loopback interface where the caller set
    none (gloo otherwise takes the address the hostname resolves to; in a container that address can be one
    the ranks cannot reach, and they wait for each other until the process group's timeout). Skips the test
    where torch has no gloo backend (an environment without it cannot run a CPU process group)."""
    import torch.distributed as dist

    if not (dist.is_available() and dist.is_gloo_available()):
        pytest.skip("torch.distributed with the gloo backend is not available in this torch build")
    out = {**env, "PYTHONFAULTHANDLER": "1", "PYTHONUNBUFFERED": "1"}
    if "GLOO_SOCKET_IFNAME" not in out and Path("/sys/class/net/lo").exists():
        out["GLOO_SOCKET_IFNAME"] = "lo"
    return out


def run_launch(cmd: list[str], env: dict[str, str], timeout: float, cwd: str | Path | None = None,
               what: str = "training run") -> subprocess.CompletedProcess:
    """Run `cmd` (its own session); past `timeout` seconds, stacks, then kill, then fail the test naming why."""
    env = launch_env(env)
    with tempfile.TemporaryFile("w+") as out, tempfile.TemporaryFile("w+") as err:
        start = time.monotonic()
        proc = _popen_without_core_files(cmd, env=env, cwd=cwd, stdout=out, stderr=err, stdin=subprocess.DEVNULL,
                                         text=True, start_new_session=True)
        try:
            proc.wait(timeout=timeout)
            hung = False
        except subprocess.TimeoutExpired:
            hung = True
            pids = _descendants(proc.pid)
            _dump_stacks(proc)  # faulthandler: every Python process prints where its threads stand
            try:
                proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                pass
            _signal_all(proc, pids + _descendants(proc.pid), signal.SIGKILL)
            proc.wait()
        finally:
            if proc.poll() is None:  # the test itself was interrupted
                _signal_all(proc, _descendants(proc.pid), signal.SIGKILL)
                proc.wait()
        out.seek(0)
        err.seek(0)
        stdout, stderr = out.read(), err.read()
    if hung:
        locks = build_locks(env)
        lock_line = ("torch extension build locks present: " + "; ".join(locks)) if locks else \
            "no torch extension build lock present"
        pytest.fail(f"{what} did not finish in {timeout:.0f} s ({time.monotonic() - start:.0f} s), killed with "
                    f"its process group: {' '.join(map(str, cmd))}\n{lock_line}\n--- stdout (tail) ---\n"
                    f"{stdout[-2000:]}\n--- stderr (tail; faulthandler stacks of every process last) ---\n"
                    f"{stderr[-TAIL:]}", pytrace=False)
    return subprocess.CompletedProcess(cmd, proc.returncode, stdout, stderr)


def failure(proc: subprocess.CompletedProcess) -> str:
    """The message of an assertion on a finished launch: exit status, stdout and stderr tails."""
    return f"exit {proc.returncode}\n--- stdout (tail) ---\n{proc.stdout[-2000:]}\n--- stderr (tail) ---\n" \
           f"{proc.stderr[-TAIL:]}"


