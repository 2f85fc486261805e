"""Wikipedia through the MediaWiki action API: `GET /w/api.php?action=query&list=search`."""

from __future__ import annotations

from functools import partial
from typing import Any, ClassVar
from urllib.parse import quote, urlsplit

from websearch_mcp.engines.base import Engine
from websearch_mcp.engines.common import json_object, ranked_hits, result_list
from websearch_mcp.errors import EngineError, EngineRateLimited
from websearch_mcp.models import Hit, HttpRequest, HttpResponse, Query

# Characters MediaWiki leaves unescaped in article URLs (wfUrlencode), so ours match others'.
_TITLE_SAFE = ";@$!*(),/~:"


class Wikipedia(Engine):
    """English Wikipedia full-text search; other wikis through `base_url`.

    `timestamp` is the article's last edit, not when it was written, so it is not reported as
    `published`: a freshness boost would otherwise rank any recently touched article as news.
    """

    name = "wikipedia"
    index = "wikipedia"
    base_url = "https://en.wikipedia.org"
    supports_language = False  # the language is the wiki: set `base_url`
    default_timeout = 4.0

    max_limit: ClassVar[int] = 50  # `srlimit` ceiling for anonymous clients

    def request(self, query: Query, key: str | None) -> HttpRequest:
        """`list=search` with `srlimit` results from `sroffset` for the page asked."""
        limit = min(query.max_results, self.max_limit)
        params: dict[str, str | int] = {
            "action": "query",
            "list": "search",
            "srsearch": query.text,
            "format": "json",
            "srlimit": limit,
            "utf8": 1,
        }
        if query.page > 1:
            params["sroffset"] = (query.page - 1) * limit
        return HttpRequest("GET", "/w/api.php", params=params)

    def parse(self, response: HttpResponse, query: Query) -> list[Hit]:
        """`query.search[]` -> hits; the URL is the wiki's `/wiki/Title_with_underscores`."""
        self.check_status(response)
        data = json_object(response, "Wikipedia")
        error = data.get("error")
        if isinstance(error, dict):
            code = str(error.get("code") or "unknown")[:60]
            if code == "ratelimited":
                raise EngineRateLimited("MediaWiki API error: ratelimited")
            raise EngineError(f"MediaWiki API error: {code}")
        items = result_list(data.get("query"), "search", "Wikipedia")
        hit = partial(_hit, origin=_article_origin(response.url))
        return ranked_hits(items, self.name, hit)


def _hit(item: dict[str, Any], rank: int, engine: str, origin: str) -> Hit | None:
    title = item.get("title")
    if not isinstance(title, str) or not title.strip():
        return None
    return Hit(
        title=title,
        url=article_url(title, origin),
        snippet=item.get("snippet") or "",
        rank=rank,
        engine=engine,
    )


def article_url(title: str, origin: str = Wikipedia.base_url) -> str:
    """The article URL for a page title, as Wikipedia itself writes it."""
    return f"{origin}/wiki/{quote(title.strip().replace(' ', '_'), safe=_TITLE_SAFE)}"


def _article_origin(response_url: str) -> str:
    """The answering wiki's origin when it is a Wikipedia (`de.wikipedia.org`), else English.

    A test server or proxy in front of the API should not leak into article URLs.
    """
    parts = urlsplit(response_url)
    host = (parts.hostname or "").lower()
    if host == "wikipedia.org" or host.endswith(".wikipedia.org"):
        return f"https://{host}"
    return Wikipedia.base_url
