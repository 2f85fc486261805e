"""End to end through `POST /mcp`: fault-injecting fake engines next to healthy ones.

Whatever breaks, `web_search` answers within the deadline with the healthy engines' fused
results and the right status per engine, the process keeps serving, memory stays bounded, and
no API key ever shows up in a log line, an error text, a result or the cooldown store.
"""

from __future__ import annotations

import asyncio
import gc
import json
import logging
import random
import re
import socket
import time
import tracemalloc
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from typing import Any

import httpx
import pytest

from testing.fake_engines import Body, FakeEngines, Fault, ResultsFn
from testing.resilience_helpers import FakeClock, report, settings_for, statuses, web_search
from testing.serving import serve_app
from testing.wire_formats import render
from testing.wire_formats import wikipedia_result as wiki
from websearch_mcp.config import Settings
from websearch_mcp.engines.web.brave import Brave
from websearch_mcp.models import Query
from websearch_mcp.net.cooldowns.store import MemoryCooldownStore
from websearch_mcp.net.http import URL_LOGGERS
from websearch_mcp.search.fan_out import Orchestrator
from websearch_mcp.search.service import SearchService
from websearch_mcp.server.app import create_app

DEADLINE = 1.5
#: Time a search may take beyond the deadline (fusion, MCP framing, a loaded machine).
SLACK = 0.6
QUERY = "python asyncio event loop"
KEY_A, KEY_B, KEY_C = "tvly-resilience-A-0001", "tvly-resilience-B-0002", "brave-resilience-C-3"
HEALTHY = ("searxng", "wikipedia")


def results_for(engine: str, query: str) -> list[dict[str, Any]]:
    if engine == "wikipedia":
        return [wiki("Event loop", f"The {query} explained."), wiki("Asyncio", "Python asyncio.")]
    return [
        {
            "title": f"{query} guide ({engine})",
            "url": f"https://{engine}.example/asyncio",
            "snippet": f"How the {query} works.",
        },
        {
            "title": "asyncio — Asynchronous I/O",
            "url": "https://docs.python.org/3/library/asyncio.html",
            "snippet": "asyncio is a library to write concurrent code; the event loop runs it.",
        },
    ]


def engines_conf() -> dict[str, dict[str, Any]]:
    return {
        "tavily": {"api_keys": [KEY_A, KEY_B]},
        "brave": {"api_keys": [KEY_C]},
        "duckduckgo": {},
        "bing": {},
        "searxng": {},
        "wikipedia": {},
    }


@pytest.fixture
def engine_results() -> ResultsFn:
    return results_for


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock()


@contextmanager
def serving(settings: Settings, clock: FakeClock, store: Any = None) -> Iterator[str]:
    orchestrator = Orchestrator(
        settings, clock=clock, store=store, rng=random.Random(3), environ={}
    )
    with serve_app(create_app(settings, SearchService(settings, orchestrator))) as url:
        yield url


def timed_search(url: str, query: str = QUERY) -> tuple[dict[str, Any], float]:
    started = time.monotonic()
    result = web_search(url, query)
    return result, time.monotonic() - started


def assert_healthy_fused(answer: dict[str, Any]) -> None:
    found = {name for r in answer["results"] for name in r["engines"]}
    assert set(HEALTHY) <= found
    for name in HEALTHY:
        assert report(answer, name)["status"] == "ok"


def garbage(size: int) -> bytes:
    return random.Random(5).randbytes(size)


Setup = Callable[[FakeEngines], None]


def fault(engine: str, value: Fault) -> Setup:
    return lambda fake: fake.faults.__setitem__(engine, value)


def body(engine: str, value: Body) -> Setup:
    return lambda fake: fake.bodies.__setitem__(engine, value)


TRUNCATED = b'{"query": "python", "results": [{"title": "python asyncio", "url": "https://exa'
WRONG_HTML = render("duckduckgo", results_for("duckduckgo", QUERY), QUERY)[0]

# (engine, fault, status, text in the error)
FAULTS: dict[str, tuple[str, Setup, str, str]] = {
    "slow": ("brave", fault("brave", Fault(delay=DEADLINE + 0.5)), "timeout", "no answer"),
    "hanging": ("bing", fault("bing", Fault(hang=True)), "timeout", "no answer"),
    "429_retry_after": (
        "bing",
        fault("bing", Fault(status=429, retry_after="30")),
        "rate_limited",
        "HTTP 429",
    ),
    "captcha": ("duckduckgo", fault("duckduckgo", Fault(captcha=True)), "blocked", "CAPTCHA"),
    "202_empty": (
        "duckduckgo",
        fault("duckduckgo", Fault(status=202, body=b"")),
        "blocked",
        "HTTP 202",
    ),
    "500": ("brave", fault("brave", Fault(status=500, body=b"oops")), "error", "HTTP 500"),
    "truncated_json": (
        "tavily",
        body("tavily", Body(TRUNCATED)),
        "error",
        "not JSON",
    ),
    "wrong_engine_html": (
        "bing",
        body("bing", Body(WRONG_HTML)),
        "error",
        "not a results page",
    ),
    "10mb_garbage": (
        "brave",
        fault("brave", Fault(status=200, body=garbage(10 * 1024 * 1024))),
        "error",
        "larger than 5 MiB",
    ),
}


