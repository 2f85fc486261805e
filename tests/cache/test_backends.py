"""Cache semantics shared by both backends, on a real SQLite file and a real redis-server.

The Redis half needs the `redis-server` binary (started here on a free port of 127.0.0.1, with
no persistence, and killed at the end); it is skipped with a reason when the binary is absent.
"""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

import pytest

from testing.cache_helpers import HOUR, FakeClock
from testing.redis_server import LENIENT_SECONDS, RedisServer, redis_binary
from websearch_mcp.cache import Cache, cache_key, open_cache
from websearch_mcp.config import CacheSettings
from websearch_mcp.net.cooldowns.recent_reads import shared_cooldown_store
from websearch_mcp.net.cooldowns.store import Cooldown

BACKENDS = ["sqlite", "redis"]

MakeCache = Callable[..., Cache]


@pytest.fixture(params=BACKENDS)
async def make_cache(
    request: pytest.FixtureRequest, tmp_path: Path, clock: FakeClock
) -> AsyncIterator[MakeCache]:
    """Build caches of one backend with the default lifetimes (6 h TTL, 24 h max age)."""
    redis_url = None
    if request.param == "redis":
        server: RedisServer = request.getfixturevalue("redis_server")
        assert server.command("FLUSHALL") == b"+OK"
        redis_url = server.url
    made: list[Cache] = []

    def make(**overrides: Any) -> Cache:
        settings = CacheSettings(
            backend=request.param,
            path=tmp_path / "cache.sqlite3",
            redis_url=redis_url,
            redis_timeout_seconds=LENIENT_SECONDS,
            **overrides,
        )
        cache = open_cache(settings, clock=clock)
        made.append(cache)
        return cache

    yield make
    for cache in made:
        await cache.close()


def key(query: str) -> str:
    return cache_key("web_search", query, {"max_results": 10}, "fp")


def fresh_redis_cache(server: RedisServer, clock: FakeClock) -> Cache:
    """A Redis cache on `server`, emptied first."""
    assert server.command("FLUSHALL") == b"+OK"
    settings = CacheSettings(
        backend="redis", redis_url=server.url, redis_timeout_seconds=LENIENT_SECONDS
    )
    return open_cache(settings, clock=clock)


async def test_round_trip_and_age(make_cache: MakeCache, clock: FakeClock) -> None:
    cache = make_cache()
    value = {"query": "zürich 東京", "results": [{"title": "t", "score": 0.5}], "partial": False}
    assert await cache.get("web", key("a")) is None
    await cache.set("web", key("a"), value)
    clock.advance(90)
    hit = await cache.get("web", key("a"))
    assert hit is not None
    assert hit.value == value
    assert hit.age_seconds == pytest.approx(90)
    assert (cache.stats.hits, cache.stats.misses, cache.stats.sets) == (1, 1, 1)
    assert not cache.stats.errors


async def test_what_is_remembered_is_what_get_returns(
    make_cache: MakeCache, clock: FakeClock
) -> None:
    cache = make_cache()
    assert cache.remembered("web", key("a")) is None
    await cache.set("web", key("a"), {"v": 1})
    clock.advance(1)
    remembered = cache.remembered("web", key("a"))  # the SQLite backend's memory only
    got = await cache.get("web", key("a"))
    assert got is not None and got.value == {"v": 1} and got.age_seconds == 1
    # Only the SQLite backend answers from this process's memory; Redis always reads.
    assert remembered == (got if cache.backend == "sqlite" else None)
    assert cache.stats.hits == (2 if cache.backend == "sqlite" else 1) and cache.stats.misses == 0
    assert cache.remembered("web", key("b")) is None
    assert cache.remembered("academic", key("a")) is None


