"""Bounded exponential backoff with jitter, and whether a retry still fits the time left."""

from __future__ import annotations

import random
from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Backoff:
    """`retries` retries at most; the n-th waits about `base * 2**n`, capped at `cap` seconds.

    "Equal jitter": half the delay is fixed, half random, so that clients that failed together do
    not all come back at once but none retries immediately. `Retry-After` wins when longer.
    """

    retries: int = 2
    base: float = 0.25
    cap: float = 2.0

    def delay(self, retry: int, retry_after: float | None, rng: random.Random) -> float:
        """Seconds to wait before retry number `retry` (0-based)."""
        step = min(self.cap, self.base * (2**retry))
        jittered = step / 2 + rng.uniform(0, step / 2)
        return max(jittered, retry_after or 0.0)

    def next_delay(
        self, retry: int, retry_after: float | None, time_left: float, rng: random.Random
    ) -> float | None:
        """The wait before retry `retry`, or None when out of retries or it would not fit.

        A retry fits when, after the wait, at least a quarter of the time left remains for the
        request itself.
        """
        if retry >= self.retries:
            return None
        wait = self.delay(retry, retry_after, rng)
        return wait if wait < time_left * 0.75 else None