@pytest.mark.parametrize("case", sorted(FAULTS))
def test_a_broken_engine_never_breaks_the_search(
    case: str, fake: FakeEngines, engines_url: str, clock: FakeClock
) -> None:
    engine, setup, status, text = FAULTS[case]
    setup(fake)
    settings = settings_for(engines_url, engines_conf(), deadline_seconds=DEADLINE)
    with serving(settings, clock) as url:
        result, took = timed_search(url)
        assert took < DEADLINE + SLACK
        answer = result["structuredContent"]
        assert report(answer, engine)["status"] == status
        assert text in report(answer, engine)["error"]
        assert_healthy_fused(answer)
        assert answer["partial"] is True
        others = set(statuses(answer)) - {engine}
        assert {statuses(answer)[name] for name in others} == {"ok"}
        # The status page counts the failed call, one cut off at the deadline too.
        rows = httpx.get(f"{url}/status.json", timeout=5).json()["engines"]
        (row,) = [row for row in rows if row["name"] == engine]
        assert row["hour"]["statuses"] == {status: 1}
        assert row["last_error"]["status"] == status
        # The process keeps serving: health, and a second search (the broken engine now
        # skipped by its breaker, or failing again just as fast).
        assert httpx.get(f"{url}/healthz", timeout=5).status_code == 200
        again, took = timed_search(url)
        assert took < DEADLINE + SLACK
        assert_healthy_fused(again["structuredContent"])
        second = report(again["structuredContent"], engine)
        assert second["status"] in (status, "skipped")
        if second["status"] == "skipped":
            assert second["error"].startswith("circuit open after ")


# Markup opened and never closed, over and over (a page's text quoted by an engine): each
# opening was read to the end of the text, a time growing with the square of its length.
UNCLOSED_MARKUP: dict[str, tuple[str, dict[str, str]]] = {
    "tags": ("brave", {"snippet_html": "<a" * 80_000}),
    "highlighting": ("brave", {"snippet_html": "<b " * 30_000}),
    "markdown_links": ("tavily", {"snippet": "[" * 60_000 + "]("}),
}


@pytest.mark.parametrize("case", sorted(UNCLOSED_MARKUP))
def test_unclosed_markup_in_an_engines_text_is_made_plain_in_time(
    case: str, fake: FakeEngines, engines_url: str, clock: FakeClock
) -> None:
    engine, text = UNCLOSED_MARKUP[case]
    result = {"title": f"{QUERY} guide", "url": f"https://{engine}.example/asyncio", **text}
    fake.bodies[engine] = Body(render(engine, [result], QUERY)[0])
    settings = settings_for(engines_url, engines_conf(), deadline_seconds=DEADLINE)
    with serving(settings, clock) as url:
        found, took = timed_search(url)
    assert took < DEADLINE + SLACK
    answer = found["structuredContent"]
    assert report(answer, engine)["status"] == "ok"
    assert_healthy_fused(answer)


def test_an_answer_slow_to_parse_holds_up_no_other_search(
    fake: FakeEngines, engines_url: str, clock: FakeClock
) -> None:
    """A results page well within the size cap that takes its parser seconds: nested 30,000
    deep (150 KB; Lexbor's time grows with the square of the depth). The service runs every
    search on one event loop."""
    fake.bodies["bing"] = Body(b"<html><body>" + b"<div>" * 30_000)
    conf: dict[str, dict[str, Any]] = {"bing": {}, "searxng": {}, "wikipedia": {}}
    settings = settings_for(engines_url, conf, deadline_seconds=DEADLINE)
    with serving(settings, clock) as url, ThreadPoolExecutor(1) as pool:
        started = time.monotonic()
        slow = pool.submit(web_search, url, QUERY)
        while not fake.counts["bing"] and time.monotonic() < started + 5:
            time.sleep(0.01)
        # Other agents' searches, served by healthy engines, while that answer is parsed.
        took: list[float] = []
        while time.monotonic() < started + DEADLINE:
            began = time.monotonic()
            other = web_search(url, f"{QUERY} {len(took)}", engines=list(HEALTHY))
            took.append(time.monotonic() - began)
            assert_healthy_fused(other["structuredContent"])
        answer = slow.result()["structuredContent"]
        slow_took = time.monotonic() - started
    assert max(took) < 1.0, took
    # The search that got the answer still ends by its deadline.
    assert slow_took < DEADLINE + SLACK
    assert report(answer, "bing")["status"] in ("timeout", "error")


async def test_one_engines_answers_slow_to_parse_leave_the_other_engines_parsing(
    fake: FakeEngines, engines_url: str
) -> None:
    """Every engine's answers are parsed in one pool of threads, and a parse holds its thread
    past its search's deadline: many searches getting one engine's slow answer at once take
    no more of them than their engine's share."""
    fake.bodies["bing"] = Body(b"<html><body>" + b"<div>" * 30_000)
    settings = settings_for(engines_url, {"bing": {}, "searxng": {}}, deadline_seconds=1.0)
    orchestrator = Orchestrator(
        settings, clock=FakeClock(), store=MemoryCooldownStore(), rng=random.Random(1), environ={}
    )
    bing, searxng = orchestrator.runs["bing"], orchestrator.runs["searxng"]
    try:
        until = time.monotonic() + 1.0
        await asyncio.gather(*(orchestrator.call(bing, Query(f"q {i}"), until) for i in range(10)))
        answer = await orchestrator.call(searxng, Query(QUERY), time.monotonic() + 1.0)
        assert answer.report.status == "ok", answer.report
    finally:
        await orchestrator.close()


def test_an_engine_error_quoting_one_query_is_never_shown_with_another(
    fake: FakeEngines, engines_url: str, clock: FakeClock
) -> None:
    """The breaker's record is shared by every later search, other clients' included: the
    query an API quoted in its error is not part of it."""
    private = "divorce lawyer near 12 Elm Street"
    fake.faults["serper"] = Fault(status=500, body=json.dumps({"message": f"bad query: {private}"}))
    conf = {"serper": {"api_keys": ["serper-resilience-key"]}, "searxng": {}, "wikipedia": {}}
    settings = settings_for(engines_url, conf, deadline_seconds=DEADLINE)
    with serving(settings, clock) as url:
        own = report(web_search(url, private)["structuredContent"], "serper")
        other = report(web_search(url, QUERY)["structuredContent"], "serper")
    assert own["status"] == "error" and private in own["error"]  # its own search may see it
    assert other["status"] == "skipped"
    assert other["error"].startswith("circuit open after bad query: ***")
    assert "Elm Street" not in other["error"]


