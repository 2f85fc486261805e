"""Cooldowns in one SQLite file, so that the worker processes of one server agree on them.

`serve --workers N` runs N processes on one port; each must skip an engine whose breaker another
opened and a key another found exhausted, without a Redis. They share this small WAL-mode file
(in the server's runtime directory, made by the parent process and removed at exit).

The file is local and each statement touches one row, so calls are synchronous: a query takes
microseconds, less than handing it to a thread would. Changes that read before they write
(`record_failure`, `claim_probe`) run in one `BEGIN IMMEDIATE` transaction, so two workers
never both count the same failure or both take a probe.

A file that fails (full, unreadable, locked past the busy timeout) never fails a search: as the
Redis store does, every change is also kept in this process, a failure is logged once per cause
and waited out for `retry_seconds` with this process's cooldowns, and a name changed meanwhile
is read from here until a later change of it reaches the file.
"""

from __future__ import annotations

import contextlib
import sqlite3
import time
from collections.abc import Callable, Iterator
from pathlib import Path

from websearch_mcp.cache.sqlite_file import classify
from websearch_mcp.net.cooldowns.store import Cooldown, MemoryCooldownStore
from websearch_mcp.net.store_failures import CacheStats, Scope, StoreFailures

#: How long a cooldown is kept after it ended (its failure count grows the next one).
KEEP_SECONDS = 3600.0
#: How long a worker waits for another's write to finish (writes are single-row and short).
#: The wait holds the worker's event loop, every search of it: as short as a Redis call's bound.
BUSY_TIMEOUT_MS = 250
#: How long opening the file may wait for the others: once, at a worker's start, when every
#: worker switches the new file to WAL at once (on a busy machine, longer than a write).
OPEN_TIMEOUT_SECONDS = 2.0

_SCHEMA = """
CREATE TABLE IF NOT EXISTS cooldowns (
    name TEXT PRIMARY KEY,
    until REAL NOT NULL,
    reason TEXT NOT NULL,
    failures INTEGER NOT NULL,
    probe_until REAL
)
"""


