"""Bing's HTML results page: `GET /search?q=...`."""

from __future__ import annotations

import base64
import binascii
from typing import Any

from selectolax.lexbor import LexborHTMLParser, LexborNode

from websearch_mcp.dates import split_date_prefix
from websearch_mcp.engines.base import Engine
from websearch_mcp.engines.common import (
    ResultBlocks,
    http_url,
    link_parts,
    query_value,
    ranked_hits,
    web_hit,
)
from websearch_mcp.engines.text import collapse_spaces, html_text
from websearch_mcp.errors import EngineCaptcha, EngineParseError
from websearch_mcp.models import Hit, HttpRequest, HttpResponse, Query

_RESULTS_PER_PAGE = 10
_TIME_FILTERS = {"day": "1", "week": "2", "month": "3"}  # "year" is a day range, see request()

# Visible text of Bing's challenge pages.
_BLOCK_MARKERS = ("unusual traffic", "captcha", "verify you are a human", "are you a robot")


def result_url(href: str | None) -> str | None:
    """The target of a result link: a `bing.com/ck/a?...&u=a1<base64url>` redirect decoded."""
    url = http_url(href)
    if not url:
        return None
    host, path, query = link_parts(url)
    if not (host == "bing.com" or host.endswith(".bing.com")) or not path.startswith("/ck/"):
        return url
    encoded = query_value(query, "u") or ""
    if not encoded.startswith("a1"):
        return None
    payload = encoded[2:]
    try:
        target = base64.urlsafe_b64decode(payload + "=" * (-len(payload) % 4)).decode("utf-8")
    except (binascii.Error, ValueError):
        return None
    return http_url(target)


class Bing(Engine):
    """Bing web results from the HTML page; dates come from snippet prefixes."""

    name = "bing"
    markup = False
    index = "bing"
    base_url = "https://www.bing.com"
    supports_time_range = True
    supports_language = True
    scraped = True

    def request(self, query: Query, key: str | None) -> HttpRequest:
        """`q`, `first` for later pages, `filters` for the time range, `setlang`/`cc`."""
        params: dict[str, Any] = {"q": query.text}
        if query.page > 1:
            params["first"] = (query.page - 1) * _RESULTS_PER_PAGE + 1
        if query.time_range:
            params["filters"] = f'ex1:"ez{self._time_filter(query.time_range)}"'
        if query.language:
            lang, *subtags = query.language.replace("_", "-").split("-")
            params["setlang"] = lang.lower()
            # `cc` is a country: not a script (`zh-Hant`) or a numeric region (`es-419`).
            if country := next((s for s in subtags if len(s) == 2 and s.isalpha()), None):
                params["cc"] = country.upper()
        return HttpRequest("GET", "/search", params=params, headers={"Accept": "text/html"})

    def _time_filter(self, time_range: str) -> str:
        if time_range in _TIME_FILTERS:
            return _TIME_FILTERS[time_range]
        # Bing has no "past year" preset: a range of days since the epoch, `5_<from>_<to>`.
        days = self.today().toordinal() - 719163  # date(1970, 1, 1).toordinal()
        return f"5_{days - 365}_{days}"

    def parse(self, response: HttpResponse, query: Query) -> list[Hit]:
        """`li.b_algo` results -> hits; a CAPTCHA page raises `EngineCaptcha`."""
        self.check_status(response)
        text = response.text
        if not text.strip():
            raise EngineParseError("Bing answered with an empty body")
        tree = LexborHTMLParser(text)
        # Bing opens a snippet with its source's icon label ("WEB"), which would lead the text
        # and hide the date after it.
        for label in tree.css("li.b_algo .algoSlug_icon"):
            label.decompose()
        blocks = ResultBlocks(tree, "li.b_algo")
        parts = zip(blocks.first("h2 a"), _snippets_html(blocks), strict=True)
        hits = ranked_hits(parts, self.name, _hit)
        # The no-results notice echoes the query, which may hold a challenge's words.
        if hits or tree.css_first("li.b_no"):
            return hits
        visible = (tree.body.text() if tree.body else text).lower()
        if tree.css_first("#b_captcha, form[action*='challenge']") or any(
            marker in visible for marker in _BLOCK_MARKERS
        ):
            raise EngineCaptcha("CAPTCHA page (Bing unusual traffic check)")
        if tree.css_first("#b_results"):
            return []
        raise EngineParseError("Bing answered with a page that is not a results page")


def _hit(parts: tuple[LexborNode | None, str], rank: int, engine: str) -> Hit | None:
    link, snippet_html = parts
    if link is None:
        return None
    url = result_url(link.attributes.get("href"))
    # The date that opens a snippet is read off its text: the page's markup is read here.
    snippet, published = split_date_prefix(collapse_spaces(html_text(snippet_html)))
    title = html_text(link.inner_html or "")
    return web_hit(url, title, snippet, rank, engine, published=published)


#: Where a result's snippet is, in order: the caption paragraph; for rich cards (no paragraph)
#: the visible tab's first item.
_SNIPPETS = (".b_caption p", "p", ".b_richcard .tab-content li")


def _snippets_html(blocks: ResultBlocks) -> list[str]:
    """Each result's snippet: the first of `_SNIPPETS` whose first element there is not empty."""
    found = [""] * len(blocks.nodes)
    for selector in _SNIPPETS:
        for i, node in enumerate(blocks.first(selector)):
            if not found[i] and node is not None and (html := node.inner_html or "").strip():
                found[i] = html
        if all(found):
            break
    return found