def test_a_captcha_is_never_retried_and_opens_the_breaker_for_an_hour(
    fake: FakeEngines, engines_url: str, clock: FakeClock
) -> None:
    fake.faults["duckduckgo"] = Fault(captcha=True)
    settings = settings_for(engines_url, engines_conf(), deadline_seconds=DEADLINE)
    with serving(settings, clock) as url:
        first = web_search(url, QUERY)["structuredContent"]
        assert report(first, "duckduckgo")["status"] == "blocked"
        assert fake.counts["duckduckgo"] == 1
        clock.advance(60)
        skipped = report(web_search(url, QUERY)["structuredContent"], "duckduckgo")
        assert skipped == {
            "name": "duckduckgo",
            "status": "skipped",
            "results": 0,
            "error": "circuit open after CAPTCHA page (DuckDuckGo anomaly challenge);"
            " next try in 59 min",
        }
        assert fake.counts["duckduckgo"] == 1
        del fake.faults["duckduckgo"]
        clock.advance(3541)
        back = web_search(url, QUERY)["structuredContent"]
        assert report(back, "duckduckgo")["status"] == "ok"
        assert fake.counts["duckduckgo"] == 2


@pytest.mark.parametrize("status", [429, 503])
def test_a_captcha_answered_with_a_retryable_status_is_not_retried(
    fake: FakeEngines, engines_url: str, clock: FakeClock, status: int
) -> None:
    """docs/engines.md: 429/502/503 are retried, but "A CAPTCHA is never retried": Google's
    "unusual traffic" page (which Google serves with 429) is one request, then the CAPTCHA's
    hour."""
    page = '<html><body><form id="captcha-form" action="/sorry/index"></form></body></html>'
    fake.faults["google"] = Fault(status=status, body=page)
    conf = {"google": {"base_url": f"{engines_url}/other/google"}, "searxng": {}, "wikipedia": {}}
    settings = settings_for(engines_url, conf, deadline_seconds=DEADLINE)
    with serving(settings, clock) as url:
        google = report(web_search(url, QUERY)["structuredContent"], "google")
        assert google["status"] == "blocked" and "CAPTCHA" in google["error"]
        assert "attempts" not in google  # one try
        assert fake.counts["google"] == 1
        clock.advance(60)
        skipped = report(web_search(url, QUERY)["structuredContent"], "google")
    assert skipped["status"] == "skipped"
    assert skipped["error"] == (
        "circuit open after Google 'unusual traffic' CAPTCHA; next try in 59 min"
    )
    assert fake.counts["google"] == 1


def test_a_rate_limited_engine_rests_as_long_as_retry_after_says(
    fake: FakeEngines, engines_url: str, clock: FakeClock
) -> None:
    fake.faults["bing"] = Fault(status=429, retry_after="30")
    fake.faults["duckduckgo"] = Fault(status=403)
    settings = settings_for(engines_url, engines_conf(), deadline_seconds=DEADLINE)
    with serving(settings, clock) as url:
        first = web_search(url, QUERY)["structuredContent"]
        assert report(first, "duckduckgo")["status"] == "blocked"
        second = web_search(url, QUERY)["structuredContent"]
        assert report(second, "bing")["error"] == (
            "circuit open after HTTP 429 Too Many Requests; next try in 30 s"
        )
        assert report(second, "duckduckgo")["error"] == (
            "circuit open after HTTP 403: access denied; next try in 3 min"
        )
        clock.advance(31)
        third = web_search(url, QUERY)["structuredContent"]
    assert report(third, "bing")["status"] == "rate_limited"
    assert report(third, "duckduckgo")["status"] == "skipped"
    assert fake.counts["bing"] == 2 and fake.counts["duckduckgo"] == 1


def waited(text: str) -> float:
    """The seconds a report's "next try in 2 min 30 s" (or "usable again in ...") names."""
    said = re.search(r" in ((?:\d+(?:\.\d+)? (?:h|min|s) ?)+)$", text)
    assert said is not None, text
    units = {"h": 3600, "min": 60, "s": 1}
    return sum(float(n) * units[unit] for n, unit in re.findall(r"([\d.]+) (h|min|s)", said[1]))


@pytest.mark.parametrize("engine", ["bing", "brave"])
def test_an_engine_left_out_is_asked_once_the_time_its_report_gives_is_over(
    fake: FakeEngines, engines_url: str, clock: FakeClock, engine: str
) -> None:
    """A rest of 150 s (a Retry-After): the breaker's "next try in" (bing) and the keys'
    "usable again in" (brave) say so to the second, and a search made once it is over asks
    the engine."""
    fake.faults[engine] = Fault(status=429, retry_after="150")
    settings = settings_for(engines_url, engines_conf(), deadline_seconds=DEADLINE)
    with serving(settings, clock) as url:
        assert report(web_search(url, QUERY)["structuredContent"], engine)["status"] == (
            "rate_limited"
        )
        rested = report(web_search(url, QUERY)["structuredContent"], engine)
        assert rested["status"] in ("skipped", "rate_limited")
        del fake.faults[engine]
        clock.advance(waited(rested["error"]))
        back = report(web_search(url, QUERY)["structuredContent"], engine)
    assert back["status"] == "ok", back


@pytest.mark.parametrize("value", ["inf", "1e400", "99999999"])
def test_an_endless_retry_after_rests_the_engine_a_day_at_most(
    fake: FakeEngines, engines_url: str, clock: FakeClock, value: str
) -> None:
    fake.faults["bing"] = Fault(status=429, retry_after=value)
    settings = settings_for(engines_url, engines_conf(), deadline_seconds=DEADLINE)
    with serving(settings, clock) as url:
        assert report(web_search(url, QUERY)["structuredContent"], "bing")["status"] == (
            "rate_limited"
        )
        second = web_search(url, QUERY)
        assert not second.get("isError"), second
        assert report(second["structuredContent"], "bing")["error"] == (
            "circuit open after HTTP 429 Too Many Requests; next try in 24 h"
        )
        del fake.faults["bing"]
        clock.advance(86_400)
        assert report(web_search(url, QUERY)["structuredContent"], "bing")["status"] == "ok"


