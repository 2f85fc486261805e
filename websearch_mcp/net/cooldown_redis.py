"""Cooldowns in Redis, so that replicas agree that a key or an engine is cooling down.

Each cooldown is one JSON string under `websearch-mcp-cooldown:<name>` (`key:<provider>:<fp>` or
`breaker:<engine>`; never a key itself), expiring `keep_seconds` after its `until`, so that a run
of failures is remembered a while to grow the next cooldown and then forgotten by Redis itself.

Redis is the shared truth while it answers. Every change is also kept in this process's own
`MemoryCooldownStore`, which answers instead while Redis is down, slow or refusing writes: the
replicas then cool keys and engines each on their own until Redis is back. Like the Redis cache,
a failure is logged once per cause, counted in `stats` and waited out for `retry_seconds`.
"""

from __future__ import annotations

import json
import math
import time
from collections.abc import Callable

from redis.asyncio import Redis
from redis.asyncio.retry import Retry
from redis.backoff import NoBackoff

from websearch_mcp.cache.failopen import CacheStats, FailOpen
from websearch_mcp.cache.redis import classify
from websearch_mcp.net.cooldown import Cooldown, MemoryCooldownStore

KEY_PREFIX = "websearch-mcp-cooldown:"
#: How long a cooldown is kept after it ended (its failure count grows the next one).
KEEP_SECONDS = 3600.0
#: Causes under which Redis can still be read: a failed write pauses writes only.
_WRITE_CAUSES = frozenset({"read_only", "out_of_memory"})


def dump_cooldown(cooldown: Cooldown) -> str:
    """A cooldown as compact JSON text."""
    return json.dumps(
        {"until": cooldown.until, "reason": str(cooldown.reason), "failures": cooldown.failures},
        separators=(",", ":"),
        allow_nan=False,
    )


def load_cooldown(data: str | bytes) -> Cooldown:
    """The cooldown stored as `data` (ValueError, KeyError or TypeError when it is not one)."""
    value = json.loads(data)
    return Cooldown(float(value["until"]), str(value["reason"]), int(value["failures"]))


class RedisCooldownStore:
    """A `CooldownStore` shared through Redis, falling back to memory (see the module docstring).

    `clock` is the wall clock that cooldowns are set on (it only sets Redis's expiry here);
    `timeout_seconds` bounds connecting and each command, since every engine call reads this
    store before it starts.
    """

    def __init__(
        self,
        url: str,
        *,
        clock: Callable[[], float] = time.time,
        retry_seconds: float = 30.0,
        timeout_seconds: float = 0.5,
        keep_seconds: float = KEEP_SECONDS,
        prefix: str = KEY_PREFIX,
    ) -> None:
        self.stats = CacheStats()
        self.local = MemoryCooldownStore()
        self._clock = clock
        self._keep = keep_seconds
        self._prefix = prefix
        # The URL may hold a password: it stays out of the label used in logs.
        self._guard = FailOpen(
            "redis cooldown store (cooldowns are per process meanwhile)",
            self.stats,
            clock,
            retry_seconds,
        )
        self._client = Redis.from_url(
            url,
            socket_connect_timeout=timeout_seconds,
            socket_timeout=timeout_seconds,
            retry=Retry(NoBackoff(), 1),
        )
        self._closed = False

    def redis_key(self, name: str) -> str:
        """The Redis key of a cooldown."""
        return f"{self._prefix}{name}"

    async def get(self, name: str) -> Cooldown | None:
        if self._closed or not self._guard.allows("all"):
            return await self.local.get(name)
        try:
            data = await self._client.get(self.redis_key(name))
        except Exception as exc:
            self._guard.failed(classify(exc), exc, "all")
            return await self.local.get(name)
        self._guard.succeeded("all")
        if data is None:
            return None
        try:
            return load_cooldown(data)
        except (ValueError, KeyError, TypeError) as exc:
            self._guard.failed("bad_value", exc, None)
            return await self.local.get(name)

    async def set(self, name: str, cooldown: Cooldown) -> None:
        await self.local.set(name, cooldown)
        if self._closed or not self._guard.allows("write"):
            return
        life = max(0.0, cooldown.until - self._clock()) + self._keep
        try:
            await self._client.set(
                self.redis_key(name), dump_cooldown(cooldown), px=max(1, math.ceil(life * 1000))
            )
        except Exception as exc:
            self._failed(exc)
            return
        self._guard.succeeded("write")

    async def delete(self, name: str) -> None:
        await self.local.delete(name)
        if self._closed or not self._guard.allows("write"):
            return
        try:
            await self._client.delete(self.redis_key(name))
        except Exception as exc:
            self._failed(exc)
            return
        self._guard.succeeded("write")

    async def close(self) -> None:
        """Release the connections; later calls use the in-memory store only."""
        if not self._closed:
            self._closed = True
            await self._client.aclose()

    def _failed(self, exc: BaseException) -> None:
        cause = classify(exc)
        self._guard.failed(cause, exc, "write" if cause in _WRITE_CAUSES else "all")
