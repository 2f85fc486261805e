"""Token buckets per engine: reservations, refill, waiting, and the configured rates."""

from __future__ import annotations

import time

import pytest

from testing.fake_engines import FakeEngines, serve_fake_engines
from testing.resilience_helpers import settings_for
from websearch_mcp.models import Query
from websearch_mcp.net.ratelimit import TokenBucket
from websearch_mcp.search.fan_out import Orchestrator


class Ticker:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def test_one_request_per_second_queues_later_callers() -> None:
    ticker = Ticker()
    bucket = TokenBucket(1.0, clock=ticker)
    assert [bucket.reserve(10) for _ in range(3)] == [0.0, 1.0, 2.0]
    ticker.now += 3.0  # all three reservations are due; one fresh token
    assert bucket.reserve(10) == 0.0
    assert bucket.reserve(10) == 1.0


def test_a_slot_too_far_off_is_not_taken() -> None:
    ticker = Ticker()
    bucket = TokenBucket(2.0, burst=1, clock=ticker)
    assert bucket.reserve(0) == 0.0
    assert bucket.reserve(0.1) is None  # the next slot is 0.5 s away
    assert bucket.reserve(0.5) == pytest.approx(0.5)  # the refusal took nothing
    ticker.now += 10
    assert bucket.reserve(0) == 0.0


def test_burst_and_refill_cap() -> None:
    ticker = Ticker()
    bucket = TokenBucket(5.0, clock=ticker)
    assert [bucket.reserve(0) for _ in range(5)] == [0.0] * 5
    assert bucket.reserve(0) is None
    ticker.now += 3600  # idle for long: still only a burst's worth
    assert sum(1 for _ in range(10) if bucket.reserve(0) == 0.0) == 5


def test_invalid_rate() -> None:
    with pytest.raises(ValueError):
        TokenBucket(0)


async def test_acquire_waits_for_its_slot() -> None:
    bucket = TokenBucket(20.0, burst=1)
    started = time.monotonic()
    assert await bucket.acquire(1.0) and await bucket.acquire(1.0) and await bucket.acquire(1.0)
    assert time.monotonic() - started >= 0.09
    assert not await bucket.acquire(0.0)


def test_rates_come_from_declarations_and_config() -> None:
    settings = settings_for(
        None, {"arxiv": {}, "crossref": {}, "bing": {"rate_limit": 3}, "openalex": {}}
    )
    runs = Orchestrator(settings, environ={}).runs
    arxiv = runs["arxiv"].bucket
    assert arxiv is not None and arxiv.rate == 1.0  # arXiv asks for one request per second
    assert runs["crossref"].bucket is None
    bing = runs["bing"].bucket
    assert bing is not None and bing.rate == 3.0
    off = settings_for(None, {"arxiv": {"rate_limit": 0}})
    assert Orchestrator(off, environ={}).runs["arxiv"].bucket is None


async def test_an_engine_over_its_rate_is_reported_rate_limited_not_called() -> None:
    fake = FakeEngines(lambda engine, query: [{"title": query, "url": "https://a.example/"}])
    with serve_fake_engines(fake) as base:
        settings = settings_for(base, {"searxng": {"rate_limit": 0.5}}, deadline_seconds=0.5)
        orchestrator = Orchestrator(settings, environ={})
        run = orchestrator.runs["searxng"]
        try:
            first = await orchestrator.fan_out(Query("alpha"), [run], 0.5)
            second = await orchestrator.fan_out(Query("alpha"), [run], 0.5)
        finally:
            await orchestrator.close()
    assert first.reports[0].status == "ok"
    assert second.reports[0].status == "rate_limited"
    assert second.reports[0].error == (
        "rate limit of 0.5 requests/s: no free slot before the deadline"
    )
    assert fake.counts["searxng"] == 1
