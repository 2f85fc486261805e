"""Every engine the service knows, by config name. Adding an engine is one module plus one line."""

from __future__ import annotations

from websearch_mcp.engines.academic.arxiv import ArXiv
from websearch_mcp.engines.academic.core import Core
from websearch_mcp.engines.academic.crossref import Crossref
from websearch_mcp.engines.academic.dblp import DBLP
from websearch_mcp.engines.academic.europepmc import EuropePMC
from websearch_mcp.engines.academic.google_scholar import GoogleScholar
from websearch_mcp.engines.academic.openalex import OpenAlex
from websearch_mcp.engines.academic.pubmed import PubMed
from websearch_mcp.engines.academic.semantic_scholar import SemanticScholar
from websearch_mcp.engines.base import Engine
from websearch_mcp.engines.web.baidu import Baidu
from websearch_mcp.engines.web.bing import Bing
from websearch_mcp.engines.web.brave import Brave
from websearch_mcp.engines.web.duckduckgo import DuckDuckGo
from websearch_mcp.engines.web.exa import Exa
from websearch_mcp.engines.web.google import Google
from websearch_mcp.engines.web.google_cse import GoogleCSE
from websearch_mcp.engines.web.google_news import GoogleNews
from websearch_mcp.engines.web.jina import Jina
from websearch_mcp.engines.web.mojeek import Mojeek
from websearch_mcp.engines.web.searxng import SearXNG
from websearch_mcp.engines.web.serpapi import SerpApi
from websearch_mcp.engines.web.serper import Serper
from websearch_mcp.engines.web.tavily import Tavily
from websearch_mcp.engines.web.wikipedia import Wikipedia

ENGINES: dict[str, type[Engine]] = {
    engine.name: engine
    for engine in (
        Tavily,
        Brave,
        Exa,
        SearXNG,
        DuckDuckGo,
        Bing,
        Wikipedia,
        Baidu,
        Mojeek,
        Serper,
        SerpApi,
        GoogleCSE,
        Jina,
        Google,
        GoogleNews,
        ArXiv,
        Crossref,
        OpenAlex,
        SemanticScholar,
        PubMed,
        EuropePMC,
        DBLP,
        Core,
        GoogleScholar,
    )
}