async def test_an_entry_older_than_the_callers_max_age_is_a_miss(
    make_cache: MakeCache, clock: FakeClock
) -> None:
    cache = make_cache()
    await cache.set("web", key("a"), {"v": 1})
    clock.advance(100)
    assert cache.remembered("web", key("a"), max_age_seconds=100) is None  # not counted
    assert await cache.get("web", key("a"), max_age_seconds=100) is None
    young = await cache.get("web", key("a"), max_age_seconds=101)
    assert young is not None and young.value == {"v": 1}
    assert (cache.stats.hits, cache.stats.misses) == (1, 1)


async def test_namespaces_are_apart(make_cache: MakeCache) -> None:
    cache = make_cache()
    await cache.set("web", key("q"), {"from": "web"})
    await cache.set("academic", key("q"), {"from": "academic"})
    web, academic = await cache.get("web", key("q")), await cache.get("academic", key("q"))
    assert web is not None and web.value == {"from": "web"}
    assert academic is not None and academic.value == {"from": "academic"}
    assert await cache.get("page", key("q")) is None


async def test_set_replaces_and_restarts_the_entry(make_cache: MakeCache, clock: FakeClock) -> None:
    cache = make_cache()
    await cache.set("web", key("q"), {"v": 1}, ttl_seconds=600)
    clock.advance(300)
    await cache.set("web", key("q"), {"v": 2})
    clock.advance(3 * HOUR)  # far past the first entry's 600 s
    hit = await cache.get("web", key("q"))
    assert hit is not None and hit.value == {"v": 2}
    assert hit.age_seconds == pytest.approx(3 * HOUR)


async def test_unhit_entry_expires_after_its_ttl(make_cache: MakeCache, clock: FakeClock) -> None:
    cache = make_cache()
    await cache.set("web", key("q"), {"v": 1})
    clock.advance(6 * HOUR - 1)
    await cache.set("web", key("other"), {"v": 2})
    assert await cache.get("web", key("other")) is not None
    clock.advance(2)
    assert await cache.get("web", key("q")) is None


async def test_hits_slide_expiry_up_to_the_max_age(make_cache: MakeCache, clock: FakeClock) -> None:
    cache = make_cache()
    await cache.set("web", key("q"), {"v": 1})
    for elapsed in (5, 10, 15, 20):  # a hit every 5 h keeps it alive far past the 6 h TTL
        clock.advance(5 * HOUR)
        hit = await cache.get("web", key("q"))
        assert hit is not None, f"miss at {elapsed} h"
        assert hit.age_seconds == pytest.approx(elapsed * HOUR)
    clock.advance(4 * HOUR)  # 24 h after it was stored, 4 h after its last hit
    assert await cache.get("web", key("q")) is None


async def test_partial_ttl_is_short_and_slides_by_itself(
    make_cache: MakeCache, clock: FakeClock
) -> None:
    cache = make_cache()
    await cache.set("web", key("partial"), {"partial": True}, ttl_seconds=600)
    await cache.set("web", key("full"), {"partial": False})
    clock.advance(599)
    assert await cache.get("web", key("partial")) is not None
    clock.advance(599)  # 599 s after that hit: a hit slides by the entry's own 600 s
    assert await cache.get("web", key("partial")) is not None
    clock.advance(601)
    assert await cache.get("web", key("partial")) is None
    assert await cache.get("web", key("full")) is not None


async def test_max_age_shorter_than_ttl_caps_the_lifetime(
    make_cache: MakeCache, clock: FakeClock
) -> None:
    cache = make_cache(ttl_seconds=6 * 3600, max_age_seconds=3600)
    await cache.set("web", key("q"), {"v": 1})
    clock.advance(3599)
    assert await cache.get("web", key("q")) is not None
    clock.advance(2)
    assert await cache.get("web", key("q")) is None


async def test_zero_ttl_stores_nothing(make_cache: MakeCache) -> None:
    cache = make_cache()
    await cache.set("web", key("q"), {"v": 1}, ttl_seconds=0)
    assert await cache.get("web", key("q")) is None
    assert cache.stats.sets == 0


