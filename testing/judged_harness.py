"""The retrieval models as search engines, and the real service asked over MCP.

Each model plays one engine behind the fake engine server of `testing/fake_engines.py`, which
answers in that engine's real wire format; the service is the real app under uvicorn, configured
like any deployment (only the line-up's engines, each `base_url` pointing at the fake server),
and every query goes through the `web_search` tool with the official MCP client. Line-ups
(`LINEUPS`): the four lexical models, with the semantic one (`testing.semantic.LSA`, as Exa), and
with the weak one too (`testing.semantic.Weak`, as Bing). Used by `bench.relevance` and by the
relevance floor test, so both measure exactly the same thing.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from mcp import Client

from testing.fake_engines import FakeEngines, base_urls, serve_fake_engines
from testing.judged import Collection, Document, Searcher, coverage_seeds, covered, models, ndcg
from testing.serving import serve_app
from websearch_mcp.config import Settings
from websearch_mcp.engines.registry import ENGINES
from websearch_mcp.search.configuration import parse_config
from websearch_mcp.server.app import create_app

#: Which model answers as which engine (four wire formats: Tavily, Brave, SearXNG JSON; DDG HTML).
ENGINE_MODELS: dict[str, str] = {
    "tavily": "bm25",
    "brave": "tfidf",
    "searxng": "ql_dirichlet",
    "duckduckgo": "bm25_title",
}
#: Engine line-ups: the four lexical models; with a semantic engine (LSA, in Exa's format); and
#: with a weak one too (BM25 on each document's first words, noisy; in Bing's format).
LINEUPS: dict[str, dict[str, str]] = {
    "lexical": ENGINE_MODELS,
    "mixed": {**ENGINE_MODELS, "exa": "lsa"},
    "mixed+weak": {**ENGINE_MODELS, "exa": "lsa", "bing": "weak"},
}
DEPTH = 20  # results per engine
SNIPPET_CHARS = 300
MAX_RESULTS = 10
DOC_URL = "https://judged.test/doc/"
TEST_KEY = "judged-bench-key"


def engine_families(lineup: str = "lexical") -> dict[str, str]:
    """The index family of each benchmark engine: its own (`engines.<name>.index` is set to the
    engine's name), as every model indexes on its own; DuckDuckGo would otherwise be Bing's."""
    return {name: name for name in LINEUPS[lineup]}


def doc_url(doc_id: str) -> str:
    return f"{DOC_URL}{doc_id}"


def doc_id(url: str) -> str | None:
    """The document id in a result URL, or None for any other URL."""
    prefix, _, rest = url.rstrip("/").rpartition("/doc/")
    return rest if prefix.endswith("judged.test") and rest.isdigit() else None


def snippet(document: Document, limit: int = SNIPPET_CHARS) -> str:
    """The start of the abstract (without the repeated title), cut at a word boundary."""
    text = document.abstract() or document.title
    if len(text) <= limit:
        return text
    return text[:limit].rsplit(" ", 1)[0] + " ..."


def wire_score(engine: str, position: int, score: float, top: float) -> float | None:
    """The score an engine's wire format reports for its result at `position` (1-based) whose
    model score is `score` (`top` the best of the list); None for formats without one.

    - Tavily reports a relevance score in [0, 1]: the model's score divided by the query's best
      (every model here scores a matching document above 0, so the top result gets 1).
    - SearXNG reports its own merge score, not an upstream relevance score: the product of
      the upstream engines' weights times the number of positions, times the sum of 1 / position
      (`searx/results.py`; a result one engine ranks 7th scores 1/7). One upstream engine with
      weight 1 plays the model here, so the score is 1 / position whatever the model's score.
    - Brave's API and DuckDuckGo's page report none.
    """
    if engine == "tavily":
        return score / top if top > 0 else None
    if engine == "searxng":
        return 1.0 / position
    return None


def lineup_models(
    collection: Collection,
    lineup: str = "lexical",
    coverage: float = 1.0,
    seeds: Mapping[str, int] | None = None,
) -> list[Searcher]:
    """The models a line-up needs, each indexing its own share `coverage` of the documents
    below 1 (drawn with its seed, `seeds`: model name -> seed, default `coverage_seeds(1)`)."""
    # Imported here: numpy and scipy only for the line-ups with the semantic engine.
    from testing.semantic import LSA, Weak

    seeds = seeds or coverage_seeds(1)
    needed = set(LINEUPS[lineup].values())
    out: list[Searcher] = list(models(collection, coverage, seeds))
    if "lsa" in needed:
        out.append(LSA("lsa", covered(collection, coverage, seeds["lsa"])))
    if "weak" in needed:
        out.append(Weak("weak", covered(collection, coverage, seeds["weak"]), seeds["weak"]))
    return out


class CollectionEngines:
    """The models as engines: what each engine returns for a query text (its top `DEPTH`)."""

    def __init__(
        self,
        collection: Collection,
        chosen: Sequence[Searcher] | None = None,
        *,
        coverage: float = 1.0,
        seeds: Mapping[str, int] | None = None,
        lineup: str = "lexical",
    ) -> None:
        """`chosen`: the models (default: `lineup_models`); `coverage` < 1: each model indexes
        its own random share of the documents, drawn with its seed (`seeds`: model name ->
        seed, see `testing.judged.coverage_seeds`)."""
        self.collection = collection
        self.lineup = lineup
        if chosen is None:
            chosen = lineup_models(collection, lineup, coverage, seeds)
        by_name = {m.name: m for m in chosen}
        self.models = {engine: by_name[name] for engine, name in LINEUPS[lineup].items()}
        self.ranked = lru_cache(maxsize=8192)(self._ranked)

    def _ranked(self, engine: str, text: str) -> tuple[tuple[str, float], ...]:
        return tuple(self.models[engine].search(text, DEPTH))

    def results(self, engine: str, text: str) -> list[dict[str, Any]]:
        """The fake engine's answer: title, stable URL and snippet per document, best first,
        with the score the real engine would report where its wire format carries one."""
        if engine not in self.models:
            return []
        docs = self.collection.documents
        ranked = self.ranked(engine, text)
        out = []
        for position, (d, score) in enumerate(ranked, start=1):
            result: dict[str, Any] = {
                "title": docs[d].title,
                "url": doc_url(d),
                "snippet": snippet(docs[d]),
            }
            reported = wire_score(engine, position, score, ranked[0][1])
            if reported is not None:
                result["score"] = reported
            out.append(result)
        return out


def service_settings(
    engines_url: str, search: Mapping[str, Any] | None = None, lineup: str = "lexical"
) -> Settings:
    """A deployment's configuration: the line-up's engines at the fake server, each its own
    index, every other engine off, no cache, no per-client rate limit, a generous deadline;
    `search` overrides (nested)."""
    urls = base_urls(engines_url)
    engines: dict[str, Any] = {name: {"enabled": False} for name in ENGINES}
    for name in LINEUPS[lineup]:
        engines[name] = {
            "enabled": True,
            "base_url": urls[name],
            "rate_limit": 0,
            "timeout_seconds": 30,
            "index": name,
        }
        if ENGINES[name].needs_key:
            engines[name]["api_keys"] = [TEST_KEY]
    return parse_config(
        {
            "engines": engines,
            "search": {"deadline_seconds": 30, **(search or {})},
            "cache": {"backend": "none"},
            "server": {"rate_limit_per_minute": 0},
        },
        "relevance benchmark",
        environ={},
    )


@contextmanager
def fake_engine_server(engines: CollectionEngines) -> Iterator[str]:
    """The fake engine server answering with the models' lists; yields its base URL."""
    with serve_fake_engines(FakeEngines(engines.results)) as url:
        yield url


@contextmanager
def service(
    engines_url: str, search: Mapping[str, Any] | None = None, lineup: str = "lexical"
) -> Iterator[str]:
    """The real service under uvicorn with the line-up's engines; yields its MCP endpoint URL."""
    with serve_app(create_app(service_settings(engines_url, search, lineup))) as url:
        yield f"{url}/mcp"


@dataclass(frozen=True, slots=True)
class Answer:
    """The service's answer to one query: document ids best first, and the round trip time."""

    docs: list[str]
    seconds: float


async def _ask(client: Client, arguments: dict[str, Any]) -> Answer:
    started = time.perf_counter()
    result = await client.call_tool("web_search", arguments)
    seconds = time.perf_counter() - started
    if result.is_error or result.structured_content is None:
        raise RuntimeError(f"web_search failed for {arguments['query'][:60]!r}: {result.content}")
    urls = [r["url"] for r in result.structured_content["results"]]
    return Answer([d for d in map(doc_id, urls) if d is not None], seconds)


async def ask_all(
    mcp_url: str,
    queries: Mapping[str, str],
    *,
    max_results: int = MAX_RESULTS,
    engines: Sequence[str] | None = None,
    concurrency: int = 1,
) -> dict[str, Answer]:
    """Every query through `web_search` ({id: text} in, {id: answer} out), asking `engines`
    (all enabled ones by default); `concurrency` clients work through the queries side by
    side (1 for undisturbed latencies)."""
    pending = list(queries.items())
    answers: dict[str, Answer] = {}

    async def worker() -> None:
        async with Client(mcp_url, mode="legacy", cache=None) as client:
            while pending:
                qid, text = pending.pop(0)
                arguments: dict[str, Any] = {"query": text, "max_results": max_results}
                if engines is not None:
                    arguments["engines"] = list(engines)
                answers[qid] = await _ask(client, arguments)

    await asyncio.gather(*(worker() for _ in range(max(1, concurrency))))
    return {qid: answers[qid] for qid in queries}


def mean_ndcg(
    ranked: Mapping[str, Sequence[str]], qrels: Mapping[str, Mapping[str, int]], k: int = 10
) -> float:
    """Mean nDCG@k over the queries of `ranked`."""
    return sum(ndcg(docs, qrels.get(q, {}), k) for q, docs in ranked.items()) / max(1, len(ranked))
