"""Per-client limits: off for a server only this machine reaches, on for remote deployments.

Real uvicorn on 127.0.0.1 with fake engines; a slow engine keeps every search in flight at once.
"""

from __future__ import annotations

import asyncio
from collections import Counter
from typing import Any

import httpx
import pytest

from testing.fake_engines import FakeEngines, Fault
from testing.server_helpers import MCP_HEADERS, bearer, results_for, settings_for, tool_call
from testing.serving import serve_app
from websearch_mcp.config import ServerSettings
from websearch_mcp.server.app import create_app
from websearch_mcp.server.middleware.exposure import serves_this_machine_only
from websearch_mcp.server.middleware.guard import Guard

TOKEN = "tok-local-0123456789abcdef"
AT_ONCE = 20


@pytest.fixture
def fake() -> FakeEngines:
    fake = FakeEngines(results_for)
    fake.faults["tavily"] = Fault(delay=2.0)  # every search of a burst is in flight together
    return fake


async def burst(url: str, headers: dict[str, str]) -> list[httpx.Response]:
    """`AT_ONCE` different searches sent together, as an agent researching in parallel does."""
    limits = httpx.Limits(max_connections=AT_ONCE)
    async with httpx.AsyncClient(timeout=30, limits=limits) as http:
        return await asyncio.gather(
            *(
                http.post(
                    f"{url}/mcp",
                    headers=headers,
                    json=tool_call({"query": f"python asyncio {i}"}, rid=i),
                )
                for i in range(AT_ONCE)
            )
        )


def serve(engines_url: str, **server: Any) -> Any:
    settings = settings_for(engines_url, server=server, search={"deadline_seconds": 6})
    return serve_app(create_app(settings))


async def test_a_local_agent_firing_twenty_searches_at_once_is_not_refused(
    engines_url: str,
) -> None:
    with serve(engines_url) as url:
        answers = await burst(url, MCP_HEADERS)
    assert [r.status_code for r in answers] == [200] * AT_ONCE
    for i, response in enumerate(answers):
        body = response.json()
        assert body["id"] == i and body["result"]["isError"] is False
        fused = body["result"]["structuredContent"]["results"][0]
        assert sorted(fused["engines"]) == ["searxng", "tavily"]


async def test_remote_deployments_keep_the_per_client_limits(engines_url: str) -> None:
    # A token makes callers remote; so does asking for the limits on a local server.
    for server, headers in (
        ({"auth_tokens": [TOKEN]}, bearer(TOKEN)),
        ({"limit_local_clients": True}, MCP_HEADERS),
    ):
        with serve(engines_url, **server) as url:
            codes = Counter(r.status_code for r in await burst(url, headers))
        assert codes == {200: 8, 429: AT_ONCE - 8}, server  # server.max_concurrent_per_client


async def test_the_overall_limit_still_protects_a_local_server(engines_url: str) -> None:
    with serve(engines_url, max_concurrent_requests=5) as url:
        codes = Counter(r.status_code for r in await burst(url, MCP_HEADERS))
    assert codes == {200: 5, 503: AT_ONCE - 5}


@pytest.mark.parametrize(
    ("server", "local"),
    [
        ({}, True),
        ({"host": "::1"}, True),
        ({"host": "localhost", "limit_local_clients": True}, True),
        ({"auth_tokens": [TOKEN]}, False),
        ({"trusted_proxies": ["127.0.0.1/32"]}, False),  # behind a proxy: callers are remote
        ({"host": "0.0.0.0", "allow_anonymous": True}, False),
        ({"host": "192.168.1.10", "auth_tokens": [TOKEN]}, False),
    ],
)
def test_which_servers_serve_this_machine_only(server: dict[str, Any], local: bool) -> None:
    settings = ServerSettings(**server)
    assert serves_this_machine_only(settings) is local
    guard = Guard(lambda *_: None, settings)  # type: ignore[arg-type, return-value]
    limited = not local or settings.limit_local_clients
    assert guard.slots.per_client == (settings.max_concurrent_per_client if limited else None)
    assert (guard.rate.rate > 0) is limited
