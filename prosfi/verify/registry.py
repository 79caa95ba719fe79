"""Backend names -> classes, and which of them can run here.

A name is one of BUILTIN or a 'module:Class' path to any `Backend` subclass (custom provers,
test doubles). Classes are referenced by path so worker processes can import them by name.
A name the user lists must be able to run (else a ValueError that says what to install); a
trailing '?' (`lean?`) or `auto` makes backends optional: reported once and skipped when absent.
"""

from __future__ import annotations

import importlib
import logging
import warnings
from dataclasses import dataclass
from typing import TYPE_CHECKING

from prosfi.verify.backend import Backend
from prosfi.verify.config import AUTO, AUTO_NAME, expand  # noqa: F401 (re-exported)

if TYPE_CHECKING:  # pragma: no cover
    from prosfi.verify.config import VerifierConfig

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


def resolve(names: tuple[str, ...], config: VerifierConfig | None = None) -> tuple[list[BackendSpec], dict[str, str]]:
    """Resolve names in order. Returns (usable specs, {name: reason} for optional backends skipped
    because they cannot run here; each is reported once as a RuntimeWarning).

    A backend named explicitly must run: if it cannot (Lean not installed or not built), that is a
    ValueError with the reason and what to do, not a verifier that silently answers `unknown`. So
    is a name that is neither builtin nor an importable 'module:Class' path."""
    specs: list[BackendSpec] = []
    skipped: dict[str, str] = {}
    for name, optional in expand(tuple(names)):
        path = BUILTIN.get(name)
        if path is None:
            if ":" not in name:
                raise ValueError(
                    f"unknown verifier backend {name!r}: use one of {sorted(BUILTIN)}, 'auto', or 'module:Class'"
                )
            path = name
        try:
            cls = load_class(path)
        except (ImportError, AttributeError) as exc:
            if name not in BUILTIN:
                raise ValueError(f"verifier backend {name!r}: cannot load {path}: {exc}") from exc
            reason = f"cannot load {path}: {exc}"  # a builtin whose optional dependency is missing
        except TypeError as exc:
            raise ValueError(f"verifier backend {name!r}: {exc}") from exc
        else:
            reason = cls.unavailable_for(config) if config is not None else cls.unavailable()
        if reason:
            if not optional:
                raise ValueError(
                    f"verifier backend {name!r} was asked for but cannot run here: {reason}. "
                    f"Fix that, or write '{name}?' (or backends='auto') to skip it when it is missing."
                )
            skipped[name] = reason
            continue
        specs.append(BackendSpec(name, path, cls))
    for name, reason in skipped.items():
        # warnings shows each distinct message once per process; the log keeps a record too
        warnings.warn(f"prosfi verifier: backend {name!r} skipped: {reason}", RuntimeWarning, stacklevel=3)
        log.debug("backend %r skipped: %s", name, reason)
    return specs, skipped


__all__ = ["AUTO", "AUTO_NAME", "BUILTIN", "BackendSpec", "expand", "load_class", "resolve"]
