"""Helpers of the cache tests: a clock the test moves by hand."""

from __future__ import annotations

HOUR = 3600.0


class FakeClock:
    """A `time.time` stand-in: it only moves when `advance` is called."""

    def __init__(self, now: float = 1_700_000_000.0) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now

    def advance(self, seconds: float) -> None:
        self.now += seconds
