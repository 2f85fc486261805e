"""The SQLite backend on real files: WAL, creation on first use, and failing open.

Permission tests: the suite often runs as root, whom permission bits do not stop. There the test
drops its effective uid to `nobody` (os.seteuid, which glibc applies to every thread, so also to
aiosqlite's worker) around the calls that must meet the permission bits, and takes root back
after; the files live in a world-traversable directory under the system temp dir for that.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import shutil
import sqlite3
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import aiosqlite
import pytest

from testing.cache_helpers import FakeClock
from websearch_mcp.cache import open_cache
from websearch_mcp.cache import sqlite as sqlite_module
from websearch_mcp.cache.sqlite import SqliteCache, classify
from websearch_mcp.cache.sqlite_file import COUNT_AND_BYTES, open_file
from websearch_mcp.config import CacheSettings

NOBODY = 65534


@pytest.fixture
def open_dir() -> Iterator[Path]:
    """A directory that the unprivileged user can reach and write (removed afterwards)."""
    path = Path(tempfile.mkdtemp(prefix="websearch-mcp-cache-"))
    path.chmod(0o777)
    yield path
    for sub in path.rglob("*"):
        if sub.is_dir():
            sub.chmod(0o755)
    shutil.rmtree(path)


@contextlib.contextmanager
def without_root() -> Iterator[None]:
    """Run the block under the permission bits (effective uid nobody when running as root)."""
    if os.geteuid() != 0:
        yield
        return
    os.seteuid(NOBODY)
    try:
        yield
    finally:
        os.seteuid(0)


def make(path: Path, clock: FakeClock, **options: int) -> SqliteCache:
    return SqliteCache(
        path, ttl_seconds=21_600, max_age_seconds=86_400, max_entries=1000, clock=clock, **options
    )


def cache_warnings(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [
        r.getMessage()
        for r in caplog.records
        if r.name == "websearch_mcp.cache" and r.levelno == logging.WARNING
    ]


async def test_file_and_directory_made_on_first_use_in_wal_mode(
    tmp_path: Path, clock: FakeClock
) -> None:
    path = tmp_path / "deep" / "dir" / "cache.sqlite3"
    cache = open_cache(CacheSettings(path=path), clock=clock)
    assert not path.parent.exists()  # opening the cache touches nothing
    await cache.set("web", "k", {"v": 1})
    await cache.close()
    with contextlib.closing(sqlite3.connect(path)) as db:
        assert db.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    again = open_cache(CacheSettings(path=path), clock=clock)
    hit = await again.get("web", "k")
    await again.close()
    assert hit is not None and hit.value == {"v": 1}


async def test_concurrent_calls_share_one_connection(tmp_path: Path, clock: FakeClock) -> None:
    cache = make(tmp_path / "cache.sqlite3", clock)
    await asyncio.gather(*(cache.set("web", f"k{i}", {"i": i}) for i in range(50)))
    hits = await asyncio.gather(*(cache.get("web", f"k{i}") for i in range(50)))
    await cache.close()
    assert [hit.value["i"] for hit in hits if hit] == list(range(50))
    assert not cache.stats.errors


async def test_stores_waiting_for_the_lock_go_to_the_file_in_one_trip(
    tmp_path: Path, clock: FakeClock, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "cache.sqlite3"
    cache = make(path, clock)
    await cache.set("web", "first", {"v": 0})  # the connection is open
    trips: list[int] = []
    executemany = aiosqlite.Connection.executemany

    async def counted(self: aiosqlite.Connection, sql: str, rows: Any) -> Any:
        rows = list(rows)
        trips.append(len(rows))
        return await executemany(self, sql, rows)

    monkeypatch.setattr(aiosqlite.Connection, "executemany", counted)
    async with cache._lock:  # another call holds it: the stores below wait
        stores = [asyncio.create_task(cache.set("web", f"k{i}", {"i": i})) for i in range(20)]
        stores.append(asyncio.create_task(cache.set("web", "k3", {"i": "again"})))
        await asyncio.sleep(0.05)
        assert not any(store.done() for store in stores)
    await asyncio.gather(*stores)
    assert trips == [21]
    assert cache.stats.sets == 22
    with contextlib.closing(sqlite3.connect(path)) as other:
        rows = dict(other.execute("SELECT key, value FROM cache_entries").fetchall())
    assert len(rows) == 21 and rows["k3"] == '{"i":"again"}'  # the later of two stores stays
    hits = [await cache.get("web", f"k{i}") for i in range(20)]
    await cache.close()
    assert [h.value["i"] for h in hits if h] == [*range(3), "again", *range(4, 20)]


async def test_a_store_whose_caller_gave_up_leaves_the_others_their_stores(
    tmp_path: Path, clock: FakeClock
) -> None:
    path = tmp_path / "cache.sqlite3"
    cache = make(path, clock)
    await cache.set("web", "first", {"v": 0})  # the connection is open
    try:
        async with cache._lock:  # another call holds it: the stores below wait
            leaving = asyncio.create_task(cache.set("web", "left", {"v": 1}))
            staying = asyncio.create_task(cache.set("web", "stayed", {"v": 2}))
            await asyncio.sleep(0.05)
            leaving.cancel()
        await asyncio.wait_for(staying, 5)
        hit = await cache.get("web", "stayed")
    finally:
        await cache.close()
    assert leaving.cancelled() and hit is not None and hit.value == {"v": 2}


async def test_a_store_whose_caller_gave_up_holds_up_no_other_store(
    tmp_path: Path, clock: FakeClock
) -> None:
    cache = make(tmp_path / "cache.sqlite3", clock)
    await cache.set("web", "first", {"v": 0})  # the connection is open
    try:
        async with cache._lock:  # another call holds it: the stores below wait together
            leaving = asyncio.create_task(cache.set("web", "left", {"v": 1}))
            staying = asyncio.create_task(cache.set("web", "stayed", {"v": 2}))
            await asyncio.sleep(0.05)
            leaving.cancel()
        # Let go once its batch is written, not after waiting out the file's time.
        await asyncio.wait_for(staying, sqlite_module.WAIT_SECONDS / 2)
    finally:
        await cache.close()
    assert not cache.stats.errors


async def test_a_store_waiting_when_the_cache_closes_is_written(
    tmp_path: Path, clock: FakeClock
) -> None:
    path = tmp_path / "cache.sqlite3"
    cache = make(path, clock)
    await cache.set("web", "kept", {"v": 1})
    async with cache._lock:
        late = asyncio.create_task(cache.set("web", "late", {"v": 2}))
        closing = asyncio.create_task(cache.close())
        await asyncio.sleep(0.05)
    await asyncio.wait_for(asyncio.gather(late, closing), 5)
    with contextlib.closing(sqlite3.connect(path)) as other:
        keys = [k for (k,) in other.execute("SELECT key FROM cache_entries")]
    assert sorted(keys) == ["kept", "late"]


async def test_hit_refreshes_are_written_for_other_processes_within_a_moment(
    tmp_path: Path, clock: FakeClock, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(sqlite_module, "TOUCH_DELAY_SECONDS", 0.01)
    path = tmp_path / "cache.sqlite3"
    cache = make(path, clock)
    for name in ("a", "b", "c"):
        await cache.set("web", name, {"v": name})
    stored = clock()
    clock.advance(20_000)
    assert await cache.get("web", "a") is not None
    assert await cache.get("web", "b") is not None
    await asyncio.sleep(0.3)  # written without any further call
    with contextlib.closing(sqlite3.connect(path)) as other:
        rows = dict(other.execute("SELECT key, last_used FROM cache_entries").fetchall())
    assert rows == {"a": stored + 20_000, "b": stored + 20_000, "c": stored}
    await cache.close()


async def test_a_hit_refresh_pending_at_close_is_kept(tmp_path: Path, clock: FakeClock) -> None:
    path = tmp_path / "cache.sqlite3"
    cache = make(path, clock)
    await cache.set("web", "k", {"v": 1})
    clock.advance(20_000)
    assert await cache.get("web", "k") is not None  # slides the 6 h expiry by 20,000 s
    await cache.close()
    clock.advance(20_000)  # past the first expiry, within the slid one
    reopened = make(path, clock)
    assert await reopened.get("web", "k") is not None
    await reopened.close()


async def test_corrupt_file_fails_open_then_recovers_when_replaced(
    tmp_path: Path, clock: FakeClock, caplog: pytest.LogCaptureFixture
) -> None:
    path = tmp_path / "cache.sqlite3"
    first = make(path, clock)
    await first.set("web", "k", {"v": 1})
    await first.close()
    backup = tmp_path / "backup.sqlite3"
    shutil.copy(path, backup)
    garbage = b"this is not a database\n" * 400
    path.write_bytes(garbage)

    cache = make(path, clock)
    with caplog.at_level(logging.INFO, logger="websearch_mcp.cache"):
        assert await cache.get("web", "k") is None
        await cache.set("web", "k2", {"v": 2})  # waits the cause out: no second try
        assert cache.stats.errors == {"corrupt": 1}
        assert cache.stats.bypassed == 1
        clock.advance(31)
        assert await cache.get("web", "k") is None  # tried again: still corrupt
        assert cache.stats.errors == {"corrupt": 2}
        assert path.read_bytes() == garbage  # a file the cache cannot read is never deleted
        warnings = cache_warnings(caplog)
        assert len(warnings) == 1
        assert "corrupt" in warnings[0] and str(path) in warnings[0]

        shutil.copy(backup, path)
        clock.advance(31)
        hit = await cache.get("web", "k")
        assert hit is not None and hit.value == {"v": 1}
        await cache.set("web", "k2", {"v": 2})
        assert await cache.get("web", "k2") is not None
    await cache.close()
    assert any("works again after corrupt" in r.getMessage() for r in caplog.records)
    assert len(cache_warnings(caplog)) == 1


async def failed_on_garbage(path: Path, clock: FakeClock) -> SqliteCache:
    """A cache on a file of garbage, after its first read failed (the 30 s wait begins)."""
    path.write_bytes(b"this is not a database\n" * 400)
    cache = make(path, clock)
    assert await cache.get("web", "k") is None
    assert cache.stats.errors == {"corrupt": 1}
    return cache


async def test_a_clock_set_back_does_not_stretch_the_wait_after_a_failure(
    tmp_path: Path, clock: FakeClock
) -> None:
    path = tmp_path / "cache.sqlite3"
    cache = await failed_on_garbage(path, clock)
    path.unlink()  # the cause is gone
    clock.advance(-3600)  # the wall clock is set back an hour (an NTP step, a VM resumed)
    clock.advance(31)
    await cache.set("web", "k", {"v": 1})
    hit = await cache.get("web", "k")  # back after the 30 s wait, not after the hour
    assert hit is not None and hit.value == {"v": 1}
    assert cache.stats.cause is None
    await cache.close()


async def test_the_wait_after_a_failure_lasts_exactly_retry_seconds(
    tmp_path: Path, clock: FakeClock
) -> None:
    cache = await failed_on_garbage(tmp_path / "cache.sqlite3", clock)
    clock.advance(29.5)
    assert await cache.get("web", "k") is None
    assert (cache.stats.errors, cache.stats.bypassed) == ({"corrupt": 1}, 1)
    clock.advance(0.5)  # 30 s on: the wait is over, the file is tried again
    assert await cache.get("web", "k") is None
    assert (cache.stats.errors, cache.stats.bypassed) == ({"corrupt": 2}, 1)
    await cache.close()


async def test_directory_that_cannot_be_made_fails_open_then_recovers(
    tmp_path: Path, clock: FakeClock
) -> None:
    blocker = tmp_path / "blocker"
    blocker.write_text("a file where the cache's directory should be")
    path = blocker / "sub" / "cache.sqlite3"
    cache = make(path, clock)
    assert await cache.get("web", "k") is None
    await cache.set("web", "k", {"v": 1})
    assert cache.stats.errors == {"cannot_open": 1}
    blocker.unlink()
    clock.advance(31)
    await cache.set("web", "k", {"v": 1})
    assert await cache.get("web", "k") is not None
    assert path.is_file()
    await cache.close()


async def test_read_only_directory_fails_open_then_recovers(
    open_dir: Path, clock: FakeClock
) -> None:
    folder = open_dir / "ro"
    folder.mkdir()
    folder.chmod(0o555)
    cache = make(folder / "cache.sqlite3", clock)
    with without_root():
        assert await cache.get("web", "k") is None
        await cache.set("web", "k", {"v": 1})
    assert cache.stats.errors == {"cannot_open": 1}
    assert not (folder / "cache.sqlite3").exists()

    folder.chmod(0o777)
    clock.advance(31)
    with without_root():
        await cache.set("web", "k", {"v": 1})
        assert await cache.get("web", "k") is not None
        await cache.close()
    assert cache.stats.errors == {"cannot_open": 1}


async def test_read_only_file_still_serves_hits_and_skips_writes(
    open_dir: Path, clock: FakeClock, caplog: pytest.LogCaptureFixture
) -> None:
    path = open_dir / "cache.sqlite3"
    first = make(path, clock)
    await first.set("web", "old", {"v": 1})
    await first.close()
    path.chmod(0o666)
    # What the first cache left behind belongs to root: that alone must not block the next.
    for extra in open_dir.glob("cache.sqlite3-*"):
        extra.chmod(0o666)
    path.chmod(0o444)

    cache = make(path, clock)
    with without_root(), caplog.at_level(logging.WARNING, logger="websearch_mcp.cache"):
        hit = await cache.get("web", "old")  # its expiry refresh fails: reads go on
        assert hit is not None and hit.value == {"v": 1}
        await cache.set("web", "new", {"v": 2})
        assert await cache.get("web", "old") is not None
        assert await cache.get("web", "new") is None
    assert cache.stats.errors == {"read_only": 1}
    assert cache.stats.hits == 2
    assert len(cache_warnings(caplog)) == 1

    # SQLite made the -wal and -shm files with the database file's mode: all three come back.
    for file in open_dir.glob("cache.sqlite3*"):
        file.chmod(0o666)
    clock.advance(31)
    with without_root():
        await cache.set("web", "new", {"v": 2})
        assert await cache.get("web", "new") is not None
        await cache.close()
    assert cache.stats.errors == {"read_only": 1}


async def test_write_lock_held_elsewhere_pauses_writes_only(
    tmp_path: Path, clock: FakeClock
) -> None:
    path = tmp_path / "cache.sqlite3"
    cache = make(path, clock, busy_timeout_ms=50)
    await cache.set("web", "old", {"v": 1})
    other = sqlite3.connect(path, isolation_level=None)
    try:
        other.execute("BEGIN IMMEDIATE")  # another process writing
        assert await cache.get("web", "old") is not None  # WAL: readers are not blocked
        await cache.set("web", "new", {"v": 2})
        assert cache.stats.errors == {"locked": 1}
        assert await cache.get("web", "new") is None
        other.execute("COMMIT")
    finally:
        other.close()
    clock.advance(31)
    await cache.set("web", "new", {"v": 2})
    assert await cache.get("web", "new") is not None
    await cache.close()


async def test_full_disk_pauses_writes_only(tmp_path: Path, clock: FakeClock) -> None:
    cache = make(tmp_path / "cache.sqlite3", clock)
    await cache.set("web", "old", {"v": 1})
    db = cache._db  # a page quota is how SQLite can be made to see a full disk
    assert db is not None
    async with db.execute("PRAGMA page_count") as cursor:
        (pages,) = await cursor.fetchone() or (0,)
    await db.execute(f"PRAGMA max_page_count = {pages}")

    await cache.set("web", "big", {"text": "x" * 200_000})
    assert cache.stats.errors == {"disk_full": 1}
    assert await cache.get("web", "old") is not None
    assert await cache.get("web", "big") is None

    await db.execute("PRAGMA max_page_count = 1073741823")  # space freed
    clock.advance(31)
    await cache.set("web", "big", {"text": "x" * 200_000})
    assert await cache.get("web", "big") is not None
    await cache.close()


def test_causes_are_named_from_sqlite_error_codes() -> None:
    def error(code: int) -> sqlite3.Error:
        exc = sqlite3.OperationalError("x")
        exc.sqlite_errorcode = code  # type: ignore[attr-defined]
        return exc

    assert classify(error(sqlite3.SQLITE_NOTADB)) == "corrupt"
    assert classify(error(sqlite3.SQLITE_CORRUPT)) == "corrupt"
    assert classify(error(sqlite3.SQLITE_BUSY | (1 << 8))) == "locked"  # an extended code
    assert classify(error(sqlite3.SQLITE_READONLY)) == "read_only"
    assert classify(error(sqlite3.SQLITE_FULL)) == "disk_full"
    assert classify(error(sqlite3.SQLITE_IOERR)) == "io_error"
    assert classify(OSError(28, "No space left on device")) == "disk_full"
    assert classify(PermissionError(13, "Permission denied")) == "read_only"
    assert classify(RuntimeError("boom")) == "error"


@contextlib.contextmanager
def _writing(path: Path) -> Iterator[sqlite3.Connection]:
    """Another process's write transaction on `path`, held until the block ends (or committed
    earlier by the caller)."""
    other = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
    other.execute("CREATE TABLE IF NOT EXISTS other (x)")
    other.execute("BEGIN IMMEDIATE")
    other.execute("INSERT INTO other VALUES (1)")
    try:
        yield other
    finally:
        if other.in_transaction:
            other.execute("COMMIT")
        other.close()


async def test_opening_a_file_another_is_writing_waits_for_the_wal_switch(tmp_path: Path) -> None:
    """Switching to WAL while another connection writes fails at once, busy timeout or not (as
    when the workers of one server open a new file together): the open tries again."""
    path = tmp_path / "cache.sqlite3"
    with _writing(path) as other:
        loop = asyncio.get_running_loop()
        loop.call_later(0.2, other.execute, "COMMIT")
        db, _ = await open_file(path, busy_timeout_ms=3000)
    assert next(iter(await db.execute_fetchall("PRAGMA journal_mode")))[0] == "wal"
    await db.close()


async def test_the_wal_switch_gives_up_after_the_busy_timeout(tmp_path: Path) -> None:
    path = tmp_path / "cache.sqlite3"
    with _writing(path):
        started = asyncio.get_running_loop().time()
        with pytest.raises(sqlite3.OperationalError, match="locked"):
            await open_file(path, busy_timeout_ms=300)
        assert 0.25 < asyncio.get_running_loop().time() - started < 5


async def test_the_files_data_stays_within_max_bytes_dropping_the_least_used_pages(
    tmp_path: Path, clock: FakeClock
) -> None:
    # Pages of up to megabytes each filled a disk in minutes: the file held whatever was stored
    # until the next cleanup, due every half hour, and then as many entries as max_entries.
    path = tmp_path / "c.sqlite3"
    mib = 1 << 20
    cache = SqliteCache(
        path, ttl_seconds=3600, max_age_seconds=86_400, max_entries=1000, max_bytes=mib,
        clock=clock,
    )  # fmt: skip
    page = "x" * 100_000
    try:
        for i in range(40):
            await cache.set("page", f"p{i}", {"text": page, "i": i})
            clock.advance(1)
            await asyncio.sleep(0)  # the cleanup the stores start runs between them
        await cache.cleanup()  # after the one the last stores started, if still running
        with sqlite3.connect(path) as db:
            ((count, used),) = db.execute(COUNT_AND_BYTES).fetchall()
        assert used <= mib
        assert 5 <= count < 40
        assert await cache.get("page", "p39") is not None
        assert await cache.get("page", "p1") is None
    finally:
        await cache.close()
    assert path.stat().st_size < 2 * mib  # freed pages were reused, not appended


async def test_a_cleanup_of_many_entries_lets_reads_go_between_its_batches(
    tmp_path: Path, clock: FakeClock, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A cleanup holds the lock one batch at a time: a read asked meanwhile is answered before the
    # cleanup ends, and every entry due to go still goes (the expired, then the least used).
    monkeypatch.setattr(sqlite_module, "CLEANUP_BATCH", 10)
    cache = SqliteCache(
        tmp_path / "c.sqlite3", ttl_seconds=60, max_age_seconds=86_400, max_entries=5, clock=clock
    )
    for i in range(35):
        await cache.set("web", f"old{i}", {"i": i})
    clock.advance(61)
    for i in range(12):
        await cache.set("web", f"new{i}", {"i": i})
        clock.advance(1)
    done: list[str] = []

    async def cleanup() -> int:
        removed = await cache.cleanup()
        done.append("cleanup")
        return removed

    async def read() -> None:
        hit = await cache.get("web", "new11")
        assert hit is not None and hit.value == {"i": 11}
        done.append("read")

    try:
        cleaning = asyncio.create_task(cleanup())
        await asyncio.sleep(0)  # the cleanup is in its first batch
        await read()
        assert await cleaning == 35 + 7
        assert done == ["read", "cleanup"]
        assert [i for i in range(12) if await cache.get("web", f"new{i}")] == [7, 8, 9, 10, 11]
    finally:
        await cache.close()


@pytest.mark.parametrize("expired", [True, False], ids=["expired", "least-used"])
async def test_a_cleanup_deletes_at_most_one_batch_before_a_waiting_read(
    tmp_path: Path, clock: FakeClock, monkeypatch: pytest.MonkeyPatch, expired: bool
) -> None:
    # Each turn of the lock deletes at most `CLEANUP_BATCH` entries, expired or least used: a
    # read asked as the cleanup starts finds all but the first batch still in the file.
    monkeypatch.setattr(sqlite_module, "CLEANUP_BATCH", 10)
    path = tmp_path / "c.sqlite3"
    cache = SqliteCache(
        path,
        ttl_seconds=60,
        max_age_seconds=86_400,
        max_entries=1000 if expired else 5,
        clock=clock,
    )
    for i in range(30):
        await cache.set("web", f"k{i}", {"i": i})
    if expired:
        clock.advance(61)
    left: list[int] = []

    async def read() -> None:
        await cache.get("web", "k29")
        with contextlib.closing(sqlite3.connect(path)) as db:
            left.append(db.execute("SELECT COUNT(*) FROM cache_entries").fetchone()[0])

    try:
        cleaning = asyncio.create_task(cache.cleanup())
        await asyncio.sleep(0)  # the cleanup is in its first batch
        await read()
        assert left == [20]
        assert await cleaning == (30 if expired else 25)
    finally:
        await cache.close()
