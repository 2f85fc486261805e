"""The SQLite cache's entries kept in memory: hits without a read, within their bounds."""

from __future__ import annotations

import contextlib
import sqlite3
import sys
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

import pytest

from testing.cache_helpers import FakeClock
from websearch_mcp.cache import hot as hot_module
from websearch_mcp.cache.hot import HOT_TRUST_SECONDS
from websearch_mcp.cache.sqlite import SqliteCache

TTL = 21_600.0


Make = Callable[..., SqliteCache]


@pytest.fixture
async def make(clock: FakeClock) -> AsyncIterator[Make]:
    """Build caches on `clock` (6 h TTL, 24 h max age unless given); all closed at the end, so
    that a failed test leaves no connection thread behind."""
    made: list[SqliteCache] = []

    def build(path: Path, **options: Any) -> SqliteCache:
        settings = {"ttl_seconds": TTL, "max_age_seconds": 86_400, "max_entries": 1000}
        cache = SqliteCache(path, clock=clock, **(settings | options))
        made.append(cache)
        return cache

    yield build
    for cache in made:
        await cache.close()


def count_reads(cache: SqliteCache, monkeypatch: pytest.MonkeyPatch) -> list[object]:
    """The parameters of every entry read the cache sends to its open connection from now on."""
    db = cache._db
    assert db is not None
    reads: list[object] = []
    original = db.execute_fetchall

    async def counting(sql: str, parameters: Any = None) -> Any:
        if sql.lstrip().startswith("SELECT value"):
            reads.append(parameters)
        return await original(sql, parameters)

    monkeypatch.setattr(db, "execute_fetchall", counting)
    return reads


async def one_entry(
    make: Make, path: Path, monkeypatch: pytest.MonkeyPatch
) -> tuple[SqliteCache, list[object]]:
    """A cache at `path` holding `{"v": 1}` as web/k, and the reads it sends from then on."""
    cache = make(path)
    await cache.set("web", "k", {"v": 1})
    return cache, count_reads(cache, monkeypatch)