async def test_cleanup_removes_expired_entries(make_cache: MakeCache, clock: FakeClock) -> None:
    cache = make_cache()
    await cache.set("web", key("short"), {"v": 1}, ttl_seconds=600)
    await cache.set("page", key("long"), {"v": 2})
    clock.advance(700)
    assert await cache.cleanup() == 1
    assert await cache.cleanup() == 0
    assert await cache.get("page", key("long")) is not None


async def test_cleanup_removes_entries_past_max_age(
    make_cache: MakeCache, clock: FakeClock
) -> None:
    cache = make_cache()
    await cache.set("web", key("q"), {"v": 1})
    for _ in range(4):
        clock.advance(5 * HOUR)
        assert await cache.get("web", key("q")) is not None
    clock.advance(4 * HOUR + 1)
    assert await cache.cleanup() == 1


async def test_cleanup_keeps_max_entries_by_least_recent_use(
    make_cache: MakeCache, clock: FakeClock
) -> None:
    cache = make_cache(max_entries=2)
    for name in ("first", "second", "third"):
        await cache.set("web", key(name), {"name": name})
        clock.advance(1)
    assert await cache.get("web", key("first")) is not None  # now the most recently used
    assert await cache.cleanup() == 1
    assert await cache.get("web", key("second")) is None
    assert await cache.get("web", key("first")) is not None
    assert await cache.get("web", key("third")) is not None
    assert await cache.cleanup() == 0


async def test_a_value_that_is_not_json_is_skipped_and_counted(
    make_cache: MakeCache, caplog: pytest.LogCaptureFixture
) -> None:
    cache = make_cache()
    with caplog.at_level(logging.WARNING, logger="websearch_mcp.cache"):
        await cache.set("web", key("q"), {"when": object()})
        await cache.set("web", key("q"), {"when": [object()], "big": 2**70})
        await cache.set("web", key("q"), {"title": "cut \ud83d in half", "big": 2**70})
    assert cache.stats.errors["bad_value"] == 3
    assert len([r for r in caplog.records if r.name == "websearch_mcp.cache"]) == 1
    await cache.set("web", key("q"), {"fine": True})  # the cache itself is not paused
    hit = await cache.get("web", key("q"))
    assert hit is not None and hit.value == {"fine": True}


async def test_values_are_stored_as_the_answers_are_written(make_cache: MakeCache) -> None:
    cache = make_cache()
    # No NaN or infinity in JSON: null, as a tool's answer is written to the client.
    value = {"nan": float("nan"), "inf": [float("-inf")], "text": "zürich \u2028 東京", "n": 1e-05}
    await cache.set("web", key("q"), value)
    hit = await cache.get("web", key("q"))
    assert hit is not None
    assert hit.value == {"nan": None, "inf": [None], "text": "zürich \u2028 東京", "n": 1e-05}
    # Deliberately not the str keys the type asks for: a number key, as `json` writes it.
    await cache.set("web", key("ints"), {1: "a key that is a number"})  # type: ignore[dict-item]
    hit = await cache.get("web", key("ints"))
    assert hit is not None and hit.value == {"1": "a key that is a number"}


async def test_a_closed_cache_misses_and_keeps_nothing(make_cache: MakeCache) -> None:
    cache = make_cache()
    await cache.set("web", key("q"), {"v": 1})
    await cache.close()
    assert await cache.get("web", key("q")) is None
    await cache.set("web", key("q2"), {"v": 2})
    assert await cache.cleanup() == 0
    await cache.close()  # twice is fine


# Redis only


