"""Half-open breakers: after a cooldown exactly one request probes the engine, the others keep
skipping it until the probe answers; success closes, failure reopens with the next cooldown.

The stores' atomic steps are tested on memory and on a real redis-server (two stores standing
for two replicas); the whole path through fake engines, real uvicorn and the official MCP
client, with one process and with two replicas sharing Redis.
"""

from __future__ import annotations

import asyncio
import random
import re
import time
from collections.abc import AsyncIterator
from contextlib import ExitStack
from typing import Any

import pytest
from mcp import Client

from testing.cooldown_contract import check_store_contract
from testing.fake_engines import FakeEngines, Fault, serve_fake_engines
from testing.redis_server import LENIENT_SECONDS, RedisServer
from testing.resilience_helpers import FakeClock, settings_for
from testing.serving import serve_app
from websearch_mcp.models import Query
from websearch_mcp.net.breaker import CircuitBreaker
from websearch_mcp.net.cooldowns.store import MemoryCooldownStore
from websearch_mcp.net.ratelimit import RateLimit
from websearch_mcp.search.fan_out import Orchestrator
from websearch_mcp.search.service import SearchService
from websearch_mcp.server.app import create_app

NAME = "breaker:bing"


def results_for(engine: str, query: str) -> list[dict[str, Any]]:
    return [
        {
            "title": f"{query} ({engine})",
            "url": f"https://{engine}.example/{abs(hash(query))}",
            "snippet": f"All about {query}.",
        }
    ]


@pytest.fixture
async def redis_stores(redis_server: RedisServer) -> AsyncIterator[tuple[Any, Any]]:
    from websearch_mcp.net.cooldowns.redis import RedisCooldownStore

    assert redis_server.command("FLUSHALL") == b"+OK"
    one, other = (
        RedisCooldownStore(redis_server.url, timeout_seconds=LENIENT_SECONDS) for _ in range(2)
    )
    yield one, other
    for store in (one, other):
        await store.close()


# --- the stores' atomic steps -------------------------------------------------------------------


async def test_memory_store_claims_one_probe_and_counts_every_failure() -> None:
    store = MemoryCooldownStore()
    await check_store_contract(store, store, 1_800_000_000.0)


async def test_redis_store_claims_one_probe_across_replicas_and_counts_atomically(
    redis_stores: tuple[Any, Any],
) -> None:
    one, other = redis_stores
    await check_store_contract(one, other, 1_800_000_000.0)
    assert one.stats.errors == {} and other.stats.errors == {}


async def test_a_probe_whose_lease_ran_out_lets_the_next_through() -> None:
    clock = FakeClock()
    breaker = CircuitBreaker("bing", MemoryCooldownStore(), clock=clock)
    assert await breaker.failure("error", "HTTP 500") == 5
    clock.advance(5)
    # Half-open: no longer open, but not closed until a probe answers (the status page, and
    # the briefer cache lifetime of an answer that left the engine out, go by this).
    assert not await breaker.is_open() and not await breaker.closed()
    half_open = await breaker.state()
    assert half_open is not None and half_open.probing and half_open.seconds_left == 0
    assert await breaker.check(probe_seconds=3) is None  # this one probes
    state = await breaker.check()
    assert state is not None and state.probing
    assert (
        state.describe()
        == "circuit half-open after HTTP 500; another request is probing the engine"
    )
    clock.advance(3)  # the probe never answered
    assert await breaker.check() is None
    assert await breaker.failure("error", "HTTP 500") == 10  # the next cooldown
    state = await breaker.check()
    assert state is not None and state.seconds_left == 10


