"""The runtime directory that the worker processes of one server share, and the lock that lets
one of them do the shared work (`serve --workers N`, see `server.workers`)."""

from __future__ import annotations

import contextlib
import os
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import IO

#: Names the runtime directory shared by the workers of one server (set by the parent).
RUNTIME_ENV = "WEBSEARCH_WORKER_DIR"
#: Read by prometheus_client when it is imported: where the workers' metric files go.
PROMETHEUS_ENV = "PROMETHEUS_MULTIPROC_DIR"
#: The process id of the workers' parent, which they stop without.
PARENT_ENV = "WEBSEARCH_WORKER_PARENT"
#: Runtime directories are made in the temporary directory under this prefix.
PREFIX = "websearch-mcp-"
#: Held (shared) by every process of the server a runtime directory belongs to, for as long as it
#: runs: the kernel lets go of a killed process's locks, so a directory whose lock can be taken
#: exclusively is one no process uses any more.
IN_USE_LOCK = "in-use.lock"


def runtime_dir() -> Path | None:
    """The shared runtime directory in a worker of a multi-process server, else None."""
    value = os.environ.get(RUNTIME_ENV)
    return Path(value) if value else None


def running(pid: int) -> bool:
    """Whether process `pid` is running (on this machine, as a worker of this server is)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        pass  # alive, another user's
    return True


def hold_in_use(path: Path, name: str = IN_USE_LOCK) -> IO[bytes]:
    """Hold the shared lock on the runtime directory `path` (see `IN_USE_LOCK`; `name` is its
    file) until the file returned is closed, or the process ends."""
    import fcntl  # POSIX only, as are several workers on one port

    file = (path / name).open("ab")
    fcntl.flock(file, fcntl.LOCK_SH)
    return file


#: What multiprocessing puts after the temporary directory for the extraction fork server's
#: socket, and the longest socket path macOS takes, in bytes (Linux 107).
_FORK_SERVER_SOCKET = "/pymp-12345678/listener-12345678"
_MAX_SOCKET_PATH = 103


def temporary_files_in_runtime_dir() -> None:
    """In a worker: make its temporary files in the runtime directory, where they go with the
    server. multiprocessing removes the directory of the extraction fork server's socket only at
    a normal exit, which a worker never makes: uvicorn raises the stop signal again once it has
    stopped, and the signal ends the process. Not where the socket's path would be too long."""
    shared = runtime_dir()
    if (
        shared is not None
        and len(os.fsencode(f"{shared}{_FORK_SERVER_SOCKET}")) <= _MAX_SOCKET_PATH
    ):
        tempfile.tempdir = str(shared)


#: This process's hold on its runtime directory, kept for its life.
_held: list[IO[bytes]] = []


def hold_runtime_dir() -> None:
    """In a worker: hold its runtime directory in use for as long as the process runs."""
    shared = runtime_dir()
    if shared is not None and not _held:
        # Without it the worker still serves: its parent holds the directory while it lives.
        with contextlib.suppress(OSError):
            _held.append(hold_in_use(shared))


def remove_abandoned(temp: Path) -> None:
    """Remove the runtime directories in `temp` that no process uses any more: their server was
    killed (`kill -9`, the OOM killer) and could not remove its own."""
    import fcntl

    for path in temp.glob(f"{PREFIX}*"):
        try:
            if path.is_symlink() or path.stat().st_uid != os.getuid():
                continue
            with (path / IN_USE_LOCK).open("rb") as lock:
                fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
                shutil.rmtree(path, ignore_errors=True)
        except OSError:  # in use, not such a directory, or another user's
            continue


@contextlib.contextmanager
def shared_runtime() -> Iterator[Path]:
    """Make the runtime directory (private to this user) and hold it in use, name it and this
    process in the environment that the workers inherit, and remove it afterwards; first remove
    any that a server killed left behind."""
    remove_abandoned(Path(tempfile.gettempdir()))
    path = Path(tempfile.mkdtemp(prefix=PREFIX))
    # Locked before it has its name: a directory being made is never taken for abandoned.
    in_use = hold_in_use(path, f"{IN_USE_LOCK}.new")
    (path / f"{IN_USE_LOCK}.new").rename(path / IN_USE_LOCK)
    (path / "metrics").mkdir()
    saved = {name: os.environ.get(name) for name in (RUNTIME_ENV, PROMETHEUS_ENV, PARENT_ENV)}
    os.environ[RUNTIME_ENV] = str(path)
    os.environ[PROMETHEUS_ENV] = str(path / "metrics")
    os.environ[PARENT_ENV] = str(os.getpid())
    try:
        yield path
    finally:
        for name, value in saved.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value
        shutil.rmtree(path, ignore_errors=True)
        in_use.close()


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
