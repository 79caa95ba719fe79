"""Run the app with uvicorn: in the foreground (`prosfi serve`) or in a thread (`running`, for notebooks,
tests and the bench), always shut down on exit."""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager


def free_port(host: str = "127.0.0.1") -> int:
    with socket.socket() as s:
        s.bind((host, 0))
        return s.getsockname()[1]


def _graceful_s(app) -> float:
    """How long SIGTERM / Ctrl-C waits for requests in flight: their own deadline (queue_timeout_s), at
    most 10 minutes."""
    settings = getattr(getattr(app, "state", None), "settings", None)
    return min(600.0, settings.serve.queue_timeout_s + 5.0) if settings is not None else 30.0


def _server(app, host: str, port: int, log_level: str = "warning"):
    import uvicorn

    config = uvicorn.Config(app, host=host, port=port, log_level=log_level, lifespan="on",
                            timeout_graceful_shutdown=_graceful_s(app), access_log=False,
                            timeout_keep_alive=65)  # longer than clients keep idle connections
    return uvicorn.Server(config)


def serve_forever(app, host: str, port: int, log_level: str = "info") -> None:
    _server(app, host, port, log_level).run()


@contextmanager
def running(app, host: str = "127.0.0.1", port: int | None = None, startup_s: float = 60.0) -> Iterator[str]:
    """`with running(create_app(settings)) as url:` — the server in a thread until the block ends."""
    port = port or free_port(host)
    server = _server(app, host, port)
    thread = threading.Thread(target=server.run, name=f"prosfi-serve-{port}", daemon=True)
    thread.start()
    deadline = time.monotonic() + startup_s
    try:
        while not server.started:
            if not thread.is_alive():
                raise RuntimeError(f"prosfi serve on {host}:{port} did not start (port in use?)")
            if time.monotonic() > deadline:
                raise RuntimeError(f"prosfi serve on {host}:{port} did not start within {startup_s:g} s")
            time.sleep(0.02)
        yield f"http://{host}:{port}"
    finally:
        server.should_exit = True
        thread.join(30)
        if thread.is_alive():  # pragma: no cover - a stuck request: force it
            server.force_exit = True
            thread.join(10)


__all__ = ["free_port", "running", "serve_forever"]
