"""The SQLite cooldown store that the worker processes of one server share."""

from __future__ import annotations

import multiprocessing
import sqlite3
import subprocess
import sys
import threading
import time
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from testing.cooldown_contract import check_store_contract
from websearch_mcp.net.breaker import CircuitBreaker
from websearch_mcp.net.cooldowns import sqlite as sqlite_module
from websearch_mcp.net.cooldowns.sqlite import KEEP_SECONDS, SqliteCooldownStore
from websearch_mcp.net.cooldowns.store import Cooldown


@pytest.fixture
async def store(tmp_path: Path):
    # The store's clock only decides when ended cooldowns are forgotten: long after these.
    opened = SqliteCooldownStore(tmp_path / "cooldowns.sqlite3", clock=lambda: 0.0)
    yield opened
    await opened.close()


async def test_get_set_delete(store: SqliteCooldownStore) -> None:
    assert await store.get("breaker:bing") is None
    await store.set("breaker:bing", Cooldown(100.5, "HTTP 403", 2))
    assert await store.get("breaker:bing") == Cooldown(100.5, "HTTP 403", 2)
    await store.set("breaker:bing", Cooldown(200.0, "CAPTCHA", 3))
    assert await store.get("breaker:bing") == Cooldown(200.0, "CAPTCHA", 3)
    await store.delete("breaker:bing")
    assert await store.get("breaker:bing") is None
    await store.delete("breaker:bing")  # deleting what is absent is no error


async def test_long_ended_cooldowns_are_forgotten_on_the_next_set(tmp_path: Path) -> None:
    now = [10_000.0]
    store = SqliteCooldownStore(tmp_path / "c.sqlite3", clock=lambda: now[0])
    await store.set("key:tavily:a", Cooldown(10_010.0, "429", 4))
    now[0] = 10_010.0 + KEEP_SECONDS + 1
    await store.set("key:tavily:b", Cooldown(now[0] + 5, "429", 1))
    assert await store.get("key:tavily:a") is None
    assert await store.get("key:tavily:b") is not None
    await store.close()


async def test_recently_ended_cooldowns_are_kept_for_their_failure_count(tmp_path: Path) -> None:
    now = [10_000.0]
    store = SqliteCooldownStore(tmp_path / "c.sqlite3", clock=lambda: now[0])
    await store.record_failure("breaker:bing", "HTTP 503", lambda n: 10_005.0)
    now[0] = 10_005.0 + KEEP_SECONDS / 2  # ended, but not long ago
    await store.set("key:tavily:b", Cooldown(now[0] + 5, "429", 1))
    assert await store.get("breaker:bing") == Cooldown(10_005.0, "HTTP 503", 1)
    second = await store.record_failure("breaker:bing", "HTTP 503", lambda n: now[0] + 5 * n)
    assert second.failures == 2
    await store.close()


async def test_record_failure_counts_failures_in_a_row(store: SqliteCooldownStore) -> None:
    asked: list[int] = []

    def until_for(n: int) -> float:
        asked.append(n)
        return 1000.0 + n

    first = await store.record_failure("breaker:bing", "HTTP 503", until_for)
    assert first == Cooldown(1001.0, "HTTP 503", 1)
    second = await store.record_failure("breaker:bing", "timeout", until_for)
    assert second == Cooldown(1002.0, "timeout", 2)
    assert await store.get("breaker:bing") == second
    assert asked == [1, 2]
    await store.delete("breaker:bing")
    assert (await store.record_failure("breaker:bing", "x", until_for)).failures == 1


async def test_claim_probe_only_after_the_cooldown_and_once_per_lease(
    store: SqliteCooldownStore,
) -> None:
    assert not await store.claim_probe("breaker:bing", 10, now=100.0)  # no cooldown at all
    await store.set("breaker:bing", Cooldown(150.0, "HTTP 503", 1))
    assert not await store.claim_probe("breaker:bing", 10, now=120.0)  # still cooling
    assert await store.claim_probe("breaker:bing", 10, now=150.0)  # ended: lease taken
    assert not await store.claim_probe("breaker:bing", 10, now=155.0)  # held by the first
    assert await store.claim_probe("breaker:bing", 10, now=160.5)  # the lease expired


