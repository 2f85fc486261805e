"""The cache contract, the no-op cache, the stored form of values and the cleanup loop.

Entries live in namespaces ("web", "academic", "page"); the same key in two namespaces is two
entries. Expiry is sliding: an entry lives `ttl_seconds` after it was stored or last hit, but
never longer than `max_age_seconds` after it was stored. Every backend fails open: when its store
is broken, `get` returns None and `set` does nothing, and the cache retries by itself later.
"""

from __future__ import annotations

import asyncio
import json
from abc import ABC, abstractmethod
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any, Protocol

import orjson

from websearch_mcp.net.store_failures import LOG, CacheStats, StoreFailures


@dataclass(frozen=True, slots=True)
class CacheHit:
    """A cached value and how long ago it was stored (seconds, by the cache's clock)."""

    value: dict[str, Any]
    age_seconds: float


class Cache(Protocol):
    """What the search service needs of a cache. No method raises on a broken store."""

    backend: str
    stats: CacheStats

    async def get(
        self, namespace: str, key: str, *, max_age_seconds: float | None = None
    ) -> CacheHit | None:
        """The live entry under `namespace`/`key` (refreshing its sliding expiry), or None; an
        entry stored `max_age_seconds` or more ago is a miss (counted as one)."""
        ...

    def remembered(
        self, namespace: str, key: str, *, max_age_seconds: float | None = None
    ) -> CacheHit | None:
        """What `get` would return, when this process may answer it from its memory without a
        read (counted and refreshed as `get` does); None otherwise, and `get` decides."""
        ...

    async def set(
        self, namespace: str, key: str, value: dict[str, Any], *, ttl_seconds: int | None = None
    ) -> None:
        """Store `value` for `ttl_seconds` (the configured TTL when None; <= 0 stores nothing)."""
        ...

    async def cleanup(self) -> int:
        """Remove expired entries, then the least recently used beyond `max_entries`."""
        ...

    async def close(self) -> None:
        """Release connections; later calls behave as misses."""
        ...


def dump_value(value: dict[str, Any]) -> str:
    """A cache value as compact JSON text (TypeError or ValueError when it is not JSON data).
    NaN and infinities are written as null, as the tools' answers are written to the client."""
    if not isinstance(value, dict):
        raise TypeError(f"a cache value must be a dict, not {type(value).__name__}")
    try:
        # orjson: every fresh search stores its answer, and orjson is much faster than `json`.
        return orjson.dumps(value).decode()
    except TypeError:
        # What orjson does not write (keys that are not strings, integers past 64 bits, lone
        # surrogates, other types): `json` decides, as before. A lone surrogate is no value a
        # store can write: a UnicodeEncodeError (a ValueError) here, for this entry alone.
        text = json.dumps(value, ensure_ascii=False, separators=(",", ":"), allow_nan=False)
        text.encode()
        return text


def encode_value(value: dict[str, Any], guard: StoreFailures) -> str | None:
    """`dump_value(value)`, or None (the failure reported to `guard`) when it is not JSON data."""
    try:
        return dump_value(value)
    except (TypeError, ValueError) as exc:
        guard.failed("bad_value", exc, None)
        return None


def decode_value(data: str | bytes, guard: StoreFailures) -> dict[str, Any] | None:
    """`load_value(data)`, or None (the failure reported to `guard`) when not a JSON object."""
    try:
        return load_value(data)
    except ValueError as exc:
        guard.failed("bad_value", exc, None)
        return None


def load_value(data: str | bytes) -> dict[str, Any]:
    """The dict stored as `data` (ValueError when it is not a JSON object)."""
    # orjson: every hit parses its answer, and orjson is faster than `json` (docs/benchmarks.md).
    value = orjson.loads(data)
    if not isinstance(value, dict):
        raise ValueError("stored value is not a JSON object")
    return value


def young(hit: CacheHit | None, max_age_seconds: float | None) -> CacheHit | None:
    """`hit`, unless it was stored `max_age_seconds` or more ago (None: any age will do)."""
    if hit is None or (max_age_seconds is not None and hit.age_seconds >= max_age_seconds):
        return None
    return hit


def lifetime(ttl_seconds: float, max_age_seconds: float) -> float:
    """How long a fresh entry lives: its TTL, capped by the maximum age."""
    return min(ttl_seconds, max_age_seconds)


class StoringCache(ABC):
    """What the SQLite and Redis backends share: `set` checks the TTL and encodes the value,
    then hands both to the backend's `_store`."""

    _ttl: float
    _guard: StoreFailures

    async def set(
        self, namespace: str, key: str, value: dict[str, Any], *, ttl_seconds: int | None = None
    ) -> None:
        ttl = self._ttl if ttl_seconds is None else ttl_seconds
        if ttl <= 0:
            return
        data = encode_value(value, self._guard)
        if data is not None:
            await self._store(namespace, key, ttl, data)

    def remembered(
        self, namespace: str, key: str, *, max_age_seconds: float | None = None
    ) -> CacheHit | None:
        return None

    @abstractmethod
    async def _store(self, namespace: str, key: str, ttl: float, data: str) -> None:
        """Store the encoded `data` for `ttl` seconds (> 0)."""


class NullCache:
    """The cache of `backend: none`: `get` finds nothing and `set` keeps nothing. No lookup is
    counted: with no cache there is nothing to hit or miss."""

    backend = "none"

    def __init__(self) -> None:
        self.stats = CacheStats()

    async def get(
        self, namespace: str, key: str, *, max_age_seconds: float | None = None
    ) -> CacheHit | None:
        return None

    def remembered(
        self, namespace: str, key: str, *, max_age_seconds: float | None = None
    ) -> CacheHit | None:
        return None

    async def set(
        self, namespace: str, key: str, value: dict[str, Any], *, ttl_seconds: int | None = None
    ) -> None:
        return None

    async def cleanup(self) -> int:
        return 0

    async def close(self) -> None:
        return None


class Leader(Protocol):
    """A lock that one of several processes holds (`acquire` takes it if free, never waits)."""

    def acquire(self) -> bool: ...


async def run_cleanup_loop(
    cache: Cache,
    interval_seconds: float,
    *,
    sleep: Callable[[float], Awaitable[Any]] = asyncio.sleep,
    leader: Leader | None = None,
) -> None:
    """Call `cache.cleanup()` every `interval_seconds` until cancelled (run it as a task).

    With a `leader` lock (processes sharing one cache), only while this process holds it. A
    round that fails (the lock's file gone with its directory, say) is logged and the next
    one comes as usual: the loop never ends on its own, or the cache would grow unbounded.
    """
    while True:
        await sleep(interval_seconds)
        try:
            if leader is not None and not leader.acquire():
                continue
            removed = await cache.cleanup()
        except Exception as exc:
            name = type(exc).__name__
            LOG.warning("%s cache cleanup failed (%s)", cache.backend, name)
            continue
        if removed:
            LOG.debug("%s cache cleanup removed %d entries", cache.backend, removed)
