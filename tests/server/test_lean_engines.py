"""The lean fake engines (aiohttp, for the latency benchmark) answer the service's real requests
as `FakeEngines` does, after their delay."""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator
from typing import Any

import pytest
from aiohttp import web

from testing.fake_engines import ENGINE_NAMES
from testing.lean_engines import engines_app
from testing.wire_formats import render
from websearch_mcp.engines.registry import ENGINES
from websearch_mcp.models import HttpResponse, Query
from websearch_mcp.net.engine_http import EngineClient, build_client, send

QUERY = Query(text="python asyncio event loop")
DELAY = 0.2


def results_for(engine: str, query: str) -> list[dict[str, Any]]:
    """Two results naming the query each engine's request carried."""
    return [
        {
            "title": f"{query}: part {i}",
            "url": f"https://example.com/{engine}/{i}",
            "snippet": f"All about {query}, part {i}.",
        }
        for i in (1, 2)
    ]


@pytest.fixture
async def engines() -> AsyncIterator[str]:
    """Every engine on 127.0.0.1, each answering after `DELAY`."""
    runner = web.AppRunner(engines_app(dict.fromkeys(ENGINE_NAMES, DELAY), results_for))
    await runner.setup()
    await web.TCPSite(runner, "127.0.0.1", 0).start()
    yield f"http://127.0.0.1:{runner.addresses[0][1]}"
    await runner.cleanup()


async def _ask(client: EngineClient, base: str, name: str) -> tuple[HttpResponse, float]:
    engine = ENGINES[name]()
    request = engine.request(QUERY, f"{name}-key" if engine.needs_key else None)
    started = time.monotonic()
    response = await send(client, f"{base}/{name}", request, 5.0)
    return response, time.monotonic() - started


async def test_each_engine_answers_its_real_request_with_the_fake_engines_body(
    engines: str,
) -> None:
    client = build_client()
    try:
        for name in ENGINE_NAMES:
            response, _ = await _ask(client, engines, name)
            body, content_type = render(name, results_for(name, QUERY.text), QUERY.text)
            assert (response.status, response.content) == (200, body), name
            assert response.headers["content-type"].startswith(content_type.split(";")[0])
            hits = ENGINES[name]().parse(response, QUERY)
            assert [h.title for h in hits] == [f"{QUERY.text}: part {i}" for i in (1, 2)], name
    finally:
        await client.aclose()


async def test_requests_arriving_together_are_each_answered_after_the_delay(
    engines: str,
) -> None:
    client = build_client()
    try:
        answers = await asyncio.gather(
            *(_ask(client, engines, name) for name in ENGINE_NAMES for _ in range(4))
        )
    finally:
        await client.aclose()
    took = [seconds for _, seconds in answers]
    assert min(took) >= DELAY
    assert max(took) < DELAY + 1.0
