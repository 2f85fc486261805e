"""A self-hosted SearXNG instance's JSON API: `GET /search?format=json&q=...`."""

from __future__ import annotations

import math
from datetime import datetime
from functools import partial
from typing import Any

from websearch_mcp.dates import iso_date, split_date_prefix
from websearch_mcp.engines.base import Engine
from websearch_mcp.engines.common import (
    as_float,
    as_text,
    http_url,
    json_object,
    ranked_hits,
    result_list,
    web_hit,
)
from websearch_mcp.engines.news import news_hit, news_time
from websearch_mcp.engines.text import clean_text, collapse_spaces
from websearch_mcp.errors import EngineError
from websearch_mcp.models import Hit, HttpRequest, HttpResponse, Query

JSON_DISABLED = (
    "HTTP 403: the SearXNG instance refuses format=json; enable the json format in the"
    " instance's settings.yml (search.formats: [html, json])"
)


class SearXNG(Engine):
    """SearXNG: a metasearch instance you run; its fused `score` is passed through.

    Off by default: set `engines.searxng.base_url` to your instance and enable it.
    """

    name = "searxng"
    markup = False
    # SearXNG's own default listen address (settings.yml `server.port: 8888`).
    base_url = "http://127.0.0.1:8888"
    returns_score = True
    supports_time_range = True
    supports_language = True
    categories = frozenset({"general", "news"})
    default_enabled = False
    default_timeout = 6.0

    def request(self, query: Query, key: str | None) -> HttpRequest:
        """`q`, `format=json`, `pageno`, and `time_range` / `language` when asked for;
        `categories=news` for a news search."""
        params: dict[str, Any] = {"q": query.text, "format": "json", "pageno": query.page}
        if query.category == "news":
            params["categories"] = "news"
        if query.time_range:
            params["time_range"] = query.time_range
        if query.language:
            params["language"] = searxng_language(query.language)
        return HttpRequest("GET", "/search", params=params, headers={"Accept": "application/json"})

    def parse(self, response: HttpResponse, query: Query) -> list[Hit]:
        """`results[]` -> hits with SearXNG's score and `publishedDate` (or a printed date)."""
        if response.status == 403:
            raise EngineError(JSON_DISABLED)
        self.check_status(response)
        data = json_object(response, "SearXNG")
        items = _by_score(result_list(data, "results", "SearXNG"))
        if query.category == "news":
            hits = ranked_hits(items, self.name, partial(_news, now=self.now()))
        else:
            hits = ranked_hits(items, self.name, _hit)
        if not hits and (silent := unresponsive(data.get("unresponsive_engines"))):
            # The instance's own engines failed: that is no evidence there are no results.
            raise EngineError(f"no results; the instance's engines did not answer: {silent}")
        return hits


def _by_score(items: list[Any]) -> list[Any]:
    """SearXNG's results in the order of its own merged scores: it lists them grouped for
    display (results with a thumbnail apart from those without), which is no ranking. Equal or
    missing scores keep their order, missing ones last."""

    def score(item: Any) -> float:
        value = as_float(item.get("score")) if isinstance(item, dict) else None
        return -value if value is not None and math.isfinite(value) else math.inf

    return sorted(items, key=score)


def searxng_language(language: str) -> str:
    """SearXNG's `language`: `fr` or `fr-CA`. An instance answers HTTP 400 to any other form
    (`en_GB`, `EN`, `zh-Hant`, `es-419`), so the tag is cut down to its language and region."""
    parts = language.strip().replace("_", "-").split("-")
    region = next((p for p in parts[1:] if len(p) == 2 and p.isalpha()), None)
    return f"{parts[0].lower()}-{region.upper()}" if region else parts[0].lower()


def unresponsive(value: Any, shown: int = 5) -> str:
    """`google (timeout), bing (CAPTCHA)` from `[[engine, reason], ...]` ('' when none)."""
    pairs = (
        [p for p in value if isinstance(p, list | tuple) and p] if isinstance(value, list) else []
    )
    parts = [
        clean_text(str(p[0]), 40)
        + (f" ({clean_text(str(p[1]), 80)})" if len(p) > 1 and p[1] else "")
        for p in pairs[:shown]
    ]
    more = f" and {len(pairs) - shown} more" if len(pairs) > shown else ""
    return ", ".join(parts) + more


def _hit(item: dict[str, Any], rank: int, engine: str) -> Hit | None:
    url = http_url(item.get("url"))
    # Google results relayed by SearXNG keep the date in the text ("1 apr 2013 — ...").
    snippet, printed = split_date_prefix(collapse_spaces(as_text(item.get("content"))))
    return web_hit(
        url,
        item.get("title"),
        snippet,
        rank,
        engine,
        score=as_float(item.get("score")),
        published=iso_date(item.get("publishedDate")) or printed,
    )


def _news(item: dict[str, Any], rank: int, engine: str, now: datetime) -> Hit | None:
    """A news result: `publishedDate`, else the time in `metadata` ("13 hours ago | Barchart
    on MSN"), whose other part names the publisher; either part may be missing ("Reuters")."""
    when, joined, source = as_text(item.get("metadata")).partition(" | ")
    said = news_time(when, now)
    if not joined and said is None:
        when, source = "", when
    published = news_time(item.get("publishedDate"), now) or said
    hit = news_hit(
        http_url(item.get("url")),
        item.get("title"),
        as_text(item.get("content")),
        rank,
        engine,
        published=published,
        source=source,
    )
    if hit is not None:
        hit.score = as_float(item.get("score"))
    return hit
