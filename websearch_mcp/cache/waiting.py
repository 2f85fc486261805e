"""Callers of the SQLite cache waiting for one trip to the file: reads of many entries answered
together, and stores written together (see `sqlite`)."""

from __future__ import annotations

import asyncio

from websearch_mcp.cache.base import CacheHit, load_value


def answer(
    waiting: dict[tuple[str, str], list[asyncio.Future[CacheHit | None]]],
    found: dict[tuple[str, str], tuple[CacheHit, str]],
) -> None:
    """Answer each caller still waiting: the hit found for its entry, else a miss. Callers of the
    same entry each get their own copy of the value."""
    for entry, futures in waiting.items():
        hit, raw = found.get(entry, (None, ""))
        for number, future in enumerate(futures):
            if future.done():  # its caller gave up
                continue
            if hit is not None and number > 0:
                hit = CacheHit(value=load_value(raw), age_seconds=hit.age_seconds)
            future.set_result(hit)


#: A store waiting to be written: the entry, its TTL, the encoded value, and the caller's future.
Write = tuple[tuple[str, str], float, str, "asyncio.Future[None]"]


def release(batch: list[Write]) -> None:
    """Let the callers of `batch` go on (a store never raises: a failure is counted)."""
    for *_, stored in batch:
        if not stored.done():
            stored.set_result(None)
