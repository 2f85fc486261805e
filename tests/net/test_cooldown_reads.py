"""Recent reads of a shared cooldown store: reused for a moment, this process's changes at once."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from testing.cooldown_contract import check_store_contract
from websearch_mcp.config import CacheSettings
from websearch_mcp.errors import EngineAuthError, EngineRateLimited, KeyRefused
from websearch_mcp.net.breaker import CircuitBreaker
from websearch_mcp.net.cooldowns.recent_reads import (
    MAX_AGE_SECONDS,
    RecentReads,
    shared_cooldown_store,
)
from websearch_mcp.net.cooldowns.sqlite import SqliteCooldownStore
from websearch_mcp.net.cooldowns.store import Cooldown
from websearch_mcp.net.keypool import KeyPool
from websearch_mcp.runtime import RUNTIME_ENV

NAME = "breaker:bing"
WALL = 1_800_000_000.0  # the stores' wall clock: cooldowns run until long after it


class Clock:
    """A monotonic clock moved by hand."""

    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


@pytest.fixture
def clock() -> Clock:
    return Clock()


@pytest.fixture
async def workers(tmp_path: Path, clock: Clock) -> AsyncIterator[tuple[RecentReads, RecentReads]]:
    """Two workers' stores on one file, as `serve --workers 2` makes them."""
    path = tmp_path / "cooldowns.sqlite3"
    pair = tuple(
        RecentReads(SqliteCooldownStore(path, clock=lambda: WALL), clock=clock) for _ in range(2)
    )
    yield pair  # type: ignore[misc]
    for store in pair:
        await store.close()


async def test_another_workers_change_is_seen_once_the_read_is_older_than_max_age(
    workers: tuple[RecentReads, RecentReads], clock: Clock
) -> None:
    one, other = workers
    assert await other.get(NAME) is None  # read, and kept
    await one.set(NAME, Cooldown(WALL + 60, "CAPTCHA page", 1))
    clock.now += MAX_AGE_SECONDS / 2
    assert await other.get(NAME) is None  # the read kept is still recent
    clock.now += MAX_AGE_SECONDS / 2
    assert await other.get(NAME) == Cooldown(WALL + 60, "CAPTCHA page", 1)
    await one.delete(NAME)
    assert await other.get(NAME) is not None
    clock.now += MAX_AGE_SECONDS
    assert await other.get(NAME) is None


async def test_own_changes_are_read_back_at_once(
    workers: tuple[RecentReads, RecentReads],
) -> None:
    one, _ = workers
    assert await one.get(NAME) is None
    await one.set(NAME, Cooldown(WALL + 5, "HTTP 503", 1))
    assert await one.get(NAME) == Cooldown(WALL + 5, "HTTP 503", 1)
    counted = await one.record_failure(NAME, "HTTP 503", lambda n: WALL + 10 * n)
    assert counted == Cooldown(WALL + 20, "HTTP 503", 2)
    assert await one.get(NAME) == counted
    await one.delete(NAME)
    assert await one.get(NAME) is None


async def test_a_read_kept_spares_the_shared_store(
    workers: tuple[RecentReads, RecentReads], clock: Clock
) -> None:
    one, _ = workers
    await one.set(NAME, Cooldown(WALL + 60, "CAPTCHA page", 1))
    # Changed behind this worker's back (as a cleanup would): a kept read does not ask the file.
    await one.store.delete(NAME)
    assert await one.get(NAME) is not None
    clock.now += MAX_AGE_SECONDS
    assert await one.get(NAME) is None


async def test_failures_and_probes_are_counted_in_the_shared_store(
    workers: tuple[RecentReads, RecentReads], clock: Clock
) -> None:
    one, other = workers
    for store in (one, other):
        assert await store.get(NAME) is None  # both hold a recent read of "closed"
    await one.record_failure(NAME, "HTTP 500", lambda n: WALL - 1)
    # The count goes on from the shared one, not from the stale read; one probe in all.
    counted = await other.record_failure(NAME, "HTTP 500", lambda n: WALL - 1)
    assert counted.failures == 2
    claims = [await store.claim_probe(NAME, 30, WALL) for store in (one, other, one)]
    assert claims == [True, False, False]


async def test_a_breaker_opened_in_one_worker_is_open_in_the_other_within_max_age(
    workers: tuple[RecentReads, RecentReads], clock: Clock
) -> None:
    one, other = workers
    assert await CircuitBreaker("bing", other, clock=lambda: WALL).check() is None
    await CircuitBreaker("bing", one, clock=lambda: WALL).failure("captcha", "CAPTCHA page")
    clock.now += MAX_AGE_SECONDS
    opened = await CircuitBreaker("bing", other, clock=lambda: WALL).check()
    assert opened is not None and opened.reason == "CAPTCHA page"


async def test_with_no_max_age_the_stores_keep_the_store_contract(
    workers: tuple[RecentReads, RecentReads],
) -> None:
    for store in workers:
        store.max_age = 0.0
    await check_store_contract(*workers, WALL)


async def test_a_worker_reads_the_shared_file_through_recent_reads(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(RUNTIME_ENV, str(tmp_path))
    store = shared_cooldown_store(CacheSettings())
    assert isinstance(store, RecentReads)
    assert isinstance(store.store, SqliteCooldownStore)
    assert store.store.path == tmp_path / "cooldowns.sqlite3"
    await store.close()
    monkeypatch.delenv(RUNTIME_ENV)
    assert shared_cooldown_store(CacheSettings()) is None


def test_a_shared_file_that_cannot_be_opened_leaves_the_worker_its_own_cooldowns(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    # A full or vanished runtime directory: the worker still starts, and says so.
    monkeypatch.setenv(RUNTIME_ENV, str(tmp_path / "gone"))
    assert shared_cooldown_store(CacheSettings()) is None
    assert "shared cooldown file" in caplog.text and "this worker's own" in caplog.text


def _fixed_clock() -> float:
    return 1_000_000.0


async def test_what_counts_a_failure_or_rests_a_key_reads_the_file_afresh(tmp_path: Path) -> None:
    """Two workers, each reading the shared file through its own recent reads: one's CAPTCHA
    hour and one's refused key (6 h) stand against the other's failure of a request sent
    before, which a read a moment old would not have seen (10 s, 60 s)."""
    path = tmp_path / "cooldowns.sqlite3"

    def worker() -> RecentReads:
        return RecentReads(SqliteCooldownStore(path, clock=_fixed_clock))

    first, second = (CircuitBreaker("x", worker(), clock=_fixed_clock) for _ in range(2))
    assert await first.check() is None and await second.check() is None  # both send
    await first.failure("captcha", "CAPTCHA")
    await second.failure("transient", "HTTP 503")
    entry = await SqliteCooldownStore(path, clock=_fixed_clock).get("breaker:x")
    assert entry is not None and entry.until - _fixed_clock() == 3600
    one, other = (KeyPool("tavily", ["k1"], worker(), clock=_fixed_clock) for _ in range(2))
    assert await one.plan() and await other.plan()  # both send a request with the key
    await one.cool(KeyRefused("tavily", 0, 1, "k1", EngineAuthError("401")))
    await other.cool(KeyRefused("tavily", 0, 1, "k1", EngineRateLimited("429", retry_after=60)))
    fresh = KeyPool(
        "tavily", ["k1"], SqliteCooldownStore(path, clock=_fixed_clock), clock=_fixed_clock
    )
    assert await fresh.recovers_in() == 21_600
