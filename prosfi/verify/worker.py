"""The program a pool worker process runs: build the backends once, then answer batches.

Started as `python -m prosfi.verify.worker FD` (a plain subprocess, not multiprocessing: the
caller's `__main__` is never re-imported, torch is never forked, and it works from any thread).
FD is one end of a socketpair wrapped in a multiprocessing Connection (pickled messages):

  parent -> worker: ("init", sys_path, backend_paths, config) first;
                    then (batch_id, [(signature, check), …], timeout_ms, stage) per batch, or
                    None to stop; `stage` lists the indices of the backends to run, in order
  worker -> parent: ("ready", pid) after start-up, or ("fatal", message) and exit;
                    then one (batch_id, index, status, backend, ms, detail) per check, sent as
                    soon as it is decided, so the parent always knows which check is running
                    (the first unanswered one) and can kill the worker when it overruns.
"""

from __future__ import annotations

import os
import signal
import sys
import threading
import time
import traceback
from multiprocessing.connection import Connection


def _exit_when_orphaned(parent_pid: int) -> None:
    """Our parent may die without closing the socket cleanly (SIGKILL): do not outlive it."""
    while True:
        time.sleep(1.0)
        if os.getppid() != parent_pid:
            os._exit(0)


def serve(conn: Connection) -> None:
    try:
        _, sys_path, backend_paths, config = conn.recv()
        for entry in reversed(sys_path):  # the parent's path, so custom backends import here too
            if entry not in sys.path:
                sys.path.insert(0, entry)
        from prosfi.verify.cascade import Cascade
        from prosfi.verify.registry import load_class

        backends = [load_class(path).from_config(config) for path in backend_paths]
    except BaseException as exc:  # report why, so the parent fails with a clear message
        try:
            conn.send(("fatal", f"{type(exc).__name__}: {exc}\n{traceback.format_exc(limit=4)}"))
        except OSError:  # the parent is gone too
            pass
        return
    cascade = Cascade(backends)
    conn.send(("ready", os.getpid()))
    try:
        while True:
            try:
                msg = conn.recv()
            except (EOFError, OSError):  # the parent went away
                break
            if msg is None:
                break
            batch_id, items, timeout_ms, stage = msg
            sessions: dict = {}  # signature -> checker, for this batch
            for index, (signature, check) in enumerate(items):
                run = sessions.get(signature)
                if run is None:
                    run = sessions[signature] = cascade.session(signature, timeout_ms, stage)
                v = run(check)
                conn.send((batch_id, index, v.status.value, v.backend, v.ms, v.detail))
    except (BrokenPipeError, ConnectionResetError):
        pass
    finally:
        cascade.close()


def main(argv: list[str]) -> None:
    fd = int(argv[1])
    # Ctrl-C reaches the whole process group: the parent decides when a worker stops (it closes the pipe
    # or kills it), so a training step that finishes after Ctrl-C still has its verifier
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    threading.Thread(target=_exit_when_orphaned, args=(os.getppid(),), daemon=True).start()
    conn = Connection(fd)
    try:
        serve(conn)
    except KeyboardInterrupt:  # pragma: no cover
        pass
    finally:
        conn.close()


if __name__ == "__main__":
    main(sys.argv)
