"""`prosfi serve --ray`: the same app as Ray Serve replicas, each with its own verifier pool.

The deployment is a thin wrapper: Ray calls `ProsfiReplica.__serve_build_asgi_app__`, i.e.
`create_app(settings, shared=...)`, inside each replica, so a replica runs exactly what uvicorn runs
(lifespan included: its verifier starts there and closes at shutdown). Ray Serve's proxy spreads requests
over the replicas and replaces a dead one. The replicas share one `SharedState` actor
(prosfi.serve.shared): an Idempotency-Key is scored once whichever replicas its retries reach, and
/metrics on any replica is the sum over all of them. SIGTERM stops like Ctrl-C: Ray Serve lets the
replicas finish what is in flight (up to `graceful_shutdown_timeout_s`) before they stop.
"""

from __future__ import annotations

import sys
import time

from prosfi.serve.config import ServeSettings


class ProsfiReplica:
    """One replica: Ray builds its ASGI app after __init__, in the replica's process."""

    def __init__(self, settings: ServeSettings, shared: tuple[str, str] | None = None) -> None:
        self.settings, self.shared = settings, shared
        if settings.serve.host in LOOPBACK:
            _replica_grpc_on_loopback()

    def __serve_build_asgi_app__(self):
        from prosfi.serve.app import create_app

        return create_app(self.settings, shared=self.shared)


NAMESPACE = "prosfi"


def shared_actor(settings: ServeSettings):
    """The `SharedState` actor of this deployment (created once, found again on a redeploy)."""
    import ray

    from prosfi.serve.shared import ACTOR_NAME, SharedState

    cfg = settings.serve
    actor = ray.remote(SharedState).options(name=ACTOR_NAME, namespace=NAMESPACE, get_if_exists=True,
                                            num_cpus=0, max_concurrency=1000).remote(
        cfg.idempotency_bytes, cfg.idempotency_size)
    _HELD.append(actor)  # owned by this driver: it lives while the handle does
    return actor


_HELD: list = []


def deployment(settings: ServeSettings, replicas: int = 1, cpus_per_replica: float = 1.0,
               max_ongoing_requests: int = 256):
    """The bound Ray Serve application (pass to `serve.run`)."""
    from ray import serve

    from prosfi.serve.shared import ACTOR_NAME

    shared_actor(settings)
    cls = serve.ingress()(ProsfiReplica)
    dep = serve.deployment(cls, name="prosfi", num_replicas=replicas,
                           ray_actor_options={"num_cpus": cpus_per_replica},
                           max_ongoing_requests=max_ongoing_requests, health_check_period_s=2,
                           health_check_timeout_s=30, graceful_shutdown_wait_loop_s=0.5,
                           graceful_shutdown_timeout_s=min(600.0, settings.serve.queue_timeout_s + 5.0))
    return dep.bind(settings, (ACTOR_NAME, NAMESPACE))


def start(settings: ServeSettings, replicas: int = 1, address: str | None = None, cpus_per_replica: float = 1.0,
          num_cpus: int | None = None) -> str:
    """Start Ray (or join `address`), deploy, return the URL. `shutdown()` undoes it. A local Ray started
    for a loopback `--host` keeps every one of its own ports (GCS, raylet, workers, agents) on loopback too."""
    loopback = settings.serve.host in LOOPBACK and not address
    if loopback:
        local_only_ray()
    import ray
    from ray import serve

    if loopback and not ray.is_initialized():
        local_only_ray()  # ray was imported before: its constant is read at import time
    if not ray.is_initialized():
        kwargs = {"address": address} if address else {"num_cpus": num_cpus}
        ray.init(include_dashboard=False, log_to_driver=False, **{k: v for k, v in kwargs.items() if v})
    host, port = settings.serve.host, settings.serve.port
    serve.start(http_options={"host": host, "port": port})
    serve.run(deployment(settings, replicas, cpus_per_replica), name="prosfi", route_prefix="/")
    return f"http://{host}:{port}"


