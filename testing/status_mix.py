"""Fake engines in every state the status page tells apart, for its tests and its screenshot.

`faulted(fake)` breaks the fake engines (one ok, one answering 429 with `Retry-After`, one
serving a CAPTCHA page, one whose breaker opens on an HTTP 500, one without a key, one
disabled); `mix_settings` configures the service on them; `EXPECTED` is the state each engine's
row must show once every engine has been asked once.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator, Sequence
from typing import Any

import httpx

from testing.fake_engines import FakeEngines, Fault, base_urls
from testing.server_helpers import BRAVE_KEY, MCP_HEADERS, tool_call
from testing.serving import serve_app
from websearch_mcp.config import Settings
from websearch_mcp.engines.registry import ENGINES
from websearch_mcp.search.configuration import parse_config
from websearch_mcp.server.app import create_app

#: Seconds the rate-limited engine asks to be left alone.
RETRY_AFTER = 120

#: Each engine's row once every engine has been asked once.
EXPECTED = {
    "searxng": "ok",
    "brave": "rate_limited",
    "bing": "blocked",
    "wikipedia": "breaker_open",
    "tavily": "no_key",
    "duckduckgo": "disabled",
}


def faulted(fake: FakeEngines) -> FakeEngines:
    """`fake` with the faults of the mix (the engines not named answer as usual)."""
    fake.faults["brave"] = Fault(status=429, body='{"error": "slow down"}', retry_after="120")
    fake.faults["bing"] = Fault(captcha=True)
    fake.faults["wikipedia"] = Fault(status=500, body="upstream trouble")
    return fake


def mix_settings(engines_url: str, server: dict[str, Any] | None = None) -> Settings:
    """The service on the faulted engines: the breaker of an engine failing with an error stays
    open long enough to be seen; no cache, so that every search asks the engines."""
    urls = base_urls(engines_url)
    engines: dict[str, Any] = {name: {"enabled": False} for name in ENGINES}
    for name in ("searxng", "bing", "wikipedia"):
        engines[name] = {"enabled": True, "base_url": urls[name]}
    engines["brave"] = {"enabled": True, "api_keys": [BRAVE_KEY], "base_url": urls["brave"]}
    engines["tavily"] = {"enabled": True, "base_url": urls["tavily"]}
    breaker = {"error_step_seconds": 600, "error_max_seconds": 600}
    return parse_config(
        {
            "engines": engines,
            "search": {"deadline_seconds": 3, "breaker": breaker},
            "cache": {"backend": "none"},
            "server": {"rate_limit_per_minute": 0, **(server or {})},
        },
        "test",
        environ={},
    )


def search(url: str, query: str, headers: dict[str, str] | None = None) -> dict[str, Any]:
    """One `web_search` over MCP; each engine's report by name."""
    response = httpx.post(
        f"{url}/mcp",
        json=tool_call({"query": query}),
        headers={**MCP_HEADERS, **(headers or {})},
        timeout=20,
    )
    response.raise_for_status()
    result = response.json()["result"]
    return {e["name"]: e for e in result["structuredContent"]["engines"]}


@contextlib.contextmanager
def serving_mix(engines_url: str, queries: Sequence[str]) -> Iterator[str]:
    """The service on the faulted engines, open (loopback, no tokens), after a search of each
    query (each engine asked); yields its base URL."""
    with serve_app(create_app(mix_settings(engines_url))) as url:
        for query in queries:
            search(url, query)
        yield url
