"""The fork server the extraction workers come from, and its files, stopped with the pools.

multiprocessing keeps the fork server's listening socket in a temporary directory
(`$TMPDIR/pymp-*`) that only its exit handler removes, and a process ended by a signal never runs
it: uvicorn's workers re-raise SIGTERM once shut down, and `stdio` ends with `os._exit`. So every
worker that read a page would leave its directory behind. The standard library has no public way
to stop the server or to name that directory: the private names are used here alone, and
tests/fetch/test_fork_server.py fails when they change.
"""

from __future__ import annotations

import atexit
import shutil
import tempfile
from multiprocessing import process
from pathlib import Path

#: How the directories this module makes are named: no longer than multiprocessing's own
#: (`pymp-`), as the socket's whole path must fit in 107 bytes.
PREFIX = "wsm-"


def prepare() -> None:
    """Before the fork server starts: give multiprocessing a temporary directory of this
    module's making, removed by `stop` or at a normal exit. One that multiprocessing made
    itself is removed again by its exit handler, so `stop` leaves such a directory alone."""
    config = process.current_process()._config  # type: ignore[attr-defined]
    if config.get("tempdir") is None:
        tempdir = config["tempdir"] = tempfile.mkdtemp(prefix=PREFIX)
        atexit.register(shutil.rmtree, tempdir, ignore_errors=True)


def stop() -> None:
    """Stop the fork server (it unlinks its socket) and remove the directory `prepare` made; a
    fork server is started again, with a new directory, when a worker is next needed."""
    # Imported here: Windows, which has no fork server, never gets this far.
    from multiprocessing import forkserver

    forkserver._forkserver._stop()  # type: ignore[attr-defined]
    config = process.current_process()._config  # type: ignore[attr-defined]
    tempdir = config.get("tempdir")
    if tempdir and Path(tempdir).name.startswith(PREFIX):
        config["tempdir"] = None
        shutil.rmtree(tempdir, ignore_errors=True)
