"""Reads that reach the SQLite file while another waits go in one query: the same answers as
one read each, every caller with its own copy, and no caller left waiting."""

from __future__ import annotations

import asyncio
import sqlite3
import time
from pathlib import Path
from typing import Any

import pytest

from testing.cache_helpers import FakeClock
from tests.cache.test_hot import Make, count_reads, make
from websearch_mcp.cache import sqlite as sqlite_module

__all__ = ["make"]  # the fixture, shared with the in-memory tests


async def _filled(make: Make, path: Path) -> None:
    writer = make(path)
    for n in range(12):
        await writer.set("web", f"k{n}", {"n": n, "items": [n]})
    await writer.set("papers", "p", {"n": "paper"})
    await writer.set("web", "short", {"n": "short"}, ttl_seconds=10)
    await writer.close()


async def test_waiting_reads_share_one_query_per_namespace(
    make: Make, tmp_path: Path, clock: FakeClock, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "cache.sqlite3"
    await _filled(make, path)
    clock.advance(60)  # "short" has expired
    reader = make(path)
    assert await reader.get("web", "absent") is None  # opens the file
    reads = count_reads(reader, monkeypatch)
    asked = [("web", f"k{n}") for n in range(12)] + [
        ("web", "k3"),  # asked twice at once
        ("web", "short"),
        ("web", "missing"),
        ("papers", "p"),
    ]
    hits = await asyncio.gather(*(reader.get(ns, key) for ns, key in asked))
    values = [None if hit is None else hit.value for hit in hits]
    assert values == [{"n": n, "items": [n]} for n in range(12)] + [
        {"n": 3, "items": [3]},
        None,
        None,
        {"n": "paper"},
    ]
    assert len(reads) == 2  # one query per namespace, not one per read
    hits[3].value["items"].append("changed")  # type: ignore[union-attr]
    assert hits[12].value == {"n": 3, "items": [3]}  # type: ignore[union-attr]
    assert reader.stats.hits == 14 and reader.stats.misses == 3
    # Read once, the entries are answered from memory as after a read of their own.
    again = await reader.get("web", "k5")
    assert again is not None and again.value == {"n": 5, "items": [5]} and len(reads) == 2


async def test_batches_are_bounded(
    make: Make, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "cache.sqlite3"
    await _filled(make, path)
    monkeypatch.setattr(sqlite_module, "MAX_READ_BATCH", 5)
    reader = make(path)
    assert await reader.get("web", "absent") is None
    reads = count_reads(reader, monkeypatch)
    hits = await asyncio.gather(*(reader.get("web", f"k{n}") for n in range(12)))
    assert [hit.value["n"] for hit in hits if hit is not None] == list(range(12))
    assert len(reads) == 3  # 5 + 5 + 2


async def test_a_caller_that_gives_up_leaves_the_others_their_answers(
    make: Make, tmp_path: Path
) -> None:
    path = tmp_path / "cache.sqlite3"
    await _filled(make, path)
    reader = make(path)
    calls = [asyncio.create_task(reader.get("web", f"k{n}")) for n in range(3)]
    calls.append(asyncio.create_task(reader.get("web", "k1")))
    await asyncio.sleep(0)  # all four are waiting for the file
    calls[1].cancel()
    done = await asyncio.gather(*calls, return_exceptions=True)
    assert isinstance(done[1], asyncio.CancelledError)
    assert [hit.value["n"] for hit in (done[0], done[2], done[3])] == [0, 2, 1]  # type: ignore[union-attr]


async def test_a_failed_read_is_a_miss_for_every_caller(
    make: Make, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "cache.sqlite3"
    await _filled(make, path)
    reader = make(path)
    assert await reader.get("web", "absent") is None
    db = reader._db
    assert db is not None

    async def failing(sql: str, parameters: Any = None) -> Any:
        raise sqlite3.OperationalError("disk I/O error")

    monkeypatch.setattr(db, "execute_fetchall", failing)
    hits = await asyncio.gather(*(reader.get("web", f"k{n}") for n in range(4)))
    assert hits == [None] * 4
    assert sum(reader.stats.errors.values()) == 1 and reader.stats.misses == 5


async def test_reads_waiting_when_the_cache_closes_are_misses(make: Make, tmp_path: Path) -> None:
    path = tmp_path / "cache.sqlite3"
    await _filled(make, path)
    reader = make(path)
    calls = [asyncio.create_task(reader.get("web", f"k{n}")) for n in range(3)]
    await reader.close()
    assert await asyncio.gather(*calls) == [None, None, None]


async def test_a_file_that_stops_answering_holds_a_caller_up_a_second_at_most(
    make: Make, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A disk that stopped answering (a network mount): a read is a miss and a store goes on
    after `WAIT_SECONDS`, and what was stored is written once the file answers again."""
    cache = make(tmp_path / "cache.sqlite3")
    await cache.set("web", "a", {"n": 1})
    cache._hot.forget_all()
    db = cache._db
    assert db is not None
    answering = asyncio.Event()

    def stalled(original: Any) -> Any:
        async def call(*args: Any) -> Any:
            await answering.wait()
            return await original(*args)

        return call

    for name in ("execute_fetchall", "executemany"):
        monkeypatch.setattr(db, name, stalled(getattr(db, name)))
    started = time.monotonic()
    assert await cache.get("web", "a") is None
    await cache.set("web", "b", {"n": 2})
    assert time.monotonic() - started < 2 * sqlite_module.WAIT_SECONDS + 0.5
    assert cache.stats.errors == {"timeout": 2}
    answering.set()
    await asyncio.sleep(0.2)
    hit = await cache.get("web", "b")
    assert hit is not None and hit.value == {"n": 2}
