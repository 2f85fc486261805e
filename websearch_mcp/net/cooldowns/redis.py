"""Cooldowns in Redis, so that replicas agree that a key or an engine is cooling down.

Each cooldown is one JSON string under `websearch-mcp-cooldown:<name>` (`key:<provider>:<fp>` or
`breaker:<engine>`; never a key itself), expiring `keep_seconds` after its `until`, so that a run
of failures is remembered a while to grow the next cooldown and then forgotten by Redis itself.
A breaker's probe lease is `websearch-mcp-cooldown:probe:<name>`, taken with `SET NX PX` inside
a Lua script that first checks the cooldown has ended, so two replicas never both probe; a
failure is counted in a Lua script too, so concurrent failures all count.

Redis is the shared truth while it answers. Every change is also kept in this process's own
`MemoryCooldownStore`, which answers instead while Redis is down, slow or refusing writes: the
replicas then cool keys and engines each on their own until Redis is back. A name changed here
while Redis would not take the change is read from here, not from Redis, until a later change of
it reaches Redis (with Redis answering reads but refusing writes, a key this process found
refused would otherwise be tried again at once), or, once its rest here is over, until Redis
shows a rest another replica set since. A probe Redis will not take is claimed here, on
the cooldown Redis shows, so each replica probes on its own meanwhile. Like the Redis cache,
every call is bounded in time (`net.redis_link.RedisLink`, which the cache's may share), and a
failure is logged once per cause, counted in `stats` and waited out for `retry_seconds`.
"""

from __future__ import annotations

import json
import math
import time
from collections.abc import Callable

from redis.asyncio import Redis

from websearch_mcp.net.cooldowns.store import Cooldown, MemoryCooldownStore
from websearch_mcp.net.redis_link import RedisLink, link_for, report_failure
from websearch_mcp.net.store_failures import CacheStats, StoreFailures

