"""Key pools: round robin, cooldowns by cause, resting keys never used, keys never shown."""

from __future__ import annotations

import asyncio
import pickle
from collections import Counter

import pytest

from testing.resilience_helpers import FakeClock
from websearch_mcp.errors import EngineAuthError, EngineError, EngineRateLimited, KeyRefused
from websearch_mcp.net.cooldowns.store import Cooldown, MemoryCooldownStore, fingerprint
from websearch_mcp.net.keypool import KeyPool
from websearch_mcp.search.configuration import parse_config
from websearch_mcp.search.fan_out import Orchestrator

KEYS = ("tvly-key-aaaa", "tvly-key-bbbb", "tvly-key-cccc")


def make_pool(
    keys: tuple[str, ...] = KEYS, clock: FakeClock | None = None
) -> tuple[KeyPool, MemoryCooldownStore, FakeClock]:
    store = MemoryCooldownStore()
    clock = clock or FakeClock()
    pool = KeyPool("tavily", keys, store, clock=clock, cooldown_seconds=1800, refused_seconds=21600)
    return pool, store, clock


def refused(pool: KeyPool, index: int, cause: EngineError) -> KeyRefused:
    return KeyRefused(pool.provider, index, len(pool), pool.secrets[index], cause)


async def test_round_robin_starts_each_request_at_the_next_key() -> None:
    pool, _, _ = make_pool()
    plans = [[p.key for p in await pool.plan()] for _ in range(4)]
    assert plans == [
        [KEYS[0], KEYS[1], KEYS[2]],
        [KEYS[1], KEYS[2], KEYS[0]],
        [KEYS[2], KEYS[0], KEYS[1]],
        [KEYS[0], KEYS[1], KEYS[2]],
    ]


async def test_concurrent_requests_spread_evenly_over_keys() -> None:
    pool, _, _ = make_pool()
    plans = await asyncio.gather(*(pool.plan() for _ in range(30)))
    assert Counter(plan[0].key for plan in plans) == {key: 10 for key in KEYS}


async def test_duplicate_and_empty_keys_are_ignored() -> None:
    pool, _, _ = make_pool(("a-key", "", "a-key", "b-key"))
    assert len(pool) == 2
    assert [p.label for p in await pool.plan()] == ["key 1 of 2", "key 2 of 2"]


async def test_refused_key_is_cooled_longer_and_skipped_until_it_recovers() -> None:
    pool, _, clock = make_pool()
    seconds = await pool.cool(refused(pool, 0, EngineAuthError("HTTP 401: refused")))
    assert seconds == 21600
    for _ in range(3):
        assert KEYS[0] not in [p.key for p in await pool.plan()]
    assert await pool.usable() == 2
    clock.advance(21600 + 1)
    assert await pool.usable() == 3
    assert KEYS[0] in [p.key for p in await pool.plan()]


async def test_rate_limited_key_follows_retry_after_else_the_default() -> None:
    pool, _, clock = make_pool()
    assert await pool.cool(refused(pool, 1, EngineRateLimited("429", retry_after=42))) == 42
    assert await pool.cool(refused(pool, 2, EngineRateLimited("quota used up"))) == 1800
    assert [p.key for p in await pool.plan()] == [KEYS[0]]
    clock.advance(43)
    assert sorted(p.key for p in await pool.plan()) == [KEYS[0], KEYS[1]]


async def test_a_shorter_rest_never_cuts_a_longer_one_short() -> None:
    """Two searches (or replicas) hit one key at once: one sees it refused (6 h), the other a
    429 a moment later; the key still rests the 6 h, and says why."""
    pool, store, clock = make_pool()
    assert await pool.cool(refused(pool, 0, EngineAuthError("HTTP 401: refused"))) == 21600
    clock.advance(10)
    assert await pool.cool(refused(pool, 0, EngineRateLimited("429", retry_after=42))) == 21590
    clock.advance(43)
    assert KEYS[0] not in [p.key for p in await pool.plan()]
    entry = await store.get(f"key:tavily:{fingerprint('tavily', KEYS[0])}")
    assert entry is not None and entry.reason == "error"  # the refusal's, not the 429's
    # A longer rest than the one in place replaces it.
    assert await pool.cool(refused(pool, 1, EngineRateLimited("429", retry_after=42))) == 42
    assert await pool.cool(refused(pool, 1, EngineAuthError("HTTP 403: refused"))) == 21600