async def test_redis_keys_are_prefixed_hashes_with_a_sliding_redis_expiry(
    redis_server: RedisServer, clock: FakeClock
) -> None:
    import redis.asyncio as aioredis

    cache = fresh_redis_cache(redis_server, clock)
    client = aioredis.Redis.from_url(redis_server.url)
    try:
        secret_query = "hunter2 private question"
        k = cache_key("web_search", secret_query, {"engines": ["bing"]}, "fp")
        await cache.set("web", k, {"v": 1}, ttl_seconds=600)
        names = [name.decode() async for name in client.scan_iter(match="*")]
        assert names == [f"websearch-mcp:web:{k}"]
        assert "hunter2" not in names[0] and "bing" not in names[0]
        assert 0 < await client.pttl(names[0]) <= 600_000

        clock.advance(300)
        await client.pexpire(names[0], 5_000)
        assert await cache.get("web", k) is not None
        assert await client.pttl(names[0]) > 590_000  # the hit slid Redis's own expiry too

        await cache.set("web", k, {"v": 2})  # 6 h TTL, 24 h max age
        for _ in range(4):
            clock.advance(5 * HOUR)
            assert await cache.get("web", k) is not None
        clock.advance(2 * HOUR)  # 22 h old: the max age leaves it 2 h, not the 6 h TTL
        assert await cache.get("web", k) is not None
        assert 0 < await client.pttl(names[0]) <= 2 * 3_600_000
    finally:
        await client.aclose()
        await cache.close()


async def test_redis_down_fails_open_then_recovers(
    clock: FakeClock, caplog: pytest.LogCaptureFixture
) -> None:
    server = RedisServer(redis_binary())
    server.start()
    settings = CacheSettings(
        backend="redis", redis_url=server.url, redis_timeout_seconds=LENIENT_SECONDS
    )
    cache = open_cache(settings, clock=clock)
    try:
        await cache.set("web", key("q"), {"v": 1})
        assert await cache.get("web", key("q")) is not None

        server.stop()
        with caplog.at_level(logging.INFO, logger="websearch_mcp.cache"):
            assert await cache.get("web", key("q")) is None
            await cache.set("web", key("q2"), {"v": 2})  # no exception
            assert await cache.cleanup() == 0
            assert cache.stats.errors["unavailable"] == 1
            assert cache.stats.bypassed == 2  # the set and the cleanup waited the cause out
            clock.advance(31)
            assert await cache.get("web", key("q")) is None  # tried again, still down
            assert cache.stats.errors["unavailable"] == 2
            warnings = [r for r in caplog.records if r.levelno == logging.WARNING]
            assert len(warnings) == 1
            assert "unavailable" in warnings[0].getMessage()

            server.start()  # same port, empty (no persistence)
            assert await cache.get("web", key("q")) is None  # still waiting the cause out
            clock.advance(31)
            assert await cache.get("web", key("q")) is None  # reached Redis: a plain miss
            await cache.set("web", key("q"), {"v": 3})
            hit = await cache.get("web", key("q"))
            assert hit is not None and hit.value == {"v": 3}
        assert any("works again" in r.getMessage() for r in caplog.records)
        assert cache.stats.errors["unavailable"] == 2
    finally:
        await cache.close()
        server.close()


async def test_redis_back_is_used_after_the_wait_even_with_the_clock_set_back(
    clock: FakeClock,
) -> None:
    server = RedisServer(redis_binary())
    settings = CacheSettings(
        backend="redis", redis_url=server.url, redis_timeout_seconds=LENIENT_SECONDS
    )
    cache = open_cache(settings, clock=clock)
    try:
        assert await cache.get("web", key("q")) is None  # not started: unavailable
        assert cache.stats.errors == {"unavailable": 1}
        server.start()
        clock.advance(-3600)  # the wall clock is set back an hour
        clock.advance(31)
        await cache.set("web", key("q"), {"v": 1})
        hit = await cache.get("web", key("q"))
        assert hit is not None and hit.value == {"v": 1}
    finally:
        await cache.close()
        server.close()


async def test_redis_refusing_writes_pauses_writes_only(
    redis_server: RedisServer, clock: FakeClock
) -> None:
    cache = fresh_redis_cache(redis_server, clock)
    try:
        await cache.set("web", key("kept"), {"v": 1})
        with redis_server.refusing_writes():
            await cache.set("web", key("q"), {"v": 2})  # refused: out of memory, no exception
            assert cache.stats.errors["out_of_memory"] == 1
            await cache.set("web", key("q"), {"v": 2})
            assert cache.stats.bypassed == 1  # writes are waited out...
            assert await cache.get("web", key("q")) is None  # ...reads still reach Redis
            assert cache.stats.bypassed == 1 and sum(cache.stats.errors.values()) == 1
            # A hit is served though its expiry cannot slide, and pauses no read after it.
            for _ in range(2):
                hit = await cache.get("web", key("kept"))
                assert hit is not None and hit.value == {"v": 1}
            assert cache.stats.bypassed == 1 and sum(cache.stats.errors.values()) == 1
    finally:
        await cache.close()


