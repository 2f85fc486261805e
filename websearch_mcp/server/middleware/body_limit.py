"""Request bodies read ahead of the app, then replayed to it as if unread.

`Guard` reads every body under the cap and the read timeout before the request takes a
concurrency slot (`read_body_within`); the MCP endpoint reads one to see whether it asks for
progress (`read_body`). The replaying `receive` falls through to the real one once the body is
spent, so that a disconnect still reaches the app.
"""

from __future__ import annotations

import asyncio
from collections import deque
from typing import overload

from starlette.types import Message, Receive


@overload
async def read_body(receive: Receive, limit: None = None) -> tuple[bytes, Receive]: ...
@overload
async def read_body(receive: Receive, limit: int) -> tuple[bytes, Receive] | None: ...


async def read_body(receive: Receive, limit: int | None = None) -> tuple[bytes, Receive] | None:
    """The whole request body and a `receive` that replays it; None when it is over `limit`
    bytes (no limit when None)."""
    messages: deque[Message] = deque()
    parts: list[bytes] = []
    size = 0
    while True:
        message = await receive()
        messages.append(message)
        if message["type"] != "http.request":
            break
        part = message.get("body", b"")
        parts.append(part)
        size += len(part)
        if limit is not None and size > limit:
            return None
        if not message.get("more_body", False):
            break

    async def replay() -> Message:
        return messages.popleft() if messages else await receive()

    return b"".join(parts), replay


def replaying(body: bytes, receive: Receive) -> Receive:
    """A `receive` that gives `body` whole, then falls through to `receive`."""
    pending = [{"type": "http.request", "body": body, "more_body": False}]

    async def replay() -> Message:
        return pending.pop() if pending else await receive()

    return replay


async def read_body_within(receive: Receive, limit: int, seconds: float) -> Receive | None:
    """`read_body` within `seconds`: the replaying `receive`, None when the body is over `limit`,
    or raises TimeoutError when it has not all arrived in time."""
    async with asyncio.timeout(seconds):
        read = await read_body(receive, limit)
    return None if read is None else read[1]