@pytest.mark.parametrize("ending", ["set", "delete", "record_failure"])
async def test_set_delete_and_record_failure_end_the_lease(
    store: SqliteCooldownStore, ending: str
) -> None:
    await store.set("breaker:bing", Cooldown(100.0, "HTTP 503", 1))
    assert await store.claim_probe("breaker:bing", 60, now=100.0)
    if ending == "set":
        await store.set("breaker:bing", Cooldown(100.0, "HTTP 503", 1))
    elif ending == "delete":
        await store.delete("breaker:bing")
        await store.set("breaker:bing", Cooldown(100.0, "HTTP 503", 1))
    else:
        await store.record_failure("breaker:bing", "HTTP 503", lambda n: 100.0)
    assert await store.claim_probe("breaker:bing", 60, now=101.0)


async def test_a_breaker_opened_through_one_store_is_open_through_another(
    tmp_path: Path,
) -> None:
    path = tmp_path / "shared.sqlite3"
    now = [1000.0]
    clock = lambda: now[0]  # noqa: E731
    one, other = SqliteCooldownStore(path, clock=clock), SqliteCooldownStore(path, clock=clock)
    await CircuitBreaker("bing", one, clock=clock).failure("captcha", "CAPTCHA page")
    opened = await CircuitBreaker("bing", other, clock=clock).check()
    assert opened is not None and opened.reason == "CAPTCHA page"
    now[0] += 3601  # the rest is over: the other store's request is the probe
    assert await CircuitBreaker("bing", other, clock=clock).check() is None
    await CircuitBreaker("bing", other, clock=clock).success()
    assert await CircuitBreaker("bing", one, clock=clock).check() is None
    await one.close()
    await other.close()


_HAMMER = """
import asyncio, sys
from websearch_mcp.net.cooldowns.sqlite import SqliteCooldownStore

async def main():
    store = SqliteCooldownStore(sys.argv[1])
    for _ in range(int(sys.argv[2])):
        await store.record_failure("breaker:bing", "HTTP 503", lambda n: 1e12)
    await store.close()

asyncio.run(main())
"""


async def test_processes_counting_failures_at_once_lose_none(tmp_path: Path) -> None:
    path = tmp_path / "shared.sqlite3"
    SqliteCooldownStore(path)  # the file and its table exist before the processes race
    workers = [
        subprocess.Popen([sys.executable, "-c", _HAMMER, str(path), "200"]) for _ in range(2)
    ]
    assert [w.wait(timeout=60) for w in workers] == [0, 0]
    store = SqliteCooldownStore(path)
    entry = await store.get("breaker:bing")
    assert entry is not None and entry.failures == 400
    await store.close()


def _open_at(path: Path, start: float, results: multiprocessing.Queue[str]) -> None:
    while time.time() < start:
        pass
    try:
        SqliteCooldownStore(path)
        results.put("opened")
    except Exception as exc:  # reported to the test, which shows it
        results.put(repr(exc))


def test_workers_opening_a_new_file_at_once_all_open_it(tmp_path: Path) -> None:
    """As the workers of a server start: each switching the new file to WAL, one could fail at
    once with "database is locked" (each held the lock the other needed) and its worker died.
    Before the fix, about one open in twenty failed here."""
    fork = multiprocessing.get_context("fork")
    outcomes: list[str] = []
    for round_ in range(25):
        results: multiprocessing.Queue[str] = fork.Queue()
        start = time.time() + 0.05
        path = tmp_path / f"new-{round_}.sqlite3"
        openers = [fork.Process(target=_open_at, args=(path, start, results)) for _ in range(4)]
        for opener in openers:
            opener.start()
        outcomes += [results.get(timeout=30) for _ in openers]
        for opener in openers:
            opener.join(timeout=30)
    assert set(outcomes) == {"opened"}, [o for o in outcomes if o != "opened"]


async def test_a_worker_opening_the_file_while_another_sets_it_up_waits_for_it(
    tmp_path: Path,
) -> None:
    """Writes wait 0.25 s for another's lock; opening the file, once at a worker's start while
    others set it up on a busy machine, waits longer: a worker that gave up kept cooldowns of its
    own for its whole life."""
    path = tmp_path / "c.sqlite3"
    holder = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
    holder.execute("BEGIN EXCLUSIVE")
    release = threading.Timer(0.6, lambda: holder.execute("COMMIT"))
    release.start()
    try:
        store = SqliteCooldownStore(path)
    finally:
        release.join()
        holder.close()
    await store.set("bing", Cooldown(2e9, "HTTP 429", 1))
    assert await store.get("bing") == Cooldown(2e9, "HTTP 429", 1)
    await store.close()