async def test_something_else_under_a_redis_key_is_a_miss_for_that_key_only(
    redis_server: RedisServer, clock: FakeClock
) -> None:
    from websearch_mcp.cache.redis import RedisCache

    cache = fresh_redis_cache(redis_server, clock)
    assert isinstance(cache, RedisCache)
    try:
        await cache.set("web", key("kept"), {"v": 1})
        # Not records of this cache: a string, and a hash whose times are not numbers.
        redis_server.command("SET", cache.redis_key("web", key("text")), "hello")
        hashed = cache.redis_key("web", key("hash"))
        redis_server.command("HSET", hashed, "v", "{}", "s", "x", "t", "y", "e", "z", "u", "w")
        assert await cache.get("web", key("text")) is None
        assert await cache.get("web", key("hash")) is None
        assert cache.stats.errors == {"bad_value": 2}
        # The cache itself is not paused: other entries are read, the cleanup runs, and a
        # fresh answer replaces what was there.
        hit = await cache.get("web", key("kept"))
        assert hit is not None and hit.value == {"v": 1}
        assert await cache.cleanup() == 0
        await cache.set("web", key("text"), {"v": 2})
        hit = await cache.get("web", key("text"))
        assert hit is not None and hit.value == {"v": 2}
        assert cache.stats.bypassed == 0 and cache.stats.errors == {"bad_value": 2}
    finally:
        await cache.close()


@pytest.mark.parametrize(
    "fields",
    [
        {"s": "1", "t": "60", "e": "9e99", "u": "1"},  # no value
        {"v": "{}", "s": "1", "t": "x", "e": "9e99", "u": "1"},
        {"v": "{}", "s": "1", "t": "60", "e": "x", "u": "1"},
    ],
    ids=["no-value", "ttl-not-a-number", "expiry-not-a-number"],
)
async def test_a_redis_hash_with_one_part_of_a_record_wrong_is_a_miss_for_that_key_only(
    redis_server: RedisServer, clock: FakeClock, fields: dict[str, str]
) -> None:
    from websearch_mcp.cache.redis import RedisCache

    cache = fresh_redis_cache(redis_server, clock)
    assert isinstance(cache, RedisCache)
    try:
        await cache.set("web", key("kept"), {"v": 1})
        hashed = cache.redis_key("web", key("odd"))
        redis_server.command("HSET", hashed, *(part for pair in fields.items() for part in pair))
        assert await cache.get("web", key("odd")) is None
        assert cache.stats.errors == {"bad_value": 1} and cache.stats.bypassed == 0
        hit = await cache.get("web", key("kept"))
        assert hit is not None and hit.value == {"v": 1}
    finally:
        await cache.close()


async def test_a_redis_password_stays_out_of_the_bypass_log(
    clock: FakeClock, caplog: pytest.LogCaptureFixture
) -> None:
    import socket

    with socket.socket() as probe:  # a port nothing listens on
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    settings = CacheSettings(
        backend="redis",
        redis_url=f"redis://:hunter2-secret@127.0.0.1:{port}/0",
        redis_timeout_seconds=LENIENT_SECONDS,
    )
    cache = open_cache(settings, clock=clock)
    try:
        with caplog.at_level(logging.DEBUG):
            assert await cache.get("web", key("q")) is None
        assert cache.stats.errors["unavailable"] == 1
        assert caplog.records and all("hunter2" not in r.getMessage() for r in caplog.records)
    finally:
        await cache.close()


