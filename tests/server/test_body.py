"""Request bodies read ahead and replayed: whole, capped, and within a deadline."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import Any

import pytest

from websearch_mcp.server.middleware.body_limit import read_body, read_body_within

Message = dict[str, Any]


def receiver(*parts: bytes, then: Message | None = None) -> Callable[[], Awaitable[Message]]:
    """A `receive` giving `parts` as body messages, then `then` (a disconnect) forever."""
    queue: list[Message] = [
        {"type": "http.request", "body": part, "more_body": i < len(parts) - 1}
        for i, part in enumerate(parts)
    ]
    after = then or {"type": "http.disconnect"}

    async def receive() -> Message:
        return queue.pop(0) if queue else after

    return receive


async def test_a_body_in_parts_is_read_whole_and_replayed_then_falls_through() -> None:
    body, replay = await read_body(receiver(b'{"a":', b" 1", b"}"))
    assert body == b'{"a": 1}'
    replayed = [await replay() for _ in range(3)]
    assert b"".join(m["body"] for m in replayed) == body
    assert [m["more_body"] for m in replayed] == [True, True, False]
    assert (await replay())["type"] == "http.disconnect"


async def test_a_body_over_the_limit_is_refused_and_one_at_the_limit_is_not() -> None:
    assert await read_body(receiver(b"12345", b"6"), 5) is None
    read = await read_body(receiver(b"123", b"45"), 5)
    assert read is not None and read[0] == b"12345"


async def test_a_disconnect_before_the_end_stops_the_read() -> None:
    receive = receiver()  # nothing but a disconnect
    body, replay = await read_body(receive)
    assert body == b""
    assert (await replay())["type"] == "http.disconnect"


async def test_a_body_that_does_not_arrive_in_time_raises_timeout() -> None:
    async def stalled() -> Message:
        await asyncio.sleep(10)
        return {"type": "http.request", "body": b"", "more_body": False}

    with pytest.raises(TimeoutError):
        await read_body_within(stalled, 100, 0.05)
    replay = await read_body_within(receiver(b"ok"), 100, 1.0)
    assert replay is not None and (await replay())["body"] == b"ok"
    assert await read_body_within(receiver(b"too long"), 3, 1.0) is None
