"""Exa search API: `POST /search` with a JSON body, the key in `x-api-key`."""

from __future__ import annotations

from datetime import timedelta
from typing import Any, ClassVar

from websearch_mcp.dates import iso_date
from websearch_mcp.engines.base import Engine
from websearch_mcp.engines.common import (
    check_error_body,
    http_url,
    json_object,
    keyed_request,
    ranked_hits,
    result_list,
    strip_markdown,
    web_hit,
)
from websearch_mcp.models import Hit, HttpRequest, HttpResponse, Query

_RANGE_DAYS = {"day": 1, "week": 7, "month": 30, "year": 365}


class Exa(Engine):
    """Exa: neural/keyword search; snippets from `highlights` (or `text`), dates when known.

    `time_range` becomes `startPublishedDate`, computed from `today` (injectable for tests).
    """

    name = "exa"
    index = "exa"
    base_url = "https://api.exa.ai"
    needs_key = True
    semantic = True
    returns_score = False  # current responses carry no score
    supports_time_range = True
    default_timeout = 8.0

    max_results: ClassVar[int] = 100

    def request(self, query: Query, key: str | None) -> HttpRequest:
        """The search body: `numResults`, highlights as contents, an optional start date."""
        body: dict[str, Any] = {
            "query": query.text,
            "type": "auto",
            "numResults": min(query.max_results, self.max_results),
            "contents": {"highlights": True},
        }
        if query.time_range:
            start = self.today() - timedelta(days=_RANGE_DAYS[query.time_range])
            body["startPublishedDate"] = f"{start.isoformat()}T00:00:00.000Z"
        return keyed_request("POST", "/search", key, key_header="x-api-key", body=body)

    def parse(self, response: HttpResponse, query: Query) -> list[Hit]:
        """`results[]` -> hits; `publishedDate` (ISO) becomes `published`; an error body
        (`{"requestId", "error", "tag"}`) -> a typed error with its text."""
        check_error_body(response, "error")
        self.check_status(response)
        items = result_list(json_object(response, "Exa"), "results", "Exa")
        return ranked_hits(items, self.name, _hit)


def _hit(item: dict[str, Any], rank: int, engine: str) -> Hit | None:
    url = http_url(item.get("url")) or http_url(item.get("id"))
    snippet = strip_markdown(_snippet_source(item))
    published = iso_date(item.get("publishedDate"))
    return web_hit(url, item.get("title"), snippet, rank, engine, published=published)


def _snippet_source(item: dict[str, Any]) -> str:
    """Highlights joined (excerpts of different parts of the page: with an ellipsis between,
    not read as one passage), else the summary, else the page text."""
    highlights = item.get("highlights")
    if isinstance(highlights, list):
        joined = " … ".join(h.strip() for h in highlights if isinstance(h, str) and h.strip())
        if joined.strip():
            return joined
    for key in ("summary", "text"):
        value = item.get(key)
        if isinstance(value, str) and value.strip():
            return value
    return ""