@pytest.mark.parametrize("status", [400, 422])
def test_a_query_an_engine_refuses_leaves_it_for_the_next_search(
    fake: FakeEngines, engines_url: str, clock: FakeClock, status: int
) -> None:
    """A request refused as such says nothing of the next one: it rested the engine for every
    search, and anyone repeating such a query kept the engine out."""
    fake.faults["brave"] = Fault(status=status, body=b'{"error": "query too long"}')
    settings = settings_for(engines_url, engines_conf(), deadline_seconds=DEADLINE)
    with serving(settings, clock) as url:
        refused = report(web_search(url, QUERY)["structuredContent"], "brave")
        assert refused["status"] == "error" and f"HTTP {status}" in refused["error"]
        del fake.faults["brave"]
        assert report(web_search(url, "another query")["structuredContent"], "brave")["status"] == (
            "ok"
        )


def test_other_errors_open_the_breaker_for_longer_each_time(
    fake: FakeEngines, engines_url: str, clock: FakeClock
) -> None:
    fake.faults["brave"] = Fault(status=500)
    settings = settings_for(engines_url, engines_conf(), deadline_seconds=DEADLINE)
    with serving(settings, clock) as url:
        web_search(url, QUERY)
        assert report(web_search(url, QUERY)["structuredContent"], "brave")["error"] == (
            "circuit open after HTTP 500; next try in 5 s"
        )
        clock.advance(5)
        web_search(url, QUERY)
        assert report(web_search(url, QUERY)["structuredContent"], "brave")["error"].endswith(
            "next try in 10 s"
        )
        assert fake.counts["brave"] == 2
        del fake.faults["brave"]
        clock.advance(10)
        assert report(web_search(url, QUERY)["structuredContent"], "brave")["status"] == "ok"
        clock.advance(1)  # a success forgets the failures
        fake.faults["brave"] = Fault(status=500)
        web_search(url, QUERY)
        assert report(web_search(url, QUERY)["structuredContent"], "brave")["error"].endswith(
            "next try in 5 s"
        )


def test_retry_after_and_backoff_on_429_and_503_within_the_deadline(
    fake: FakeEngines, engines_url: str, clock: FakeClock
) -> None:
    fake.faults["bing"] = Fault(status=429, retry_after="0.3")
    fake.faults["brave"] = Fault(status=503)
    settings = settings_for(engines_url, engines_conf(), deadline_seconds=DEADLINE)
    with serving(settings, clock) as url:
        result, took = timed_search(url)
    answer = result["structuredContent"]
    assert took < DEADLINE + SLACK
    # Two retries each (the default), Retry-After honoured: 3 requests, >= 0.6 s for bing.
    assert fake.counts["bing"] == 3 and fake.counts["brave"] == 3
    bing = report(answer, "bing")
    assert bing["status"] == "rate_limited" and bing["latency_ms"] >= 600
    assert len(bing["attempts"]) == 3 and "retried after" in bing["attempts"][0]
    assert report(answer, "brave")["status"] == "error"
    # Brave's only key is not named: "key 1 of 1" says nothing when there is no other.
    assert report(answer, "brave")["attempts"][0].startswith("HTTP 503")
    assert_healthy_fused(answer)


def test_a_retry_that_would_miss_the_deadline_is_not_made(
    fake: FakeEngines, engines_url: str, clock: FakeClock
) -> None:
    fake.faults["bing"] = Fault(status=503, retry_after="5")
    settings = settings_for(engines_url, engines_conf(), deadline_seconds=DEADLINE)
    with serving(settings, clock) as url:
        result, took = timed_search(url)
    assert took < 1.0
    assert fake.counts["bing"] == 1
    assert report(result["structuredContent"], "bing")["status"] == "error"


async def test_a_request_that_could_not_finish_before_the_deadline_is_not_sent(
    fake: FakeEngines, engines_url: str
) -> None:
    """With less time left than a request needs (a late turn in `sequential`), the engine is
    reported `timeout` without a request: none is spent on an answer no one would wait for."""
    orchestrator = Orchestrator(settings_for(engines_url, {"bing": {}}), environ={})
    try:
        run = orchestrator.runs["bing"]
        outcome = await orchestrator.call(run, Query(QUERY), time.monotonic() + 0.02)
    finally:
        await orchestrator.close()
    assert (outcome.report.status, outcome.report.error) == (
        "timeout",
        "no answer before the deadline",
    )
    assert fake.counts["bing"] == 0
    assert not outcome.asked  # the status page counts it skipped, not a timeout of bing's


def test_a_refused_key_is_cooled_and_the_next_key_answers(
    fake: FakeEngines, engines_url: str, clock: FakeClock
) -> None:
    fake.key_faults[KEY_A] = Fault(status=401, body=b'{"detail": {"error": "Unauthorized"}}')
    settings = settings_for(engines_url, engines_conf(), deadline_seconds=DEADLINE)
    with serving(settings, clock) as url:
        result = web_search(url, QUERY)
        first = result["structuredContent"]
        tavily = report(first, "tavily")
        # The text rendering shows each try too.
        assert (
            "tavily ok 2 (" in result["content"][0]["text"]
            and "ms) [attempts: key 1 of 2: HTTP 401: the API key was refused (key cooled for 6 h);"
            " key 2 of 2: 2 results]"
            in result["content"][0]["text"]
        )
        assert tavily["status"] == "ok" and tavily["results"] == 2
        assert tavily["attempts"] == [
            "key 1 of 2: HTTP 401: the API key was refused (key cooled for 6 h)",
            "key 2 of 2: 2 results",
        ]
        assert "tavily" in {n for r in first["results"] for n in r["engines"]}
        for _ in range(3):  # the cooled key is left alone
            assert report(web_search(url, QUERY)["structuredContent"], "tavily")["status"] == "ok"
        assert fake.key_counts[KEY_A] == 1 and fake.key_counts[KEY_B] == 4
        del fake.key_faults[KEY_A]
        clock.advance(6 * 3600 + 1)
        web_search(url, QUERY)
        web_search(url, QUERY)
        assert fake.key_counts[KEY_A] == 2  # back in the rotation


