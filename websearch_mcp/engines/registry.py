"""Every engine the service knows, by config name. Adding an engine is one module plus one line."""

from __future__ import annotations

from websearch_mcp.engines.base import Engine
from websearch_mcp.engines.web.bing import Bing
from websearch_mcp.engines.web.brave import Brave
from websearch_mcp.engines.web.duckduckgo import DuckDuckGo
from websearch_mcp.engines.web.exa import Exa
from websearch_mcp.engines.web.searxng import SearXNG
from websearch_mcp.engines.web.tavily import Tavily
from websearch_mcp.engines.web.wikipedia import Wikipedia

ENGINES: dict[str, type[Engine]] = {
    engine.name: engine
    for engine in (Tavily, Brave, Exa, SearXNG, DuckDuckGo, Bing, Wikipedia)
}