class SqliteCooldownStore:
    """A `CooldownStore` in the SQLite file at `path`, shared by the processes that open it.

    `clock` is the wall clock; it only decides when ended cooldowns are forgotten.
    """

    def __init__(
        self,
        path: str | Path,
        *,
        clock: Callable[[], float] = time.time,
        retry_seconds: float = 30.0,
    ) -> None:
        self.path = Path(path)
        self._clock = clock
        self.stats = CacheStats()
        self.local = MemoryCooldownStore()
        label = f"shared cooldown file {self.path} (cooldowns are per process meanwhile)"
        self._guard = StoreFailures(label, self.stats, clock, retry_seconds)
        self._local_only: set[str] = set()  # names whose latest change the file did not take
        self._db = connect_shared(self.path, _SCHEMA)

    def _usable(self, name: str, scope: Scope) -> bool:
        """Whether the file is asked about `name` (else this process's store is)."""
        return name not in self._local_only and self._guard.allows(scope)

    def _failed(self, name: str, exc: sqlite3.Error, scope: Scope) -> None:
        self._guard.failed(classify(exc), exc, scope)
        if scope == "write":
            self._local_only.add(name)

    def _shared(self, name: str) -> None:
        """A change of `name` reached the file: the file is its truth again."""
        self._guard.succeeded("write")
        self._local_only.discard(name)

    async def get(self, name: str, *, fresh: bool = False) -> Cooldown | None:
        if not self._usable(name, "all"):
            return await self.local.get(name)
        try:
            row = self._db.execute(
                "SELECT until, reason, failures FROM cooldowns WHERE name = ?", (name,)
            ).fetchone()
        except sqlite3.Error as exc:
            self._failed(name, exc, "all")
            return await self.local.get(name)
        self._guard.succeeded("all")
        return None if row is None else Cooldown(row[0], row[1], row[2])

    async def set(self, name: str, cooldown: Cooldown) -> None:
        await self.local.set(name, cooldown)
        self._change(name, lambda: self._replace(name, cooldown))

    async def delete(self, name: str) -> None:
        await self.local.delete(name)
        self._change(
            name, lambda: self._db.execute("DELETE FROM cooldowns WHERE name = ?", (name,))
        )

    def _change(self, name: str, write: Callable[[], object]) -> None:
        """`write` a change of `name` (already kept in this process) to the file, unless writes
        are waited out; either way the file is asked about `name` again only once it took one."""
        if not self._guard.allows("write"):
            self._local_only.add(name)
            return
        try:
            write()
        except sqlite3.Error as exc:
            self._failed(name, exc, "write")
            return
        self._shared(name)

    def _replace(self, name: str, cooldown: Cooldown) -> None:
        with self._transaction():
            self._put(name, cooldown)
            # Forget what ended long ago, here rather than in a loop of its own.
            self._db.execute(
                "DELETE FROM cooldowns WHERE until < ?", (self._clock() - KEEP_SECONDS,)
            )

    async def record_failure(
        self, name: str, reason: str, until_for: Callable[[int], float]
    ) -> Cooldown:
        """Count one more failure of `name` and cool it until `until_for(failures)`, atomically.

        Ends any probe lease on `name`.
        """
        if not self._usable(name, "write"):
            self._local_only.add(name)
            return await self.local.record_failure(name, reason, until_for)
        try:
            with self._transaction():
                row = self._db.execute(
                    "SELECT failures FROM cooldowns WHERE name = ?", (name,)
                ).fetchone()
                failures = (row[0] if row else 0) + 1
                cooldown = Cooldown(until_for(failures), reason, failures)
                self._put(name, cooldown)
        except sqlite3.Error as exc:
            self._failed(name, exc, "write")
            return await self.local.record_failure(name, reason, until_for)
        self._shared(name)
        await self.local.set(name, cooldown)
        return cooldown

    async def claim_probe(self, name: str, lease_seconds: float, now: float) -> bool:
        """Take the probe lease of `name` when its cooldown has ended and nobody holds one.

        True when taken (it lasts until `now + lease_seconds`); False when `name` has no
        cooldown, the cooldown still runs, or another caller's lease has not expired.
        """
        if not self._usable(name, "write"):
            return await self.local.claim_probe(name, lease_seconds, now)
        try:
            with self._transaction():
                row = self._db.execute(
                    "SELECT until, probe_until FROM cooldowns WHERE name = ?", (name,)
                ).fetchone()
                if row is None or row[0] > now or (row[1] is not None and row[1] > now):
                    return False
                self._db.execute(
                    "UPDATE cooldowns SET probe_until = ? WHERE name = ?",
                    (now + lease_seconds, name),
                )
        except sqlite3.Error as exc:
            self._failed(name, exc, "write")
            return await self.local.claim_probe(name, lease_seconds, now)
        self._guard.succeeded("write")
        return True

    async def close(self) -> None:
        self._db.close()

    def _put(self, name: str, cooldown: Cooldown) -> None:
        # A new value ends any probe lease (probe_until back to NULL).
        self._db.execute(
            "INSERT OR REPLACE INTO cooldowns (name, until, reason, failures, probe_until)"
            " VALUES (?, ?, ?, ?, NULL)",
            (name, cooldown.until, str(cooldown.reason), cooldown.failures),
        )

    def _transaction(self) -> contextlib.AbstractContextManager[None]:
        return immediate(self._db)


def connect_shared(path: Path, schema: str) -> sqlite3.Connection:
    """A connection to the SQLite file at `path` that processes share, in WAL mode with
    `schema` made. Autocommit mode: single statements commit at once, transactions are explicit
    (`immediate`). Workers that open a new file at once may each hold the lock the other needs
    to switch it to WAL: SQLite then fails one at once instead of waiting ("database is
    locked"), and that one tries again, within the busy timeout."""
    db = sqlite3.connect(
        path, timeout=OPEN_TIMEOUT_SECONDS, isolation_level=None, check_same_thread=False
    )
    deadline = time.monotonic() + OPEN_TIMEOUT_SECONDS
    while True:
        try:
            db.execute("PRAGMA journal_mode=WAL")
            db.execute("PRAGMA synchronous=NORMAL")
            db.execute(schema)
            db.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
            return db
        except sqlite3.OperationalError as exc:
            busy = (getattr(exc, "sqlite_errorcode", 0) & 0xFF) == sqlite3.SQLITE_BUSY
            if not busy or time.monotonic() >= deadline:
                db.close()
                raise
            time.sleep(0.005)


@contextlib.contextmanager
def immediate(db: sqlite3.Connection) -> Iterator[None]:
    """`BEGIN IMMEDIATE` (the write lock at once) ... `COMMIT`, or `ROLLBACK` on an error."""
    db.execute("BEGIN IMMEDIATE")
    try:
        yield
    except BaseException:
        db.execute("ROLLBACK")
        raise
    db.execute("COMMIT")
