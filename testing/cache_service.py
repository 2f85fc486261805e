"""The real app with a cache, on the fake engines (tavily, brave and searxng), served under
uvicorn and asked over /mcp: what the end-to-end cache and `read` tests stand on."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx

from testing.cache_helpers import FakeClock
from testing.fake_engines import base_urls
from testing.server_helpers import MCP_HEADERS, tool_call
from testing.serving import serve_app
from websearch_mcp.cache import open_cache
from websearch_mcp.config import Settings
from websearch_mcp.engines.registry import ENGINES
from websearch_mcp.search.configuration import parse_config
from websearch_mcp.search.service import SearchService
from websearch_mcp.server.app import create_app

KEY_A = "tvly-shared-key-a"


def config(engines_url: str, cache: dict[str, Any], **overrides: Any) -> dict[str, Any]:
    """A config on the fake engines: tavily, brave and searxng; no retries, no breakers, and
    no per-client limits (the single-flight test sends 50 calls at once)."""
    urls = base_urls(engines_url)
    engines: dict[str, Any] = {name: {"enabled": False} for name in ENGINES}
    engines["tavily"] = {"api_keys": [KEY_A], "base_url": urls["tavily"]}
    engines["brave"] = {"api_keys": ["brave-key-1"], "base_url": urls["brave"]}
    engines["searxng"] = {"enabled": True, "base_url": urls["searxng"]}
    engines.update(overrides.pop("engines", {}))
    search = {
        "deadline_seconds": 3,
        "retry": {"retries": 0},
        "breaker": {"enabled": False},
        **overrides.pop("search", {}),
    }
    server = {"rate_limit_per_minute": 0, "max_concurrent_per_client": 64}
    return {"engines": engines, "search": search, "cache": cache, "server": server, **overrides}


def make_settings(engines_url: str, path: Path, **overrides: Any) -> Settings:
    cache = {"backend": "sqlite", "path": str(path), **overrides.pop("cache", {})}
    raw = config(engines_url, cache, **overrides)
    return parse_config(raw, "test", environ={})


@contextmanager
def serve(settings: Settings, clock: FakeClock | None = None) -> Iterator[str]:
    """The app for `settings` under uvicorn; its cache runs on `clock` when one is given."""
    cache = open_cache(settings.cache, clock=clock) if clock else None
    with serve_app(create_app(settings, SearchService(settings, cache=cache))) as url:
        yield url


def call(url: str, arguments: dict[str, Any], name: str = "web_search") -> dict[str, Any]:
    """One tool call over /mcp: the JSON-RPC `result` (`structuredContent` or an error)."""
    response = httpx.post(
        f"{url}/mcp", headers=MCP_HEADERS, json=tool_call(arguments, name), timeout=15
    )
    assert response.status_code == 200, response.text
    return response.json()["result"]