async def test_a_redis_cleanup_leaves_an_entry_stored_or_used_while_it_scanned(
    redis_server: RedisServer, clock: FakeClock
) -> None:
    """The cleanup deletes what its scan judged (expired, least used), which another replica
    may store afresh or read meanwhile: such an entry is not the one judged, and stays."""
    from websearch_mcp.cache.redis import RedisCache

    cache = fresh_redis_cache(redis_server, clock)
    settings = CacheSettings(
        backend="redis", redis_url=redis_server.url, redis_timeout_seconds=LENIENT_SECONDS
    )
    other = open_cache(settings, clock=clock)  # another replica
    assert isinstance(cache, RedisCache)
    try:
        await cache.set("web", key("fresh"), {"v": "old"}, ttl_seconds=600)
        await cache.set("web", key("gone"), {"v": "old"}, ttl_seconds=600)
        clock.advance(601)  # both expired (Redis's own expiry runs on real time: still there)
        now = clock()
        doomed = await cache.link.call(lambda client: cache._doomed(client, now))
        assert len(doomed) == 2
        await other.set("web", key("fresh"), {"v": "fresh"})  # stored during the scan
        removed = await cache.link.call(lambda client: cache._unlink_unchanged(client, doomed))
        assert removed == 1
        hit = await other.get("web", key("fresh"))
        assert hit is not None and hit.value == {"v": "fresh"}
        assert redis_server.command("EXISTS", cache.redis_key("web", key("gone"))) == b":0"
    finally:
        await cache.close()
        await other.close()


async def test_deployments_with_prefixes_of_their_own_share_one_redis_apart(
    redis_server: RedisServer, clock: FakeClock
) -> None:
    # One database, two deployments: one's cleanup (max_entries 1) and breakers leave the
    # other's answers and breakers alone.
    assert redis_server.command("FLUSHALL") == b"+OK"

    def settings(prefix: str, **overrides: Any) -> CacheSettings:
        return CacheSettings(
            backend="redis",
            redis_url=redis_server.url,
            redis_timeout_seconds=LENIENT_SECONDS,
            redis_prefix=prefix,
            **overrides,
        )

    small = open_cache(settings("staging", max_entries=1), clock=clock)
    other = open_cache(settings("production"), clock=clock)
    stores = [shared_cooldown_store(settings(p)) for p in ("staging", "production")]
    try:
        await small.set("web", key("a"), {"v": 0})
        await other.set("web", key("b1"), {"v": 1})
        await other.set("web", key("b2"), {"v": 2})
        await small.cleanup()
        assert await other.get("web", key("b1")) is not None
        assert await other.get("web", key("b2")) is not None
        staging, production = stores
        assert staging is not None and production is not None
        await staging.set("breaker:searxng", Cooldown(clock() + 60, "HTTP 500", 1))
        assert await production.get("breaker:searxng", fresh=True) is None
        assert redis_server.command("EXISTS", "staging-cooldown:breaker:searxng") == b":1"
    finally:
        for closing in (small, other, *stores):
            if closing is not None:
                await closing.close()


@pytest.mark.parametrize("prefix", ["", "a b", "x*", "websearch-mcp-cooldown", "a:b", "x" * 65])
def test_a_redis_prefix_that_would_meet_another_keys_is_refused(prefix: str) -> None:
    with pytest.raises(ValueError, match="redis_prefix"):
        CacheSettings(backend="redis", redis_url="redis://127.0.0.1:6379/0", redis_prefix=prefix)


async def test_an_entry_read_from_the_file_is_gone_at_exactly_its_ttl(tmp_path: Path) -> None:
    clock = FakeClock()
    cache = open_cache(CacheSettings(path=tmp_path / "cache.sqlite3"), clock=clock)
    key = cache_key("web_search", "q", {"max_results": 10}, "fp")
    try:
        await cache.set("web", key, {"v": 1})
        clock.advance(6 * HOUR)
        assert await cache.get("web", key) is None
    finally:
        await cache.close()
