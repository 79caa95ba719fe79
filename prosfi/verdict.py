"""Entailment (what we ask) and Verdict (what a backend answered); shared by `verify` and `quant`.

Soundness rules (the project rule): `valid` only on a proof, `invalid` only on a
countermodel, `unknown` for anything else (timeout, resource limit, missing backend),
`error` for input that does not parse or type-check. Only `valid` earns credit.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from enum import Enum
from typing import Mapping


class Status(str, Enum):
    VALID = "valid"
    INVALID = "invalid"
    UNKNOWN = "unknown"
    ERROR = "error"

    def __str__(self) -> str:  # json.dumps(Status.VALID) -> "valid"
        return self.value


@dataclass(frozen=True)
class Entailment:
    """Do the named premises entail the conclusion? Formulas are Lean 4 syntax text.

    `premises` maps a name (h1, s2, …) to a formula; order is kept for rendering and error
    messages. `id` is carried through to the verdict's owner, never interpreted.
    """

    premises: Mapping[str, str]
    conclusion: str
    id: str | None = None


@dataclass(frozen=True)
class Verdict:
    status: Status
    backend: str | None = None  # the backend that decided ("z3", "prover9", "lean", "cache", …)
    ms: float = 0.0
    detail: str = ""
    cached: bool = False

    @property
    def valid(self) -> bool:
        return self.status is Status.VALID

    def to_json(self) -> dict:
        d = asdict(self)
        d["verdict"] = self.status.value
        del d["status"]
        d["ms"] = round(self.ms, 3)
        return d


def error(detail: str, ms: float = 0.0) -> Verdict:
    return Verdict(Status.ERROR, None, ms, detail)


def unknown(detail: str, backend: str | None = None, ms: float = 0.0) -> Verdict:
    return Verdict(Status.UNKNOWN, backend, ms, detail)


__all__ = ["Status", "Entailment", "Verdict", "error", "unknown"]
