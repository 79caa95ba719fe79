"""Problem domains: one `Domain` per family of problem kinds (`logic`, `quantity`).

    from prosfi.domains import domain_for
    domain = domain_for(problem)          # by problem.kind
    trace = domain.parse_trace(problem, completion_text)

Rewards, eval, training and the PRM tools call the Domain, never branch on the kind; adding a
domain means adding a `Domain` (and its data), not touching those layers.
"""

from __future__ import annotations

import importlib
from typing import Any

from prosfi.domains.base import Claim, Domain

# domain name -> (module, class); modules are imported on first use (the quantity one loads Pint)
_REGISTRY: dict[str, tuple[str, str]] = {
    "logic": ("prosfi.domains.logic", "LogicDomain"),
    "quantity": ("prosfi.domains.quantity", "QuantityDomain"),
}
KIND_DOMAINS: dict[str, str] = {"true_false_uncertain": "logic", "assignment": "logic", "quantity": "quantity"}
_LOADED: dict[str, Domain] = {}


def get_domain(name: str) -> Domain:
    """The Domain called `name` (`logic`, `quantity`); ValueError for an unknown one."""
    hit = _LOADED.get(name)
    if hit is None:
        if name not in _REGISTRY:
            raise ValueError(f"unknown domain {name!r}; known: {', '.join(_REGISTRY)}")
        module, cls = _REGISTRY[name]
        hit = _LOADED[name] = getattr(importlib.import_module(module), cls)()
    return hit


def domain_for(problem: Any) -> Domain:
    """The Domain of a problem (or of a kind name)."""
    kind = problem if isinstance(problem, str) else getattr(problem, "kind", None)
    name = KIND_DOMAINS.get(kind)  # type: ignore[arg-type]
    if name is None:
        raise ValueError(f"no domain for problem kind {kind!r}; known kinds: {', '.join(KIND_DOMAINS)}")
    return get_domain(name)


def domain_names() -> tuple[str, ...]:
    return tuple(_REGISTRY)


__all__ = ["KIND_DOMAINS", "Claim", "Domain", "domain_for", "domain_names", "get_domain"]