def test_a_refused_key_is_not_waited_for_even_when_its_rest_is_short(
    fake: FakeEngines, engines_url: str
) -> None:
    """Only rate limits are waited out (engines.md: "When every key has failed and the first
    rest ends within the search's time (a `Retry-After` of a second, say), the search waits for
    it"): a refused key is not, however short `refused_cooldown_seconds` is."""
    fake.key_faults[KEY_C] = Fault(status=401, body=b'{"error": "bad key"}')
    settings = settings_for(
        engines_url,
        engines_conf(),
        deadline_seconds=DEADLINE,
        keys={"refused_cooldown_seconds": 0.1},
    )
    with serve_app(create_app(settings)) as url:
        answer = web_search(url, QUERY)["structuredContent"]
    brave = report(answer, "brave")
    assert brave["status"] == "error" and "refused" in brave["error"]
    assert fake.key_counts[KEY_C] == 1
    assert "attempts" not in brave


def test_every_key_rate_limited_waits_for_the_first_to_recover(
    fake: FakeEngines, engines_url: str
) -> None:
    # Real time here: the key's Retry-After of 0.3 s has to pass for real.
    fake.key_faults[KEY_C] = Fault(status=429, retry_after="0.3")
    settings = settings_for(engines_url, engines_conf(), deadline_seconds=DEADLINE)
    with serve_app(create_app(settings)) as url:
        answer = web_search(url, QUERY)["structuredContent"]
    brave = report(answer, "brave")
    assert brave["status"] == "rate_limited"
    assert fake.key_counts[KEY_C] == 3  # the only key, tried again once it recovered, twice
    assert brave["attempts"][0] == "key 1 of 1: HTTP 429 Too Many Requests (key cooled for 0.3 s)"


def test_a_rate_limited_key_is_waited_for_when_the_last_key_tried_was_refused(
    fake: FakeEngines, engines_url: str
) -> None:
    """engines.md: "When every key has failed and the first rest ends within the search's time
    (a `Retry-After` of a second, say), the search waits for it", whichever key failed last:
    key 1 rate limited for 0.3 s, then key 2 refused, then key 1 again once it recovered."""
    fake.key_faults[KEY_A] = Fault(status=429, retry_after="0.3")
    fake.key_faults[KEY_B] = Fault(status=401, body=b'{"detail": {"error": "Unauthorized"}}')
    conf = {"tavily": {"api_keys": [KEY_A, KEY_B]}, "searxng": {}, "wikipedia": {}}
    settings = settings_for(engines_url, conf, deadline_seconds=DEADLINE)
    with serve_app(create_app(settings)) as url:
        tavily = report(web_search(url, QUERY)["structuredContent"], "tavily")
    assert fake.key_counts == {KEY_A: 3, KEY_B: 1}  # key 1, key 2, then key 1 twice more
    assert tavily["status"] == "rate_limited"
    assert tavily["attempts"][:2] == [
        "key 1 of 2: HTTP 429 Too Many Requests (key cooled for 0.3 s)",
        "key 2 of 2: HTTP 401: the API key was refused (key cooled for 6 h)",
    ]


def test_of_keys_rate_limited_the_first_to_recover_is_waited_for(
    fake: FakeEngines, engines_url: str
) -> None:
    # Key 1 rests 0.3 s, key 2 a minute (past the search's time): key 1 is tried again.
    fake.key_faults[KEY_A] = Fault(status=429, retry_after="0.3")
    fake.key_faults[KEY_B] = Fault(status=429, retry_after="60")
    conf = {"tavily": {"api_keys": [KEY_A, KEY_B]}, "searxng": {}, "wikipedia": {}}
    settings = settings_for(engines_url, conf, deadline_seconds=DEADLINE)
    with serve_app(create_app(settings)) as url:
        tavily = report(web_search(url, QUERY)["structuredContent"], "tavily")
    assert tavily["status"] == "rate_limited"
    assert fake.key_counts[KEY_A] > 1 and fake.key_counts[KEY_B] == 1


def test_a_key_resting_after_429_is_not_used_before_retry_after(
    fake: FakeEngines, engines_url: str, clock: FakeClock
) -> None:
    fake.key_faults[KEY_C] = Fault(status=429, retry_after="120")
    settings = settings_for(engines_url, engines_conf(), deadline_seconds=DEADLINE)
    with serving(settings, clock) as url:
        first = report(web_search(url, QUERY)["structuredContent"], "brave")
        assert first["status"] == "rate_limited" and fake.key_counts[KEY_C] == 1
        for waited in (0, 60, 119):
            clock.advance(waited - (clock.now - 1_800_000_000.0))
            answer = web_search(url, QUERY)["structuredContent"]
            brave = report(answer, "brave")
            assert brave["status"] == "rate_limited"
            left = 120 - waited
            shown = f"{left} s" if left < 60 else f"{round(left / 60)} min"
            assert brave["error"].endswith(f"no request sent; the first is usable again in {shown}")
            assert "attempts" not in brave and "latency_ms" not in brave  # nothing was timed
            assert_healthy_fused(answer)
        assert fake.key_counts[KEY_C] == 1  # never sent while it rested
        del fake.key_faults[KEY_C]
        clock.advance(1.5)
        assert report(web_search(url, QUERY)["structuredContent"], "brave")["status"] == "ok"
        assert fake.key_counts[KEY_C] == 2


