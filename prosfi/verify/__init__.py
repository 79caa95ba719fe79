"""Verification: entailments in, sound three-way verdicts out (see `prosfi.verify.verifier`).

    from prosfi.verify import Verifier, VerifierConfig, Entailment
    with Verifier(VerifierConfig(timeout_ms=2000)) as v:
        v.check_many([Entailment({"h1": "∀ x, Kind x → Nice x", "h2": "Kind candy"}, "Nice candy")])

Names are imported lazily so `import prosfi.verify.<module>` stays cheap.
"""

from __future__ import annotations

import importlib
from typing import Any

_EXPORTS = {
    "Verifier": "prosfi.verify.verifier",
    "VerifierConfig": "prosfi.verify.config",
    "Entailment": "prosfi.verdict",
    "Verdict": "prosfi.verdict",
    "Status": "prosfi.verdict",
}


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'prosfi.verify' has no attribute {name!r}")
    return getattr(importlib.import_module(module), name)


__all__ = list(_EXPORTS)
