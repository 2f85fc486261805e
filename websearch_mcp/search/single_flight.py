"""Single-flight: identical concurrent requests share one piece of work."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

T = TypeVar("T")


class SingleFlight:
    """Work in flight by key. One event loop: no lock needed."""

    def __init__(self) -> None:
        self._flights: dict[str, asyncio.Future[Any]] = {}
        self._alone: set[asyncio.Future[Any]] = set()  # work that goes on without callers
        self._callers: dict[asyncio.Future[Any], int] = {}
        self.joins = 0  # requests that joined a flight already under way

    async def run(
        self, key: str, make: Callable[[], Awaitable[T]], *, finish_alone: bool = False
    ) -> T:
        """Join the flight for `key`, or start one with `make()`.

        No await between looking for a flight and starting one: an identical request either
        joins it or comes after it has ended. Shielded: one caller giving up does not cancel the
        work the others wait for. Work that every caller gave up on (their clients went away)
        is cancelled: nobody waits for it, and it would hold engines and threads past the limit
        on requests in flight. With `finish_alone` from any caller, the work goes on to its end
        (bounded by its own timeouts, and worth having: a page fetch that fills a cache), and a
        request for its key joins it meanwhile.
        """
        flight = self._flights.get(key)
        if flight is None:
            flight = asyncio.ensure_future(make())
            self._flights[key] = flight
            flight.add_done_callback(lambda done: self._landed(key, done))
        else:
            self.joins += 1
        if finish_alone:
            self._alone.add(flight)
        self._callers[flight] = self._callers.get(flight, 0) + 1
        try:
            return await asyncio.shield(flight)
        finally:
            self._left(key, flight)

    def _left(self, key: str, flight: asyncio.Future[Any]) -> None:
        """One caller of `flight` is done waiting; the last one cancels it if it is not over,
        and a request for `key` from then on starts afresh rather than join the ending work."""
        self._callers[flight] -= 1
        if not self._callers[flight]:
            del self._callers[flight]
            if flight in self._alone:
                return
            if not flight.done() and self._flights.get(key) is flight:
                del self._flights[key]
            flight.cancel()  # nothing when it is over

    def running(self, key: str) -> bool:
        """Whether work for `key` is in flight: a `run` for it now joins that work."""
        return key in self._flights

    async def cancel(self) -> None:
        """Cancel the work in flight and wait for it to end (the service is closing: what it
        would go on to ask or store goes to pools and a cache already closed)."""
        flights = list(self._flights.values())
        for flight in flights:
            flight.cancel()
        await asyncio.gather(*flights, return_exceptions=True)

    def _landed(self, key: str, flight: asyncio.Future[Any]) -> None:
        """A flight is over: forget it (unless a newer one took its key) and retrieve its
        outcome, since every caller may have given up meanwhile."""
        if self._flights.get(key) is flight:
            del self._flights[key]
        self._alone.discard(flight)
        if not flight.cancelled():
            flight.exception()
