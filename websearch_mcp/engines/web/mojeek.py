"""Mojeek, an independent crawler-based engine, scraped: GET /search?q=.. (HTML)."""

from __future__ import annotations

import time
from datetime import UTC, datetime, timedelta
from typing import Any, ClassVar

from selectolax.lexbor import LexborHTMLParser

from websearch_mcp.engines.base import Engine, clean_text
from websearch_mcp.errors import EngineBlocked, EngineParseError
from websearch_mcp.models import Hit, HttpRequest, HttpResponse, Query

_DAYS = {"day": 1, "week": 7, "month": 31, "year": 366}
_BLOCK_MARKERS = ("automated queries", "/captcha")
_NO_RESULTS = "No pages found"


class Mojeek(Engine):
    """`ul.results-standard > li` items: `a.ob` (URL), `h2 a` (title), `p.s` (snippet)."""

    name = "mojeek"
    base_url = "https://www.mojeek.com"
    supports_time_range = True
    supports_language = True
    #: Seconds since the epoch; `since` is an absolute date. Replaceable in tests.
    clock: ClassVar = staticmethod(time.time)

    def request(self, query: Query, key: str | None) -> HttpRequest:
        params: dict[str, Any] = {"q": query.text}
        # Mojeek pages by 10; sending `s` for the first page trips its rate limit.
        if query.page > 1:
            params["s"] = 10 * (query.page - 1)
        if query.time_range:
            now = datetime.fromtimestamp(self.clock(), UTC)
            params["since"] = (now - timedelta(days=_DAYS[query.time_range])).strftime("%Y%m%d")
        if query.language:
            params["lb"] = query.language.split("-")[0].lower()  # language bias
        return HttpRequest("GET", "/search", params=params)

    def parse(self, response: HttpResponse, query: Query) -> list[Hit]:
        text = response.text
        if response.status == 403 or any(marker in text[:5000] for marker in _BLOCK_MARKERS):
            raise EngineBlocked("Mojeek refused automated queries")
        self.check_status(response)
        tree = LexborHTMLParser(text)
        hits: list[Hit] = []
        for item in tree.css("ul.results-standard > li"):
            link = item.css_first("h2 a") or item.css_first("a.ob")
            if link is None:
                continue
            url = (item.css_first("a.ob") or link).attributes.get("href") or ""
            if not url.startswith(("http://", "https://")):
                continue
            snippet = item.css_first("p.s")
            hits.append(
                Hit(
                    title=clean_text(link.text(), 300) or url,
                    url=url,
                    snippet=clean_text(snippet.text()) if snippet is not None else "",
                    rank=len(hits) + 1,
                    engine=self.name,
                )
            )
        if not hits and tree.css_first("ul.results-standard") is None and _NO_RESULTS not in text:
            raise EngineParseError("unrecognised Mojeek page (no result list)")
        return hits