def test_a_key_another_search_rested_meanwhile_is_not_tried_next(
    fake: FakeEngines, engines_url: str, clock: FakeClock
) -> None:
    """Two searches at once, each starting at another key: the first finds key 1 rate limited
    quickly, the second finds key 2 later. The second's next key is then key 1, resting since
    the first's answer: it is not sent ("A resting key is never used early, across searches")."""
    fake.key_faults[KEY_A] = Fault(delay=0.3, status=429, retry_after="120")
    fake.key_faults[KEY_B] = Fault(delay=0.9, status=429, retry_after="120")
    conf = {"tavily": {"api_keys": [KEY_A, KEY_B]}, "searxng": {}, "wikipedia": {}}
    settings = settings_for(engines_url, conf, deadline_seconds=2.0)
    with serving(settings, clock) as url, ThreadPoolExecutor(2) as pool:
        answers = list(pool.map(lambda q: web_search(url, q), [QUERY, f"{QUERY} tutorial"]))
    tavily = [report(a["structuredContent"], "tavily") for a in answers]
    assert [t["status"] for t in tavily] == ["rate_limited", "rate_limited"]
    # Key 1 once (it rested from its answer on), key 2 by both searches (neither knew of its
    # rest when they sent it).
    assert fake.key_counts[KEY_A] == 1 and fake.key_counts[KEY_B] == 2
    assert not any("no request sent" in t["error"] for t in tavily)  # each sent one


def test_a_retry_does_not_send_a_key_another_search_rested_meanwhile(
    fake: FakeEngines, engines_url: str, clock: FakeClock
) -> None:
    """The first search waits to retry key 1 after a 503; meanwhile a second search finds both
    keys rate limited and rests them. The retry is not sent with the resting key."""
    fake.key_faults[KEY_A] = Fault(status=503, retry_after="2")
    conf = {"tavily": {"api_keys": [KEY_A, KEY_B]}, "searxng": {}, "wikipedia": {}}
    settings = settings_for(engines_url, conf, deadline_seconds=4.0)
    with serving(settings, clock) as url, ThreadPoolExecutor(1) as pool:
        first = pool.submit(web_search, url, QUERY)
        deadline = time.monotonic() + 5
        while fake.key_counts.get(KEY_A, 0) < 1 and time.monotonic() < deadline:
            time.sleep(0.01)
        limited = Fault(status=429, retry_after="120")
        fake.key_faults[KEY_A] = fake.key_faults[KEY_B] = limited
        second = report(web_search(url, f"{QUERY} tutorial")["structuredContent"], "tavily")
        tavily = report(first.result()["structuredContent"], "tavily")
    assert second["status"] == "rate_limited"
    assert fake.key_counts == {KEY_A: 2, KEY_B: 1}
    assert tavily["status"] == "rate_limited"
    assert "every key is resting" in tavily["error"]
    assert "no request sent" not in tavily["error"]  # its first was sent


def test_a_quota_answer_rests_every_key_and_no_request_is_sent(
    fake: FakeEngines, engines_url: str, clock: FakeClock
) -> None:
    quota = Fault(status=432, body=b'{"detail": {"error": "This request exceeds your plan"}}')
    fake.key_faults[KEY_A] = quota
    fake.key_faults[KEY_B] = quota
    settings = settings_for(engines_url, engines_conf(), deadline_seconds=DEADLINE)
    with serving(settings, clock) as url:
        tavily = report(web_search(url, QUERY)["structuredContent"], "tavily")
        assert tavily["status"] == "rate_limited" and len(tavily["attempts"]) == 2
        tavily = report(web_search(url, QUERY)["structuredContent"], "tavily")
        assert tavily["status"] == "rate_limited"
        assert tavily["error"].endswith("usable again in 30 min")
        assert fake.key_counts[KEY_A] == 1 and fake.key_counts[KEY_B] == 1


def test_memory_stays_bounded_under_oversized_answers(
    fake: FakeEngines, engines_url: str, clock: FakeClock
) -> None:
    fake.faults["brave"] = Fault(status=200, body=garbage(10 * 1024 * 1024))
    fake.faults["bing"] = Fault(status=200, body=garbage(10 * 1024 * 1024))
    settings = settings_for(
        engines_url, engines_conf(), deadline_seconds=DEADLINE, breaker={"enabled": False}
    )
    with serving(settings, clock) as url:
        web_search(url, QUERY)  # warm up: imports, pools, caches
        tracemalloc.start()
        try:
            before = tracemalloc.get_traced_memory()[0]
            for _ in range(3):
                answer = web_search(url, QUERY)["structuredContent"]
                assert report(answer, "brave")["status"] == "error"
                assert_healthy_fused(answer)
            peak = tracemalloc.get_traced_memory()[1]
            # Cut-off bodies can wait in reference cycles (exception tracebacks) for the
            # collector, and the fake server holds what it had left to send until it notices
            # the closed connection (later on a busy machine): neither is memory kept between
            # searches, so collect, and give the server a moment, before counting.
            settle = time.monotonic() + 5
            while True:
                gc.collect()
                current = tracemalloc.get_traced_memory()[0]
                if current - before < 4 * 1024 * 1024 or time.monotonic() > settle:
                    break
                time.sleep(0.1)
        finally:
            tracemalloc.stop()
    assert fake.counts["brave"] == 4
    # Two 10 MiB answers per search, each cut off at 5 MiB (the bound leaves room for the fake
    # server's send buffers; reading both whole would pass it), and nothing kept between
    # searches.
    assert peak - before < 32 * 1024 * 1024
    assert current - before < 4 * 1024 * 1024


PLANTED = ("tvly-PLANTED-key-1111", "tvly-PLANTED-key-2222", "brave-PLANTED-3333", "serp-PLANTED")


