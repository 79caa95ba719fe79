"""How a `Verifier` checks: which backends in which order, time limits, workers, cache size.

One dataclass in TRL's style (every field has `help`), validated in `__post_init__` so a
misconfiguration fails at construction with a message that names the field. The Lean settings
are their own dataclass (`LeanConfig`), carried in `lean`.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field

from prosfi.verify.lean.config import LeanConfig


def default_workers() -> int:
    """The cores this process may run on (cgroup/affinity aware where the OS tells us)."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):  # pragma: no cover - non-Linux
        return max(1, os.cpu_count() or 1)


# `backends="auto"`: every builtin worth running that can run here, fastest first. LeanDojo is
# left out (far slower than the REPL pool for the same theorems; ask for it by name).
AUTO_NAME = "auto"
AUTO: tuple[str, ...] = ("z3", "prover9", "lean")


def expand(names: tuple[str, ...]) -> list[tuple[str, bool]]:
    """(name, optional) in cascade order: 'auto' is AUTO; a trailing '?' marks one name optional."""
    if tuple(names) == (AUTO_NAME,):
        return [(name, True) for name in AUTO]
    out = []
    for raw in names:
        optional = raw.endswith("?")
        name = raw[:-1].strip() if optional else raw
        if name == AUTO_NAME:
            raise ValueError("verifier backends: 'auto' stands alone (it means "
                             f"{', '.join(n + '?' for n in AUTO)}); list names to choose an order")
        out.append((name, optional))
    return out


