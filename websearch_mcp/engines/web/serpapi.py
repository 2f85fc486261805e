"""SerpApi's Google engine: `GET /search.json?engine=google&q=..`, the key in `api_key`."""

from __future__ import annotations

from datetime import datetime
from functools import partial
from typing import Any, ClassVar

from websearch_mcp.engines.base import Engine
from websearch_mcp.engines.common import (
    api_error,
    as_dict,
    error_message,
    json_object,
    object_list,
    ranked_hits,
)
from websearch_mcp.engines.news import GOOGLE_WHEN
from websearch_mcp.engines.web._google import (
    QDR,
    language_params,
    news_article_hit,
    organic_hit,
)
from websearch_mcp.models import Hit, HttpRequest, HttpResponse, Query

# SerpApi reports an empty result page as an error message, not as an empty list.
_NO_RESULTS = "hasn't returned any results"


class SerpApi(Engine):
    """SerpApi: `organic_results[]` with `title`, `link`, `snippet`, sometimes a `date`.

    The current format (with `search_metadata`) and the 2018 one (`serp_api_data`) share
    `organic_results`. An `{"error": ...}` body is an error whatever the HTTP status.
    """

    name = "serpapi"
    markup = False
    index = "google"
    base_url = "https://serpapi.com"
    needs_key = True
    supports_time_range = True
    supports_language = True
    default_timeout = 8.0
    categories = frozenset({"general", "news"})

    max_num: ClassVar[int] = 100

    def request(self, query: Query, key: str | None) -> HttpRequest:
        """Parameters: `engine=google`, `q`, `num`, `start`, `tbs`, `hl`/`gl`, and `api_key`."""
        if query.category == "news":
            return self._news_request(query, key)
        num = min(query.max_results, self.max_num)
        params: dict[str, Any] = {"engine": "google", "q": query.text, "num": num}
        if query.page > 1:
            params["start"] = (query.page - 1) * num
        if query.time_range:
            params["tbs"] = QDR[query.time_range]
        params.update(_languages(query.language))
        params["api_key"] = key or ""
        return HttpRequest("GET", "/search.json", params=params, secrets=(key,) if key else ())

    def _news_request(self, query: Query, key: str | None) -> HttpRequest:
        """`engine=google_news`, `q` (with `when:` for a time range, as Google News reads it),
        `hl`/`gl`, and `api_key`."""
        text = query.text
        if query.time_range:
            text = f"{text} when:{GOOGLE_WHEN[query.time_range]}"
        params: dict[str, Any] = {"engine": "google_news", "q": text}
        params.update(_languages(query.language))
        params["api_key"] = key or ""
        return HttpRequest("GET", "/search.json", params=params, secrets=(key,) if key else ())

    def parse(self, response: HttpResponse, query: Query) -> list[Hit]:
        """`organic_results[]` -> hits; `{"error": ...}` -> a typed error (credit: rate-limited)."""
        message = error_message(response, "error")
        if message and _NO_RESULTS in message:
            return []
        if message:
            raise api_error(message, response)
        self.check_status(response)
        data = json_object(response, "SerpApi")
        if query.category == "news":
            items = object_list(data.get("news_results", []), "SerpApi", "news_results")
            return ranked_hits(items, self.name, partial(_news, now=self.now()))
        organic = data.get("organic_results", [])
        items = object_list(organic, "SerpApi", "organic_results")
        return ranked_hits(items, self.name, organic_hit)


def _languages(language: str | None) -> dict[str, str]:
    """`hl` and `gl` as SerpApi lists them, in lower case (`zh-cn`): it refuses a code it does
    not list ("Unsupported ... interface language")."""
    return {name: value.lower() for name, value in language_params(language).items()}


def _news(item: dict[str, Any], rank: int, engine: str, now: datetime) -> Hit | None:
    """A `news_results[]` entry: an article, or a story whose `highlight` is its lead article
    and whose `stories` are the same story elsewhere (the lead's `grouped`)."""
    listed = item.get("stories")
    stories = [s for s in listed if isinstance(s, dict)] if isinstance(listed, list) else []
    lead = as_dict(item.get("highlight")) or item
    if not lead.get("link") and stories:
        lead = stories[0]
    hit = _article(lead, rank, engine, now)
    if hit is not None:
        others = (_article(story, rank, engine, now) for story in stories if story is not lead)
        hit.grouped = tuple(o for o in others if o is not None and o.url != hit.url)
    return hit


def _article(item: dict[str, Any], rank: int, engine: str, now: datetime) -> Hit | None:
    return news_article_hit(item, rank, engine, now, as_dict(item.get("source")).get("name"))
