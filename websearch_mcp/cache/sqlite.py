"""The default cache: one SQLite file in WAL mode, opened lazily through aiosqlite.

WAL lets readers go on while another process writes; `synchronous=NORMAL` is safe with WAL and
spares a disk flush per write (a power cut may lose the last writes, never the file). The file and
its directory are created on first use. A corrupt, missing, locked or read-only file, or a full
disk, is bypassed (see `net.store_failures`), and the file is opened again once the pause is over,
so replacing a corrupt file or giving back write permission is picked up without a restart. A file
deleted or replaced while open is noticed at the next read or write (the path is checked to still
name the open file), and opened or created afresh.

A hit is one read at most (see below). The sliding expiry it earns (and its time of use, for the
least-recently-used cleanup) is kept in memory and written for all entries hit meanwhile in one
transaction, about a second later, before a cleanup and on close; until then the process's own
reads take it into account. A write per hit would cost a hit several times its read, and the WAL
grow with reads.

The entries read or written last are also kept in memory for a few seconds (`hot`): the read's
hand-off to aiosqlite's thread is most of a hit's cost on the event loop. A hit on one slides the
expiry exactly as a read does.

Reads of the file that find another under way wait for it, then go to the file together (`_read`),
and so do stores (`_store`).
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import math
import os
import time
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

import aiosqlite

from websearch_mcp.cache.base import (
    CacheHit,
    StoringCache,
    decode_value,
    lifetime,
    load_value,
    young,
)
from websearch_mcp.cache.hot import HotEntries, HotEntry
from websearch_mcp.cache.sqlite_file import (
    COUNT_AND_BYTES,
    DELETE_EXPIRED,
    DELETE_LEAST_USED,
    KEEP_OPEN_CAUSES,
    SELECT,
    TOUCH,
    UPSERT,
    WRITE_CAUSES,
    classify,
    file_identity,
    open_file,
    run,
    select_keys,
)
from websearch_mcp.cache.waiting import Write, answer, release
from websearch_mcp.net.store_failures import CacheStats, Scope, StoreFailures

#: The most keys read from the file in one query (SQLite's oldest limit is 999 parameters).
MAX_READ_BATCH = 200

#: Seconds between a hit and the write of its expiry refresh (with all hits since).
TOUCH_DELAY_SECONDS = 1.0

#: The most entries a cleanup deletes in one turn of the lock.
CLEANUP_BATCH = 500

#: A cleanup starts, before the next one is due, once a share of `max_bytes` (this part of it)
#: has been stored since the last: pages of up to megabytes each can fill a disk in minutes.
WRITTEN_SHARE = 8

_Done = TypeVar("_Done")

#: The default bound of the file's data.
MAX_BYTES = 1 << 30

#: The longest a caller waits for the file to answer its read or take its store: a disk that
#: stopped answering (a network mount) holds no search up for longer. The work stays queued.
WAIT_SECONDS = 1.0


class SqliteCache(StoringCache):
    """A cache in one SQLite file. See the module docstring; the API is `base.Cache`'s.

    `retry_seconds` is how long a failing cause is waited out before the next try, and
    `busy_timeout_ms` how long a write waits for another process's write lock. Beyond
    `max_entries` entries or `max_bytes` of data, the least used go at the next cleanup.
    """

    backend = "sqlite"

    def __init__(
        self,
        path: str | os.PathLike[str],
        *,
        ttl_seconds: float,
        max_age_seconds: float,
        max_entries: int,
        max_bytes: int = MAX_BYTES,
        clock: Callable[[], float] = time.time,
        retry_seconds: float = 30.0,
        busy_timeout_ms: int = 1000,
    ) -> None:
        self.path = Path(path).expanduser()
        self.stats = CacheStats()
        self._ttl = ttl_seconds
        self._max_age = max_age_seconds
        self._max_entries = max_entries
        self._max_bytes = max_bytes
        # Bytes stored since the last cleanup, and the cleanup they started (see WRITTEN_SHARE).
        self._written = 0
        self._size_cleanup: asyncio.Task[int] | None = None
        self._clock = clock
        self._busy_timeout_ms = int(busy_timeout_ms)
        self._guard = StoreFailures(f"sqlite cache {self.path}", self.stats, clock, retry_seconds)
        # One connection runs one statement at a time anyway; the lock also keeps a reconnect
        # from pulling the connection from under another call.
        self._lock = asyncio.Lock()
        self._db: aiosqlite.Connection | None = None
        self._identity: tuple[int, int] | None = None  # (device, inode) of the open file
        # SQLite opens a file it may not write read-only, and stays so: after a read-only
        # failure, the next write opens the file again to see whether it may write by now.
        self._reopen_to_write = False
        self._closed = False
        # Hits whose refresh is not written yet: (namespace, key) -> time of the last hit.
        self._touched: dict[tuple[str, str], float] = {}
        self._touch_writer: asyncio.Task[None] | None = None
        # Entries recently read or written (see `hot.HOT_TRUST_SECONDS`).
        self._hot = HotEntries(clock)
        # Reads waiting for the file (each caller's own future), and the task reading them.
        self._reads: dict[tuple[str, str], list[asyncio.Future[CacheHit | None]]] = {}
        self._reader: asyncio.Task[None] | None = None
        # Stores waiting for the lock, in the order asked, and the task writing them.
        self._writes: list[Write] = []
        self._writer: asyncio.Task[None] | None = None

    async def get(
        self, namespace: str, key: str, *, max_age_seconds: float | None = None
    ) -> CacheHit | None:
        entry = (namespace, key)
        hit = self._recall(entry)
        if hit is None:
            hit = await self._read(entry)
        return self.stats.counted(young(hit, max_age_seconds))

    def remembered(
        self, namespace: str, key: str, *, max_age_seconds: float | None = None
    ) -> CacheHit | None:
        # Too old: not counted here, `get` reads the entry and counts the miss.
        hit = young(self._recall((namespace, key)), max_age_seconds)
        return None if hit is None else self.stats.counted(hit)

    async def _read(self, entry: tuple[str, str]) -> CacheHit | None:
        """Read `entry` from the file, together with every read asked for meanwhile.

        Under load each trip to the connection's thread waits, several times, for the busy event
        loop to hand over the interpreter, and reads one by one queued behind each other. Reads that
        wait for the lock go in one query per namespace once it is free.
        """
        waiting: asyncio.Future[CacheHit | None] = asyncio.get_running_loop().create_future()
        self._reads.setdefault(entry, []).append(waiting)
        if self._reader is None:
            self._reader = asyncio.create_task(self._read_waiting())
        return await self._waited(waiting, "read")

    async def _read_waiting(self) -> None:
        try:
            while self._reads:
                async with self._lock:
                    batch = dict(itertools.islice(self._reads.items(), MAX_READ_BATCH))
                    for entry in batch:
                        del self._reads[entry]
                    found: dict[tuple[str, str], tuple[CacheHit, str]] = {}
                    try:
                        found = await self._get_many(list(batch))
                    finally:
                        answer(batch, found)
        finally:
            # Cancelled (the cache closing with its loop): what still waits is a miss.
            self._reader = None
            answer(self._reads, {})
            self._reads.clear()

    async def _store(self, namespace: str, key: str, ttl: float, data: str) -> None:
        """Store `data`, together with every store asked for meanwhile.

        Stores took the lock one at a time, a trip to the connection's thread each, and under
        load every trip waits for the busy event loop to come round, so under many searches at once
        each store waited for several others.
        Stores that wait for the lock go in one trip once it is free (`_write_waiting`).
        """
        entry = (namespace, key)
        self._hot.forget(entry)
        stored: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._writes.append((entry, ttl, data, stored))
        if self._writer is None:
            self._writer = asyncio.create_task(self._write_waiting())
        await self._waited(stored, "store")

    async def _waited(self, future: asyncio.Future[_Done], what: str) -> _Done | None:
        """`future`'s result, or None once `WAIT_SECONDS` have passed (counted as a `timeout`,
        logged once; a miss for a read, and the store is still written when the file answers)."""
        try:
            async with asyncio.timeout(WAIT_SECONDS):
                return await future
        except TimeoutError:
            slow = TimeoutError(f"the file took more than {WAIT_SECONDS:g} s to answer a {what}")
            self._guard.failed("timeout", slow, None)
            return None

    async def _write_waiting(self) -> None:
        try:
            while self._writes:
                async with self._lock:
                    await self._write_pending()
        finally:
            # Cancelled (the cache closing with its loop): what still waits is not stored.
            self._writer = None
            release(self._writes)
            self._writes.clear()

    async def _write_pending(self) -> None:
        """Write every store waiting, then let their callers go on. Called with the lock held."""
        batch, self._writes = self._writes, []
        try:
            await self._write_many(batch)
        finally:
            release(batch)

    async def _write_many(self, batch: list[Write]) -> None:
        """Write `batch` in one trip, in the order asked (the last of two stores of one entry
        stays). Each row is its own transaction, so the other process's writes are never held
        up for more than one. Called with the lock held."""
        if self._closed or not self._guard.allows("write"):
            return
        now = self._clock()
        rows, hot = [], []
        for (namespace, key), ttl, data, _ in batch:
            self._touched.pop((namespace, key), None)  # the new value starts afresh
            expires_at = now + lifetime(ttl, self._max_age)
            rows.append((namespace, key, data, now, now, ttl, expires_at))
            hot.append(HotEntry(data.encode(), now, ttl, expires_at, now + self._max_age, now))
        try:
            await (await self._connection(write=True)).executemany(UPSERT, rows)
        except Exception as exc:
            await self._failed(exc, "write")
            return
        self._guard.succeeded("write")
        self.stats.sets += len(rows)
        for (entry, *_), entry_hot in zip(batch, hot, strict=True):
            self._hot.remember(entry, entry_hot)
        self._written += sum(len(entry_hot.raw) for entry_hot in hot)
        if self._written > self._max_bytes // WRITTEN_SHARE and self._size_cleanup is None:
            self._size_cleanup = asyncio.create_task(self.cleanup())
            self._size_cleanup.add_done_callback(self._size_cleanup_done)

    def _size_cleanup_done(self, _: asyncio.Task[int]) -> None:
        self._size_cleanup = None

    async def cleanup(self) -> int:
        async with self._lock:
            self._written = 0
            self._hot.forget_all()
            if self._closed or not self._guard.allows("write"):
                return 0
            await self._write_touches()
        removed = 0
        while batch := await self._cleanup_batch():
            removed += batch
        return removed

    async def _cleanup_batch(self) -> int:
        """Delete up to `CLEANUP_BATCH` expired entries or, with none left, as many of the least
        used as the file holds beyond `max_entries` or `max_bytes`; how many went. One turn of the
        lock, so the reads and stores waiting go between batches rather than after a cleanup of
        thousands."""
        async with self._lock:
            if self._closed or not self._guard.allows("write"):
                return 0
            now = self._clock()
            try:
                db = await self._connection(write=True)
                expired = (now, now - self._max_age, CLEANUP_BATCH)
                removed = await run(db, DELETE_EXPIRED, expired)
                if not removed:
                    async with db.execute(COUNT_AND_BYTES) as cursor:
                        count, used = await cursor.fetchone() or (0, 0)
                    excess = count - self._max_entries
                    if excess <= 0 and used > self._max_bytes and count:
                        # As many as the excess holds at the entries' mean size (pages are
                        # far larger than answers); the next batch measures again.
                        excess = math.ceil((used - self._max_bytes) * count / used)
                    excess = min(CLEANUP_BATCH, excess)
                    removed = await run(db, DELETE_LEAST_USED, (excess,)) if excess > 0 else 0
            except Exception as exc:
                await self._failed(exc, "write")
                return 0
            self._guard.succeeded("write")
            return removed

    async def close(self) -> None:
        async with self._lock:
            if not self._closed:
                # Stores asked before the close are written (their writer finds it closed).
                await self._write_pending()
                await self._write_touches()
            self._closed = True
            self._hot.forget_all()
            await self._drop_connection()
        # Waiting for the lock or asleep: it writes nothing once the cache is closed.
        if self._touch_writer is not None:
            self._touch_writer.cancel()
        if self._size_cleanup is not None:
            self._size_cleanup.cancel()

    async def _get_many(
        self, entries: list[tuple[str, str]]
    ) -> dict[tuple[str, str], tuple[CacheHit, str]]:
        """The hits among `entries` (each with its stored JSON), read from the file: one query
        for one entry (the common case), else one per namespace."""
        if self._closed or not self._guard.allows("all"):
            return {}
        now = self._clock()
        oldest = now - self._max_age
        rows: dict[tuple[str, str], tuple[str, float, float, float]] = {}
        try:
            db = await self._connection()
            if len(entries) == 1:
                ((namespace, key),) = entries
                for found in await db.execute_fetchall(SELECT, (namespace, key, oldest)):
                    rows[(namespace, key)] = (found[0], found[1], found[2], found[3])
            else:
                by_namespace: dict[str, list[str]] = {}
                for namespace, key in entries:
                    by_namespace.setdefault(namespace, []).append(key)
                for namespace, keys in by_namespace.items():
                    query = select_keys(len(keys))
                    for found in await db.execute_fetchall(query, (namespace, *keys, oldest)):
                        rows[(namespace, found[4])] = (found[0], found[1], found[2], found[3])
        except Exception as exc:
            await self._failed(exc, "all")
            return {}
        self._guard.succeeded("all")
        hits = {}
        for entry in entries:
            self._hot.forget(entry)
            row = rows.get(entry)
            if row is not None and (hit := self._hit(entry, row, now)) is not None:
                hits[entry] = (hit, row[0])
        return hits

    def _hit(
        self, entry: tuple[str, str], row: tuple[str, float, float, float], now: float
    ) -> CacheHit | None:
        """The hit a row read from the file makes, when it is live and its value readable."""
        raw, stored_at, ttl, expires_at = row
        limit = stored_at + self._max_age
        last_hit = self._touched.get(entry)
        if last_hit is not None:
            expires_at = max(expires_at, min(last_hit + ttl, limit))
        if expires_at <= now:
            return None
        value = decode_value(raw, self._guard)
        if value is None:
            return None
        self._touch(entry, now)
        expires_at = max(expires_at, min(now + ttl, limit))
        hot = HotEntry(raw.encode(), stored_at, ttl, expires_at, limit, now)
        self._hot.remember(entry, hot)
        return CacheHit(value=value, age_seconds=max(0.0, now - stored_at))

    def _recall(self, entry: tuple[str, str]) -> CacheHit | None:
        """A hit answered from memory, when the entry is remembered, trusted still and live;
        None sends the call to the file."""
        found = None if self._closed else self._hot.trusted(entry)
        if found is None:
            return None
        hot, now = found
        try:
            value = load_value(hot.raw)
        except ValueError:
            self._hot.forget(entry)  # the file's read reports and counts it
            return None
        hot.expires_at = max(hot.expires_at, min(now + hot.ttl, hot.limit))
        self._touch(entry, now)
        return CacheHit(value=value, age_seconds=max(0.0, now - hot.stored_at))

    def _touch(self, entry: tuple[str, str], now: float) -> None:
        """Note a hit, and have its expiry refresh written within `TOUCH_DELAY_SECONDS`."""
        self._touched[entry] = now
        if self._touch_writer is None:
            self._touch_writer = asyncio.create_task(self._write_touches_later())

    async def _write_touches_later(self) -> None:
        try:
            await asyncio.sleep(TOUCH_DELAY_SECONDS)
            async with self._lock:
                if not self._closed:
                    await self._write_touches()
        finally:
            self._touch_writer = None

    async def _write_touches(self) -> None:
        """Slide the expiry of every entry hit since the last write, in one transaction; a
        failure costs the refreshes, never the hits. Called with the lock held."""
        touched, self._touched = self._touched, {}
        if not touched or not self._guard.allows("write"):
            return
        rows = [(t, t, self._max_age, ns, key) for (ns, key), t in touched.items()]
        try:
            db = await self._connection(write=True)
            await db.execute_fetchall("BEGIN IMMEDIATE")
            try:
                await db.executemany(TOUCH, rows)
                await db.execute_fetchall("COMMIT")
            except BaseException:
                with contextlib.suppress(Exception):
                    await db.execute_fetchall("ROLLBACK")
                raise
        except Exception as exc:
            await self._failed(exc, "write")
            return
        self._guard.succeeded("write")

    async def _connection(self, *, write: bool = False) -> aiosqlite.Connection:
        if write and self._reopen_to_write:
            self._reopen_to_write = False
            await self._drop_connection()
        if self._db is not None and self._same_file():
            return self._db
        if self._db is not None:
            # Deleted or replaced while open: the connection would go on with a file no one
            # else sees, so the file is opened (and created) afresh.
            self._hot.forget_all()
            self._touched.clear()
            await self._drop_connection()
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._db, self._identity = await open_file(self.path, self._busy_timeout_ms)
        return self._db

    def _same_file(self) -> bool:
        """Whether the path still names the file the connection has open (one stat call)."""
        try:
            return file_identity(self.path) == self._identity
        except OSError:
            return False

    async def _drop_connection(self) -> None:
        db, self._db = self._db, None
        if db is not None:
            # A broken file may fail its final checkpoint; there is nothing to keep.
            with contextlib.suppress(Exception):
                await db.close()

    async def _failed(self, exc: BaseException, scope: Scope) -> None:
        cause = classify(exc)
        paused: Scope = "write" if scope == "write" and cause in WRITE_CAUSES else "all"
        self._guard.failed(cause, exc, paused)
        if paused == "all":
            self._hot.forget_all()  # nothing is answered from the file while it cannot be read
        if cause == "read_only":
            self._reopen_to_write = True
        if cause not in KEEP_OPEN_CAUSES:
            await self._drop_connection()
