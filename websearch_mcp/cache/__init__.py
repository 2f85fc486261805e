"""The result cache: SQLite (WAL) by default, Redis to share one between instances, or none.

`open_cache(settings.cache)` gives a `Cache`; keys come from `cache_key(...)`. A broken cache
never fails a search: it is bypassed, logged once per cause, counted in `cache.stats`, and
retried by itself.
"""

from websearch_mcp.cache.base import Cache, CacheHit, NullCache, open_cache, run_cleanup_loop
from websearch_mcp.cache.failopen import CacheStats
from websearch_mcp.cache.keys import cache_key, config_fingerprint, normalise_query

__all__ = [
    "Cache",
    "CacheHit",
    "CacheStats",
    "NullCache",
    "cache_key",
    "config_fingerprint",
    "normalise_query",
    "open_cache",
    "run_cleanup_loop",
]
