"""Every Redis call bounded in time, on real sockets: a server that accepts and never answers,
a name looked up while the event loop's own lookup threads are all busy, and a real
redis-server reached by name."""

from __future__ import annotations

import asyncio
import logging
import socket
import time
from collections.abc import AsyncIterator
from concurrent.futures import ThreadPoolExecutor
from threading import Event
from urllib.parse import urlsplit

import pytest

from testing.cache_helpers import FakeClock
from testing.redis_server import LENIENT_SECONDS, RedisServer, redis_binary
from websearch_mcp.net.cooldowns.store import Cooldown

pytest.importorskip("redis", reason="the Redis backend needs the redis extra")

from redis.exceptions import ReadOnlyError

from websearch_mcp.cache.redis import RedisCache
from websearch_mcp.net.cooldowns.redis import RedisCooldownStore, dump_cooldown
from websearch_mcp.net.redis_link import RedisLink, _at_address, report_failure
from websearch_mcp.net.store_failures import CacheStats, StoreFailures

BUDGET = 0.25


def answers(redis: str | RedisLink) -> RedisCache:
    """An answer cache on `redis`, with settings as the service gives them."""
    return RedisCache(
        redis, ttl_seconds=60, max_age_seconds=600, max_entries=100, timeout_seconds=LENIENT_SECONDS
    )


