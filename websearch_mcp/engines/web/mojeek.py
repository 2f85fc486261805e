"""Mojeek (independent crawler and index), HTML results page: `GET /search?q=..`."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from selectolax.lexbor import LexborHTMLParser, LexborNode

from websearch_mcp.engines.base import Engine
from websearch_mcp.engines.common import ResultBlocks, http_url, ranked_hits, web_hit
from websearch_mcp.errors import EngineBlocked, EngineParseError
from websearch_mcp.models import Hit, HttpRequest, HttpResponse, Query

_RANGE_DAYS = {"day": 1, "week": 7, "month": 31, "year": 366}
_RESULTS_PER_PAGE = 10
# Mojeek's refusal page: "Sorry your network appears to be sending automated queries".
_BLOCK_TEXT = "automated queries"
_NO_RESULTS = "No pages found"


class Mojeek(Engine):
    """Mojeek: `ul.results-standard > li` with `a.ob` (URL), `h2 a` (title), `p.s` (snippet).

    `time_range` becomes `since=YYYYMMDD`, computed from `today`; the language a `lb` bias.
    """

    name = "mojeek"
    markup = False
    index = "mojeek"
    base_url = "https://www.mojeek.com"
    supports_time_range = True
    supports_language = True
    scraped = True

    def request(self, query: Query, key: str | None) -> HttpRequest:
        """Parameters: `q`, `s` (offset, later pages only), `since`, `lb`."""
        params: dict[str, Any] = {"q": query.text}
        # Sending `s` on the first page trips Mojeek's rate limit.
        if query.page > 1:
            params["s"] = (query.page - 1) * _RESULTS_PER_PAGE
        if query.time_range:
            since = self.today() - timedelta(days=_RANGE_DAYS[query.time_range])
            params["since"] = since.strftime("%Y%m%d")
        if query.language:
            params["lb"] = query.language.replace("_", "-").split("-")[0].lower()
        return HttpRequest("GET", "/search", params=params, headers={"Accept": "text/html"})

    def parse(self, response: HttpResponse, query: Query) -> list[Hit]:
        """Result items -> hits; the "automated queries" refusal raises `EngineBlocked`."""
        if response.status == 403:
            raise EngineBlocked("HTTP 403: Mojeek refused automated queries")
        self.check_status(response)
        text = response.text
        tree = LexborHTMLParser(text)
        blocks = ResultBlocks(tree, "ul.results-standard > li")
        parts = zip(
            blocks.nodes,
            blocks.first("h2 a"),
            blocks.first("a.ob"),
            blocks.first("p.s"),
            strict=True,
        )
        hits = ranked_hits(parts, self.name, _hit)
        if hits or tree.css_first("ul.results-standard") is not None or _NO_RESULTS in text:
            return hits
        if _BLOCK_TEXT in text:
            raise EngineBlocked("Mojeek refused automated queries")
        raise EngineParseError("Mojeek answered with a page that is not a results page")


def _hit(
    parts: tuple[LexborNode, LexborNode | None, LexborNode | None, LexborNode | None],
    rank: int,
    engine: str,
) -> Hit | None:
    item, title, link, snippet = parts  # the result, its heading link, its URL link, its text
    url = http_url((link or title or item).attributes.get("href"))
    snippet_text = snippet.text() if snippet is not None else ""
    return web_hit(url, title.text() if title is not None else None, snippet_text, rank, engine)
