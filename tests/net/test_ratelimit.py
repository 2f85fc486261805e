"""Token buckets per engine: reservations, refill, waiting, and the configured rates."""

from __future__ import annotations

import sqlite3
import time
from pathlib import Path
from typing import Any

import pytest

from testing.fake_academic import FakeAcademic, Paper
from testing.fake_academic import base_urls as academic_base_urls
from testing.fake_engines import FakeEngines, serve_fake_engines
from testing.resilience_helpers import settings_for
from testing.serving import serve_app
from websearch_mcp.models import EngineReport, Query
from websearch_mcp.net.ratelimit import TokenBucket
from websearch_mcp.net.shared_rate import SharedRateLimit
from websearch_mcp.runtime import RUNTIME_ENV
from websearch_mcp.search.fan_out import Orchestrator

PAPER = Paper("Protein folding with deep learning", ("Ada Lovelace",), "2021-07-15", pmid="34265")


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
    assert arxiv is not None and arxiv.rate == 1 / 3  # arXiv: one request every three seconds
    assert runs["crossref"].bucket is None
    bing = runs["bing"].bucket
    assert bing is not None and bing.rate == 3.0
    off = settings_for(None, {"arxiv": {"rate_limit": 0}})
    assert Orchestrator(off, environ={}).runs["arxiv"].bucket is None


async def test_the_workers_of_one_server_keep_an_engines_rate_together(tmp_path: Path) -> None:
    """The workers of `serve --workers N` reserve their slots in one file: arXiv gets one
    request every three seconds from all of them, an idle spell after start included (a bucket
    of 1/N of the rate in each would let each send at once)."""
    settings = settings_for(None, {"arxiv": {}, "bing": {"rate_limit": 3}})
    settings.server.workers = 4  # what the parent names in each worker's environment
    workers = [Orchestrator(settings, environ={RUNTIME_ENV: str(tmp_path)}) for _ in range(4)]
    try:
        arxiv = [worker.runs["arxiv"].bucket for worker in workers]
        bing = [worker.runs["bing"].bucket for worker in workers]
        assert all(isinstance(limit, SharedRateLimit) for limit in arxiv + bing)
        assert [limit.reserve(0) for limit in arxiv if limit] == [0.0, None, None, None]
        # Three a second: a burst of three at once, then one every third of a second.
        waits = [limit.reserve(1) for limit in bing if limit]
        assert waits[:3] == [0.0] * 3 and waits[3] == pytest.approx(1 / 3, abs=0.05)
        assert arxiv[0] is not None and arxiv[0].describe() == "rate limit of 0.333333 requests/s"
    finally:
        for worker in workers:
            await worker.close()
    alone = Orchestrator(settings, environ={}).runs  # one process, whatever the file says
    assert [type(alone[name].bucket) for name in ("arxiv", "bing")] == [TokenBucket] * 2


def test_a_shared_rate_queues_like_a_bucket(tmp_path: Path) -> None:
    ticker = Ticker()
    one, other = (
        SharedRateLimit(tmp_path / "rates.sqlite3", "searxng", 2.0, 2, clock=ticker)
        for _ in range(2)
    )
    assert [one.reserve(10), other.reserve(10), one.reserve(10)] == [0.0, 0.0, 0.5]
    assert other.reserve(0.4) is None  # the next slot is a second away: not taken
    assert other.reserve(1.0) == 1.0
    ticker.now += 3600  # idle for long: still only a burst's worth
    assert [one.reserve(0), other.reserve(0), one.reserve(0)] == [0.0, 0.0, None]
    one.close()
    other.close()


