"""Helpers for the resilience tests: a clock moved by hand, settings naming exactly the engines
a test uses (every other engine off, so nothing reaches the real network), and MCP calls."""

from __future__ import annotations

from typing import Any

import httpx

from testing.cache_helpers import FakeClock as CacheFakeClock
from testing.fake_engines import base_urls
from testing.server_helpers import tool_call
from websearch_mcp.config import Settings
from websearch_mcp.engines.registry import ENGINES
from websearch_mcp.search.configuration import parse_config

JSON_HEADERS = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}


class FakeClock(CacheFakeClock):
    """A wall clock for cooldowns that only moves when told to; it starts later than the cache
    tests' clock, where the resilience tests' absolute times are set."""

    def __init__(self, now: float = 1_800_000_000.0) -> None:
        super().__init__(now)


def settings_for(
    base: str | None,
    engines: dict[str, dict[str, Any]],
    *,
    top: dict[str, Any] | None = None,
    **search: Any,
) -> Settings:
    """Settings with only `engines` enabled, each pointed at the fake server under `base`
    (unless it sets its own `base_url`), no cache, and fast retries."""
    urls = base_urls(base) if base else {}
    conf: dict[str, Any] = {name: {"enabled": False} for name in ENGINES}
    for name, extra in engines.items():
        entry = {"enabled": True, **extra}
        if name in urls and "base_url" not in entry:
            entry["base_url"] = urls[name]
        conf[name] = entry
    search = {"deadline_seconds": 2, "retry": {"base_seconds": 0.05, "max_seconds": 0.2}, **search}
    return parse_config(
        {"engines": conf, "search": search, "cache": {"backend": "none"}, **(top or {})},
        "test",
        environ={},
    )


def web_search(url: str, query: str, **arguments: Any) -> dict[str, Any]:
    """`web_search` through the MCP endpoint: the JSON-RPC `result` (structured or error)."""
    response = httpx.post(
        f"{url}/mcp",
        headers=JSON_HEADERS,
        json=tool_call({"query": query, **arguments}),
        timeout=20,
    )
    response.raise_for_status()
    return response.json()["result"]


def statuses(answer: dict[str, Any]) -> dict[str, str]:
    return {e["name"]: e["status"] for e in answer["engines"]}


def report(answer: dict[str, Any], name: str) -> dict[str, Any]:
    return next(e for e in answer["engines"] if e["name"] == name)