async def test_two_stores_on_one_file_keep_the_store_contract(tmp_path: Path) -> None:
    """The contract the memory and Redis stores are held to, by two stores sharing one file (as
    two workers do)."""
    now = 1_800_000_000.0
    path = tmp_path / "shared.sqlite3"
    one = SqliteCooldownStore(path, clock=lambda: now)
    other = SqliteCooldownStore(path, clock=lambda: now)
    try:
        await check_store_contract(one, other, now)
    finally:
        await one.close()
        await other.close()


@dataclass
class LockedFile:
    """Two workers' stores on one file, another connection that can hold its write lock past
    the (shortened) busy timeout, and the stores' clock."""

    store: SqliteCooldownStore
    other: SqliteCooldownStore
    blocker: sqlite3.Connection
    now: list[float]


@pytest.fixture
async def locked(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> AsyncIterator[LockedFile]:
    monkeypatch.setattr(sqlite_module, "BUSY_TIMEOUT_MS", 50)
    now = [1_000.0]
    path = tmp_path / "c.sqlite3"
    found = LockedFile(
        SqliteCooldownStore(path, clock=lambda: now[0]),
        SqliteCooldownStore(path, clock=lambda: now[0]),
        sqlite3.connect(path, isolation_level=None),
        now,
    )
    yield found
    found.blocker.close()
    await found.store.close()
    await found.other.close()


async def test_a_file_that_refuses_changes_never_fails_a_caller(locked: LockedFile) -> None:
    # Another connection holding the write lock past the busy timeout: changes are kept in this
    # process (and read from it) until a later change of the name reaches the file again.
    store, other = locked.store, locked.other
    locked.blocker.execute("BEGIN IMMEDIATE")
    cooled = Cooldown(1_060.0, "HTTP 429", 1)
    await store.set("key:a", cooled)
    failed = await store.record_failure("breaker:b", "HTTP 503", lambda n: 1_000.0 + 10 * n)
    assert (await store.get("key:a"), failed) == (cooled, Cooldown(1_010.0, "HTTP 503", 1))
    assert await store.get("breaker:b") == failed
    assert await store.claim_probe("breaker:b", 5.0, now=1_011.0)  # probed here
    assert store.stats.errors["locked"] == 1  # logged and counted once, then waited out
    assert await other.get("key:a") is None  # the file never took it
    locked.blocker.execute("ROLLBACK")
    locked.now[0] += 31
    assert await store.get("key:a") == cooled  # still this process's, not the file's
    await store.set("key:a", Cooldown(1_100.0, "HTTP 429", 2))
    assert await other.get("key:a") == Cooldown(1_100.0, "HTTP 429", 2)


async def test_a_name_set_while_the_file_is_waited_out_is_read_here_until_the_file_takes_it(
    locked: LockedFile,
) -> None:
    store = locked.store
    locked.blocker.execute("BEGIN IMMEDIATE")
    await store.set("key:a", Cooldown(1_060.0, "HTTP 429", 1))  # refused: the wait begins
    waited = Cooldown(1_090.0, "HTTP 429", 1)
    await store.set("key:c", waited)  # not even tried: kept here only
    locked.blocker.execute("ROLLBACK")
    locked.now[0] += 31
    assert await store.get("key:c") == waited  # the file has none: this process's is read
    await store.set("key:c", Cooldown(1_100.0, "HTTP 429", 2))  # the file takes it
    shared = Cooldown(1_200.0, "HTTP 429", 3)
    await locked.other.set("key:c", shared)
    assert await store.get("key:c") == shared  # the file is the truth again


async def test_a_name_deleted_while_the_file_is_waited_out_stays_deleted_here(
    locked: LockedFile,
) -> None:
    # The file still holds the old cooldown: it must not come back once the wait is over.
    store = locked.store
    await store.set("key:d", Cooldown(1_500.0, "HTTP 429", 1))  # in the file
    locked.blocker.execute("BEGIN IMMEDIATE")
    await store.delete("key:d")  # refused: the wait begins
    locked.blocker.execute("ROLLBACK")
    locked.now[0] += 31
    assert await store.get("key:d") is None
    assert await store.local.get("key:d") is None