def test_a_shared_rate_whose_file_fails_keeps_the_workers_share(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    ticker = Ticker()
    limit = SharedRateLimit(tmp_path / "gone" / "rates.sqlite3", "arxiv", 1 / 3, 4, clock=ticker)
    assert limit.reserve(0) == 0.0  # this worker's own share: one request every 12 s
    assert limit.reserve(11) is None and limit.reserve(12) == pytest.approx(12)
    assert limit.stats.errors == {"cannot_open": 1}  # tried once, then waited out
    assert "shared rate file" in caplog.text and "arxiv at 1/4 of its rate" in caplog.text


def test_a_shared_rate_file_another_process_holds_stops_its_worker_briefly(
    tmp_path: Path,
) -> None:
    """A slot is reserved on the event loop, which waits out another process's lock on the file
    (a worker frozen mid-write, a stalled disk) and holds every search of the worker meanwhile:
    for a short bound, then the worker's own share of the rate."""
    path = tmp_path / "rates.sqlite3"
    arxiv = SharedRateLimit(path, "arxiv", 1 / 3, 2, clock=Ticker())
    assert arxiv.reserve(0) == 0.0  # the file works
    holder = sqlite3.connect(path, isolation_level=None)
    holder.execute("BEGIN IMMEDIATE")
    try:
        started = time.monotonic()
        assert arxiv.reserve(10) == 0.0  # its own share, empty so far
        held = time.monotonic() - started
    finally:
        holder.rollback()
        holder.close()
        arxiv.close()
    assert held < 0.5
    assert arxiv.stats.errors == {"locked": 1}


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


async def _pubmed_at_one_request_per_second(
    deadline: float,
) -> tuple[EngineReport, FakeAcademic, list[float], dict[str, int]]:
    """One PubMed search (esearch, then esummary) at `rate_limit: 1`: its report, the fake
    index, when each request reached it, and the call's statuses on the status page."""
    fake = FakeAcademic(papers={"pubmed": [PAPER]})
    sent: list[float] = []

    async def timed(scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] == "http":
            sent.append(time.monotonic())
        await fake.app(scope, receive, send)

    with serve_app(timed) as base:
        pubmed = {"base_url": academic_base_urls(base)["pubmed"], "rate_limit": 1}
        orchestrator = Orchestrator(settings_for(None, {"pubmed": pubmed}), environ={})
        try:
            fan = await orchestrator.fan_out(
                Query("protein folding"), [orchestrator.runs["pubmed"]], deadline
            )
        finally:
            await orchestrator.close()
    (minute,) = orchestrator.activity.snapshot()["engines"].values()
    return fan.reports[0], fake, sent, minute["pubmed"]["statuses"]


async def test_a_slot_that_leaves_no_time_for_the_request_is_not_taken() -> None:
    """A slot 1 s off with 1.02 s left would leave 20 ms for the request: the engine is
    reported rate-limited at once, not sent a request cut off by the deadline."""
    fake = FakeEngines(lambda engine, query: [{"title": query, "url": "https://a.example/"}])
    with serve_fake_engines(fake) as base:
        settings = settings_for(base, {"searxng": {"rate_limit": 1}})
        orchestrator = Orchestrator(settings, environ={})
        run = orchestrator.runs["searxng"]
        assert run.bucket is not None and run.bucket.reserve(0) == 0.0  # the only token
        try:
            started = time.monotonic()
            outcome = await orchestrator.call(run, Query("alpha"), started + 1.02)
            took = time.monotonic() - started
        finally:
            await orchestrator.close()
    assert outcome.report.status == "rate_limited" and not outcome.asked
    assert fake.counts["searxng"] == 0 and took < 0.5


async def test_a_two_step_engine_waits_for_a_slot_before_its_second_request() -> None:
    """`rate_limit` is requests per second: PubMed's esummary is a request too, so at one
    request per second it goes a second after the esearch, not with it."""
    report, fake, sent, _ = await _pubmed_at_one_request_per_second(5)
    assert report.status == "ok"
    assert fake.counts == {"pubmed.esearch": 1, "pubmed.esummary": 1}
    assert sent[1] - sent[0] >= 0.9


async def test_a_second_request_without_a_slot_before_the_deadline_is_not_sent() -> None:
    report, fake, _, counted = await _pubmed_at_one_request_per_second(0.5)
    assert (report.status, report.error) == (
        "rate_limited",
        "rate limit of 1 request/s: no free slot before the deadline",
    )
    assert fake.counts == {"pubmed.esearch": 1}
    # The esearch reached the index: a call for the status page, not a search that skipped it.
    assert counted == {"rate_limited": 1}
