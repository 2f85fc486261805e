"""The Redis connection that the Redis cache and the Redis cooldown store share, every call on it
bounded in time, and how a failed Redis call is classified and waited out.

Neither store may hold a search up (see `net.store_failures`). `RedisLink.call` bounds a whole call
(the name lookup, connecting, the command and its one retry) by `timeout_seconds`. A call that fails
for want of the server (no answer in time, connection refused, name not found, password refused)
makes every call on the link fail at once for `retry_seconds`, so the cache and the cooldown store
of one search never both wait for the same dead server. A Redis restart costs no miss: one retry on
a fresh connection, without backoff.

The server's name is looked up in a thread of the link's own, one lookup at a time
(`NameLookup`). asyncio looks names up in the event loop's default executor, a few threads that
engine requests use for their own lookups: a resolver that never answers would hold one of them
per Redis call until no engine could be asked.
"""

from __future__ import annotations

import asyncio
import contextlib
import math
import socket
import threading
import time
from collections.abc import Awaitable, Callable
from ipaddress import ip_address
from typing import TypeVar
from urllib.parse import SplitResult, urlsplit, urlunsplit

from redis import exceptions as redis_errors
from redis.asyncio import Redis
from redis.asyncio.retry import Retry
from redis.backoff import NoBackoff

from websearch_mcp.errors import NameLookupError, RedisDown
from websearch_mcp.net.store_failures import Scope, StoreFailures

T = TypeVar("T")

#: Causes under which Redis can still be read: a failed write pauses writes only (an ACL that
#: refuses one command, `forbidden`, leaves the others).
WRITE_CAUSES = frozenset({"read_only", "out_of_memory", "forbidden"})
#: Causes that say the server cannot be used at all: every call on the link waits them out.
DOWN_CAUSES = frozenset({"timeout", "unavailable", "name_lookup", "auth"})
#: How long a looked-up address is used before the name is looked up again (a call that fails
#: for want of the server forgets it at once: a restarted server may have a new address).
REMEMBER_SECONDS = 60.0
#: The bound of a cache cleanup, which scans every key in batches and holds no search up.
CLEANUP_SECONDS = 120.0