async def test_a_written_or_read_entry_is_hit_without_a_read(
    make: Make, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "cache.sqlite3"
    writer = make(path)
    await writer.set("web", "k", {"v": 1})
    reads = count_reads(writer, monkeypatch)
    hit = await writer.get("web", "k")
    assert hit is not None and hit.value == {"v": 1}
    assert reads == []
    await writer.close()

    reader = make(path)
    assert await reader.get("web", "other") is None  # opens the file
    reads = count_reads(reader, monkeypatch)
    for _ in range(3):
        hit = await reader.get("web", "k")
        assert hit is not None and hit.value == {"v": 1}
    assert len(reads) == 1
    assert reader.stats.hits == 3 and reader.stats.misses == 1
    await reader.close()


async def test_remembered_answers_from_memory_only(
    make: Make, tmp_path: Path, clock: FakeClock, monkeypatch: pytest.MonkeyPatch
) -> None:
    cache, reads = await one_entry(make, tmp_path / "cache.sqlite3", monkeypatch)
    assert cache.remembered("web", "unknown") is None
    clock.advance(1)
    hit = cache.remembered("web", "k")
    assert hit is not None and hit.value == {"v": 1} and hit.age_seconds == 1
    assert (cache.stats.hits, cache.stats.misses) == (1, 0)  # nothing found is not a miss yet
    clock.advance(HOT_TRUST_SECONDS)
    assert cache.remembered("web", "k") is None  # not trusted any longer: `get` decides
    assert (cache.stats.hits, cache.stats.misses) == (1, 0)
    assert reads == []
    assert await cache.get("web", "k") is not None
    assert len(reads) == 1
    assert cache.remembered("web", "k") is not None  # the read is remembered in turn


async def test_each_hit_gets_its_own_copy_of_the_value(make: Make, tmp_path: Path) -> None:
    cache = make(tmp_path / "cache.sqlite3")
    await cache.set("web", "k", {"v": [1]})
    first = await cache.get("web", "k")
    assert first is not None
    first.value["v"].append(2)  # a caller shaping its answer
    second = await cache.get("web", "k")
    assert second is not None and second.value == {"v": [1]}
    await cache.close()


async def test_a_hit_from_memory_slides_the_expiry_in_the_file(
    make: Make, tmp_path: Path, clock: FakeClock
) -> None:
    path = tmp_path / "cache.sqlite3"
    cache = make(path)
    await cache.set("web", "k", {"v": 1})
    stored = clock()
    clock.advance(1)
    hit = await cache.get("web", "k")
    assert hit is not None and hit.age_seconds == 1
    await cache.close()
    with contextlib.closing(sqlite3.connect(path)) as other:
        row = other.execute("SELECT last_used, expires_at FROM cache_entries").fetchone()
    assert row == (stored + 1, stored + 1 + TTL)


async def test_expiry_and_max_age_hold_for_entries_in_memory(
    make: Make, tmp_path: Path, clock: FakeClock, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(hot_module, "HOT_TRUST_SECONDS", 100.0)  # only expiry decides here
    cache = make(tmp_path / "cache.sqlite3", max_age_seconds=3)
    await cache.set("web", "idle", {"v": 1}, ttl_seconds=1)
    await cache.set("web", "used", {"v": 2}, ttl_seconds=1)
    reads = count_reads(cache, monkeypatch)
    for _ in range(3):
        clock.advance(0.9)
        assert await cache.get("web", "used") is not None  # slides it 1 s on
    assert reads == []
    assert await cache.get("web", "idle") is None  # 2.7 s old, never hit
    clock.advance(0.35)  # 3.05 s: within the slid TTL, past the maximum age
    assert await cache.get("web", "used") is None
    assert len(reads) == 2  # both asked the file, which agreed
    await cache.close()


async def test_another_process_change_is_seen_after_the_trust_window(
    make: Make, tmp_path: Path, clock: FakeClock, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "cache.sqlite3"
    one, two = make(path), make(path)
    await one.set("web", "replaced", {"v": 1})
    await one.set("web", "removed", {"v": 1})
    assert await two.get("web", "replaced") is not None
    assert await two.get("web", "removed") is not None
    await one.set("web", "replaced", {"v": 2})
    with contextlib.closing(sqlite3.connect(path)) as other, other:
        other.execute("DELETE FROM cache_entries WHERE key = 'removed'")
    reads = count_reads(two, monkeypatch)

    clock.advance(HOT_TRUST_SECONDS - 0.5)
    stale = await two.get("web", "replaced")
    assert stale is not None and stale.value == {"v": 1}  # trusted a moment longer
    assert await two.get("web", "removed") is not None
    assert reads == []

    clock.advance(0.5)
    fresh = await two.get("web", "replaced")
    assert fresh is not None and fresh.value == {"v": 2}
    assert await two.get("web", "removed") is None
    assert len(reads) == 2
    await one.close()
    await two.close()


async def test_a_clock_set_back_reads_the_file(
    make: Make, tmp_path: Path, clock: FakeClock, monkeypatch: pytest.MonkeyPatch
) -> None:
    cache, reads = await one_entry(make, tmp_path / "cache.sqlite3", monkeypatch)
    clock.advance(-60)
    assert await cache.get("web", "k") is not None
    assert len(reads) == 1
    await cache.close()


async def test_set_replaces_and_cleanup_forgets_the_entry_in_memory(
    make: Make, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    cache = make(tmp_path / "cache.sqlite3")
    await cache.set("web", "k", {"v": 1})
    reads = count_reads(cache, monkeypatch)
    assert await cache.get("web", "k") is not None
    await cache.set("web", "k", {"v": 2})
    hit = await cache.get("web", "k")
    assert hit is not None and hit.value == {"v": 2}
    assert reads == []
    await cache.cleanup()
    assert await cache.get("web", "k") is not None
    assert len(reads) == 1
    await cache.close()


async def test_entries_in_memory_are_bounded_by_count_least_recently_used_first(
    make: Make, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(hot_module, "HOT_MAX_ENTRIES", 3)
    cache = make(tmp_path / "cache.sqlite3")
    for name in ("a", "b", "c"):
        await cache.set("web", name, {"v": name})
    reads = count_reads(cache, monkeypatch)
    assert await cache.get("web", "a") is not None  # now the most recently used
    await cache.set("web", "d", {"v": "d"})  # pushes out "b"
    for name in ("a", "c", "d"):
        assert await cache.get("web", name) is not None
    assert reads == []
    assert await cache.get("web", "b") is not None
    assert len(reads) == 1
    await cache.close()


@pytest.fixture
def small(make: Make, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> SqliteCache:
    """A cache whose entries in memory may take 1000 bytes in all."""
    monkeypatch.setattr(hot_module, "HOT_MAX_BYTES", 1000)
    return make(tmp_path / "cache.sqlite3")


async def test_entries_in_memory_are_bounded_by_size(
    small: SqliteCache, monkeypatch: pytest.MonkeyPatch
) -> None:
    cache = small
    await cache.set("web", "big", {"text": "x" * 2000})
    await cache.set("web", "a", {"text": "a" * 600})
    await cache.set("web", "b", {"text": "b" * 600})  # the two exceed the bound: "a" goes
    reads = count_reads(cache, monkeypatch)
    assert await cache.get("web", "b") is not None
    assert reads == []
    assert await cache.get("web", "big") is not None
    assert await cache.get("web", "a") is not None
    assert len(reads) == 2


async def test_an_entry_over_the_size_bound_displaces_none_kept_in_memory(
    small: SqliteCache, monkeypatch: pytest.MonkeyPatch
) -> None:
    cache = small
    await cache.set("web", "a", {"text": "a" * 600})
    await cache.set("web", "big", {"text": "x" * 2000})  # never kept, so "a" stays
    reads = count_reads(cache, monkeypatch)
    assert await cache.get("web", "a") is not None
    assert reads == []


async def test_a_cleanup_frees_the_room_its_forgotten_entries_took(
    small: SqliteCache, monkeypatch: pytest.MonkeyPatch
) -> None:
    cache = small
    await cache.set("web", "a", {"text": "a" * 600})
    await cache.cleanup()  # forgets every entry in memory
    await cache.set("web", "b", {"text": "b" * 600})
    reads = count_reads(cache, monkeypatch)
    assert await cache.get("web", "b") is not None
    assert reads == []
    assert cache._hot.size == sum(len(hot.raw) for hot in cache._hot.values())


async def test_entries_in_memory_take_at_most_8_mib_whatever_their_characters(
    make: Make, tmp_path: Path
) -> None:
    """operations.md: at most 8 MiB. A page with one emoji takes four bytes a character in
    memory (Python keeps a text in the width of its widest character): counted by their length,
    four such pages of 1.2 million characters held 23 MiB (with the UTF-8 copy SQLite made)."""
    cache = make(tmp_path / "cache.sqlite3")
    for name in "abcd":
        await cache.set("page", name, {"content": "🙂" + "x" * 1_200_000})
    held = sum(sys.getsizeof(hot.raw) for hot in cache._hot.values())
    assert 0 < held <= 8 * 1024 * 1024
    assert (await cache.get("page", "d")) is not None
    await cache.close()


async def test_entries_read_from_the_file_take_at_most_8_mib_whatever_their_characters(
    make: Make, tmp_path: Path
) -> None:
    """As above, for entries another process stored: counted in bytes when read, too."""
    writer = make(tmp_path / "cache.sqlite3")
    for name in "abcd":
        await writer.set("page", name, {"content": "🙂" + "x" * 1_200_000})
    await writer.close()
    cache = make(tmp_path / "cache.sqlite3")
    for name in "abcd":
        assert (await cache.get("page", name)) is not None
    held = sum(sys.getsizeof(hot.raw) for hot in cache._hot.values())
    assert 0 < held <= 8 * 1024 * 1024
    await cache.close()


async def test_entries_past_the_trust_window_are_not_kept_in_memory(
    make: Make, tmp_path: Path, clock: FakeClock, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A hit on such an entry reads the file anyway; a busy server would otherwise hold its last
    512 answers instead of those of the last seconds."""
    cache = make(tmp_path / "cache.sqlite3")
    await cache.set("web", "old", {"text": "o" * 500})
    clock.advance(HOT_TRUST_SECONDS - 0.5)
    await cache.set("web", "recent", {"text": "r" * 500})
    clock.advance(1.0)  # "old" is past the window, "recent" is not
    await cache.set("web", "new", {"text": "n" * 500})
    assert list(cache._hot) == [("web", "recent"), ("web", "new")]
    assert cache._hot.size == sum(len(hot.raw) for hot in cache._hot.values())
    reads = count_reads(cache, monkeypatch)
    assert await cache.get("web", "recent") is not None and reads == []
    assert (await cache.get("web", "old")).value == {"text": "o" * 500}  # type: ignore[union-attr]
    assert len(reads) == 1
    await cache.close()


async def test_an_entry_read_from_the_file_is_not_answered_from_memory_past_its_max_age(
    make: Make, tmp_path: Path, clock: FakeClock
) -> None:
    cache = make(tmp_path / "cache.sqlite3", ttl_seconds=3, max_age_seconds=4)
    await cache.set("web", "k", {"v": 1})  # expires at 3 s, never lives past 4 s
    clock.advance(2.5)  # past the trust window: this read goes to the file and slides the expiry
    assert await cache.get("web", "k") is not None
    clock.advance(1.7)  # 4.2 s: within the trust window of that read, past the maximum age
    assert await cache.get("web", "k") is None
    await cache.close()
