"""Single-flight: identical requests share one piece of work, and work nobody waits for ends
(or, where asked, finishes alone)."""

from __future__ import annotations

import asyncio

from websearch_mcp.search.single_flight import SingleFlight


async def test_a_request_right_after_the_last_caller_left_starts_afresh() -> None:
    """A client times out and asks again at once: its request does not join the work being
    called off (which ends with a cancellation), it is answered."""
    flights = SingleFlight()

    async def slow() -> str:
        try:
            await asyncio.sleep(10)
        finally:
            await asyncio.sleep(0.05)  # closing what it opened
        return "old"

    async def fresh() -> str:
        return "new"

    first = asyncio.create_task(flights.run("k", slow))
    await asyncio.sleep(0.01)
    first.cancel()
    await asyncio.sleep(0)  # its only caller gone, the work is being called off
    assert await asyncio.wait_for(flights.run("k", fresh), 2) == "new"
    assert first.cancelled()


async def test_work_that_finishes_alone_goes_on_and_is_joined_meanwhile() -> None:
    """A page fetch a search stopped waiting for goes on to fill the cache; a request for it
    meanwhile waits for that fetch rather than start another."""
    flights = SingleFlight()
    started = 0

    async def fetch() -> str:
        nonlocal started
        started += 1
        await asyncio.sleep(0.1)
        return "page"

    first = asyncio.create_task(flights.run("k", fetch, finish_alone=True))
    await asyncio.sleep(0.01)
    first.cancel()
    await asyncio.sleep(0)
    assert flights.running("k")
    assert await asyncio.wait_for(flights.run("k", fetch), 2) == "page"
    assert started == 1 and first.cancelled()