def test_planted_keys_never_leak(
    fake: FakeEngines, engines_url: str, clock: FakeClock, caplog: pytest.LogCaptureFixture
) -> None:
    """Every failure path a key can take: refused, rate limited, echoed back in an error body,
    sent in the URL (SerpApi), timed out, and every engine failing (a tool error)."""
    caplog.set_level(logging.DEBUG)
    # Each logger itself too: a server started earlier in this process may have quietened the
    # client libraries' loggers (as `configure_logging` does below debug).
    for name in (*URL_LOGGERS, "websearch_mcp.net.engine_http"):
        caplog.set_level(logging.DEBUG, logger=name)
    one, two, brave, serp = PLANTED
    fake.key_faults[one] = Fault(status=401, body=json.dumps({"detail": f"bad key {one}"}))
    fake.key_faults[two] = Fault(status=429, retry_after="60", body=f"slow down {two}")
    fake.faults["brave"] = Fault(status=500, body=f"internal error for {brave}")
    fake.bodies["serpapi"] = Body(
        json.dumps({"error": f"Invalid API key {serp}"}).encode(), status=401
    )
    conf: dict[str, dict[str, Any]] = {
        "tavily": {"api_keys": [one, two]},
        "brave": {"api_keys": [brave]},
        "serpapi": {"api_keys": [serp], "base_url": f"{engines_url}/other/serpapi"},
        "searxng": {},
    }
    store = MemoryCooldownStore()
    settings = settings_for(engines_url, conf, deadline_seconds=DEADLINE)
    seen: list[str] = []
    with serving(settings, clock, store) as url:
        seen.append(json.dumps(web_search(url, QUERY)))  # every key fails, searxng answers
        seen.append(json.dumps(web_search(url, QUERY)))  # all keys cooled: the earliest tried
        fake.faults["searxng"] = Fault(status=503)
        fake.faults["tavily"] = Fault(hang=True)
        fake.key_faults.clear()
        clock.advance(10 * 3600)
        failed = web_search(url, QUERY)  # everything fails: a tool error listing each
        seen.append(json.dumps(failed))
        searxng_api = httpx.get(f"{url}/search", params={"q": QUERY, "format": "json"}, timeout=9)
        seen.append(searxng_api.text)
        metrics = httpx.get(f"{url}/metrics", timeout=5)
        assert metrics.status_code == 200 and "websearch_breaker_open" in metrics.text
        seen.append(metrics.text)
        for name in URL_LOGGERS:  # a client library logging a request URL with its key
            logging.getLogger(name).debug("GET %s/search?api_key=%s", engines_url, serp)
    assert failed["isError"] is True
    assert fake.key_counts[serp] >= 1 and fake.key_counts[one] >= 1
    answer = json.loads(seen[0])["structuredContent"]
    assert report(answer, "serpapi")["error"] == "key 1 of 1: Invalid API key ***"
    seen.append(caplog.text)
    seen.extend(record.getMessage() for record in caplog.records)
    seen.append(repr(store._entries))
    redacted = [r for r in caplog.records if "api_key=***" in r.getMessage()]
    # SerpApi's request URL (the key in its query) in the debug log, and every client logger.
    assert {r.name for r in redacted} == {*URL_LOGGERS, "websearch_mcp.net.engine_http"}
    for text in seen:
        for key in PLANTED:
            assert key not in text


# (engine, where its result list is in its answer, a field of the first result, a value of
# another type than the API documents for it)
ODD_FIELDS = [
    ("tavily", ("results",), "title", 2024),
    ("brave", ("web", "results"), "description", ["a", "list"]),
    ("searxng", ("results",), "title", {"text": "an object"}),
    ("serper", ("organic",), "snippet", 3.5),
]


@pytest.mark.parametrize(("engine", "where", "field", "value"), ODD_FIELDS)
def test_one_result_with_a_field_of_another_type_costs_only_that_field(
    fake: FakeEngines,
    engines_url: str,
    clock: FakeClock,
    engine: str,
    where: tuple[str, ...],
    field: str,
    value: Any,
) -> None:
    """A number, list or object where an API sends text is that result's missing text: the
    engine's list stays whole, not reported as an `unexpected TypeError`."""
    answer = json.loads(render(engine, results_for(engine, QUERY), QUERY)[0])
    items = answer
    for key in where:
        items = items[key]
    items[0][field] = value
    fake.bodies[engine] = Body(json.dumps(answer).encode())
    conf = {**engines_conf(), "serper": {"api_keys": ["serper-odd-fields-key"]}}
    settings = settings_for(engines_url, conf, deadline_seconds=DEADLINE)
    with serving(settings, clock) as url:
        found = web_search(url, QUERY)["structuredContent"]
    reported = report(found, engine)
    assert (reported["status"], reported["results"]) == ("ok", 2), reported
    urls = {r["url"] for r in found["results"] if engine in r["engines"]}
    assert f"https://{engine}.example/asyncio" in urls


