"""Several server processes on one port: the parent's runtime directory and the supervisor.

`serve --workers N` (N > 1) makes a private runtime directory, names it in the environment and
lets uvicorn start N workers on one listening socket. Each worker loads the same configuration
(the parent passes its command-line overrides as environment overrides) and finds there:

- `metrics/`: prometheus_client's multiprocess files, so that `/metrics` from any worker adds up
  every worker's counts;
- `cooldowns.sqlite3`: key cooldowns and circuit breakers shared by the workers;
- `cleanup.lock`: held by the one worker that runs the cache's periodic cleanup.

The directory is removed when the parent exits. Each worker's app is `app.worker_app`.
"""

from __future__ import annotations

import contextlib
import inspect
import math
import os
import shutil
import socket
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import IO, Any

#: Names the runtime directory shared by the workers of one server (set by the parent).
RUNTIME_ENV = "WEBSEARCH_WORKER_DIR"
#: Read by prometheus_client when it is imported: where the workers' metric files go.
PROMETHEUS_ENV = "PROMETHEUS_MULTIPROC_DIR"


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
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else 1
    quota = cpu_quota(cpu_max)
    return max(1, min(cores, quota) if quota else cores)


def runtime_dir() -> Path | None:
    """The shared runtime directory in a worker of a multi-process server, else None."""
    value = os.environ.get(RUNTIME_ENV)
    return Path(value) if value else None


@contextlib.contextmanager
def shared_runtime() -> Iterator[Path]:
    """Make the runtime directory (private to this user), name it in the environment that the
    workers inherit, and remove it afterwards."""
    path = Path(tempfile.mkdtemp(prefix="websearch-mcp-"))
    (path / "metrics").mkdir()
    saved = {name: os.environ.get(name) for name in (RUNTIME_ENV, PROMETHEUS_ENV)}
    os.environ[RUNTIME_ENV] = str(path)
    os.environ[PROMETHEUS_ENV] = str(path / "metrics")
    try:
        yield path
    finally:
        for name, value in saved.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value
        shutil.rmtree(path, ignore_errors=True)


class LeaderLock:
    """An exclusive lock on a file, taken without waiting: whoever holds it does the shared work.

    The kernel drops the lock when its holder exits, so another worker takes over on its next try.
    """

    def __init__(self, path: Path) -> None:
        self.path = path
        self._file: IO[bytes] | None = None

    def acquire(self) -> bool:
        """Whether this process holds the lock (taking it now if it is free)."""
        if self._file is not None:
            return True
        import fcntl  # POSIX only, as are several workers on one port

        file = self.path.open("ab")
        try:
            fcntl.flock(file, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            file.close()
            return False
        self._file = file
        return True

    def release(self) -> None:
        if self._file is not None:
            self._file.close()  # closing drops the lock
            self._file = None


def listening_socket(host: str, port: int) -> socket.socket:
    """A TCP socket listening on `host:port`, shared by the workers.

    Made here rather than by uvicorn so that it says it is TCP (`IPPROTO_TCP`): asyncio sets
    `TCP_NODELAY` only on such sockets, and without it an answer written in two parts waits
    out a 40 ms delayed ACK. Set on the listening socket as well, Linux passes it on to every
    accepted connection whatever the event loop.
    """
    family, kind, proto, _, address = socket.getaddrinfo(
        host, port, type=socket.SOCK_STREAM, proto=socket.IPPROTO_TCP, flags=socket.AI_PASSIVE
    )[0]
    sock = socket.socket(family, kind, proto)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    sock.bind(address)
    sock.listen(2048)
    sock.set_inheritable(True)
    return sock


def run_workers(app: str, workers: int, sock: socket.socket | None = None, **options: Any) -> None:
    """Serve the ASGI app factory `app` (an import string) with `workers` processes, under
    uvicorn's supervisor (which restarts a worker that dies), until it is told to stop; on
    `sock` when given, else on a `listening_socket` for `host` and `port` of `options`."""
    import uvicorn
    from uvicorn.supervisors import Multiprocess

    config = uvicorn.Config(app, factory=True, workers=workers, **options)
    sock = sock or listening_socket(config.host, config.port)
    try:
        # Older uvicorn versions take the function each worker runs; newer ones do not.
        if "target" in inspect.signature(Multiprocess).parameters:
            supervisor = Multiprocess(config, target=uvicorn.Server(config).run, sockets=[sock])
        else:
            supervisor = Multiprocess(config, sockets=[sock])
        supervisor.run()
    except KeyboardInterrupt:
        pass
    finally:
        sock.close()
