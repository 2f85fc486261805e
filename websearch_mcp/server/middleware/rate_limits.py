"""How much a client may ask: per-client token buckets and concurrency slots.

The state lives in this process. Behind a load balancer each replica limits on its own, so the
configured numbers are per replica.
"""

from __future__ import annotations

import time
from collections import OrderedDict
from collections.abc import Callable
from typing import Literal


class RateLimiter:
    """A token bucket per client: `burst` requests at once, refilled at `per_minute`.

    `per_minute=0` turns the limit off. At most `max_clients` buckets are kept; the least
    recently seen client is forgotten first (it comes back with a full bucket).
    """

    def __init__(
        self,
        per_minute: int,
        burst: int,
        *,
        clock: Callable[[], float] = time.monotonic,
        max_clients: int = 10_000,
    ) -> None:
        self.rate = per_minute / 60.0
        self.burst = float(burst)
        self.clock = clock
        self.max_clients = max_clients
        self._buckets: OrderedDict[str, tuple[float, float]] = OrderedDict()

    def acquire(self, client: str) -> float:
        """Take one request for `client`: 0.0 when allowed, else the seconds until it would be."""
        return self._take(client, take=True)

    def wait(self, client: str) -> float:
        """The seconds until `client` could take a request (0.0: now), taking nothing."""
        return self._take(client, take=False)

    def _take(self, client: str, *, take: bool) -> float:
        if self.rate <= 0:
            return 0.0
        now = self.clock()
        tokens, then = self._buckets.pop(client, (self.burst, now))
        tokens = min(self.burst, tokens + (now - then) * self.rate)
        wait = 0.0
        if tokens >= 1.0:
            tokens -= 1.0 if take else 0.0
        else:
            wait = (1.0 - tokens) / self.rate
        self._buckets[client] = (tokens, now)
        while len(self._buckets) > self.max_clients:
            self._buckets.popitem(last=False)
        return wait


class ConcurrencyLimiter:
    """Requests in flight, overall and per client (`per_client` None: overall only).
    Single event loop: no lock needed."""

    def __init__(self, total: int, per_client: int | None) -> None:
        self.total = total
        self.per_client = per_client
        self.in_flight = 0
        self._by_client: dict[str, int] = {}

    def enter(self, client: str) -> Literal["client", "total"] | None:
        """Take a slot for `client`; None when taken, else which limit refused it."""
        held = self._by_client.get(client, 0)
        if self.per_client is not None and held >= self.per_client:
            return "client"
        if self.in_flight >= self.total:
            return "total"
        self._by_client[client] = held + 1
        self.in_flight += 1
        return None

    def leave(self, client: str) -> None:
        """Give back a slot taken by `enter`."""
        self.in_flight -= 1
        held = self._by_client.pop(client, 1) - 1
        if held > 0:
            self._by_client[client] = held
