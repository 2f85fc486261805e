"""Tavily Search API: `POST /search` with a JSON body, the key as a Bearer token."""

from __future__ import annotations

from typing import Any, ClassVar

from websearch_mcp.dates import iso_date
from websearch_mcp.engines.base import Engine
from websearch_mcp.engines.common import (
    api_error,
    as_dict,
    as_float,
    as_text,
    fitted,
    http_url,
    json_body,
    json_object,
    keyed_request,
    ranked_hits,
    result_list,
    strip_markdown,
    web_hit,
)
from websearch_mcp.errors import EngineRateLimited
from websearch_mcp.models import Hit, HttpRequest, HttpResponse, Query

#: Tavily's own statuses for an exhausted plan (432) or pay-as-you-go limit (433).
_QUOTA_STATUSES = (432, 433)


class Tavily(Engine):
    """Tavily: relevance scores in [0, 1]; `published_date` only for news topics."""

    name = "tavily"
    markup = False
    base_url = "https://api.tavily.com"
    needs_key = True
    returns_score = True
    supports_time_range = True
    default_timeout = 6.0

    max_results: ClassVar[int] = 20

    def request(self, query: Query, key: str | None) -> HttpRequest:
        """The search body; Tavily takes `time_range` as day/week/month/year directly."""
        body: dict[str, Any] = {
            "query": fitted(query.text, 400),  # "Max query length is 400 characters"
            "max_results": min(query.max_results, self.max_results),
            "search_depth": "basic",
            "topic": "general",
            "include_answer": False,
            "include_raw_content": False,
        }
        if query.time_range:
            body["time_range"] = query.time_range
        return keyed_request("POST", "/search", key, body=body)

    def parse(self, response: HttpResponse, query: Query) -> list[Hit]:
        """`results[]` -> hits with Tavily's score; `content` is the snippet."""
        if response.status in _QUOTA_STATUSES:
            raise EngineRateLimited(f"HTTP {response.status}: Tavily usage limit reached")
        # A refused key and a rate limit keep the service's own words for them.
        refused = response.status >= 300 and response.status not in (401, 403, 429)
        if refused and (reason := _refusal(response)):
            raise api_error(reason, response)
        self.check_status(response)
        items = result_list(json_object(response, "Tavily"), "results", "Tavily")
        return ranked_hits(items, self.name, _hit)


def _hit(item: dict[str, Any], rank: int, engine: str) -> Hit | None:
    url = http_url(item.get("url"))
    return web_hit(
        url,
        item.get("title"),
        strip_markdown(as_text(item.get("content"))),
        rank,
        engine,
        score=as_float(item.get("score")),
        published=iso_date(item.get("published_date")),
    )


def _refusal(response: HttpResponse) -> str | None:
    """Tavily's own reason for an error answer, `{"detail": {"error": "..."}}` (a bare status
    says less: "Query is too long", "Invalid API key")."""
    data = json_body(response)
    detail = data.get("detail") if isinstance(data, dict) else None
    reason = as_dict(detail).get("error") if isinstance(detail, dict) else detail
    return reason if isinstance(reason, str) and reason.strip() else None