KEY_PREFIX = "websearch-mcp-cooldown:"
#: How long a cooldown is kept after it ended (its failure count grows the next one).
KEEP_SECONDS = 3600.0
#: Counting a failure: entries sent for this many next counts, and how often it is sent again.
_CANDIDATES = 8
_COUNT_ATTEMPTS = 16
# Every script reads a cooldown with `redis.pcall`: a key of another type under its name (an
# error for GET) is no cooldown, rather than a failed call that would pause every shared one.
# KEYS: the cooldown. Returns its value, nil, or NOT_A_COOLDOWN for a key of another type.
_GET = """
local value = redis.pcall('GET', KEYS[1])
if type(value) == 'table' then return 0 end
return value
"""
#: What `_GET` returns for a key of another type.
NOT_A_COOLDOWN = 0
# KEYS: the cooldown, the probe lease; ARGV: now (wall-clock seconds), lease in milliseconds.
_CLAIM_PROBE = """
local value = redis.pcall('GET', KEYS[1])
if type(value) ~= 'string' then return 0 end
local ok, entry = pcall(cjson.decode, value)
if not ok or type(entry) ~= 'table' or tonumber(entry['until']) == nil then return 0 end
if tonumber(entry['until']) > tonumber(ARGV[1]) then return 0 end
if redis.call('SET', KEYS[2], '1', 'NX', 'PX', ARGV[2]) then return 1 end
return 0
"""
# KEYS: the cooldown, the probe lease; ARGV: the count assumed stored, then (entry, expiry in
# ms) for that count + 1, + 2, ... Returns {1, new count} or, when the stored count is not
# covered, {0, stored count}. An unreadable entry counts as 0, and is replaced.
_RECORD_FAILURE = """
local failures = 0
local value = redis.pcall('GET', KEYS[1])
if type(value) == 'string' then
  local ok, entry = pcall(cjson.decode, value)
  if ok and type(entry) == 'table' and tonumber(entry['failures']) then
    failures = math.floor(tonumber(entry['failures']))
  end
end
local index = failures - tonumber(ARGV[1])
if index < 0 or 2 * index + 3 > #ARGV then return {0, failures} end
redis.call('SET', KEYS[1], ARGV[2 * index + 2], 'PX', ARGV[2 * index + 3])
redis.call('DEL', KEYS[2])
return {1, failures + 1}
"""


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

    `redis` is the server's URL (the store then makes a link of its own, every call on which
    `timeout_seconds` bounds, since every engine call reads this store before it starts) or the
    cache's link. `clock` is the wall clock that cooldowns are set on (it only sets Redis's
    expiry here).
    """

    def __init__(
        self,
        redis: str | RedisLink,
        *,
        clock: Callable[[], float] = time.time,
        retry_seconds: float = 30.0,
        timeout_seconds: float = 0.25,
        keep_seconds: float = KEEP_SECONDS,
        prefix: str = KEY_PREFIX,
    ) -> None:
        self.stats = CacheStats()
        self.local = MemoryCooldownStore()
        self._clock = clock
        self._keep = keep_seconds
        self._prefix = prefix
        # The URL may hold a password: it stays out of the label used in logs.
        self._guard = StoreFailures(
            "redis cooldown store (cooldowns are per process meanwhile)",
            self.stats,
            clock,
            retry_seconds,
        )
        self.link, self._owns_link = link_for(redis, timeout_seconds, retry_seconds, clock)
        self._closed = False
        self._local_only: set[str] = set()  # names whose latest change Redis did not take

    def redis_key(self, name: str) -> str:
        """The Redis key of a cooldown."""
        return f"{self._prefix}{name}"

    def lease_key(self, name: str) -> str:
        """The Redis key of a breaker's probe lease."""
        return f"{self._prefix}probe:{name}"

    def _expiry_ms(self, cooldown: Cooldown) -> int:
        life = max(0.0, cooldown.until - self._clock()) + self._keep
        return max(1, math.ceil(life * 1000))

    async def get(self, name: str, *, fresh: bool = False) -> Cooldown | None:
        here = await self.local.get(name)
        if name not in self._local_only:
            return await self._shared_get(name, here)
        if here is not None and here.until > self._clock():
            return here
        # Over here: a rest another replica set since counts, and Redis is this name's truth
        # again (else the name would ignore every other replica until it changed here).
        shown = await self._shared_get(name, here)
        if shown is not None and shown.until > self._clock():
            self._local_only.discard(name)
            return shown
        return here

    async def _shared_get(self, name: str, here: Cooldown | None) -> Cooldown | None:
        """The cooldown Redis holds for `name`, or `here` (this process's) when Redis cannot
        say."""
        if self._closed or not self._guard.allows("all"):
            return here
        keys = [self.redis_key(name)]
        try:
            data = await self.link.call(
                lambda client: client.register_script(_GET)(keys=keys, args=[])
            )
        except Exception as exc:
            report_failure(self._guard, exc, "all")
            return here
        self._guard.succeeded("all")
        if data is None:
            return None
        try:
            if data == NOT_A_COOLDOWN:
                raise TypeError("a key of another type under the cooldown's name")
            return load_cooldown(data)
        except (ValueError, KeyError, TypeError) as exc:
            # Left for this name's next change to replace; the other cooldowns are still read.
            self._guard.failed("bad_value", exc, None)
            return here

    async def set(self, name: str, cooldown: Cooldown) -> None:
        await self.local.set(name, cooldown)
        if self._closed or not self._guard.allows("write"):
            self._local_only.add(name)
            return
        value, expiry_ms = dump_cooldown(cooldown), self._expiry_ms(cooldown)

        async def store(client: Redis) -> None:
            async with client.pipeline(transaction=True) as pipe:
                pipe.set(self.redis_key(name), value, px=expiry_ms)
                pipe.delete(self.lease_key(name))
                await pipe.execute()

        try:
            await self.link.call(store)
        except Exception as exc:
            report_failure(self._guard, exc, "write")
            self._local_only.add(name)
            return
        self._shared(name)

    async def delete(self, name: str) -> None:
        await self.local.delete(name)
        if self._closed or not self._guard.allows("write"):
            self._local_only.add(name)
            return
        try:
            await self.link.call(
                lambda client: client.delete(self.redis_key(name), self.lease_key(name))
            )
        except Exception as exc:
            report_failure(self._guard, exc, "write")
            self._local_only.add(name)
            return
        self._shared(name)

    def _shared(self, name: str) -> None:
        """A change of `name` reached Redis: Redis is its truth again."""
        self._guard.succeeded("write")
        self._local_only.discard(name)

    async def record_failure(
        self, name: str, reason: str, until_for: Callable[[int], float]
    ) -> Cooldown:
        if self._closed or not self._guard.allows("write"):
            self._local_only.add(name)
            return await self.local.record_failure(name, reason, until_for)
        try:
            cooldown = await self.link.call(
                lambda client: self._count_failure(client, name, reason, until_for)
            )
        except Exception as exc:
            report_failure(self._guard, exc, "write")
            self._local_only.add(name)
            return await self.local.record_failure(name, reason, until_for)
        self._shared(name)
        await self.local.set(name, cooldown)
        return cooldown

    async def _count_failure(
        self, client: Redis, name: str, reason: str, until_for: Callable[[int], float]
    ) -> Cooldown:
        """Count one more failure in a Lua script (atomic in Redis). The script cannot call
        `until_for`, so it gets the entries for the next few counts and picks the one that
        follows the stored count; when that lies beyond them it says so and is sent again."""
        base = 0  # the count guessed to be stored; the script tells the true one
        count = client.register_script(_RECORD_FAILURE)
        for _ in range(_COUNT_ATTEMPTS):
            candidates = [
                Cooldown(until_for(n), reason, n) for n in range(base + 1, base + _CANDIDATES + 1)
            ]
            args: list[str | int] = [base]
            for cooldown in candidates:
                args += [dump_cooldown(cooldown), self._expiry_ms(cooldown)]
            done, failures = await count(
                keys=[self.redis_key(name), self.lease_key(name)], args=args
            )
            if done:
                return candidates[int(failures) - base - 1]
            base = int(failures)
        raise RuntimeError(f"the failure count kept changing ({_COUNT_ATTEMPTS} tries)")

    async def claim_probe(self, name: str, lease_seconds: float, now: float) -> bool:
        # A cooldown Redis never took is probed here: Redis would say there is none to probe.
        if self._closed or name in self._local_only or not self._guard.allows("all"):
            return await self.local.claim_probe(name, lease_seconds, now)
        if not self._guard.allows("write"):
            return await self._claim_here(name, lease_seconds, now)
        lease_ms = max(1, math.ceil(lease_seconds * 1000))
        keys = [self.redis_key(name), self.lease_key(name)]
        args: list[str | int] = [repr(now), lease_ms]
        try:
            taken = await self.link.call(
                lambda client: client.register_script(_CLAIM_PROBE)(keys=keys, args=args)
            )
        except Exception as exc:
            report_failure(self._guard, exc, "write")
            return await self._claim_here(name, lease_seconds, now)
        self._guard.succeeded("all")
        return bool(taken)

    async def _claim_here(self, name: str, lease_seconds: float, now: float) -> bool:
        """Claim the probe in this process, Redis having refused the claim. The cooldown is the
        one Redis shows when it can still be read: one another replica set is not in this
        process's store, and would otherwise be skipped as probed by nobody until Redis took
        writes again."""
        shown = await self.get(name)
        if shown is not None and shown != await self.local.get(name):
            await self.local.set(name, shown)
        return await self.local.claim_probe(name, lease_seconds, now)

    async def close(self) -> None:
        """Release the connections; later calls use the in-memory store only."""
        if not self._closed:
            self._closed = True
            if self._owns_link:
                await self.link.aclose()
