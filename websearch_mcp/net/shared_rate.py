"""An engine's rate limit that the worker processes of one server keep together
(`serve --workers N`).

A bucket of 1/N of the rate in each worker keeps the rate over time, but each bucket fills
while idle, so N workers could send at once (N requests to arXiv, whose terms allow one every
three seconds). Here every request reserves its slot in one SQLite file of the server's runtime
directory, in a `BEGIN IMMEDIATE` transaction: the generic cell rate algorithm, where `due`, the
time the next request is due, moves on one interval per request and `burst` requests may go
ahead of it, as a bucket of `burst` tokens allows. A file that fails leaves each worker its own
share of the rate (logged once, the file tried again after `retry_seconds`).
"""

from __future__ import annotations

import sqlite3
import time
from collections.abc import Callable
from pathlib import Path

from websearch_mcp.cache.sqlite_file import classify
from websearch_mcp.net.cooldowns.sqlite import connect_shared, immediate
from websearch_mcp.net.ratelimit import RateLimit, TokenBucket
from websearch_mcp.net.store_failures import CacheStats, StoreFailures

_SCHEMA = "CREATE TABLE IF NOT EXISTS rate_slots (name TEXT PRIMARY KEY, due REAL NOT NULL)"


class SharedRateLimit(RateLimit):
    """`rate` requests per second for engine `name`, among all the processes that use the file
    at `path`, `workers` of them. `clock` must read the same in each: the monotonic clock is the
    machine's."""

    def __init__(
        self,
        path: Path,
        name: str,
        rate: float,
        workers: int,
        *,
        clock: Callable[[], float] = time.monotonic,
        retry_seconds: float = 30.0,
    ) -> None:
        self.rate = rate
        self.path = path
        self.name = name
        self._interval = 1.0 / rate
        # A bucket of `burst` tokens lets that many go at once: all but one ahead of `due`.
        self._ahead = (max(1.0, rate) - 1.0) * self._interval
        self._clock = clock
        self._own = TokenBucket(rate / workers, clock=clock)
        self.stats = CacheStats()
        label = f"shared rate file {path} ({name} at 1/{workers} of its rate per worker meanwhile)"
        self._guard = StoreFailures(label, self.stats, clock, retry_seconds)
        self._db: sqlite3.Connection | None = None

    def reserve(self, max_wait: float) -> float | None:
        if not self._guard.allows("write"):
            return self._own.reserve(max_wait)
        try:
            wait = self._reserve_in_file(max_wait)
        except sqlite3.Error as exc:
            self._guard.failed(classify(exc), exc, "write")
            self.close()  # opened afresh on the next try
            return self._own.reserve(max_wait)
        self._guard.succeeded("write")
        return wait

    def _reserve_in_file(self, max_wait: float) -> float | None:
        if self._db is None:
            self._db = connect_shared(self.path, _SCHEMA)
        db = self._db
        with immediate(db):
            row = db.execute("SELECT due FROM rate_slots WHERE name = ?", (self.name,)).fetchone()
            now = self._clock()
            due = max(row[0], now) if row else now
            wait = max(0.0, due - self._ahead - now)
            if wait > max_wait:
                return None
            db.execute(
                "INSERT OR REPLACE INTO rate_slots (name, due) VALUES (?, ?)",
                (self.name, due + self._interval),
            )
        return wait

    def close(self) -> None:
        db, self._db = self._db, None
        if db is not None:
            db.close()
