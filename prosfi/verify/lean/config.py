"""How prosfi finds and runs Lean: the project, the REPL command, the pool's limits, the tactics.

Resolution of the Lake project (first that applies): `LeanConfig.project`, the environment
variable `PROSFI_LEAN_PROJECT`, the `lean_project/` folder of a source checkout of prosfi.
"""

from __future__ import annotations

import os
import shlex
import shutil
from dataclasses import dataclass, field
from pathlib import Path

PROJECT_ENV = "PROSFI_LEAN_PROJECT"
DEFAULT_TACTICS = ("simp_all", "aesop (config := { terminal := true })", "grind")


def default_pool_size() -> int:
    """cores − 1 (one core left for the trainer / verifier parent), at least 1."""
    try:
        cores = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):  # pragma: no cover - non-Linux
        cores = os.cpu_count() or 1
    return max(1, cores - 1)


@dataclass
class LeanConfig:
    project: str | None = field(
        default=None,
        metadata={"help": f"The Lake project with Aesop and the REPL (built with `lake build`). Default: "
                  f"${PROJECT_ENV}, else lean_project/ of a prosfi source checkout."},
    )
    repl_command: tuple[str, ...] | None = field(
        default=None,
        metadata={"help": "Command that starts one REPL, run in the project folder (so give absolute paths). "
                  "Default: `lake env <built repl binary>` when it is built, else `lake exe repl`."},
    )
    header: str = field(
        default="import Aesop\nimport ProsfiHeader",
        metadata={"help": "Sent once per REPL process (env 0); every check runs against that environment."},
    )
    workers: int = field(
        default_factory=default_pool_size,
        metadata={"help": "REPL processes in the pool (default: cores − 1, at least 1)."},
    )
    timeout_s: float | None = field(
        default=10.0,
        metadata={"help": "Wall-clock limit per check; past it the REPL is killed and respawned and the "
                  "check is `unknown`. None: use the verifier's timeout_ms."},
    )
    start_timeout_s: float = field(
        default=300.0,
        metadata={"help": "Limit for starting a REPL and loading the header (the first `lake exe repl` "
                  "may build the REPL)."},
    )
    max_checks_per_process: int = field(
        default=2000,
        metadata={"help": "Recycle a REPL after this many checks (the REPL keeps every command's state, "
                  "so its memory grows). 0: never."},
    )
    max_rss_mb: int = field(
        default=6144,
        metadata={"help": "Recycle a REPL whose resident memory (with its children) exceeds this after a "
                  "check. 0: no cap."},
    )
    max_heartbeats: int = field(
        default=100_000,
        metadata={"help": "In-Lean work bound per theorem (`set_option maxHeartbeats N in`; Lean's "
                  "default is 200000, 0 = unlimited)."},
    )
    tactics: tuple[str, ...] = field(
        default=DEFAULT_TACTICS,
        metadata={"help": "Step-lemma proof: `first` over these tactics, each required to close the goal."},
    )

    def __post_init__(self) -> None:
        if isinstance(self.repl_command, str):
            self.repl_command = tuple(shlex.split(self.repl_command))
        if self.repl_command is not None:
            self.repl_command = tuple(self.repl_command)
            if not self.repl_command:
                raise ValueError("LeanConfig.repl_command: give a command or None for the default")
        if isinstance(self.tactics, str):
            self.tactics = tuple(t.strip() for t in self.tactics.split("|") if t.strip())
        self.tactics = tuple(self.tactics)
        if not self.tactics:
            raise ValueError("LeanConfig.tactics: name at least one tactic (e.g. 'simp_all|aesop')")
        from prosfi.verify.lean.sanitize import sanitize_proof

        for tactic in self.tactics:  # a step's `valid` must not rest on native_decide, sorry, …
            checked = sanitize_proof(tactic)
            if not checked.ok:
                raise ValueError(f"LeanConfig.tactics: {tactic!r} is refused: {checked.reason}")
        if self.workers < 1:
            raise ValueError(f"LeanConfig.workers must be >= 1, got {self.workers}")
        if self.timeout_s is not None and self.timeout_s <= 0:
            raise ValueError(f"LeanConfig.timeout_s must be > 0 or None, got {self.timeout_s}")
        if self.start_timeout_s <= 0:
            raise ValueError(f"LeanConfig.start_timeout_s must be > 0, got {self.start_timeout_s}")
        if self.max_checks_per_process < 0 or self.max_rss_mb < 0 or self.max_heartbeats < 0:
            raise ValueError("LeanConfig.max_checks_per_process, max_rss_mb and max_heartbeats must be >= 0")

    def project_dir(self) -> Path | None:
        """The Lake project folder, or None when none is configured or found."""
        # absolute: the REPL runs with the project as its working directory
        if self.project:
            return Path(self.project).expanduser().absolute()
        if os.environ.get(PROJECT_ENV):
            return Path(os.environ[PROJECT_ENV]).expanduser().absolute()
        checkout = Path(__file__).resolve().parents[3] / "lean_project"
        return checkout if (checkout / "lakefile.toml").exists() else None

    def command(self) -> list[str]:
        """The REPL command line (run with cwd = project_dir())."""
        if self.repl_command is not None:
            return list(self.repl_command)
        project = self.project_dir()
        if project is not None:
            for pkg in ("REPL", "repl"):
                binary = project / ".lake" / "packages" / pkg / ".lake" / "build" / "bin" / "repl"
                if binary.exists():
                    return ["lake", "env", str(binary)]
        return ["lake", "exe", "repl"]

    def unavailable(self) -> str | None:
        """None when a REPL can be started with this config, else a one-line reason that says what
        to install or set."""
        if self.repl_command is not None:
            exe = self.repl_command[0]
            return None if (shutil.which(exe) or Path(exe).exists()) else f"REPL command {exe!r} not found"
        if shutil.which("lake") is None:
            return ("no `lake` on PATH: install Lean with elan (https://lean-lang.org), build prosfi's "
                    f"lean_project (`cd lean_project && lake build`) and point prosfi at it (${PROJECT_ENV}, "
                    "LeanConfig.project or `prosfi check --lean-project`)")
        project = self.project_dir()
        if project is None or not (project / "lakefile.toml").exists() and not (project / "lakefile.lean").exists():
            return (f"no Lean project found (got {project}): set ${PROJECT_ENV}, LeanConfig.project or "
                    "`prosfi check --lean-project` to prosfi's lean_project, built with `cd lean_project && "
                    "lake build`")
        if not (project / ".lake").exists():
            return f"the Lean project {project} is not built: run `cd {project} && lake build`"
        return None


__all__ = ["DEFAULT_TACTICS", "PROJECT_ENV", "LeanConfig", "default_pool_size"]
