"""Recent reads of a shared cooldown store, kept for a moment.

Every engine request reads its breaker twice (before, and on success) and a keyed engine's
pool reads each of its keys: about twenty reads per fresh search, each a query of the shared
SQLite file or a round trip to Redis. Cooldowns change rarely, so a read this process made
less than `max_age` seconds ago answers instead: another worker's or replica's change is
seen within `max_age`, this process's own changes at once. The atomic steps (counting a
failure, claiming a probe) always go to the shared store, and so do the reads that decide a
change (`fresh`: whether a rest already runs, before a failure or a refused key).
"""

from __future__ import annotations

import sqlite3
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Protocol

from websearch_mcp.config import CacheSettings
from websearch_mcp.net.cooldowns.store import Cooldown, CooldownStore
from websearch_mcp.net.store_failures import LOG, describe
from websearch_mcp.runtime import runtime_dir

if TYPE_CHECKING:
    from websearch_mcp.net.redis_link import RedisLink

#: How long a read answers again (seconds): another process's change is seen within this.
MAX_AGE_SECONDS = 0.25


class SharedStore(CooldownStore, Protocol):
    """A cooldown store that holds a connection (SQLite, Redis)."""

    async def close(self) -> None: ...


class RecentReads:
    """A `CooldownStore` over a shared one whose reads are reused for `max_age` seconds of
    `clock` (monotonic)."""

    def __init__(
        self,
        store: SharedStore,
        max_age: float = MAX_AGE_SECONDS,
        *,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.store = store
        self.max_age = max_age
        self._clock = clock
        self._read: dict[str, tuple[float, Cooldown | None]] = {}  # name -> (when, value)

    async def get(self, name: str, *, fresh: bool = False) -> Cooldown | None:
        now = self._clock()
        found = self._read.get(name)
        if not fresh and found is not None and now - found[0] < self.max_age:
            return found[1]
        value = await self.store.get(name)
        self._read[name] = (now, value)
        return value

    async def set(self, name: str, cooldown: Cooldown) -> None:
        await self.store.set(name, cooldown)
        self._read[name] = (self._clock(), cooldown)

    async def delete(self, name: str) -> None:
        await self.store.delete(name)
        self._read[name] = (self._clock(), None)

    async def record_failure(
        self, name: str, reason: str, until_for: Callable[[int], float]
    ) -> Cooldown:
        cooldown = await self.store.record_failure(name, reason, until_for)
        self._read[name] = (self._clock(), cooldown)
        return cooldown

    async def claim_probe(self, name: str, lease_seconds: float, now: float) -> bool:
        # A probe lease is not part of what `get` returns: the value read stays true.
        return await self.store.claim_probe(name, lease_seconds, now)

    async def close(self) -> None:
        await self.store.close()


def shared_cooldown_store(
    settings: CacheSettings, link: RedisLink | None = None
) -> RecentReads | None:
    """The Redis cooldown store when the cache is in Redis (replicas share it), on the cache's
    `link` when given (a Redis the cache found dead is not waited for again); the SQLite one in
    the runtime directory of a multi-process server (its workers share it); else None (the
    orchestrator keeps cooldowns in memory, as it does when the file cannot be opened). A shared
    store's reads are reused for a moment (`RecentReads`)."""
    if settings.backend == "redis" and settings.redis_url:
        from websearch_mcp.net.cooldowns.redis import RedisCooldownStore

        timeout = settings.redis_timeout_seconds
        store = RedisCooldownStore(
            link or settings.redis_url, timeout_seconds=timeout, prefix=settings.redis_prefixes()[1]
        )
        return RecentReads(store)
    shared = runtime_dir()
    if shared is None:
        return None
    from websearch_mcp.net.cooldowns.sqlite import SqliteCooldownStore

    path = shared / "cooldowns.sqlite3"
    try:
        return RecentReads(SqliteCooldownStore(path))
    except (sqlite3.Error, OSError) as exc:  # a full or vanished directory fails no worker
        LOG.warning(
            "shared cooldown file %s cannot be opened (%s): this worker's own cooldowns only",
            path,
            describe(exc),
        )
        return None
