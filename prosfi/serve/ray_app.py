"""`prosfi serve --ray`: the same app as Ray Serve replicas, each with its own verifier pool.

The deployment is a thin wrapper: Ray calls `ProsfiReplica.__serve_build_asgi_app__`, i.e.
`create_app(settings)`, inside each replica, so a replica runs exactly what uvicorn runs (lifespan included: its verifier starts there and
closes at shutdown). Ray Serve's proxy spreads requests over the replicas and replaces a dead one.
"""

from __future__ import annotations

import sys
import time

from prosfi.serve.config import ServeSettings


class ProsfiReplica:
    """One replica: Ray builds its ASGI app after __init__, in the replica's process."""

    def __init__(self, settings: ServeSettings) -> None:
        self.settings = settings

    def __serve_build_asgi_app__(self):
        from prosfi.serve.app import create_app

        return create_app(self.settings)


def deployment(settings: ServeSettings, replicas: int = 1, cpus_per_replica: float = 1.0,
               max_ongoing_requests: int = 256):
    """The bound Ray Serve application (pass to `serve.run`)."""
    from ray import serve

    cls = serve.ingress()(ProsfiReplica)
    dep = serve.deployment(cls, name="prosfi", num_replicas=replicas,
                           ray_actor_options={"num_cpus": cpus_per_replica},
                           max_ongoing_requests=max_ongoing_requests, health_check_period_s=2,
                           health_check_timeout_s=30)
    return dep.bind(settings)


def start(settings: ServeSettings, replicas: int = 1, address: str | None = None, cpus_per_replica: float = 1.0,
          num_cpus: int | None = None) -> str:
    """Start Ray (or join `address`), deploy, return the URL. `shutdown()` undoes it."""
    import ray
    from ray import serve

    if not ray.is_initialized():
        kwargs = {"address": address} if address else {"num_cpus": num_cpus}
        ray.init(include_dashboard=False, log_to_driver=False, **{k: v for k, v in kwargs.items() if v})
    host, port = settings.serve.host, settings.serve.port
    serve.start(http_options={"host": host, "port": port})
    serve.run(deployment(settings, replicas, cpus_per_replica), name="prosfi", route_prefix="/")
    return f"http://{host}:{port}"


def shutdown() -> None:
    import ray
    from ray import serve

    try:
        serve.shutdown()
    finally:
        ray.shutdown()


def serve_on_ray(settings: ServeSettings, replicas: int, address: str | None, cpus_per_replica: float) -> int:
    url = start(settings, replicas, address, cpus_per_replica)
    print(f"prosfi serve: {replicas} Ray Serve replica(s) at {url} (Ctrl-C stops)", file=sys.stderr)
    try:
        while True:
            time.sleep(3600)
    except KeyboardInterrupt:
        pass
    finally:
        shutdown()
    return 0


__all__ = ["ProsfiReplica", "deployment", "serve_on_ray", "shutdown", "start"]
