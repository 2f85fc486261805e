"""What the server says about itself: tools only, and how long the tool list stays fresh.

Real uvicorn on 127.0.0.1, the official MCP client in both protocol eras, and a raw `initialize`.
"""

from __future__ import annotations

from collections.abc import Iterator

import httpx
import pytest
from mcp import Client

from testing.server_helpers import INITIALIZE, MCP_HEADERS, settings_for
from testing.serving import serve_app
from websearch_mcp.server.app import create_app
from websearch_mcp.server.tools import TOOLS_CACHE


@pytest.fixture
def url(engines_url: str) -> Iterator[str]:
    with serve_app(create_app(settings_for(engines_url))) as base:
        yield base


def test_initialize_advertises_tools_only(url: str) -> None:
    with httpx.Client(timeout=10) as http:
        reply = http.post(f"{url}/mcp", headers=MCP_HEADERS, json=INITIALIZE).json()
        capabilities = reply["result"]["capabilities"]
        assert capabilities == {"tools": {"listChanged": False}}
        # What is not advertised is not served either.
        for method in ("prompts/list", "resources/list", "resources/templates/list"):
            asked = {"jsonrpc": "2.0", "id": 2, "method": method}
            error = http.post(f"{url}/mcp", headers=MCP_HEADERS, json=asked).json()["error"]
            assert error["code"] == -32601, method  # method not found


async def test_modern_clients_see_tools_only_and_may_cache_the_list(url: str) -> None:
    async with Client(f"{url}/mcp", cache=None) as client:
        assert client.protocol_version >= "2026"
        capabilities = client.server_capabilities
        assert capabilities.prompts is None and capabilities.resources is None
        assert capabilities.tools is not None and not capabilities.tools.list_changed
        tools = await client.list_tools()
    assert TOOLS_CACHE.ttl_ms >= 600_000  # the tools change only with the configuration
    assert tools.ttl_ms == TOOLS_CACHE.ttl_ms and tools.cache_scope == "public"
    assert {t.name for t in tools.tools} == {"web_search", "academic_search", "fetch_page"}


async def test_legacy_clients_still_list_and_call_tools(url: str) -> None:
    async with Client(f"{url}/mcp", mode="legacy", cache=None) as client:
        assert client.server_capabilities.prompts is None
        result = await client.call_tool("web_search", {"query": "python asyncio"})
    assert not result.is_error and result.structured_content["results"]