async def test_a_plan_made_before_a_rest_keeps_only_the_keys_not_resting_now() -> None:
    pool, _, clock = make_pool()
    planned = await pool.plan()
    await pool.cool(refused(pool, 1, EngineRateLimited("429", retry_after=42)))
    assert [p.key for p in await pool.still_usable(planned)] == [KEYS[0], KEYS[2]]
    clock.advance(42)  # the rest is over this very second, as for a new plan
    assert KEYS[1] in [p.key for p in await pool.plan()]
    assert await pool.still_usable(planned) == planned


async def test_while_every_key_rests_none_is_planned() -> None:
    pool, _, clock = make_pool()
    await pool.cool(refused(pool, 0, EngineRateLimited("429", retry_after=300)))
    await pool.cool(refused(pool, 1, EngineRateLimited("429", retry_after=60)))
    await pool.cool(refused(pool, 2, EngineAuthError("401")))
    for _ in range(3):  # whatever the cursor says: no resting key is ever handed out
        assert await pool.plan() == []
    status, text = await pool.resting()
    assert status == "rate_limited"
    assert text.endswith("no request sent; the first is usable again in 1 min")
    assert await pool.recovers_in() == pytest.approx(60)
    clock.advance(59)
    assert await pool.plan() == []
    clock.advance(1)
    assert [p.key for p in await pool.plan()] == [KEYS[1]]


async def test_every_key_refused_is_an_error_with_the_time_left() -> None:
    pool, _, clock = make_pool(KEYS[:2])
    await pool.cool(refused(pool, 0, EngineAuthError("401")))
    clock.advance(3600)
    await pool.cool(refused(pool, 1, EngineAuthError("401")))
    assert await pool.plan() == []
    # The time left is until the first refused key is tried again, not the last.
    assert await pool.resting() == (
        "error",
        "every key was refused; no request sent; the first is tried again in 5 h",
    )


async def test_key_refused_never_shows_the_key() -> None:
    pool, store, _ = make_pool()
    cause = EngineAuthError(f"invalid API key {KEYS[2]} (HTTP 401)")
    failure = refused(pool, 2, cause)
    assert failure.key == KEYS[2]
    assert str(failure) == "key 3 of 3: invalid API key *** (HTTP 401)"
    assert failure.status == "error" and failure.refused
    for text in (str(failure), repr(failure), repr(failure.args), pickle.dumps(failure)):
        assert KEYS[2] not in str(text)
    assert str(pickle.loads(pickle.dumps(failure))) == str(failure)
    await pool.cool(failure)
    stored = repr(store._entries)
    assert not any(key in stored for key in KEYS)
    assert not any(key in repr(p) for p in await pool.plan() for key in KEYS)
    assert not any(key in repr(pool) for key in KEYS)


async def test_names_in_a_shared_store_are_per_provider_fingerprints() -> None:
    store = MemoryCooldownStore()
    clock = FakeClock()
    one = KeyPool("tavily", ["same-key"], store, clock=clock)
    two = KeyPool("brave", ["same-key"], store, clock=clock)
    await one.cool(KeyRefused("tavily", 0, 1, "same-key", EngineAuthError("401")))
    assert await one.usable() == 0 and await two.usable() == 1
    (name,) = store._entries
    assert name.startswith("key:tavily:") and "same-key" not in name
    assert isinstance(store._entries[name], Cooldown)


def test_keys_from_a_comma_separated_environment_variable() -> None:
    settings = parse_config({}, "test", environ={"TAVILY_API_KEYS": " k-one, k-two ,,k-three"})
    orchestrator = Orchestrator(settings, environ={})
    pool = orchestrator.runs["tavily"].pool
    assert pool is not None and len(pool) == 3
    assert pool.secrets == ("k-one", "k-two", "k-three")
    assert orchestrator.runs["duckduckgo"].pool is None
    assert "k-one" not in repr(settings.engines["tavily"])


def test_cooldowns_come_from_the_configuration() -> None:
    settings = parse_config(
        {
            "engines": {"brave": {"api_keys": ["k1", "k2"]}},
            "search": {"keys": {"cooldown_seconds": 60, "refused_cooldown_seconds": 600}},
        },
        "test",
        environ={},
    )
    pool = Orchestrator(settings, environ={}).runs["brave"].pool
    assert pool is not None
    assert (pool.cooldown_seconds, pool.refused_seconds) == (60, 600)
