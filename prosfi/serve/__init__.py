"""`prosfi serve`: the verified process reward as an HTTP service (FastAPI + uvicorn, or Ray Serve replicas).

`create_app(ServeSettings)` is the one application every deployment runs; `prosfi.serve.client` is the
client (several URLs, retries, idempotency keys). Imports are lazy: `import prosfi.serve` needs no FastAPI.
"""

from __future__ import annotations

_LAZY = {
    "ServeConfig": "prosfi.serve.config",
    "ServeSettings": "prosfi.serve.config",
    "create_app": "prosfi.serve.app",
    "Engine": "prosfi.serve.engine",
    "ProsfiClient": "prosfi.serve.client",
}


def __getattr__(name: str):
    if name in _LAZY:
        import importlib

        return getattr(importlib.import_module(_LAZY[name]), name)
    raise AttributeError(f"module 'prosfi.serve' has no attribute {name!r}")


__all__ = ["Engine", "ProsfiClient", "ServeConfig", "ServeSettings", "create_app"]