LOOPBACK = ("127.0.0.1", "localhost", "::1")
_LOCAL_ONLY_ENV = "RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER"


def local_only_ray() -> None:
    """Make the Ray started next use 127.0.0.1 as its node address, so its GCS, raylet, worker and agent
    servers listen on loopback only (Ray otherwise resolves 127.0.0.1 to the node's external address and
    listens on every interface). Ray reads this switch (`RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER=0`, its
    single-machine mode) from the environment at import; the processes it starts inherit it."""
    import os
    import sys

    os.environ[_LOCAL_ONLY_ENV] = "0"
    constants = sys.modules.get("ray._private.ray_constants")
    if constants is not None:
        constants.ENABLE_RAY_CLUSTER = False


def _replica_grpc_on_loopback() -> None:
    """In a replica of a loopback service: Ray Serve 2.60 binds each replica's inter-deployment gRPC server
    to "[::]:0" (every interface) with no option to change it; bind it to 127.0.0.1 instead (the node
    address of a single-machine Ray, `local_only_ray`). Called before Ray starts that server; a Ray
    without this private hook is left as it is."""
    try:
        from ray.serve._private import replica as _replica
    except ImportError:  # pragma: no cover - another Ray layout
        return
    bind = getattr(_replica, "add_port_to_grpc_server", None)
    if bind is None or getattr(bind, "_prosfi_loopback", False):
        return

    def loopback(server, address):
        return bind(server, address.replace("[::]", "127.0.0.1", 1) if address.startswith("[::]") else address)

    loopback._prosfi_loopback = True
    _replica.add_port_to_grpc_server = loopback


def shutdown() -> None:
    import ray
    from ray import serve

    try:
        serve.shutdown()
    finally:
        _HELD.clear()
        ray.shutdown()


def serve_on_ray(settings: ServeSettings, replicas: int, address: str | None, cpus_per_replica: float) -> int:
    import signal

    def _stop(signum, frame):  # SIGTERM (a scheduler, `kill`) stops gracefully, like Ctrl-C
        raise KeyboardInterrupt

    url = start(settings, replicas, address, cpus_per_replica)
    signal.signal(signal.SIGTERM, _stop)  # after ray.init, which installs its own handler
    print(f"prosfi serve: {replicas} Ray Serve replica(s) at {url} (Ctrl-C or SIGTERM stops)", file=sys.stderr)
    try:
        while True:
            time.sleep(3600)
    except KeyboardInterrupt:
        signal.signal(signal.SIGTERM, signal.SIG_DFL)  # a second SIGTERM stops at once
        print("prosfi serve: stopping; waiting for the requests in flight", file=sys.stderr)
        drain(min(600.0, settings.serve.queue_timeout_s + 5.0))
    finally:
        shutdown()
    return 0


def drain(timeout_s: float) -> bool:
    """Wait until no replica is answering a request (their `prosfi_in_flight`, pushed every second to the
    shared actor), at most `timeout_s`; True when drained. Ray Serve's own shutdown tears the proxy down
    at once, so the wait is here."""
    import ray

    from prosfi.serve.app import METRICS_PUSH_S
    from prosfi.serve.shared import merge_metrics

    if not _HELD:
        return True
    deadline = time.monotonic() + timeout_s
    time.sleep(METRICS_PUSH_S * 1.5)  # every replica has pushed since the signal
    idle = 0
    while time.monotonic() < deadline:
        try:
            text = merge_metrics(ray.get(_HELD[0].all_metrics.remote(30.0), timeout=10))
        except Exception:  # noqa: BLE001 - the actor is gone: nothing to wait for
            return True
        busy = sum(float(line.rsplit(" ", 1)[1]) for line in text.splitlines()
                   if line.startswith("prosfi_in_flight"))
        idle = idle + 1 if busy <= 0 else 0
        if idle >= 2:
            return True
        time.sleep(METRICS_PUSH_S / 2)
    return False


__all__ = ["ProsfiReplica", "deployment", "drain", "serve_on_ray", "shutdown", "start"]
