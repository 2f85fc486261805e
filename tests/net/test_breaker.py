"""Circuit breakers: causes, cause-specific cooldowns, open state, recovery; backoff bounds."""

from __future__ import annotations

import random

import pytest

from testing.resilience_helpers import FakeClock
from websearch_mcp.errors import (
    EngineAuthError,
    EngineBlocked,
    EngineCaptcha,
    EngineError,
    EngineParseError,
    EngineRateLimited,
)
from websearch_mcp.net.backoff import Backoff
from websearch_mcp.net.breaker import BreakerPolicy, CircuitBreaker, classify
from websearch_mcp.net.cooldowns.store import MemoryCooldownStore, format_seconds


@pytest.mark.parametrize(
    ("error", "status", "keyed", "cause"),
    [
        (EngineBlocked("CAPTCHA page"), 200, False, "captcha"),
        (EngineBlocked("unusual traffic"), None, False, "captcha"),
        (EngineBlocked("HTTP 403: access denied"), 403, False, "denied"),
        (EngineBlocked("HTTP 401: access denied"), 401, False, "denied"),
        (EngineBlocked("HTTP 202 with an empty page"), 202, False, "throttled"),
        # A challenge page is a CAPTCHA whatever its status (Google's comes with 429).
        (EngineCaptcha("Google 'unusual traffic' CAPTCHA"), 429, False, "captcha"),
        (EngineCaptcha("CAPTCHA page"), 403, False, "captcha"),
        (EngineRateLimited("HTTP 429"), 429, False, "throttled"),
        (EngineRateLimited("HTTP 429"), 429, True, "key"),
        (EngineRateLimited("quota used up"), 432, True, "key"),
        (EngineAuthError("HTTP 401"), 401, True, "key"),
        (EngineAuthError("HTTP 401"), 401, False, "denied"),
        (EngineError("HTTP 503"), 503, False, "transient"),
        (EngineError("HTTP 502"), 502, True, "transient"),
        (EngineError("HTTP 500"), 500, False, "error"),
        (EngineError("HTTP 400"), 400, True, "request"),
        (EngineError("HTTP 422"), 422, False, "request"),
        (EngineAuthError("API key not valid"), 400, True, "key"),  # Google's bad key is a 400
        (EngineError("HTTP 404"), 404, False, "error"),
        (EngineParseError("not JSON"), 200, True, "error"),
        (EngineError("connection failed (ConnectError)"), None, False, "error"),
    ],
)
def test_classify(error: EngineError, status: int | None, keyed: bool, cause: str) -> None:
    assert classify(error, status, keyed) == cause


def test_policy_cooldowns_follow_the_design() -> None:
    policy = BreakerPolicy()
    assert policy.cooldown("captcha", 1, None) == 3600
    assert policy.cooldown("captcha", 1, 5) == 3600  # a CAPTCHA outlasts any Retry-After
    assert policy.cooldown("denied", 1, None) == 180
    assert policy.cooldown("throttled", 4, None) == 180
    assert policy.cooldown("throttled", 1, 42) == 42
    assert [policy.cooldown("error", n, None) for n in (1, 2, 3, 10, 24, 25, 100)] == [
        5,
        10,
        15,
        50,
        120,
        120,
        120,
    ]
    assert policy.cooldown("transient", 1, 30) == 30


async def test_breaker_opens_reports_time_left_and_closes_after_the_cooldown() -> None:
    clock = FakeClock()
    breaker = CircuitBreaker("bing", MemoryCooldownStore(), clock=clock)
    assert await breaker.check() is None
    assert await breaker.failure("captcha", "CAPTCHA page (Bing unusual traffic check)") == 3600
    state = await breaker.check()
    assert state is not None and state.seconds_left == 3600
    assert state.describe() == (
        "circuit open after CAPTCHA page (Bing unusual traffic check); next try in 1 h"
    )
    clock.advance(3599)
    state = await breaker.check()
    assert state is not None and state.describe().endswith("next try in 1 s")
    clock.advance(2)
    assert await breaker.check() is None


