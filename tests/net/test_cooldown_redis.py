"""Key cooldowns and breaker states shared through a real redis-server, and Redis going away.

Skipped with a reason where the `redis-server` binary is absent.
"""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator

import pytest

pytest.importorskip("redis", reason="the Redis backend needs the redis extra")

from testing.cache_helpers import FakeClock
from testing.redis_server import LENIENT_SECONDS, RedisServer, redis_binary
from websearch_mcp.errors import EngineAuthError, EngineRateLimited, KeyRefused
from websearch_mcp.net.breaker import CircuitBreaker
from websearch_mcp.net.cooldowns.redis import KEEP_SECONDS, RedisCooldownStore
from websearch_mcp.net.cooldowns.store import Cooldown
from websearch_mcp.net.keypool import KeyPool


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock()


@pytest.fixture
async def stores(
    redis_server: RedisServer, clock: FakeClock
) -> AsyncIterator[tuple[RedisCooldownStore, RedisCooldownStore]]:
    """Two stores on one Redis, as two replicas would have."""
    assert redis_server.command("FLUSHALL") == b"+OK"
    pair = (
        RedisCooldownStore(redis_server.url, clock=clock, timeout_seconds=LENIENT_SECONDS),
        RedisCooldownStore(redis_server.url, clock=clock, timeout_seconds=LENIENT_SECONDS),
    )
    yield pair
    for store in pair:
        await store.close()


@pytest.fixture
async def own_redis(clock: FakeClock) -> AsyncIterator[tuple[RedisServer, RedisCooldownStore]]:
    """A Redis of the test's own, which it may stop and start, and a store on it."""
    server = RedisServer(redis_binary())
    server.start()
    store = RedisCooldownStore(server.url, clock=clock, timeout_seconds=LENIENT_SECONDS)
    try:
        yield server, store
    finally:
        await store.close()
        server.close()


async def test_a_cooldown_set_by_one_replica_is_seen_by_the_other(
    stores: tuple[RedisCooldownStore, RedisCooldownStore],
    redis_server: RedisServer,
    clock: FakeClock,
) -> None:
    one, other = stores
    cooldown = Cooldown(clock() + 180, "captcha page", 2)
    await one.set("breaker:bing", cooldown)
    assert await other.get("breaker:bing") == cooldown
    assert await other.get("breaker:duckduckgo") is None
    # Redis drops every connection (as when it restarts): the next call goes out on a new one.
    assert redis_server.command("CLIENT", "KILL", "TYPE", "normal") == b":2"
    await other.delete("breaker:bing")
    assert await one.get("breaker:bing") is None
    assert one.stats.errors == {} and other.stats.errors == {}


async def test_redis_forgets_a_cooldown_a_while_after_it_ended(
    stores: tuple[RedisCooldownStore, RedisCooldownStore], clock: FakeClock
) -> None:
    one, _ = stores
    await one.set("breaker:bing", Cooldown(clock() + 60, "error", 1))
    ttl_ms = await one.link.call(lambda client: client.pttl(one.redis_key("breaker:bing")))
    assert (60 + KEEP_SECONDS - 5) * 1000 < ttl_ms <= (60 + KEEP_SECONDS) * 1000


async def test_key_pools_and_breakers_of_two_replicas_agree(
    stores: tuple[RedisCooldownStore, RedisCooldownStore], clock: FakeClock
) -> None:
    one, other = stores
    keys = ["key-a", "key-b"]
    pool_one = KeyPool("tavily", keys, one, clock=clock)
    pool_other = KeyPool("tavily", keys, other, clock=clock)
    first = (await pool_one.plan())[0]
    await pool_one.cool(
        KeyRefused("tavily", first.index, 2, first.key, EngineAuthError("401 unauthorised"))
    )
    assert [p.key for p in await pool_other.plan()] == [k for k in keys if k != first.key]

    breaker_one = CircuitBreaker("bing", one, clock=clock)
    breaker_other = CircuitBreaker("bing", other, clock=clock)
    await breaker_one.failure("captcha", "CAPTCHA page")
    state = await breaker_other.check()
    assert state is not None and state.reason == "CAPTCHA page"
    clock.advance(3601)  # the rest is over: the other replica's request is the probe
    assert await breaker_other.check() is None
    await breaker_other.success()
    assert await breaker_one.check() is None
    # No key is ever written to Redis, only its fingerprint.
    names = await one.link.call(lambda client: client.keys("*"))
    assert names and not any(b"key-a" in n or b"key-b" in n for n in names)


