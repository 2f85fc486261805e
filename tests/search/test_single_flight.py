"""Single-flight: identical requests share one piece of work, and work nobody waits for ends."""

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
