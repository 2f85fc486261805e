"""Serper (Google results as JSON): `POST /search`, the key in `X-API-KEY`."""

from __future__ import annotations

from datetime import datetime
from functools import partial
from typing import Any, ClassVar

from websearch_mcp.engines.base import Engine
from websearch_mcp.engines.common import (
    check_error_body,
    json_object,
    keyed_request,
    object_list,
    ranked_hits,
)
from websearch_mcp.engines.web._google import (
    QDR,
    language_params,
    news_article_hit,
    organic_hit,
)
from websearch_mcp.models import Hit, HttpRequest, HttpResponse, Query


class Serper(Engine):
    """Serper: `organic[]` with `title`, `link`, `snippet` and sometimes a `date`. No score."""

    name = "serper"
    markup = False
    index = "google"
    base_url = "https://google.serper.dev"
    needs_key = True
    supports_time_range = True
    supports_language = True
    categories = frozenset({"general", "news"})

    max_num: ClassVar[int] = 100

    def request(self, query: Query, key: str | None) -> HttpRequest:
        """Body: `q`, `num`, `page`, `tbs` (qdr:d/w/m/y), `hl` and `gl` from the language tag;
        sent to `/news` for a news search."""
        body: dict[str, Any] = {"q": query.text, "num": min(query.max_results, self.max_num)}
        if query.page > 1:
            body["page"] = query.page
        if query.time_range:
            body["tbs"] = QDR[query.time_range]
        body.update(language_params(query.language))
        path = "/news" if query.category == "news" else "/search"
        return keyed_request("POST", path, key, key_header="X-API-KEY", body=body)

    def parse(self, response: HttpResponse, query: Query) -> list[Hit]:
        """`organic[]` -> hits; a refusal's `message` ("Not enough credits") names the cause."""
        check_error_body(response, "message")
        self.check_status(response)
        data = json_object(response, "Serper")
        if query.category == "news":
            items = object_list(data.get("news", []), "Serper", "news")
            return ranked_hits(items, self.name, partial(_news, now=self.now()))
        organic = data.get("organic", [])
        return ranked_hits(object_list(organic, "Serper", "organic"), self.name, organic_hit)


def _news(item: dict[str, Any], rank: int, engine: str, now: datetime) -> Hit | None:
    """`news[]`: `title`, `link`, `snippet`, `source` and a `date` ("5 mins ago", "1 day ago")."""
    return news_article_hit(item, rank, engine, now, item.get("source"))