async def test_a_parsers_bug_is_reported_in_words_and_logged_with_its_kind(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    """The agent reads the report: what happened, not the exception's class; the log has it."""
    fake, clock = FakeEngines(results_for), FakeClock()
    with serve_fake_engines(fake) as base:
        orchestrator = Orchestrator(
            settings_for(base, {"bing": {}}),
            store=MemoryCooldownStore(),
            clock=clock,
            rng=random.Random(1),
            environ={},
        )
        try:
            run = orchestrator.runs["bing"]

            def broken(response: object, query: object) -> list[object]:
                raise KeyError("b_algo")

            monkeypatch.setattr(run.engine, "hits", broken)
            outcome = await orchestrator.call(run, Query("event loop"), time.monotonic() + 2)
        finally:
            await orchestrator.close()
    assert outcome.report.status == "error"
    assert outcome.report.error == "its answer could not be read (an unexpected error, logged)"
    assert "engine bing raised KeyError" in caplog.text


async def test_a_probe_cut_off_by_the_deadline_holds_its_claim_one_second_longer() -> None:
    """docs/engines.md: "A probe whose search ended before it answered holds its claim until
    that search's deadline plus 1 s, then the next request probes"."""
    fake, clock = FakeEngines(results_for), FakeClock()
    fake.faults["bing"] = Fault(hang=True)
    with serve_fake_engines(fake) as base:
        settings = settings_for(base, {"bing": {}})
        orchestrator = Orchestrator(
            settings, store=MemoryCooldownStore(), clock=clock, rng=random.Random(1), environ={}
        )
        try:
            run = orchestrator.runs["bing"]
            assert run.breaker is not None and run.timeout > 1
            await run.breaker.failure("error", "HTTP 500")
            clock.advance(5)  # half-open: this call probes, and its search ends after 0.6 s
            outcome = await orchestrator.call(run, Query("event loop"), time.monotonic() + 0.6)
            assert outcome.report.status == "timeout" and fake.counts["bing"] == 1
            clock.advance(1.2)  # past the deadline and past 1 s, within the second after it
            state = await run.breaker.check()
            assert state is not None and state.probing
            clock.advance(0.6)  # past the deadline plus 1 s: the next request probes
            assert await run.breaker.check() is None
        finally:
            await orchestrator.close()


async def test_only_the_engines_own_timeout_counts_against_its_breaker() -> None:
    """A request cut off by the search's deadline says nothing about the engine: its breaker
    stays closed; a request that outlasts the engine's own `timeout_seconds` opens it."""
    fake, clock = FakeEngines(results_for), FakeClock()
    fake.faults["bing"] = fake.faults["wikipedia"] = Fault(hang=True)
    with serve_fake_engines(fake) as base:
        settings = settings_for(base, {"bing": {}, "wikipedia": {"timeout_seconds": 0.2}})
        orchestrator = Orchestrator(
            settings, store=MemoryCooldownStore(), clock=clock, rng=random.Random(1), environ={}
        )
        try:
            bing, wikipedia = orchestrator.runs["bing"], orchestrator.runs["wikipedia"]
            assert bing.breaker is not None and wikipedia.breaker is not None
            assert bing.timeout > 1
            query = Query("event loop")
            cut = await orchestrator.call(bing, query, time.monotonic() + 0.3)
            assert cut.report.status == "timeout"
            assert re.fullmatch(
                r"no answer within the search's deadline \(0\.[23]\d* s\)", cut.report.error or ""
            )
            assert await bing.breaker.closed()
            slow = await orchestrator.call(wikipedia, query, time.monotonic() + 2)
            assert slow.report.status == "timeout"
            assert slow.report.error == "no answer within its 0.2 s timeout"
            state = await wikipedia.breaker.check()
            assert state is not None and state.reason == "a timeout after 0.2 s"
        finally:
            await orchestrator.close()


def hanging_bing(fake: FakeEngines, base: str, **search: Any) -> Orchestrator:
    """An orchestrator asking a hanging bing (its own timeout, 5 s, well past the 0.3 s searches
    below) and a healthy wikipedia."""
    fake.faults["bing"] = Fault(hang=True)
    settings = settings_for(base, {"bing": {}, "wikipedia": {}}, **search)
    orchestrator = Orchestrator(
        settings, store=MemoryCooldownStore(), clock=FakeClock(), rng=random.Random(1), environ={}
    )
    assert orchestrator.runs["bing"].timeout > 1
    return orchestrator


async def test_an_engine_that_hangs_through_a_whole_search_is_rested() -> None:
    """`hybrid` asks every engine at the search's start and gives up the late ones at its
    deadline: a request in flight for the whole search counts one failure against its breaker,
    even within the engine's own timeout; the next search skips the engine. The first engine of
    `sequential` is asked at the search's start too."""
    for strategy in ("hybrid", "sequential"):
        fake = FakeEngines(results_for)
        order = {"order": ["bing", "wikipedia"]}
        with serve_fake_engines(fake) as base:
            orchestrator = hanging_bing(fake, base, strategy=strategy, sequential=order)
            try:
                bing, wikipedia = orchestrator.runs["bing"], orchestrator.runs["wikipedia"]
                assert bing.breaker is not None
                first = await orchestrator.fan_out(Query("event loop"), [bing, wikipedia], 0.3)
                assert {r.name: r.status for r in first.reports}["bing"] == "timeout", strategy
                state = await bing.breaker.check()
                assert state is not None, strategy
                assert state.describe() == (
                    "circuit open after no answer during the whole search (0.3 s); next try in 5 s"
                )
                again = await orchestrator.fan_out(Query("event loop"), [bing, wikipedia], 0.3)
                assert {r.name: r.status for r in again.reports}["bing"] == "skipped"
                assert fake.counts["bing"] == 1
            finally:
                await orchestrator.close()


async def test_a_call_given_up_before_its_request_was_sent_or_at_closing_is_not_rested(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Only a request in flight for the whole search counts: not a call still waiting for its
    admission or its rate limit's slot at the deadline, nor one cancelled before the deadline
    (the service closing)."""
    fake = FakeEngines(results_for)
    with serve_fake_engines(fake) as base:
        orchestrator = hanging_bing(fake, base)
        try:
            bing, wikipedia = orchestrator.runs["bing"], orchestrator.runs["wikipedia"]
            assert bing.breaker is not None
            breaker_check = bing.breaker.check

            async def stalled(*args: object, **kwargs: object) -> bool:
                await asyncio.sleep(5)
                return True

            class NoSlot(RateLimit):
                rate = 1.0
                acquire = staticmethod(stalled)

            query = Query("event loop")
            monkeypatch.setattr(bing.breaker, "check", stalled)  # admission never ends
            found = await orchestrator.fan_out(query, [bing, wikipedia], 0.3)
            assert {r.name: r.status for r in found.reports}["bing"] == "timeout"
            monkeypatch.setattr(bing.breaker, "check", breaker_check)
            monkeypatch.setattr(bing, "bucket", NoSlot())  # its slot never comes
            found = await orchestrator.fan_out(query, [bing, wikipedia], 0.3)
            assert {r.name: r.status for r in found.reports}["bing"] == "timeout"
            assert fake.counts["bing"] == 0 and await bing.breaker.closed()
            monkeypatch.setattr(bing, "bucket", None)
            closing = asyncio.create_task(orchestrator.fan_out(query, [bing, wikipedia], 0.3))
            while fake.counts["bing"] == 0:
                await asyncio.sleep(0.01)
            closing.cancel()
            with pytest.raises(asyncio.CancelledError):
                await closing
            assert fake.counts["bing"] == 1 and await bing.breaker.closed()
        finally:
            await orchestrator.close()


# --- end to end -------------------------------------------------------------------------------


async def searches(urls: list[str], count: int, tag: str) -> list[dict[str, Any]]:
    """`count` concurrent web searches, spread over `urls`, each with its own query."""

    async def one(i: int) -> dict[str, Any]:
        async with Client(f"{urls[i % len(urls)]}/mcp", mode="legacy", cache=None) as client:
            result = await client.call_tool("web_search", {"query": f"event loop {tag} {i}"})
        assert not result.is_error
        return next(e for e in result.structured_content["engines"] if e["name"] == "bing")

    return list(await asyncio.gather(*(one(i) for i in range(count))))


def serve_replicas(
    stack: ExitStack, fake: FakeEngines, stores: list[Any], clock: FakeClock
) -> list[str]:
    base = stack.enter_context(serve_fake_engines(fake))
    # Many concurrent searches from one client: the per-client limits are opened up.
    server = {"max_concurrent_per_client": 64, "rate_limit_per_minute": 0}
    settings = settings_for(
        base, {"bing": {}, "wikipedia": {}}, top={"server": server}, deadline_seconds=3
    )
    urls = []
    for store in stores:
        orchestrator = Orchestrator(
            settings, store=store, clock=clock, rng=random.Random(1), environ={}
        )
        service = SearchService(settings, orchestrator)
        urls.append(stack.enter_context(serve_app(create_app(settings, service))))
    return urls


async def run_half_open(fake: FakeEngines, urls: list[str], clock: FakeClock) -> None:
    fake.faults["bing"] = Fault(status=500)
    (first,) = await searches(urls, 1, "a")
    assert first["status"] == "error" and fake.counts["bing"] == 1
    clock.advance(5)  # the first cooldown (5 s) is over
    fake.faults["bing"] = Fault(status=500, delay=1.5)  # the probe takes a while and fails
    reports = await searches(urls, 10, "b")
    assert fake.counts["bing"] == 2  # exactly one probe reached the engine
    assert sorted(r["status"] for r in reports) == ["error"] + ["skipped"] * 9
    assert all("half-open" in r["error"] for r in reports if r["status"] == "skipped")
    (reopened,) = await searches(urls, 1, "c")
    assert reopened["error"] == "circuit open after HTTP 500; next try in 10 s"
    clock.advance(10)
    fake.faults["bing"] = Fault(delay=1.5)  # now the probe succeeds
    reports = await searches(urls, 6, "d")
    assert sorted(r["status"] for r in reports) == ["ok"] + ["skipped"] * 5
    assert fake.counts["bing"] == 3
    del fake.faults["bing"]
    reports = await searches(urls, 4, "e")  # closed: every search asks it
    assert [r["status"] for r in reports] == ["ok"] * 4 and fake.counts["bing"] == 7


async def test_one_probe_after_the_cooldown_then_reopen_or_close() -> None:
    fake, clock = FakeEngines(results_for), FakeClock()
    with ExitStack() as stack:
        urls = serve_replicas(stack, fake, [MemoryCooldownStore()], clock)
        await run_half_open(fake, urls, clock)


async def test_two_replicas_sharing_redis_send_one_probe(redis_server: RedisServer) -> None:
    from websearch_mcp.net.cooldowns.redis import RedisCooldownStore

    assert redis_server.command("FLUSHALL") == b"+OK"
    fake, clock = FakeEngines(results_for), FakeClock()
    stores = [
        RedisCooldownStore(redis_server.url, clock=clock, timeout_seconds=LENIENT_SECONDS)
        for _ in range(2)
    ]
    with ExitStack() as stack:
        urls = serve_replicas(stack, fake, stores, clock)
        await run_half_open(fake, urls, clock)
    assert all(store.stats.errors == {} for store in stores)
