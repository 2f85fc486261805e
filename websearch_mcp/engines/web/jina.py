"""Jina search (s.jina.ai): `POST /` with `Accept: application/json`, the key as a Bearer token."""

from __future__ import annotations

from typing import Any, ClassVar

from websearch_mcp.dates import iso_date
from websearch_mcp.engines.base import Engine
from websearch_mcp.engines.common import (
    as_text,
    check_error_body,
    http_url,
    json_object,
    keyed_request,
    object_list,
    ranked_hits,
    web_hit,
)
from websearch_mcp.models import Hit, HttpRequest, HttpResponse, Query


class Jina(Engine):
    """Jina: `data[]` with `title`, `url`, `description` (the snippet), sometimes a date.

    `X-Respond-With: no-content` asks for the results without each page's full text, which the
    service would otherwise fetch (slow, and billed in tokens).
    """

    name = "jina"
    markup = False
    base_url = "https://s.jina.ai"
    needs_key = True
    semantic = True
    supports_language = True
    default_timeout = 10.0

    max_num: ClassVar[int] = 20

    def request(self, query: Query, key: str | None) -> HttpRequest:
        """Body: `q`, `num`, `page`, `hl` (the language's primary subtag)."""
        body: dict[str, Any] = {"q": query.text, "num": min(query.max_results, self.max_num)}
        if query.page > 1:
            body["page"] = query.page
        if query.language:
            body["hl"] = query.language.replace("_", "-").split("-")[0].lower()
        return keyed_request("POST", "/", key, body=body, headers={"X-Respond-With": "no-content"})

    def parse(self, response: HttpResponse, query: Query) -> list[Hit]:
        """`data[]` -> hits."""
        check_error_body(response, "readableMessage", "message")
        self.check_status(response)
        items = object_list(json_object(response, "Jina").get("data") or [], "Jina", "data")
        return ranked_hits(items, self.name, _hit)


def _hit(item: dict[str, Any], rank: int, engine: str) -> Hit | None:
    url = http_url(item.get("url"))
    snippet = as_text(item.get("description")) or as_text(item.get("content"))
    published = iso_date(item.get("publishedTime") or item.get("date"))
    return web_hit(url, item.get("title"), snippet, rank, engine, published=published)