def test_a_parser_that_crashes_is_said_in_words_without_its_exception(
    fake: FakeEngines,
    engines_url: str,
    clock: FakeClock,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A bug in one engine's parser fails that engine only, with words an agent reads: not the
    Python class (`unexpected KeyError`) nor the exception's text, which may quote the answer."""

    def crash(*_: object, **__: object) -> None:
        raise KeyError("secret-field-of-the-answer")

    monkeypatch.setattr(Brave, "parse", crash)
    conf = {"brave": {"api_keys": ["brave-parser-crash-key-1"]}, "searxng": {}}
    settings = settings_for(engines_url, conf, deadline_seconds=DEADLINE)
    with serving(settings, clock) as url:
        found = web_search(url, QUERY)["structuredContent"]
    assert report(found, "searxng")["status"] == "ok"
    error = report(found, "brave")["error"]
    assert error == "its answer could not be read (an unexpected error, logged)", error


def test_an_engine_string_cut_between_the_halves_of_an_emoji_is_sent_whole(
    fake: FakeEngines, engines_url: str, clock: FakeClock
) -> None:
    # An API that cuts its snippets by UTF-16 length can leave half an emoji, escaped in its
    # JSON ("\\ud83d"): no answer holding it can be written, so the whole search failed.
    answer = json.loads(render("tavily", results_for("tavily", QUERY), QUERY)[0])
    answer["results"][0]["title"] = "Asyncio guide \ud83d"
    answer["results"][0]["content"] = "pairs stay \ud83d\ude00, halves go \udc00"
    fake.bodies["tavily"] = Body(json.dumps(answer).encode())
    settings = settings_for(engines_url, engines_conf(), deadline_seconds=DEADLINE)
    with serving(settings, clock) as url:
        found = web_search(url, QUERY)["structuredContent"]
    assert report(found, "tavily")["status"] == "ok"
    (first,) = [r for r in found["results"] if r["url"] == answer["results"][0]["url"]]
    assert first["title"] == "Asyncio guide \ufffd"
    assert first["snippet"] == "pairs stay \U0001f600, halves go \ufffd"


def test_the_keys_of_an_engines_json_are_made_whole_too() -> None:
    from websearch_mcp.text_encoding import well_formed_data

    # A key is a string an answer may carry on (an engine's extra fields), halves and all.
    decoded = {"cut \ud83d": [{"pair \ud83d\ude00": "\udc00"}], "n": 1}
    assert well_formed_data(decoded) == {"cut \ufffd": [{"pair \U0001f600": "\ufffd"}], "n": 1}


def test_a_query_an_api_quotes_in_its_error_is_not_logged(
    fake: FakeEngines, engines_url: str, clock: FakeClock, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO)
    query = "unmistakable query words 4711"
    fake.bodies["serpapi"] = Body(
        json.dumps({"error": f"Unsupported query: {query}"}).encode(), status=400
    )
    conf = {
        "serpapi": {
            "api_keys": ["serp-key-0123456789"],
            "base_url": f"{engines_url}/other/serpapi",
        },
        "searxng": {},
    }
    settings = settings_for(engines_url, conf, deadline_seconds=DEADLINE)
    with serving(settings, clock, MemoryCooldownStore()) as url:
        answer = web_search(url, query)["structuredContent"]
    # The agent's own report keeps the engine's words; the log does not.
    assert query in report(answer, "serpapi")["error"]
    failed = [r.getMessage() for r in caplog.records if "engine serpapi failed" in r.getMessage()]
    assert failed and all(query not in message for message in failed)
    assert all(query not in record.getMessage() for record in caplog.records)


def test_an_engine_cut_off_by_the_searchs_deadline_is_not_rested(
    fake: FakeEngines,
    engines_url: str,
    clock: FakeClock,
) -> None:
    # The search's deadline (1 s) ends before brave's own timeout (5 s): brave is reported
    # `timeout` and the search ends on time, but brave was not slow by its own measure, so its
    # breaker stays closed and the next search asks it again (only a call that used its whole
    # own timeout rests an engine). The sequential strategy awaits each call; `hybrid` cancels
    # what is left at the deadline before a call's own timeout fires.
    fake.faults["brave"] = Fault(delay=1.6)
    brave = {"api_keys": ["brave-deadline-key-1"], "timeout_seconds": 5}
    conf = {"brave": brave, "searxng": {}}
    sequential = {"order": ["searxng", "brave"], "force_all": True}
    settings = settings_for(
        engines_url, conf, deadline_seconds=1.0, strategy="sequential", sequential=sequential
    )
    with serving(settings, clock) as url:
        started = time.monotonic()
        first = web_search(url, QUERY)["structuredContent"]
        assert time.monotonic() - started < 1.0 + 0.5  # the deadline holds the slow engine
        assert report(first, "brave")["status"] == "timeout"
        assert report(first, "brave")["error"].startswith("no answer within the search's deadline")
        time.sleep(0.8)  # the fake's first answer is over
        again = web_search(url, QUERY)["structuredContent"]
        assert report(again, "brave")["status"] == "timeout", report(again, "brave")
    assert fake.counts["brave"] == 2


def test_an_engine_slower_than_its_own_timeout_says_which_timeout(
    fake: FakeEngines,
    engines_url: str,
    clock: FakeClock,
) -> None:
    # Brave's own timeout (0.5 s) ends well before the search's deadline (3 s): the report
    # names brave's timeout, not the search's deadline nor the time brave had left.
    fake.faults["brave"] = Fault(delay=1.6)
    brave = {"api_keys": ["brave-own-timeout-key-1"], "timeout_seconds": 0.5}
    settings = settings_for(engines_url, {"brave": brave, "searxng": {}}, deadline_seconds=3.0)
    with serving(settings, clock) as url:
        found = web_search(url, QUERY)["structuredContent"]
    reported = report(found, "brave")
    assert reported["status"] == "timeout", reported
    assert reported["error"] == "no answer within its 0.5 s timeout", reported


def test_an_engine_that_cannot_be_reached_says_so_without_a_python_class_name(
    fake: FakeEngines, engines_url: str, clock: FakeClock
) -> None:
    """docs/tools.md: `error` says "why it failed": a refused connection in words an agent
    reads (as fetch_page says "could not connect to ..."), not as aiohttp's exception class."""
    with socket.socket() as closed:  # a port nothing listens on
        closed.bind(("127.0.0.1", 0))
        port = closed.getsockname()[1]
    conf = {"bing": {"base_url": f"http://127.0.0.1:{port}/bing"}, "searxng": {}}
    with serving(settings_for(engines_url, conf, deadline_seconds=DEADLINE), clock) as url:
        answer = web_search(url, QUERY)
    error = report(answer["structuredContent"], "bing")["error"]
    for text in (error, answer["content"][0]["text"]):
        assert not re.search(r"Client\w*Error", text), text
    assert "could not connect" in error, error
