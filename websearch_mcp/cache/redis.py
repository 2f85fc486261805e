"""The Redis cache backend (`redis.asyncio`), for several service instances sharing one cache.

Each entry is a hash under `websearch-mcp:<namespace>:<key>` holding the JSON value (`v`), when
it was stored (`s`), its TTL (`t`), its expiry (`e`) and its last use (`u`), all by the cache's
clock. A hit runs one Lua script that checks the expiry and the absolute max age kept in the
record, then slides `e` and the key's own Redis expiry (PEXPIRE), so expiry behaves as in the
SQLite backend and Redis drops dead entries by itself. Every call is bounded in time
(`net.redis_link.RedisLink`); Redis being down, slow, unresolvable or refusing writes is bypassed
(see `net.store_failures`), and the link reconnects once Redis is back.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable

from redis.asyncio import Redis
from redis.typing import EncodableT

from websearch_mcp.cache.base import CacheHit, StoringCache, decode_value, lifetime, young
from websearch_mcp.net.redis_link import (
    CLEANUP_SECONDS,
    RedisLink,
    classify,
    link_for,
    report_failure,
)
from websearch_mcp.net.store_failures import CacheStats, StoreFailures

KEY_PREFIX = "websearch-mcp:"
#: What `_GET_SCRIPT` returns for a key holding something this cache did not write.
NOT_A_RECORD = 0

# KEYS[1] = entry; ARGV = now, max age. Returns {value, stored_at}, nil, or NOT_A_RECORD (rather
# than failing, which would pause the whole cache over one entry).
_GET_SCRIPT = """
local kind = redis.call('TYPE', KEYS[1])['ok']
if kind == 'none' then return false end
if kind ~= 'hash' then return 0 end
local r = redis.call('HMGET', KEYS[1], 'v', 's', 't', 'e')
local stored, ttl, expiry = tonumber(r[2]), tonumber(r[3]), tonumber(r[4])
if not (r[1] and stored and ttl and expiry) then return 0 end
local now = tonumber(ARGV[1])
local deadline = stored + tonumber(ARGV[2])
if expiry <= now or deadline <= now then
  redis.call('DEL', KEYS[1])
  return false
end
local expires = math.min(now + ttl, deadline)
-- Sliding the expiry is a write: refused (out of memory, a read-only replica), the hit is
-- still served, unslid.
redis.pcall('HSET', KEYS[1], 'e', string.format('%.6f', expires), 'u', ARGV[1])
redis.pcall('PEXPIRE', KEYS[1], math.ceil((expires - now) * 1000))
return {r[1], r[2]}
"""

_SCAN_BATCH = 500

# KEYS = entries the cleanup chose; ARGV = the stored-at and last-used times it read of each, in
# pairs. An entry stored afresh or used since (by a replica, during the scan) is left alone.
_UNLINK_UNCHANGED_SCRIPT = """
local removed = 0
for i, key in ipairs(KEYS) do
  local r = redis.call('HMGET', key, 's', 'u')
  if r[1] == ARGV[2 * i - 1] and r[2] == ARGV[2 * i] then
    redis.call('UNLINK', key)
    removed = removed + 1
  end
