"""The SQLite cache's file: how it is opened, its schema, the statements run on it, and how a
failed operation is classified (which causes pause writes only, which keep the connection open).
"""

from __future__ import annotations

import asyncio
import contextlib
import errno
import os
import sqlite3
import time
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import aiosqlite

SCHEMA = """
CREATE TABLE IF NOT EXISTS cache_entries (
    id INTEGER PRIMARY KEY,
    namespace TEXT NOT NULL,
    key TEXT NOT NULL,
    value TEXT NOT NULL,
    stored_at REAL NOT NULL,
    last_used REAL NOT NULL,
    ttl REAL NOT NULL,
    expires_at REAL NOT NULL,
    UNIQUE (namespace, key)
);
CREATE INDEX IF NOT EXISTS cache_entries_expires_at ON cache_entries (expires_at);
CREATE INDEX IF NOT EXISTS cache_entries_last_used ON cache_entries (last_used);
"""

# The expiry is checked by the caller: a hit not yet written may have moved it on.
SELECT = """
SELECT value, stored_at, ttl, expires_at FROM cache_entries
WHERE namespace = ? AND key = ? AND stored_at > ?
"""


def select_keys(count: int) -> str:
    """`SELECT` for `count` keys of one namespace (one search of the unique index per key), with
    each row's key."""
    marks = ", ".join("?" * count)
    return (
        "SELECT value, stored_at, ttl, expires_at, key FROM cache_entries\n"
        f"WHERE namespace = ? AND key IN ({marks}) AND stored_at > ?"
    )


# MAX: a late write never moves back what another process (or a newer value) set.
TOUCH = """
UPDATE cache_entries
SET last_used = MAX(last_used, ?), expires_at = MAX(expires_at, MIN(? + ttl, stored_at + ?))
WHERE namespace = ? AND key = ?
"""

UPSERT = """
INSERT INTO cache_entries (namespace, key, value, stored_at, last_used, ttl, expires_at)
VALUES (?, ?, ?, ?, ?, ?, ?)
ON CONFLICT (namespace, key) DO UPDATE SET
    value = excluded.value, stored_at = excluded.stored_at, last_used = excluded.last_used,
    ttl = excluded.ttl, expires_at = excluded.expires_at
"""

# A batch at a time (the last parameter): the cache's lock is let go between batches.
DELETE_EXPIRED = """
DELETE FROM cache_entries WHERE id IN (
    SELECT id FROM cache_entries WHERE expires_at <= ? OR stored_at <= ? LIMIT ?
)
"""

#: The entries, and the bytes their pages take (free pages left out: they are reused).
COUNT_AND_BYTES = """
SELECT (SELECT COUNT(*) FROM cache_entries), (page_count - freelist_count) * page_size
FROM pragma_page_count(), pragma_freelist_count(), pragma_page_size()
"""

DELETE_LEAST_USED = """
DELETE FROM cache_entries WHERE id IN (
    SELECT id FROM cache_entries ORDER BY last_used, id LIMIT ?
)
"""

CAUSES = {
    sqlite3.SQLITE_CORRUPT: "corrupt",
    sqlite3.SQLITE_NOTADB: "corrupt",
    sqlite3.SQLITE_BUSY: "locked",
    sqlite3.SQLITE_LOCKED: "locked",
    sqlite3.SQLITE_READONLY: "read_only",
    sqlite3.SQLITE_PERM: "read_only",
    sqlite3.SQLITE_FULL: "disk_full",
    sqlite3.SQLITE_CANTOPEN: "cannot_open",
    sqlite3.SQLITE_IOERR: "io_error",
}

# Causes under which the file can still be read: a failed write pauses writes only.
WRITE_CAUSES = frozenset({"locked", "read_only", "disk_full"})
# Causes that pass by themselves on the same connection. Any other closes it, so that the next
# try opens the file afresh (a replaced file, permissions given back).
KEEP_OPEN_CAUSES = frozenset({"locked", "disk_full"})


def classify(exc: BaseException) -> str:
    """The cause of a failed SQLite operation, as counted in `stats.errors`."""
    if isinstance(exc, sqlite3.Error):
        code = getattr(exc, "sqlite_errorcode", None)
        return "error" if code is None else CAUSES.get(code & 0xFF, "error")
    if isinstance(exc, OSError):  # creating the directory
        if exc.errno == errno.ENOSPC:
            return "disk_full"
        if exc.errno in (errno.EACCES, errno.EPERM, errno.EROFS):
            return "read_only"
        return "cannot_open"
    return "error"


def file_identity(path: Path) -> tuple[int, int]:
    """(device, inode) of the file `path` names: a file replaced or deleted while open is told
    apart from the one the connection has."""
    found = os.stat(path)
    return (found.st_dev, found.st_ino)


async def open_file(
    path: Path, busy_timeout_ms: int
) -> tuple[aiosqlite.Connection, tuple[int, int]]:
    """A connection to the cache file (created with its schema when new) and the file's
    identity."""
    # isolation_level=None: every statement is its own transaction, no lock held between.
    db = await aiosqlite.connect(path, isolation_level=None)
    try:
        await db.execute_fetchall(f"PRAGMA busy_timeout = {int(busy_timeout_ms)}")
        # Processes that open a new file at once (the workers of one server) may each hold the
        # lock another needs to switch it to WAL: SQLite then fails one at once instead of
        # waiting, and that one tries again, within the busy timeout. The schema is idempotent.
        deadline = time.monotonic() + busy_timeout_ms / 1000
        while True:
            try:
                await db.execute_fetchall("PRAGMA journal_mode = WAL")
                await db.execute_fetchall("PRAGMA synchronous = NORMAL")
                await db.executescript(SCHEMA)
                break
            except sqlite3.OperationalError as exc:
                if classify(exc) != "locked" or time.monotonic() >= deadline:
                    raise
                await asyncio.sleep(0.005)
        return db, file_identity(path)
    except BaseException:
        with contextlib.suppress(Exception):
            await db.close()
        raise


async def run(db: aiosqlite.Connection, sql: str, params: Iterable[Any] = ()) -> int:
    """Execute one statement to its end; the number of rows it changed."""
    async with db.execute(sql, tuple(params)) as cursor:
        await cursor.fetchall()
        return cursor.rowcount
