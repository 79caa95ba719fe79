"""Backend names -> classes, and which of them can run here.

A name is one of BUILTIN or a 'module:Class' path to any `Backend` subclass (custom provers,
test doubles). Classes are referenced by path so worker processes can import them by name.
"""

from __future__ import annotations

import importlib
import logging
import warnings
from dataclasses import dataclass

from prosfi.verify.backend import Backend

log = logging.getLogger(__name__)

BUILTIN: dict[str, str] = {
    "z3": "prosfi.verify.z3_backend:Z3Backend",
    "prover9": "prosfi.verify.prover9:Prover9Backend",
    "lean": "prosfi.verify.lean:LeanBackend",
    "lean_dojo": "prosfi.verify.lean:LeanDojoBackend",
}


@dataclass(frozen=True)
class BackendSpec:
    """A resolved backend: the name the user gave, the import path, and its class."""

    name: str
    path: str
    cls: type[Backend]

    @property
    def in_worker(self) -> bool:
        return bool(self.cls.in_worker)


def load_class(path: str) -> type[Backend]:
    module_name, _, attr = path.partition(":")
    module = importlib.import_module(module_name)
    cls = getattr(module, attr)
    if not (isinstance(cls, type) and issubclass(cls, Backend)):
        raise TypeError(f"{path} is not a prosfi.verify.backend.Backend subclass")
    return cls


def resolve(names: tuple[str, ...]) -> tuple[list[BackendSpec], dict[str, str]]:
    """Resolve names in order. Returns (usable specs, {name: reason} for backends skipped because
    they cannot run here). A name that is neither builtin nor an importable 'module:Class' path
    raises ValueError: that is a misconfiguration, not a missing install."""
    specs: list[BackendSpec] = []
    skipped: dict[str, str] = {}
    for name in names:
        path = BUILTIN.get(name)
        if path is None:
            if ":" not in name:
                raise ValueError(
                    f"unknown verifier backend {name!r}: use one of {sorted(BUILTIN)} or 'module:Class'"
                )
            path = name
        try:
            cls = load_class(path)
        except (ImportError, AttributeError) as exc:
            if name in BUILTIN:  # a builtin whose optional module or dependency is not installed
                skipped[name] = f"cannot load {path}: {exc}"
                continue
            raise ValueError(f"verifier backend {name!r}: cannot load {path}: {exc}") from exc
        except TypeError as exc:
            raise ValueError(f"verifier backend {name!r}: {exc}") from exc
        reason = cls.unavailable()
        if reason:
            skipped[name] = reason
            continue
        specs.append(BackendSpec(name, path, cls))
    for name, reason in skipped.items():
        # warnings shows each distinct message once per process; the log keeps a record too
        warnings.warn(f"prosfi verifier: backend {name!r} skipped: {reason}", RuntimeWarning, stacklevel=3)
        log.debug("backend %r skipped: %s", name, reason)
    return specs, skipped


__all__ = ["BUILTIN", "BackendSpec", "load_class", "resolve"]
