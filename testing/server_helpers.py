"""Helpers for the HTTP server tests: settings on fake engines, MCP request bodies, results."""

from __future__ import annotations

from typing import Any

from mcp.types import CallToolResult, TextContent

from testing.fake_engines import base_urls
from websearch_mcp.config import Settings
from websearch_mcp.engines.registry import ENGINES
from websearch_mcp.search.configuration import parse_config

MCP_HEADERS = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}
TAVILY_KEY = "tvly-test-key-1"
BRAVE_KEY = "brave-test-key-1"

# Two engines with overlapping lists in their own wire formats; brave answers like tavily.
RESULTS: dict[str, list[dict[str, Any]]] = {
    "tavily": [
        {
            "title": "asyncio — Asynchronous I/O",
            "url": "https://docs.python.org/3/library/asyncio.html",
            "snippet": "asyncio is a library to write concurrent code with the async/await syntax.",
            "score": 0.95,
            "published": "2026-03-01",
        },
        {
            "title": "Python asyncio tutorial",
            "url": "https://realpython.com/async-io-python/",
            "snippet": "A walkthrough of async IO in Python: coroutines, the event loop, tasks.",
            "score": 0.8,
        },
        {
            "title": "asyncio event loop explained",
            "url": "https://superfastpython.com/asyncio-event-loop/",
            "snippet": "The asyncio event loop runs Python coroutines and callbacks.",
            "score": 0.7,
        },
    ],
    "searxng": [
        {
            "title": "asyncio docs",
            "url": "https://docs.python.org/3/library/asyncio.html",
            "snippet": "Python asyncio documentation: asynchronous I/O, event loop, coroutines.",
            "score": 3.0,
        },
        {
            "title": "Coroutines and tasks in Python asyncio",
            "url": "https://docs.python.org/3/library/asyncio-task.html",
            "snippet": "Python asyncio coroutines and tasks: create_task, gather, timeouts.",
        },
        {
            "title": "Python asyncio tutorial",
            "url": "https://realpython.com/async-io-python",
            "snippet": "Async IO in Python: a complete walkthrough of asyncio.",
        },
    ],
}
RESULTS["brave"] = RESULTS["tavily"]


def results_for(engine: str, query: str) -> list[dict[str, Any]]:
    """What each fake engine answers, whatever the query."""
    return RESULTS.get(engine, [])


def settings_for(
    engines_url: str,
    *,
    server: dict[str, Any] | None = None,
    search: dict[str, Any] | None = None,
    brave: bool = False,
    environ: dict[str, str] | None = None,
) -> Settings:
    """Settings with tavily and searxng (and brave if asked) on the fake engines, no cache."""
    urls = base_urls(engines_url)
    engines: dict[str, Any] = {name: {"enabled": False} for name in ENGINES}
    engines["tavily"] = {"api_keys": [TAVILY_KEY], "base_url": urls["tavily"]}
    engines["searxng"] = {"enabled": True, "base_url": urls["searxng"]}
    if brave:
        engines["brave"] = {"enabled": True, "api_keys": [BRAVE_KEY], "base_url": urls["brave"]}
    return parse_config(
        {
            "engines": engines,
            "search": {"deadline_seconds": 3, **(search or {})},
            "cache": {"backend": "none"},
            "server": server or {},
        },
        "test",
        environ=environ or {},
    )


def tool_call(arguments: dict[str, Any], name: str = "web_search", rid: int = 1) -> dict[str, Any]:
    """A JSON-RPC `tools/call` body."""
    return {
        "jsonrpc": "2.0",
        "id": rid,
        "method": "tools/call",
        "params": {"name": name, "arguments": arguments},
    }


TOOLS_LIST = {"jsonrpc": "2.0", "id": 1, "method": "tools/list"}
#: A client's first message, sent alone (stateless HTTP takes it too).
INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-06-18",
        "capabilities": {},
        "clientInfo": {"name": "test", "version": "1"},
    },
}


def text_of(result: CallToolResult) -> str:
    """The text of a tool result: its first content block, the text every tool answers with."""
    block = result.content[0]
    assert isinstance(block, TextContent), block
    return block.text


def bearer(token: str) -> dict[str, str]:
    """MCP headers with `Authorization: Bearer <token>`."""
    return {**MCP_HEADERS, "Authorization": f"Bearer {token}"}
