"""The Redis client that the Redis cache and the Redis cooldown store share, and how a failed
Redis call is classified and waited out.

Both fail open (see `failopen`): a dead or slow Redis costs a call at most `timeout_seconds`
before its cause is waited out, and a Redis restart costs no miss (one retry on a fresh
connection, without backoff, since neither may hold a request up).
"""

from __future__ import annotations

from redis import exceptions as redis_errors
from redis.asyncio import Redis
from redis.asyncio.retry import Retry
from redis.backoff import NoBackoff

from websearch_mcp.failopen import FailOpen, Scope

#: Causes under which Redis can still be read: a failed write pauses writes only.
WRITE_CAUSES = frozenset({"read_only", "out_of_memory"})


def connect(url: str, timeout_seconds: float) -> Redis:
    """A client for `url` (connections are made on first use); `timeout_seconds` bounds
    connecting and each command."""
    return Redis.from_url(
        url,
        socket_connect_timeout=timeout_seconds,
        socket_timeout=timeout_seconds,
        retry=Retry(NoBackoff(), 1),
    )


def classify(exc: BaseException) -> str:
    """The cause of a failed Redis operation, as counted in `stats.errors`."""
    if isinstance(exc, redis_errors.AuthenticationError | redis_errors.NoPermissionError):
        return "auth"
    if isinstance(exc, redis_errors.TimeoutError | TimeoutError):
        return "timeout"
    if isinstance(exc, redis_errors.ConnectionError | OSError):
        return "unavailable"
    if isinstance(exc, redis_errors.ReadOnlyError):
        return "read_only"
    if isinstance(exc, redis_errors.OutOfMemoryError):
        return "out_of_memory"
    return "error"


def report_failure(guard: FailOpen, exc: BaseException, scope: Scope) -> None:
    """Tell `guard` of a failed call of `scope`: a write refused while Redis can still be read
    pauses writes only, anything else every call."""
    cause = classify(exc)
    guard.failed(cause, exc, "write" if scope == "write" and cause in WRITE_CAUSES else "all")
