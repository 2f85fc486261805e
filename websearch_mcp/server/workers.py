"""Several server processes on one port: how many, their sockets and the supervisor.

`serve --workers N` (N > 1) makes a private runtime directory, names it in the environment and
lets uvicorn start N workers on the port, each on a listening socket of its own. Each worker
loads the same configuration (the parent passes the file's text as it read it and its
command-line overrides as environment overrides), stops when the parent is gone, and finds
there:

- `metrics/`: prometheus_client's multiprocess files, so that `/metrics` from any worker adds up
  every worker's counts;
- `cooldowns.sqlite3`: key cooldowns and circuit breakers shared by the workers;
- `cleanup.lock`: held by the one worker that runs the cache's periodic cleanup;
- `in-use.lock`: held by every process of the server while it runs;
- the workers' temporary files (the extraction fork server's socket, in `pymp-*`), unless the
  directory's path is too long for a socket's.

The directory is removed when the parent exits (`runtime.shared_runtime`), or, when it was
killed, by the next server started once no process holds `in-use.lock`. Each worker's app is
`app.worker_app`.

uvicorn's supervisor takes no sockets of its own choosing per worker: `run_workers` subclasses
it, past its public API. `tests/server/test_workers.py` fails when uvicorn changes under it.
"""

from __future__ import annotations

import inspect
import math
import os
import signal
import socket
import threading
import time
from pathlib import Path
from typing import Any

from websearch_mcp.runtime import PARENT_ENV

#: The exit status of a process that could not start serving, as uvicorn gives it (uvicorn's
#: `config.STARTUP_FAILURE`), on which its supervisor stops rather than start another worker.
STARTUP_FAILURE = 3

#: The cgroup v2 CPU limit of this process's container ("<quota> <period>" or "max <period>").
CPU_MAX = Path("/sys/fs/cgroup/cpu.max")


def cpu_quota(cpu_max: Path = CPU_MAX) -> int | None:
    """The cores a CPU quota allows (`docker run --cpus 1.5`: 2), or None without a quota."""
    try:
        quota, period = cpu_max.read_text().split()[:2]
        return max(1, math.ceil(int(quota) / int(period)))
    except (OSError, ValueError, ZeroDivisionError):  # no cgroup v2 file, or "max": no quota
        return None


def worker_count(setting: int | str, cpu_max: Path = CPU_MAX) -> int:
    """`server.workers` as a number: `auto` is the number of cores this process may use, fewer
    when a container's CPU quota allows fewer (more workers than that only take turns)."""
    if setting != "auto":
        return int(setting)
    # The cores this process may run on (Linux); elsewhere (macOS) the machine's.
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    cores = cores or 1
    quota = cpu_quota(cpu_max)
    return max(1, min(cores, quota) if quota else cores)


def listening_sockets(host: str, port: int, count: int = 1) -> list[socket.socket]:
    """`count` TCP sockets listening on `host:port` (port 0: one the system picks), one per
    worker.

    One per worker, with `SO_REUSEPORT`, so that the kernel spreads new connections over the
    workers. On one shared socket, the worker that wakes first accepts every connection waiting
    (the event loop takes up to the backlog at a time): 16 connections a client or proxy opened
    together all went to one worker, and the other cores idled. Where `SO_REUSEPORT` is missing
    the workers share one socket.

    Made here rather than by uvicorn so that they say they are TCP (`IPPROTO_TCP`): asyncio
    sets `TCP_NODELAY` only on such sockets, and without it an answer written in two parts waits
    out the client's delayed ACK. Set on a listening socket as well, Linux passes it on to every
    accepted connection whatever the event loop.
    """
    if count == 1 or not hasattr(socket, "SO_REUSEPORT"):
        return [_listening(_bound(host, port, reuse_port=False))]
    # Sockets sharing a port by SO_REUSEPORT would share it with another server of the same
    # user started on it too. A bind without it fails while anything listens there, as a
    # second server on a port in use must.
    with _bound(host, port, reuse_port=False) as probe:
        port = probe.getsockname()[1]
    return [_listening(_bound(host, port, reuse_port=True)) for _ in range(count)]