async def test_failures_in_a_row_grow_until_a_success_resets_them() -> None:
    clock = FakeClock()
    breaker = CircuitBreaker("brave", MemoryCooldownStore(), clock=clock)
    seen = []
    for _ in range(3):
        seen.append(await breaker.failure("error", "HTTP 500"))
        clock.advance(seen[-1])
        assert await breaker.check() is None
    assert seen == [5, 10, 15]
    await breaker.success()
    assert await breaker.failure("error", "HTTP 500") == 5


async def test_an_answer_to_a_request_sent_before_the_breaker_opened_leaves_it_open() -> None:
    clock = FakeClock()
    breaker = CircuitBreaker("duckduckgo", MemoryCooldownStore(), clock=clock)
    assert await breaker.check() is None  # one search sends its request
    assert await breaker.check() is None  # another sends its own
    await breaker.failure("captcha", "CAPTCHA page")  # the second's answer: open for 1 h
    clock.advance(0.2)
    await breaker.success()  # the first's answer, sent before the block
    state = await breaker.check()
    assert state is not None and state.seconds_left > 3000
    clock.advance(3600)
    assert await breaker.check() is None  # the probe
    await breaker.success()  # its answer closes it
    assert await breaker.closed()


async def test_failures_of_requests_sent_before_the_breaker_opened_are_one_failure() -> None:
    """Searches in flight when an engine fails all see the one outage: a failure while the rest
    runs came from a request sent before it began (none is sent meanwhile)."""
    clock = FakeClock()
    breaker = CircuitBreaker("brave", MemoryCooldownStore(), clock=clock)
    assert await breaker.failure("error", "HTTP 500") == 5
    for _ in range(11):
        clock.advance(0.25)
        assert await breaker.failure("error", "HTTP 500") == 5  # from the latest
    clock.advance(4.9)
    assert await breaker.check() is not None
    clock.advance(0.1)
    assert await breaker.check() is None  # the probe, after the first rest
    assert await breaker.failure("error", "HTTP 500") == 10  # the next failure in a row
    # A failure asking for a longer rest while one runs still gets it.
    clock.advance(1)
    assert await breaker.failure("captcha", "CAPTCHA page") == 3600
    state = await breaker.check()
    assert state is not None and state.reason == "CAPTCHA page"


async def test_breakers_of_different_engines_share_a_store_independently() -> None:
    store = MemoryCooldownStore()
    clock = FakeClock()
    one = CircuitBreaker("bing", store, clock=clock)
    two = CircuitBreaker("duckduckgo", store, clock=clock)
    await one.failure("denied", "HTTP 403: access denied", retry_after=None)
    assert await one.check() is not None and await two.check() is None
    assert set(store._entries) == {"breaker:bing"}


def test_format_seconds() -> None:
    assert [format_seconds(s) for s in (0, 0.4, 5, 9.6, 59, 61, 150, 180, 3600, 3900, 7200)] == [
        "0 s",
        "0.4 s",
        "5 s",
        "10 s",
        "59 s",
        "1 min 1 s",
        "2 min 30 s",
        "3 min",
        "1 h",
        "1 h 5 min",
        "2 h",
    ]


def test_backoff_is_bounded_exponential_with_jitter() -> None:
    backoff = Backoff(retries=3, base=0.5, cap=2.0)
    rng = random.Random(7)
    for retry, step in enumerate([0.5, 1.0, 2.0, 2.0, 2.0]):
        delays = {backoff.delay(retry, None, rng) for _ in range(50)}
        assert all(step / 2 <= d <= step for d in delays)
        assert len(delays) > 1  # jittered
    assert backoff.delay(0, 1.5, rng) == 1.5  # Retry-After wins when longer


def test_backoff_gives_up_when_out_of_retries_or_time() -> None:
    backoff = Backoff(retries=2, base=0.5, cap=2.0)
    rng = random.Random(1)
    assert backoff.next_delay(0, None, 10.0, rng) is not None
    assert backoff.next_delay(2, None, 10.0, rng) is None  # out of retries
    assert backoff.next_delay(0, 30.0, 10.0, rng) is None  # Retry-After beyond the deadline
    assert backoff.next_delay(0, None, 0.4, rng) is None  # no time left for the request
    # A wait of 2 s fits 2.5 s left, but would leave less than a quarter of it for the request.
    assert backoff.next_delay(0, 2.0, 2.5, rng) is None
    assert backoff.next_delay(0, 2.0, 2.7, rng) == 2.0
