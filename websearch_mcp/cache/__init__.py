"""The result cache: SQLite (WAL) by default, Redis to share one between instances, or none.

`open_cache(settings.cache)` gives a `Cache`; keys come from `cache_key(...)`. A broken cache
never fails a search: it is bypassed, logged once per cause, counted in `cache.stats`, and
retried by itself.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from websearch_mcp.cache.base import Cache, CacheHit, NullCache, run_cleanup_loop
from websearch_mcp.cache.keys import cache_key, config_fingerprint, normalise_query
from websearch_mcp.errors import ConfigError
from websearch_mcp.net.store_failures import CacheStats

if TYPE_CHECKING:
    from websearch_mcp.config import CacheSettings

__all__ = [
    "Cache",
    "CacheHit",
    "CacheStats",
    "NullCache",
    "cache_key",
    "check_backend",
    "config_fingerprint",
    "normalise_query",
    "open_cache",
    "run_cleanup_loop",
]


def check_backend(settings: CacheSettings) -> None:
    """ConfigError when the backend `settings` choose cannot be used here: Redis without the
    `redis` package or without `cache.redis_url` (`check-config` says so as `serve` would)."""
    if settings.backend != "redis":
        return
    try:
        import websearch_mcp.cache.redis  # noqa: F401
    except ModuleNotFoundError as err:
        if err.name != "redis" and not (err.name or "").startswith("redis."):
            raise
        raise ConfigError(
            "cache.backend is 'redis' but the redis package is not installed"
            " (pip install 'websearch-mcp[redis]')"
        ) from None
    if not settings.redis_url:
        raise ConfigError("cache.backend is 'redis' but cache.redis_url is not set")


def open_cache(settings: CacheSettings, *, clock: Callable[[], float] = time.time) -> Cache:
    """The cache that `settings` describe. Nothing is opened until the first call.

    `clock` (seconds, like `time.time`) drives all expiry. Raises ConfigError when the Redis
    backend is chosen but the `redis` package is not installed.
    """
    if settings.backend == "none":
        return NullCache()
    limits: dict[str, Any] = {
        "ttl_seconds": settings.ttl_seconds,
        "max_age_seconds": settings.max_age_seconds,
        "max_entries": settings.max_entries,
        "clock": clock,
    }
    if settings.backend == "redis":
        check_backend(settings)
        from websearch_mcp.cache.redis import RedisCache

        assert settings.redis_url is not None
        return RedisCache(
            settings.redis_url,
            timeout_seconds=settings.redis_timeout_seconds,
            prefix=settings.redis_prefixes()[0],
            **limits,
        )
    from websearch_mcp.cache.sqlite import SqliteCache

    return SqliteCache(settings.path, max_bytes=settings.max_bytes, **limits)