class NameLookup:
    """The addresses of one host name, looked up by the C library in a daemon thread, one
    lookup at a time, so that a resolver that never answers holds that one thread only.

    The first address is used, or the next after `skip()` (a name may give `::1` first to a
    server that listens on `127.0.0.1` only), for `remember_seconds` or until `forget()`.
    Callers waiting for a lookup wait within their own time bound; a lookup unanswered for
    longer than `patience` seconds is not waited for again: callers are refused at once until
    it ends.
    """

    def __init__(
        self,
        host: str,
        port: int,
        *,
        patience: float,
        remember_seconds: float = REMEMBER_SECONDS,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._host = host
        self._port = port
        self._patience = patience
        self._remember = remember_seconds
        self._clock = clock
        self._addresses: list[str] = []  # the one in use first
        self._expires = -math.inf
        self._pending: asyncio.Future[list[str]] | None = None
        self._started = -math.inf

    def forget(self) -> None:
        """Look the name up again at the next call."""
        self._addresses = []

    def skip(self, failed: str | None) -> bool:
        """Use the address after `failed` (unless another caller already has), if one is left."""
        if self._addresses[:1] == [failed]:
            del self._addresses[:1]
        return bool(self._addresses)

    async def address(self) -> str:
        """The host's address; NameLookupError when it is not found or not answered."""
        now = self._clock()
        if self._addresses and now < self._expires:
            return self._addresses[0]
        pending = self._pending
        if pending is None or pending.done():
            pending = self._pending = self._start()
            self._started = now
        elif now - self._started > self._patience:
            waited = now - self._started
            raise NameLookupError(f"the lookup of the server's name unanswered for {waited:.1f} s")
        try:
            addresses = await asyncio.shield(pending)
        except OSError as exc:
            raise NameLookupError(f"the server's name was not found: {exc}") from None
        if not addresses:
            raise NameLookupError("the server's name has no address")
        self._addresses, self._expires = list(addresses), self._clock() + self._remember
        return addresses[0]

    def _start(self) -> asyncio.Future[list[str]]:
        loop = asyncio.get_running_loop()
        future: asyncio.Future[list[str]] = loop.create_future()
        # Its outcome is read by whoever still waits; a failure nobody waited for is not an error.
        future.add_done_callback(lambda done: done.cancelled() or done.exception())

        def settle(addresses: list[str], error: OSError | None) -> None:
            if future.done():
                return
            if error is not None:
                future.set_exception(error)
            else:
                future.set_result(addresses)

        def look_up() -> None:
            try:
                found = socket.getaddrinfo(self._host, self._port, type=socket.SOCK_STREAM)
                addresses = list(dict.fromkeys(str(info[4][0]) for info in found))
                outcome: tuple[list[str], OSError | None] = (addresses, None)
            except OSError as exc:
                outcome = ([], exc)
            with contextlib.suppress(RuntimeError):  # the loop closed meanwhile
                loop.call_soon_threadsafe(settle, *outcome)

        threading.Thread(target=look_up, name="redis-name-lookup", daemon=True).start()
        return future


def _looked_up(parts: SplitResult) -> bool:
    """Whether the URL names its server by a host name (not an address, not a socket)."""
    if parts.scheme not in ("redis", "rediss") or not parts.hostname:
        return False
    try:
        ip_address(parts.hostname)
    except ValueError:
        return True
    return False


def _at_address(parts: SplitResult, address: str) -> str:
    """The URL with its host replaced by `address`, user, password, port and path kept."""
    host = f"[{address}]" if ":" in address else address
    userinfo, at, _ = parts.netloc.rpartition("@")
    port = f":{parts.port}" if parts.port else ""
    return urlunsplit(parts._replace(netloc=f"{userinfo}{at}{host}{port}"))


def connect(url: str, timeout_seconds: float) -> Redis:
    """A client for `url` (connections are made on first use); `timeout_seconds` bounds
    connecting and each command."""
    return Redis.from_url(
        url,
        socket_connect_timeout=timeout_seconds,
        socket_timeout=timeout_seconds,
        retry=Retry(NoBackoff(), 1),
    )


class RedisLink:
    """One Redis server as the stores use it (see the module docstring).

    `clock` (the stores' clock) times the waits after a failure. A `redis://` URL with a host
    name is connected to by the address looked up; with `rediss://` the client connects by the
    name, which the server's certificate must match, once the lookup has answered.
    """

    def __init__(
        self,
        url: str,
        *,
        timeout_seconds: float,
        retry_seconds: float = 30.0,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self.timeout_seconds = timeout_seconds
        self._url = url  # as given: rebuilt from its parts, `unix:///x.sock` loses its `//`
        self._parts = urlsplit(url)
        self._retry = retry_seconds
        self._clock = clock
        host, port = self._parts.hostname or "", self._parts.port or 6379
        looked_up = _looked_up(self._parts)
        self._lookup = NameLookup(host, port, patience=timeout_seconds) if looked_up else None
        self._client: Redis | None = None
        self._address: str | None = None
        self._down_since = -math.inf  # a clock set back before it ends the wait at once
        self._down_cause = ""
        self._closed = False

    async def call(
        self, operation: Callable[[Redis], Awaitable[T]], *, timeout_seconds: float | None = None
    ) -> T:
        """`operation` on a client of the server, within `timeout_seconds` (the link's unless
        given) all told. Raises what failed: the caller classifies it (`report_failure`)."""
        if self._down_since <= self._clock() < self._down_since + self._retry:
            raise RedisDown(self._down_cause, self._down_since)
        try:
            return await self._bounded(operation, timeout_seconds or self.timeout_seconds)
        except Exception as exc:
            cause = classify(exc)
            if cause in DOWN_CAUSES:
                self._down_since, self._down_cause = self._clock(), cause
                if self._lookup is not None:
                    self._lookup.forget()
            raise

    async def _bounded(self, operation: Callable[[Redis], Awaitable[T]], seconds: float) -> T:
        looking_up = True
        try:
            async with asyncio.timeout(seconds):
                while True:
                    client, address = await self._client_now(), self._address
                    looking_up = False
                    try:
                        return await operation(client)
                    except Exception as exc:
                        # Refused at this address: the name's next one, within the same time.
                        lookup = self._lookup
                        refused = classify(exc) == "unavailable"
                        if not (refused and lookup and lookup.skip(address)):
                            raise
                    looking_up = True
        except TimeoutError:
            if looking_up:
                raise NameLookupError(f"no address for the server within {seconds:g} s") from None
            raise

    async def _client_now(self) -> Redis:
        if self._closed:
            raise RedisDown("unavailable")
        address = await self._lookup.address() if self._lookup is not None else None
        if self._client is None or address != self._address:
            old = self._client
            url = self._url
            if address is not None and self._parts.scheme == "redis":
                url = _at_address(self._parts, address)
            self._client, self._address = connect(url, self.timeout_seconds), address
            if old is not None:
                await old.aclose()
        return self._client

    async def aclose(self) -> None:
        """Release the connections; later calls fail at once."""
        self._closed = True
        client, self._client = self._client, None
        if client is not None:
            await client.aclose()


def link_for(
    redis: str | RedisLink, timeout_seconds: float, retry_seconds: float, clock: Callable[[], float]
) -> tuple[RedisLink, bool]:
    """A store's link: one of its own for a URL (true: the store closes it), or the link it was
    handed, shared with another store (false: its owner closes it)."""
    if isinstance(redis, RedisLink):
        return redis, False
    link = RedisLink(
        redis, timeout_seconds=timeout_seconds, retry_seconds=retry_seconds, clock=clock
    )
    return link, True


def classify(exc: BaseException) -> str:
    """The cause of a failed Redis operation, as counted in `stats.errors`."""
    if isinstance(exc, RedisDown):
        return exc.cause
    if isinstance(exc, NameLookupError):
        return "name_lookup"
    if isinstance(exc, redis_errors.NoPermissionError):
        return "forbidden"  # this command or key, for this ACL user: the others may be allowed
    if isinstance(exc, redis_errors.AuthenticationError):
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


def report_failure(guard: StoreFailures, exc: BaseException, scope: Scope) -> None:
    """Tell `guard` of a failed call of `scope`: a write refused while Redis can still be read
    pauses writes only, anything else every call. A call the link refused without asking pauses
    from when the link's own wait began: the store then asks Redis again as soon as the link
    would, not a whole wait later."""
    cause = classify(exc)
    since = exc.since if isinstance(exc, RedisDown) else None
    paused: Scope = "write" if scope == "write" and cause in WRITE_CAUSES else "all"
    guard.failed(cause, exc, paused, since=since)
