"""Problem domains: one `Domain` per family of problem kinds (`logic`, `quantity`).

    from prosfi.domains import domain_for
    domain = domain_for(problem)          # by problem.kind
    trace = domain.parse_trace(problem, completion_text)

Rewards, eval, training and the PRM tools call the Domain, never branch on the kind; adding a
domain means adding a `Domain` (and its data) and registering it (a line in `_REGISTRY` and its kinds in
`prosfi.data.problem.KINDS`, the one list of kinds, or `register(domain)` at run time), not touching those layers.
"""

from __future__ import annotations

import importlib
from typing import Any

from prosfi.data import problem as _problem
from prosfi.domains.base import Claim, Domain, EvalColumn, Grounding

# domain name -> (module, class); modules are imported on first use (the quantity one loads Pint)
_REGISTRY: dict[str, tuple[str, str]] = {
    "logic": ("prosfi.domains.logic", "LogicDomain"),
    "quantity": ("prosfi.domains.quantity", "QuantityDomain"),
}
_LOADED: dict[str, Domain] = {}


def get_domain(name: str) -> Domain:
    """The Domain called `name` (`logic`, `quantity`); ValueError for an unknown one."""
    hit = _LOADED.get(name)
    if hit is None:
        if name not in _REGISTRY:
            raise ValueError(f"unknown domain {name!r}; known: {', '.join(domain_names())}")
        module, cls = _REGISTRY[name]
        hit = _LOADED[name] = getattr(importlib.import_module(module), cls)()
    return hit


def domain_for(problem: Any) -> Domain:
    """The Domain of a problem (or of a kind name)."""
    kind = problem if isinstance(problem, str) else getattr(problem, "kind", None)
    name = _problem.KINDS.get(kind)  # type: ignore[arg-type]
    if name is None:
        raise ValueError(f"no domain for problem kind {kind!r}; known kinds: {', '.join(_problem.KINDS)}")
    return get_domain(name)


def domain_names() -> tuple[str, ...]:
    return tuple(dict.fromkeys([*_REGISTRY, *_LOADED]))


def register(domain: Domain) -> Domain:
    """Add a Domain instance (and its `kinds`) to the registry at run time, e.g. a domain defined outside
    prosfi. A name or kind that another domain has is a ValueError."""
    if not domain.name or not domain.kinds:
        raise ValueError(f"{domain!r}: a domain needs a name and at least one kind")
    if domain.name in domain_names():
        raise ValueError(f"a domain called {domain.name!r} is registered already")
    taken = [k for k in domain.kinds if k in _problem.KINDS]
    if taken:
        raise ValueError(f"kinds {', '.join(taken)} belong to domain {_problem.KINDS[taken[0]]!r} already")
    _LOADED[domain.name] = domain
    for kind in domain.kinds:
        _problem.register_kind(kind, domain.name)
    return domain


def eval_columns() -> tuple[EvalColumn, ...]:
    """Every registered domain's eval columns, in registry order (one per metric): what `prosfi eval` may
    report beside the domain-free rates. Loads every domain."""
    seen: dict[str, EvalColumn] = {}
    for name in domain_names():
        for column in get_domain(name).eval_columns:
            seen.setdefault(column.metric, column)
    return tuple(seen.values())


__all__ = ["Claim", "Domain", "EvalColumn", "Grounding", "domain_for", "domain_names", "eval_columns",
           "get_domain", "register"]