async def test_redis_down_falls_back_to_memory_then_shares_again(
    own_redis: tuple[RedisServer, RedisCooldownStore],
    clock: FakeClock,
    caplog: pytest.LogCaptureFixture,
) -> None:
    server, store = own_redis
    server.stop()
    with caplog.at_level(logging.INFO, logger="websearch_mcp.cache"):
        await store.set("breaker:bing", Cooldown(clock() + 600, "captcha page", 1))
        # This process still knows its own cooldown while Redis is away.
        assert await store.get("breaker:bing") == Cooldown(clock() + 600, "captcha page", 1)
        await store.delete("breaker:brave")
        assert store.stats.errors["unavailable"] == 1
        assert store.stats.bypassed == 1
        warnings = [r for r in caplog.records if r.levelno == logging.WARNING]
        assert len(warnings) == 1 and "cooldown" in warnings[0].getMessage()

        server.start()  # empty: what was shared is gone
        clock.advance(31)
        assert await store.get("breaker:brave") is None  # deleted here meanwhile
        # What this process learnt meanwhile stays in force here until it changes again.
        assert await store.get("breaker:bing") == Cooldown(clock() + 569, "captcha page", 1)
        await store.set("breaker:bing", Cooldown(clock() + 60, "error", 1))
        assert server.command("EXISTS", store.redis_key("breaker:bing")) == b":1"
        server.command("DEL", store.redis_key("breaker:bing"))  # another replica's change
        assert await store.get("breaker:bing") is None  # shared again: Redis is the truth
    assert any("works again" in r.getMessage() for r in caplog.records)


async def test_a_cooldown_shared_before_redis_went_away_is_still_known_here(
    own_redis: tuple[RedisServer, RedisCooldownStore], clock: FakeClock
) -> None:
    server, store = own_redis
    cooldown = Cooldown(clock() + 600, "captcha page", 1)
    await store.set("breaker:bing", cooldown)
    counted = await store.record_failure("breaker:brave", "HTTP 503", lambda n: clock() + 60)
    server.stop()
    # The failed read, then the reads while the store waits before asking Redis again.
    for _ in range(2):
        assert await store.get("breaker:bing") == cooldown
        assert await store.get("breaker:brave") == counted
    assert store.stats.errors["unavailable"] == 1


async def test_redis_refusing_writes_keeps_cooldowns_here_and_still_reads_the_shared_ones(
    stores: tuple[RedisCooldownStore, RedisCooldownStore],
    redis_server: RedisServer,
    clock: FakeClock,
) -> None:
    one, other = stores
    shared = Cooldown(clock() + 180, "captcha page", 1)
    await other.set("breaker:bing", shared)
    with redis_server.refusing_writes():
        local = Cooldown(clock() + 60, "rate limited", 1)
        await one.set("breaker:brave", local)  # refused by Redis: kept in this process
        assert one.stats.errors["out_of_memory"] == 1
        assert await one.local.get("breaker:brave") == local
        assert await one.get("breaker:brave") == local  # Redis answers reads, without it
        assert await other.get("breaker:brave") is None  # the others never heard of it
        assert await one.get("breaker:bing") == shared  # what the others set is still seen
        assert one.stats.bypassed == 0
        await one.delete("breaker:brave")  # writes are waited out meanwhile
        assert one.stats.bypassed == 1
        await one.set("breaker:exa", Cooldown(clock() + 10, "error", 1))  # waited out too
        clock.advance(11)  # ended: its probe is taken here, as Redis never heard of it
        assert await one.claim_probe("breaker:exa", 5, clock())
        assert not await one.claim_probe("breaker:exa", 5, clock())
    clock.advance(31)  # writes are tried again, but Redis still never heard of this one
    assert await one.claim_probe("breaker:exa", 5, clock())