@pytest.fixture
async def silent_server() -> AsyncIterator[str]:
    """A TCP server on 127.0.0.1 that accepts connections, reads, and never answers."""
    held: list[asyncio.StreamWriter] = []

    async def swallow(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        held.append(writer)
        while await reader.read(4096):
            pass

    server = await asyncio.start_server(swallow, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    yield f"redis://127.0.0.1:{port}/0"
    for writer in held:
        writer.close()
    server.close()


async def test_a_server_that_never_answers_costs_one_budget_per_link(
    silent_server: str, clock: FakeClock
) -> None:
    link = RedisLink(silent_server, timeout_seconds=BUDGET, clock=clock)
    cache = RedisCache(link, ttl_seconds=60, max_age_seconds=600, max_entries=10, clock=clock)
    store = RedisCooldownStore(link, clock=clock)
    try:
        started = time.monotonic()
        assert await cache.get("web", "k") is None
        first = time.monotonic() - started
        assert BUDGET <= first < BUDGET + 0.2
        assert cache.stats.errors["timeout"] == 1 and cache.stats.cause == "timeout"

        # The cooldown store on the same link does not wait for the same server again: it is
        # told at once and answers from this process's memory.
        started = time.monotonic()
        await store.set("breaker:bing", Cooldown(clock() + 60, "error", 1))
        cooldown = await store.get("breaker:bing")
        assert time.monotonic() - started < 0.05
        assert cooldown is not None and cooldown.reason == "error"
        assert store.stats.errors["timeout"] == 1
    finally:
        await store.close()
        await cache.close()
        await link.aclose()


async def test_the_name_is_looked_up_outside_the_event_loops_busy_lookup_threads(
    redis_server: RedisServer, clock: FakeClock
) -> None:
    """asyncio looks names up in the loop's default executor, which engine requests share;
    with every one of its threads held, the cache reached by name still answers."""
    assert redis_server.command("FLUSHALL") == b"+OK"
    url = redis_server.url.replace("127.0.0.1", "localhost")
    loop = asyncio.get_running_loop()
    release = Event()
    busy = ThreadPoolExecutor(max_workers=1)
    loop.set_default_executor(busy)
    held = loop.run_in_executor(None, release.wait)
    cache = RedisCache(
        url,
        ttl_seconds=60,
        max_age_seconds=600,
        max_entries=10,
        clock=clock,
        timeout_seconds=LENIENT_SECONDS,
    )
    try:
        await cache.set("web", "k", {"results": [1]})
        hit = await cache.get("web", "k")
        assert hit is not None and hit.value == {"results": [1]}
        assert cache.stats.errors == {}
    finally:
        release.set()
        await held
        await cache.close()


async def test_a_call_given_a_longer_bound_than_the_links_may_take_it(clock: FakeClock) -> None:
    """A cache cleanup runs under a bound of its own, longer than the link's."""
    link = RedisLink("redis://127.0.0.1:6379/0", timeout_seconds=0.05, clock=clock)

    async def slow(client: object) -> str:
        await asyncio.sleep(0.1)
        return "done"

    try:
        assert await link.call(slow, timeout_seconds=1.0) == "done"
        with pytest.raises(TimeoutError):
            await link.call(slow)
    finally:
        await link.aclose()


async def test_a_refused_login_and_a_read_only_replica_are_told_apart(
    redis_server: RedisServer, clock: FakeClock, caplog: pytest.LogCaptureFixture
) -> None:
    """A password Redis refuses stops every call and is counted as `auth`; a replica refusing
    writes (READONLY) stops writes only, and the store is still read."""
    url = redis_server.url.replace("redis://", "redis://nobody:not-the-password@")
    store = RedisCooldownStore(url, clock=clock, timeout_seconds=LENIENT_SECONDS)
    try:
        with caplog.at_level(logging.DEBUG):
            assert await store.get("breaker:bing") is None
        assert store.stats.errors == {"auth": 1} and store.stats.cause == "auth"
        assert "not-the-password" not in caplog.text
    finally:
        await store.close()
    guard = StoreFailures("redis cache", CacheStats(), clock, 30.0)
    report_failure(guard, ReadOnlyError("You can't write against a read only replica."), "write")
    assert guard.allows("all") and not guard.allows("write")


async def test_a_unix_socket_url_reaches_redis() -> None:
    # As the configuration takes it: `unix://` and the socket's path, an empty authority.
    server = RedisServer(redis_binary(), unix_socket=True)
    server.start()
    cache = answers(f"unix://{server.socket_path}")
    try:
        await cache.set("web", "k", {"a": 1})
        assert await cache.get("web", "k") is not None, cache.stats.as_dict()
    finally:
        await cache.close()
        server.close()


async def test_an_acl_refusing_some_commands_or_keys_stops_only_those(
    redis_server: RedisServer, caplog: pytest.LogCaptureFixture
) -> None:
    """An ACL user given the answers' keys only, without SCAN: the cooldowns' calls are refused
    (NOPERM) and the cleanup too, and the answer cache goes on serving all along."""
    redis_server.command(
        "ACL", "SETUSER", "answers", "on", ">pw", "~websearch-mcp:*", "+@all", "-scan"
    )
    link = RedisLink(
        f"redis://answers:pw@127.0.0.1:{redis_server.port}/0", timeout_seconds=LENIENT_SECONDS
    )
    cache = answers(link)
    store = RedisCooldownStore(link, timeout_seconds=LENIENT_SECONDS)
    try:
        await cache.set("web", "k", {"a": 1})
        await store.set("breaker:searxng", Cooldown(time.time() + 60, "HTTP 500", 1))
        assert store.stats.errors == {"forbidden": 1}
        assert await cache.cleanup() == 0
        assert cache.stats.errors == {"forbidden": 1}
        assert await cache.get("web", "k") is not None, cache.stats.as_dict()
        await cache.set("web", "k2", {"a": 2})
        assert await cache.get("web", "k2") is not None, cache.stats.as_dict()
        assert "redis cache bypassed (forbidden)" in caplog.text
    finally:
        await link.aclose()
        redis_server.command("ACL", "DELUSER", "answers")


#: The commands docs/operations.md lists for a Redis user limited by an ACL.
ACL_COMMANDS = [
    "GET",
    "SET",
    "DEL",
    "UNLINK",
    "HSET",
    "HMGET",
    "PEXPIRE",
    "TYPE",
    "EVAL",
    "EVALSHA",
    "SCRIPT|LOAD",
    "MULTI",
    "EXEC",
    "SCAN",
]


async def test_the_commands_the_docs_list_are_all_an_acl_user_needs(
    redis_server: RedisServer,
) -> None:
    redis_server.command(
        "ACL", "SETUSER", "listed", "on", ">pw", "~websearch-mcp:*", "~websearch-mcp-cooldown:*",
        "-@all", *(f"+{command.lower()}" for command in ACL_COMMANDS),
    )  # fmt: skip
    link = RedisLink(
        f"redis://listed:pw@127.0.0.1:{redis_server.port}/0", timeout_seconds=LENIENT_SECONDS
    )
    cache, store = answers(link), RedisCooldownStore(link, timeout_seconds=LENIENT_SECONDS)
    try:
        await cache.set("web", "k", {"a": 1})
        assert await cache.get("web", "k") is not None
        assert await cache.cleanup() == 0
        await store.set("breaker:bing", Cooldown(time.time() + 60, "HTTP 500", 1))
        assert await store.get("breaker:bing", fresh=True) is not None
        await store.record_failure("breaker:brave", "HTTP 500", lambda failures: time.time() + 60)
        await store.claim_probe("breaker:bing", 5.0, time.time())  # refused: still resting
        await store.delete("breaker:bing")
        assert cache.stats.errors == {} and store.stats.errors == {}
    finally:
        await link.aclose()
        redis_server.command("ACL", "DELUSER", "listed")


async def test_a_name_whose_first_address_refuses_is_reached_at_the_next(
    redis_server: RedisServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    # `localhost` on a dual-stack host gives ::1 first; this server listens on 127.0.0.1 only.
    found = [
        (socket.AF_INET6, socket.SOCK_STREAM, 6, "", ("::1", redis_server.port, 0, 0)),
        (socket.AF_INET, socket.SOCK_STREAM, 6, "", ("127.0.0.1", redis_server.port)),
    ]
    real = socket.getaddrinfo
    monkeypatch.setattr(
        socket,
        "getaddrinfo",
        lambda host, *args, **kwargs: (
            found if host == "redis.test" else real(host, *args, **kwargs)
        ),
    )
    cache = answers(f"redis://redis.test:{redis_server.port}/0")
    try:
        # Two calls at once, as at a service's start: both refused at ::1, one moves on.
        await asyncio.gather(cache.get("web", "a"), cache.get("web", "b"))
        await cache.set("web", "k", {"a": 1})
        assert await cache.get("web", "k") is not None, cache.stats.as_dict()
        assert cache.stats.errors == {}
    finally:
        await cache.close()


def test_the_address_replaces_the_host_and_keeps_the_rest() -> None:
    parts = urlsplit("redis://user:p%40ss@redis:6380/2?protocol=3")
    assert _at_address(parts, "10.0.0.7") == "redis://user:p%40ss@10.0.0.7:6380/2?protocol=3"
    assert _at_address(urlsplit("redis://redis/0"), "fd00::7") == "redis://[fd00::7]/0"


async def test_a_store_closes_the_link_it_made_and_leaves_a_shared_one_open(
    redis_server: RedisServer, clock: FakeClock
) -> None:
    own = RedisCooldownStore(redis_server.url, clock=clock)
    await own.set("breaker:bing", Cooldown(clock() + 60, "error", 1))
    await own.close()
    with pytest.raises(OSError):  # its own link went with it
        await own.link.call(lambda client: client.ping())

    shared = RedisLink(redis_server.url, timeout_seconds=BUDGET, clock=clock)
    cache = RedisCache(shared, ttl_seconds=60, max_age_seconds=600, max_entries=10, clock=clock)
    store = RedisCooldownStore(shared, clock=clock)
    try:
        await cache.close()
        # The cache did not own the link: the cooldown store still reaches Redis through it.
        await store.set("breaker:bing", Cooldown(clock() + 60, "error", 1))
        assert await shared.call(lambda client: client.exists(store.redis_key("breaker:bing")))
    finally:
        await store.close()
        await shared.aclose()


async def test_a_redis_back_is_used_by_both_stores_of_a_link_within_the_wait(
    clock: FakeClock,
) -> None:
    server = RedisServer(redis_binary())
    server.start()
    link = RedisLink(server.url, timeout_seconds=LENIENT_SECONDS, clock=clock)
    cache = RedisCache(link, ttl_seconds=600, max_age_seconds=600, max_entries=10, clock=clock)
    store = RedisCooldownStore(link, clock=clock)
    try:
        server.stop()
        assert await cache.get("web", "q") is None  # the link waits 30 s from here
        clock.advance(20)
        assert await store.get("breaker:bing") is None  # refused by the link's wait
        clock.advance(10)
        assert await cache.get("web", "q") is None  # Redis still down: the link waits again
        clock.advance(1)
        server.start()  # back, with a rest another replica set
        shared = Cooldown(clock() + 600, "captcha page", 1)
        server.command("SET", store.redis_key("breaker:bing"), dump_cooldown(shared))
        clock.advance(20)
        await store.get("breaker:bing")  # within the link's wait: not asked yet
        clock.advance(10)  # 30 s after Redis came back, both stores use it again
        assert await store.get("breaker:bing") == shared
        await cache.set("web", "q", {"answer": 1})
        assert (hit := await cache.get("web", "q")) is not None and hit.value == {"answer": 1}
    finally:
        await store.close()
        await cache.close()
        await link.aclose()
        server.close()
