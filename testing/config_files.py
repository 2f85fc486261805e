"""Config files for the tests that run the command line or a child process."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

from testing.fake_engines import base_urls
from testing.server_helpers import TAVILY_KEY
from websearch_mcp.engines.registry import ENGINES


def write_config(path: Path, engines_url: str, llm_url: str | None = None) -> Path:
    """Tavily and SearXNG on the fake engines, no cache, debug logs; the model at `llm_url`
    when given. Returns `path`."""
    urls = base_urls(engines_url)
    engines: dict[str, Any] = {name: {"enabled": False} for name in ENGINES}
    engines["tavily"] = {"api_keys": [TAVILY_KEY], "base_url": urls["tavily"]}
    engines["searxng"] = {"enabled": True, "base_url": urls["searxng"]}
    config: dict[str, Any] = {
        "engines": engines,
        "search": {"deadline_seconds": 5},
        "cache": {"backend": "none"},
        "server": {"log_level": "debug"},
    }
    if llm_url is not None:
        config["llm"] = {"base_url": llm_url, "model": "fake-model"}
    path.write_text(yaml.safe_dump(config), encoding="utf-8")
    return path