async def test_a_key_of_another_type_under_one_name_leaves_the_other_cooldowns_shared(
    stores: tuple[RedisCooldownStore, RedisCooldownStore],
    redis_server: RedisServer,
    clock: FakeClock,
) -> None:
    one, other = stores
    shared = Cooldown(clock() + 600, "captcha page", 1)
    await other.set("breaker:bing", shared)
    # Something else wrote a hash under one cooldown's name.
    assert redis_server.command("HSET", one.redis_key("breaker:brave"), "f", "1") == b":1"
    assert await one.get("breaker:brave") is None
    assert not await one.claim_probe("breaker:brave", 5, clock())
    # Every other cooldown is still read from Redis: the other replica's CAPTCHA rest holds.
    assert await one.get("breaker:bing") == shared
    assert one.stats.bypassed == 0 and one.stats.cause is None
    # The next failure replaces what was there, for every replica.
    breaker = CircuitBreaker("brave", one, clock=clock)
    assert await breaker.failure("transient", "HTTP 503") == 5.0
    assert await other.get("breaker:brave") == Cooldown(clock() + 5, "HTTP 503", 1)
    # The lookup and the failure (which looks for a rest under way) each read the bad value.
    assert one.stats.errors == {"bad_value": 2} and one.stats.bypassed == 0


async def test_a_cooldown_set_here_outlives_a_key_of_another_type_written_over_it(
    stores: tuple[RedisCooldownStore, RedisCooldownStore],
    redis_server: RedisServer,
    clock: FakeClock,
) -> None:
    one, _ = stores
    mine = Cooldown(clock() + 60, "HTTP 503", 1)
    await one.set("breaker:brave", mine)
    key = one.redis_key("breaker:brave")
    assert redis_server.command("DEL", key) == b":1"
    assert redis_server.command("HSET", key, "f", "1") == b":1"
    assert await one.get("breaker:brave") == mine  # what this replica knows, not "closed"
    assert one.stats.errors == {"bad_value": 1}


async def test_a_breaker_another_replica_opened_is_probed_here_while_redis_refuses_writes(
    stores: tuple[RedisCooldownStore, RedisCooldownStore],
    redis_server: RedisServer,
    clock: FakeClock,
) -> None:
    one, other = stores
    assert await CircuitBreaker("bing", other, clock=clock).failure("transient", "503") == 5.0
    breaker = CircuitBreaker("bing", one, clock=clock)
    with redis_server.refusing_writes():
        clock.advance(6)
        # Redis takes no probe claim: this replica claims it on what Redis shows, once.
        assert await breaker.check() is None
        state = await breaker.check()
        assert state is not None and state.probing
        assert one.stats.errors["out_of_memory"] == 1
        # The probe failed: open again, the failures in a row counted on from Redis's.
        assert await breaker.failure("transient", "503") == 10.0


async def test_a_cooldown_kept_here_while_redis_refused_it_yields_to_a_shared_one_once_over(
    stores: tuple[RedisCooldownStore, RedisCooldownStore],
    redis_server: RedisServer,
    clock: FakeClock,
) -> None:
    one, other = stores
    keys = ["key-a", "key-b"]
    pool_one = KeyPool("tavily", keys, one, clock=clock)
    pool_other = KeyPool("tavily", keys, other, clock=clock)
    limited = EngineRateLimited("429 slow down", retry_after=5)
    with redis_server.refusing_writes():
        # Redis refuses the rest of key A and of an engine: this replica keeps them itself.
        await pool_one.cool(KeyRefused("tavily", 0, 2, "key-a", limited))
        await CircuitBreaker("bing", one, clock=clock).failure("transient", "HTTP 503")
    clock.advance(6)  # both rests are over here
    # Another replica then finds key A refused and bing behind a CAPTCHA, and Redis takes both.
    await pool_other.cool(KeyRefused("tavily", 0, 2, "key-a", EngineAuthError("401 invalid")))
    await CircuitBreaker("bing", other, clock=clock).failure("captcha", "CAPTCHA page")
    # This replica skips them as every other one does, rather than asking again.
    assert [p.key for p in await pool_one.plan()] == ["key-b"]
    state = await CircuitBreaker("bing", one, clock=clock).check()
    assert state is not None and state.reason == "CAPTCHA page" and not state.probing
    # Shared again: the other replica's probe closing the breaker closes it here too.
    clock.advance(3601)
    assert await CircuitBreaker("bing", other, clock=clock).check() is None
    await CircuitBreaker("bing", other, clock=clock).success()
    for _ in range(2):
        assert await CircuitBreaker("bing", one, clock=clock).check() is None