end
return removed
"""


def _num(value: float) -> str:
    return f"{value:.6f}"


class RedisCache(StoringCache):
    """A cache in Redis. See the module docstring; the API is `base.Cache`'s.

    `redis` is the server's URL, or a link shared with the cooldown store (`link`). With a URL
    the cache makes a link of its own, which `timeout_seconds` bounds every call of (name
    lookup, connecting, the command), so a dead Redis costs a request at most that long before
    the cause is waited out for `retry_seconds`.
    """

    backend = "redis"

    def __init__(
        self,
        redis: str | RedisLink,
        *,
        ttl_seconds: float,
        max_age_seconds: float,
        max_entries: int,
        clock: Callable[[], float] = time.time,
        retry_seconds: float = 30.0,
        timeout_seconds: float = 0.25,
        prefix: str = KEY_PREFIX,
    ) -> None:
        self.stats = CacheStats()
        self._ttl = ttl_seconds
        self._max_age = max_age_seconds
        self._max_entries = max_entries
        self._clock = clock
        self._prefix = prefix
        # The URL may hold a password: it stays out of the label used in logs.
        self._guard = StoreFailures("redis cache", self.stats, clock, retry_seconds)
        self.link, self._owns_link = link_for(redis, timeout_seconds, retry_seconds, clock)
        self._closed = False

    def redis_key(self, namespace: str, key: str) -> str:
        """The Redis key of an entry."""
        return f"{self._prefix}{namespace}:{key}"

    async def get(
        self, namespace: str, key: str, *, max_age_seconds: float | None = None
    ) -> CacheHit | None:
        return self.stats.counted(young(await self._get(namespace, key), max_age_seconds))

    async def _store(self, namespace: str, key: str, ttl: float, data: str) -> None:
        if self._closed or not self._guard.allows("write"):
            return
        now = self._clock()
        life = lifetime(ttl, self._max_age)
        record: dict[EncodableT, EncodableT] = {
            "v": data,
            "s": _num(now),
            "t": _num(ttl),
            "e": _num(now + life),
            "u": _num(now),
        }
        name = self.redis_key(namespace, key)

        async def store(client: Redis) -> None:
            async with client.pipeline(transaction=True) as pipe:
                pipe.delete(name)
                pipe.hset(name, mapping=record)
                pipe.pexpire(name, math.ceil(life * 1000))
                await pipe.execute()

        try:
            await self.link.call(store)
        except Exception as exc:
            report_failure(self._guard, exc, "write")
            return
        self._guard.succeeded("write")
        self.stats.sets += 1

    async def cleanup(self) -> int:
        if self._closed or not self._guard.allows("write"):
            return 0
        now = self._clock()
        try:
            removed = await self.link.call(
                lambda client: self._cleanup(client, now), timeout_seconds=CLEANUP_SECONDS
            )
        except Exception as exc:
            if classify(exc) == "forbidden":  # an ACL without SCAN or UNLINK: answers still serve
                self._guard.failed("forbidden", exc, None)
            else:
                report_failure(self._guard, exc, "write")
            return 0
        self._guard.succeeded("write")
        return removed

    async def close(self) -> None:
        if not self._closed:
            self._closed = True
            if self._owns_link:
                await self.link.aclose()

    async def _get(self, namespace: str, key: str) -> CacheHit | None:
        if self._closed or not self._guard.allows("all"):
            return None
        now = self._clock()
        keys, args = [self.redis_key(namespace, key)], [_num(now), _num(self._max_age)]
        try:
            # A script object is a name and a hash: made per call, on the client of the moment.
            found = await self.link.call(
                lambda client: client.register_script(_GET_SCRIPT)(keys=keys, args=args)
            )
        except Exception as exc:
            report_failure(self._guard, exc, "all")
            return None
        self._guard.succeeded("all")
        if found == NOT_A_RECORD:
            # Left for the fresh answer to replace: a miss for this entry, as a bad value is.
            self._guard.failed("bad_value", ValueError("not a record of this cache"), None)
            return None
        if not found:
            return None
        raw, stored_at = found
        value = decode_value(raw, self._guard)
        if value is None:
            return None
        return CacheHit(value=value, age_seconds=max(0.0, now - float(stored_at)))

    async def _cleanup(self, client: Redis, now: float) -> int:
        """Delete expired entries, then the least recently used beyond `max_entries`."""
        return await self._unlink_unchanged(client, await self._doomed(client, now))

    async def _doomed(self, client: Redis, now: float) -> list[tuple[bytes, bytes, bytes]]:
        """The entries to delete (expired, then the least recently used beyond
        `max_entries`), each with its stored-at and last-used times as read."""
        expired: list[tuple[bytes, bytes, bytes]] = []
        live: list[tuple[float, tuple[bytes, bytes, bytes]]] = []
        names = [name async for name in client.scan_iter(match=f"{self._prefix}*")]
        for start in range(0, len(names), _SCAN_BATCH):
            batch = names[start : start + _SCAN_BATCH]
            async with client.pipeline(transaction=False) as pipe:
                for name in batch:
                    pipe.hmget(name, "s", "e", "u")
                rows = await pipe.execute(raise_on_error=False)
            for name, row in zip(batch, rows, strict=True):
                # Gone meanwhile, or not a record of ours: left alone.
                if isinstance(row, Exception) or None in row:
                    continue
                try:
                    stored_at, expires, last_used = (float(part) for part in row)
                except ValueError:
                    continue
                read = (name, row[0], row[2])
                if expires <= now or stored_at + self._max_age <= now:
                    expired.append(read)
                else:
                    live.append((last_used, read))
        live.sort()
        return expired + [read for _, read in live[: max(0, len(live) - self._max_entries)]]

    @staticmethod
    async def _unlink_unchanged(client: Redis, doomed: list[tuple[bytes, bytes, bytes]]) -> int:
        """Delete the `doomed` entries still as the cleanup read them (compared in Redis)."""
        script = client.register_script(_UNLINK_UNCHANGED_SCRIPT)
        removed = 0
        for start in range(0, len(doomed), _SCAN_BATCH):
            batch = doomed[start : start + _SCAN_BATCH]
            args = [value for _, stored_at, used in batch for value in (stored_at, used)]
            removed += int(await script(keys=[name for name, _, _ in batch], args=args))
        return removed
