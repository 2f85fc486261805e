"""A token bucket per engine: at most `rate` requests per second, bursts of up to `burst`.

A caller reserves a slot and learns how long to wait for it; a slot further away than the caller
can wait is not taken, so a request that would miss its deadline never holds up later ones.
Reservation is plain synchronous code: between two awaits nothing else runs, so it is atomic for
coroutines without a lock.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable


class RateLimit:
    """At most `rate` requests per second: `reserve` takes a slot, `acquire` waits for it."""

    rate: float

    def reserve(self, max_wait: float) -> float | None:
        """Take the next slot if it comes within `max_wait` seconds: the wait, else None."""
        raise NotImplementedError

    async def acquire(self, max_wait: float) -> bool:
        """Wait for a slot for at most `max_wait` seconds; False (no slot taken) if too far off."""
        wait = self.reserve(max_wait)
        if wait is None:
            return False
        if wait > 0:
            await asyncio.sleep(wait)
        return True

    def describe(self) -> str:
        per = f"{self.rate:g} request/s" if self.rate == 1 else f"{self.rate:g} requests/s"
        return f"rate limit of {per}"

    def close(self) -> None:
        """Let go of what it holds (nothing, unless it is kept in a file)."""


class TokenBucket(RateLimit):
    """`rate` tokens per second, holding at most `burst` (default: one second's worth, >= 1)."""

    def __init__(
        self,
        rate: float,
        burst: float | None = None,
        *,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        if rate <= 0:
            raise ValueError("rate must be positive")
        self.rate = rate
        self.burst = max(1.0, burst if burst is not None else rate)
        self._clock = clock
        self._tokens = self.burst
        self._stamp = clock()

    def reserve(self, max_wait: float) -> float | None:
        now = self._clock()
        self._tokens = min(self.burst, self._tokens + (now - self._stamp) * self.rate)
        self._stamp = now
        wait = max(0.0, (1.0 - self._tokens) / self.rate)
        if wait > max_wait:
            return None
        self._tokens -= 1.0  # may go negative: later callers queue behind this reservation
        return wait
