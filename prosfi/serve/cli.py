"""`prosfi serve [--data SPEC] [--host H --port P] [--token T] [--ray --replicas N --address auto]`.

Serves the verified reward over HTTP (routes in prosfi.serve.app; contracts in docs/serving.md). Binds
127.0.0.1 unless --host says otherwise; --token (or $PROSFI_SERVE_TOKEN) requires a bearer token.
"""

from __future__ import annotations

import argparse
import os
import sys

from prosfi.configflags import Flags
from prosfi.rewards.config import REWARD_MODES, RewardConfig
from prosfi.serve.config import ServeConfig
from prosfi.usage import UsageError

TOKEN_ENV = "PROSFI_SERVE_TOKEN"


# ServeConfig's flags (prosfi.configflags); its two byte limits are given in MiB (--max-body-mb,
# --idempotency-mb).
SERVE_FLAGS = Flags(ServeConfig, ("host", "port", "token", "max_batch", "max_queue", "queue_timeout_s",
                                  "passes", "spare_workers"),
                    notes={"token": f"(default: ${TOKEN_ENV})"})
SERVE_REWARD_FLAGS = Flags(RewardConfig, ("mode",), names={"mode": "--reward"},
                           choices={"mode": REWARD_MODES},
                           notes={"mode": "Here: the mode of a request that names none."})


def add_arguments(parser: argparse.ArgumentParser) -> None:
    from prosfi.eval.cli import add_source_arguments
    from prosfi.verify.cli import add_verifier_arguments

    d = ServeConfig()
    g = parser.add_argument_group("service")
    SERVE_FLAGS.add(g)
    SERVE_REWARD_FLAGS.add(g)
    g.add_argument("--max-body-mb", type=float, default=d.max_body_bytes / (1 << 20),
                   help="largest request body in MiB; larger: 413 (default: %(default)s)")
    g.add_argument("--idempotency-mb", type=float, default=d.idempotency_bytes / (1 << 20),
                   help="MiB of answers kept for Idempotency-Key replays, oldest forgotten first "
                   "(default: %(default)s)")
    g.add_argument("--log-level", default="info", help="uvicorn log level (default: %(default)s)")
    r = parser.add_argument_group("Ray Serve")
    r.add_argument("--ray", action="store_true", help="deploy as Ray Serve replicas (pip install 'prosfi[ray]')")
    r.add_argument("--replicas", type=int, default=1, help="replicas, each with its own verifier pool")
    r.add_argument("--address", default=None, help="Ray cluster address (auto: the running cluster; "
                   "default: start a local Ray)")
    r.add_argument("--cpus-per-replica", type=float, default=1.0, help="Ray CPUs reserved per replica")
    add_source_arguments(parser)
    add_verifier_arguments(parser)


def settings_from_args(args: argparse.Namespace):
    from prosfi.serve.config import ServeSettings
    from prosfi.verify.cli import verifier_config

    given = SERVE_FLAGS.kwargs(args)
    given["token"] = given.get("token") or os.environ.get(TOKEN_ENV) or None
    serve = ServeConfig(**given, max_body_bytes=int(args.max_body_mb * (1 << 20)),
                        idempotency_bytes=int(args.idempotency_mb * (1 << 20)))
    return ServeSettings(serve=serve, verifier=verifier_config(args), data=tuple(args.data), count=args.count,
                         limit=args.limit, data_seed=args.data_seed, reward=args.reward)


def run(args: argparse.Namespace) -> int:
    try:
        import fastapi  # noqa: F401
        import uvicorn  # noqa: F401
    except ImportError as exc:
        raise UsageError(f"{exc.name} is missing: pip install 'prosfi[serve]'") from None
    try:
        settings = settings_from_args(args)
    except ValueError as exc:
        raise UsageError(str(exc)) from None
    if args.replicas < 1:
        raise UsageError("--replicas must be >= 1")
    busy = None if args.ray else port_taken(settings.serve.host, settings.serve.port)
    if busy is not None:  # before anything is announced (it printed its URL, then uvicorn's error and exit 3)
        raise UsageError(busy)
    from prosfi.serve.engine import load_problems
    from prosfi.verify.verifier import Verifier

    try:  # a backend that cannot run here: say so now, not in every replica's startup log
        Verifier(settings.verifier).close()
    except ValueError as exc:
        raise UsageError(str(exc)) from None

    if settings.data:  # fail now, in one line, rather than in every replica
        try:
            n = len(load_problems(settings))
        except (OSError, ValueError, RuntimeError) as exc:  # a missing file, a bad spec, the hub unreachable
            raise UsageError(f"--data: {exc}") from None
        print(f"prosfi serve: {n} preloaded problem(s) from {', '.join(settings.data)}", file=sys.stderr)
    if settings.serve.host not in ("127.0.0.1", "localhost", "::1") and not settings.serve.token:
        print(f"prosfi serve: warning: listening on {settings.serve.host} without a token (--token or "
              f"${TOKEN_ENV})", file=sys.stderr)
    if args.ray:
        from prosfi.serve.ray_app import serve_on_ray

        try:
            return serve_on_ray(settings, replicas=args.replicas, address=args.address,
                                cpus_per_replica=args.cpus_per_replica)
        except ImportError:
            raise UsageError("--ray needs Ray Serve: pip install 'prosfi[ray]'") from None
    from prosfi.serve.app import create_app
    from prosfi.serve.runner import serve_forever

    print(f"prosfi serve: http://{settings.serve.host}:{settings.serve.port} (Ctrl-C stops)", file=sys.stderr)
    # Ctrl-C: uvicorn shuts down gracefully, then re-raises it; prosfi's main says so and exits 130, as others do
    serve_forever(create_app(settings), settings.serve.host, settings.serve.port, args.log_level)
    return 0


def port_taken(host: str, port: int) -> str | None:
    """Why `host:port` cannot be listened on (in use, not an address here), or None. Bound and released at
    once with SO_REUSEADDR, as uvicorn binds, so a port in TIME_WAIT is not reported."""
    import socket

    try:
        infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE)
    except socket.gaierror as exc:
        return f"--host {host}: {exc.strerror or exc}"
    family, kind, proto, _, address = infos[0]
    with socket.socket(family, kind, proto) as sock:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            sock.bind(address)
        except OSError as exc:
            return (f"cannot listen on {host}:{port}: {exc.strerror or exc} (another server is there? give "
                    "another --port)")
    return None


__all__ = ["TOKEN_ENV", "add_arguments", "run", "settings_from_args"]