@dataclass
class VerifierConfig:
    backends: tuple[str, ...] = field(
        default=("z3", "prover9"),
        metadata={
            "help": "Backends in cascade order: z3, prover9, lean, lean_dojo, or 'module:Class' for a custom "
            "prosfi.verify.backend.Backend; the first `valid` wins, `invalid` needs a countermodel. The "
            "truth table (`truth_table`) answers what it can before any of them. A backend listed by name "
            "must be able to run here, else the verifier is not built (ValueError saying what to install "
            "or set); a trailing '?' (`z3,lean?`) makes it optional: reported once and skipped when "
            "absent. 'auto' alone means z3?, prover9?, lean?."
        },
    )
    timeout_ms: int = field(
        default=2000,
        metadata={"help": "Time limit per check and backend in milliseconds (Z3's own timeout, Prover9's "
                  "subprocess limit)."},
    )
    hard_timeout_ms: int | None = field(
        default=None,
        metadata={
            "help": "Wall-clock limit per check enforced by killing the worker process (then respawned). "
            "Default: timeout_ms per in-worker backend plus 1000 ms of grace."
        },
    )
    workers: int = field(
        default_factory=default_workers,
        metadata={"help": "Worker processes (default: the available cores). 0 runs every check in this "
                  "process without a pool and without hard timeouts: for debugging only."},
    )
    spare_workers: int = field(
        default=0,
        metadata={"help": "Workers the pool may start beyond `workers` while every worker is busy for "
                  "other concurrent callers (a service's easy requests then never wait for a hard pass); "
                  "they stay for later contention."},
    )
    cache_size: int = field(
        default=200_000,
        metadata={"help": "Verdicts kept in the LRU cache (valid/invalid/error only); 0 disables it."},
    )
    parse_cache_size: int = field(
        default=100_000,
        metadata={"help": "Parsed formulas kept (by text) in the parent process; 0 disables it."},
    )
    max_formula_chars: int = field(
        default=10_000,
        metadata={"help": "Formulas longer than this are an `error` verdict."},
    )
    truth_table: bool = field(
        default=True,
        metadata={"help": "Before any backend, even one listed first such as lean, evaluate each check "
                  "over the finite domain of its constants with exact truth tables in this process: a "
                  "countermodel found there (over all premises) is `invalid`; a ground check without "
                  "equality (every Knights & Knaves step) with none is `valid`; so is a ground, "
                  "equality-free conclusion that the ground instances of the premises of the form "
                  "∀ x̄, <quantifier-free, equality-free body> (over the check's constants) entail "
                  "propositionally, premises of any other shape dropped (ProverQA-style `∀ x, Kind x → "
                  "Nice x`, `Kind candy` ⊢ `Nice candy`). All exact or sound by universal "
                  "instantiation. False sends every check to the backends in their order."},
    )
    herbrand: bool = field(
        default=True,
        metadata={"help": "With `truth_table`, what the tables leave gets two more in-process tries before "
                  "the backends: ground (Herbrand) instances of the Skolemised premises and negated "
                  "conclusion, with equality axioms, found unsatisfiable by truth table (`valid`: "
                  "`∀ x, ∃ y, R x y`, `∀ x y, R x y → P y` ⊢ `∃ z, P z`), and a countermodel over small "
                  "domains (constants identified, up to two more elements: `invalid`). Both sound, within "
                  "the truth table's budget (atoms, nodes, and its wall clock, shared); False leaves such "
                  "checks to the backends."},
    )
    truth_table_max_atoms: int = field(
        default=16,
        metadata={"help": "Checks with more possible atoms than this (predicates × domain^arity) skip "
                  "the truth table (the universal-instance path also stops past 4,096 ground instances)."},
    )
    truth_table_max_nodes: int = field(
        default=100_000,
        metadata={"help": "Budget of the truth table per check: formula nodes evaluated (nested "
                  "quantifiers multiply them). Past it the check goes to the backends, whose timeouts bound it."},
    )
    truth_table_max_ms: float = field(
        default=250.0,
        metadata={"help": "Wall-clock backstop of the truth table per check in milliseconds; past it the "
                  "check goes to the backends."},
    )
    prover9_max_seconds: int = field(
        default=2,
        metadata={"help": "Prover9's own search limit, assign(max_seconds, n); never more than timeout_ms."},
    )
    batch_size: int = field(
        default=64,
        metadata={"help": "Most checks sent to one worker at a time (checks of one signature share a "
                  "solver within a batch)."},
    )
    lean: LeanConfig | None = field(
        default=None,
        metadata={"help": "Settings of the lean / lean_dojo backends (project, REPL workers, timeout); "
                  "None: LeanConfig's defaults, read when a Lean backend is first used. A dict is "
                  "turned into a LeanConfig."},
    )

    def __post_init__(self) -> None:
        if isinstance(self.backends, str):
            self.backends = (self.backends,)
        # 'z3,lean' (one command-line token) and ['z3', 'lean'] are the same list
        self.backends = tuple(b.strip() for item in self.backends for b in str(item).split(",") if b.strip())
        if not self.backends:
            raise ValueError("VerifierConfig.backends: name at least one backend (e.g. 'z3,prover9')")
        try:
            names = [name for name, _ in expand(self.backends)]
        except ValueError as exc:
            raise ValueError(f"VerifierConfig.backends: {exc}") from None
        if len(set(names)) != len(names):
            raise ValueError(f"VerifierConfig.backends: duplicate backend in {self.backends}")
        if isinstance(self.lean, dict):
            self.lean = LeanConfig(**self.lean)
        if self.lean is not None and not isinstance(self.lean, LeanConfig):
            raise ValueError(f"VerifierConfig.lean must be a LeanConfig, a dict or None, not "
                             f"{type(self.lean).__name__}")
        if self.timeout_ms <= 0:
            raise ValueError(f"VerifierConfig.timeout_ms must be > 0, got {self.timeout_ms}")
        if self.hard_timeout_ms is not None and self.hard_timeout_ms <= 0:
            raise ValueError(
                f"VerifierConfig.hard_timeout_ms must be > 0 or None, got {self.hard_timeout_ms}")
        if self.spare_workers < 0:
            raise ValueError(f"VerifierConfig.spare_workers must be >= 0, got {self.spare_workers}")
        if self.workers < 0:
            raise ValueError(f"VerifierConfig.workers must be >= 0 (0 = in-process), got {self.workers}")
        if self.cache_size < 0 or self.parse_cache_size < 0:
            raise ValueError("VerifierConfig.cache_size and parse_cache_size must be >= 0")
        if self.max_formula_chars <= 0:
            raise ValueError(f"VerifierConfig.max_formula_chars must be > 0, got {self.max_formula_chars}")
        if self.prover9_max_seconds <= 0:
            raise ValueError(
                f"VerifierConfig.prover9_max_seconds must be > 0, got {self.prover9_max_seconds}")
        if not 0 <= self.truth_table_max_atoms <= 20:
            raise ValueError(
                f"VerifierConfig.truth_table_max_atoms must be in 0..20, got {self.truth_table_max_atoms}")
        if self.truth_table_max_nodes <= 0 or self.truth_table_max_ms <= 0:
            raise ValueError("VerifierConfig.truth_table_max_nodes and truth_table_max_ms must be > 0")
        if self.batch_size <= 0:
            raise ValueError(f"VerifierConfig.batch_size must be > 0, got {self.batch_size}")

    def hard_limit_ms(self, n_worker_backends: int) -> int:
        if self.hard_timeout_ms is not None:
            return self.hard_timeout_ms
        return self.timeout_ms * max(1, n_worker_backends) + 1000


__all__ = ["AUTO", "AUTO_NAME", "VerifierConfig", "default_workers", "expand"]
