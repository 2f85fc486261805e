"""The `CooldownStore` contract every store must keep, checked on two handles to one store
(the same object for the in-memory store; two clients or processes for the shared ones)."""

from __future__ import annotations

import asyncio
from typing import Any

from websearch_mcp.net.cooldowns.store import Cooldown

NAME = "breaker:bing"


async def check_store_contract(one: Any, other: Any, now: float) -> None:
    """`claim_probe` and `record_failure` as the `CooldownStore` protocol states them."""
    assert not await one.claim_probe(NAME, 5, now)  # nothing on record: nothing to probe
    first = await one.record_failure(NAME, "HTTP 500", lambda n: now + 10 * n)
    assert first == Cooldown(now + 10, "HTTP 500", 1)
    assert not await other.claim_probe(NAME, 5, now)  # still cooling down
    later = now + 10
    claims = await asyncio.gather(
        *(store.claim_probe(NAME, 5, later) for _ in range(10) for store in (one, other))
    )
    assert claims.count(True) == 1
    assert not await one.claim_probe(NAME, 5, later + 4.9)  # the lease is held
    # A failure ends the lease and counts on from the shared count, whoever records it.
    counted = await asyncio.gather(
        *(s.record_failure(NAME, "HTTP 500", lambda n: later + n) for s in (one, other) * 10)
    )
    assert sorted(c.failures for c in counted) == list(range(2, 22))
    assert (await other.get(NAME)).failures == 21
    # `set` and `delete` end the lease too.
    await one.set(NAME, Cooldown(later, "HTTP 500", 21))
    assert await other.claim_probe(NAME, 60, later)
    await other.set(NAME, Cooldown(later, "HTTP 500", 21))
    assert await one.claim_probe(NAME, 60, later)
    await one.delete(NAME)
    assert not await other.claim_probe(NAME, 60, later)