def _bound(host: str, port: int, *, reuse_port: bool) -> socket.socket:
    family, kind, proto, _, address = socket.getaddrinfo(
        host, port, type=socket.SOCK_STREAM, proto=socket.IPPROTO_TCP, flags=socket.AI_PASSIVE
    )[0]
    sock = socket.socket(family, kind, proto)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        if reuse_port:
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEPORT, 1)
        sock.bind(address)
    except OSError:
        sock.close()
        raise
    return sock


def _listening(sock: socket.socket) -> socket.socket:
    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    sock.listen(2048)
    sock.set_inheritable(True)
    return sock


def run_workers(
    app: str, workers: int, sockets: list[socket.socket] | None = None, **options: Any
) -> int:
    """Serve the ASGI app factory `app` (an import string) with `workers` processes, under
    uvicorn's supervisor (which restarts a worker that dies), until it is told to stop; on
    `sockets` when given, else on `listening_sockets` for `host` and `port` of `options`. The
    exit status: 0, or uvicorn's `STARTUP_FAILURE` (3, as one process gives) when the supervisor
    stopped because a worker could not start.

    With one socket per worker, worker i starts on socket i. A worker started later (in place of
    one that died, on SIGHUP or SIGTTIN) listens on all of them: no socket is left without a
    worker to accept its connections."""
    import uvicorn
    from uvicorn.supervisors import Multiprocess

    config = uvicorn.Config(app, factory=True, workers=workers, **options)
    sockets = sockets or listening_sockets(config.host, config.port, workers)
    # Older uvicorn versions take the function each worker runs; newer ones do not.
    target = {"target": uvicorn.Server(config).run} if _takes_target(Multiprocess) else {}

    class Supervisor(Multiprocess):  # type: ignore[misc]
        def init_processes(self) -> None:
            if len(self.sockets) != self.processes_num:
                super().init_processes()
                return
            for sock in self.sockets:
                process = _process(self, [sock])
                process.start()
                self.processes.append(process)

        def terminate_all(self) -> None:
            # Stopping: each worker closes its listening sockets and finishes its requests. The
            # parent's copies kept the sockets open, and a connection made meanwhile waited in
            # one, accepted by no worker, until the last request was done, then was reset; with
            # them closed it is refused at once, and its client can try elsewhere.
            for sock in self.sockets:
                sock.close()
            super().terminate_all()

    supervisor = Supervisor(config, sockets=sockets, **target)
    try:
        supervisor.run()
    except KeyboardInterrupt:
        pass
    finally:
        for sock in sockets:
            sock.close()
    # The supervisor stops on a worker's startup failure but returns as on a signal; the failed
    # worker stays in its list with uvicorn's exit status for it.
    failed = any(p.exitcode == STARTUP_FAILURE for p in supervisor.processes)
    return STARTUP_FAILURE if failed else 0


def _takes_target(kind: type) -> bool:
    return "target" in inspect.signature(kind).parameters


def _process(supervisor: Any, sockets: list[socket.socket]) -> Any:
    """One of uvicorn's worker processes for `supervisor`, on `sockets`."""
    from uvicorn.supervisors.multiprocess import Process

    # Its arguments changed between uvicorn releases: called as the installed one takes them.
    process: Any = Process
    if _takes_target(process):
        return process(supervisor.config, supervisor.target, sockets)
    return process(supervisor.config, sockets)


#: How often a worker looks whether its parent is still there.
PARENT_CHECK_SECONDS = 1.0


def stop_with_parent() -> None:
    """Stop this worker (as SIGTERM does: its searches finish) once its parent is gone: killed
    (`kill -9`, the OOM killer), it can stop no worker, and workers left serving the port would
    keep the server from starting again."""
    # Named by the parent: it may be gone before this worker has come this far.
    parent = int(os.environ.get(PARENT_ENV) or os.getppid())

    def watch() -> None:
        while os.getppid() == parent:
            time.sleep(PARENT_CHECK_SECONDS)
        os.kill(os.getpid(), signal.SIGTERM)

    threading.Thread(target=watch, name="websearch-parent-watch", daemon=True).start()
