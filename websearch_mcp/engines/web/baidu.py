"""Baidu's HTML results page: `GET /s?wd=..&pn=..`.

Baidu answers automated traffic with a redirect to its security check on wappass.baidu.com
("百度安全验证", "Baidu security verification"); the redirect and the page are both blocks.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime, time, timedelta
from typing import Any, ClassVar

from selectolax.lexbor import LexborHTMLParser, LexborNode

from websearch_mcp.dates import split_cjk_date
from websearch_mcp.engines.base import Engine
from websearch_mcp.engines.common import first_text, http_url, outermost, ranked_hits, web_hit
from websearch_mcp.errors import EngineCaptcha, EngineParseError
from websearch_mcp.models import Hit, HttpRequest, HttpResponse, Query

_RANGE_DAYS = {"day": 1, "week": 7, "month": 31, "year": 366}
_CHECK_TITLE = "百度安全验证"
_CHECK_SCRIPTS = ("wappass.baidu.com/static/captcha", "wappass.baidu.com/static/machine")
_RESULTS = "div.result, div.result-op, div.c-container"
_SNIPPETS = (".c-abstract", "[class*='content-right']", "[class*='c-span-last']")
_DATES = ("span.c-color-gray2", "[class*='newTimeFactor']")


def _redirected_to_check(response: HttpResponse) -> bool:
    location = response.headers.get("location", "")
    if 300 <= response.status < 400 and "wappass.baidu.com" in location:
        return True
    return "wappass.baidu.com" in response.url


def _is_check_page(tree: LexborHTMLParser, text: str) -> bool:
    title = tree.css_first("title")
    if title is not None and title.text().strip() == _CHECK_TITLE:
        return True
    return any(marker in text for marker in _CHECK_SCRIPTS)


def _is_ad(node: LexborNode) -> bool:
    classes = (node.attributes.get("class") or "").lower().split()
    return "data-tuiguang" in node.attributes or any(c.startswith("ec_") for c in classes)


def result_url(node: LexborNode, link: LexborNode) -> str | None:
    """The target: `mu` holds it directly; `data-tools` JSON and the title link usually hold a
    www.baidu.com/link?url=.. redirect, which still leads there."""
    if url := http_url(node.attributes.get("mu")):
        return url
    try:
        tools: Any = json.loads(node.attributes.get("data-tools") or "null")
    except (ValueError, RecursionError):  # not JSON, or nested deeper than Python reads
        tools = None
    if isinstance(tools, dict) and (url := http_url(tools.get("url"))):
        return url
    return http_url(link.attributes.get("href"))


def _hit(node: LexborNode, rank: int, engine: str) -> Hit | None:
    link = node.css_first("h3 a")
    if link is None or _is_ad(node):
        return None
    url = result_url(node, link)
    _, published = split_cjk_date(first_text(node, _DATES))
    snippet, snippet_date = split_cjk_date(first_text(node, _SNIPPETS))
    return web_hit(url, link.text(), snippet, rank, engine, published=published or snippet_date)


class Baidu(Engine):
    """Baidu web results: `div.result` / `div.c-container` blocks with an `h3 a` title.

    `time_range` becomes Baidu's `gpc` window of Unix times, computed from `today`.
    """

    name = "baidu"
    markup = False
    index = "baidu"
    base_url = "https://www.baidu.com"
    supports_time_range = True
    scraped = True

    max_rows: ClassVar[int] = 50

    def request(self, query: Query, key: str | None) -> HttpRequest:
        """Parameters: `wd`, `rn` (rows), `pn` (offset), `gpc` (time window), `ie`."""
        rows = min(query.max_results, self.max_rows)
        params: dict[str, Any] = {"wd": query.text, "rn": rows, "ie": "utf-8"}
        if query.page > 1:
            params["pn"] = (query.page - 1) * rows
        if query.time_range:
            end = datetime.combine(self.today() + timedelta(days=1), time(), UTC)
            start = end - timedelta(days=_RANGE_DAYS[query.time_range] + 1)
            params["gpc"] = f"stf={int(start.timestamp())},{int(end.timestamp())}|stftype=1"
        return HttpRequest("GET", "/s", params=params, headers={"Accept": "text/html"})

    def parse(self, response: HttpResponse, query: Query) -> list[Hit]:
        """Result blocks -> hits; the security-verification page raises `EngineCaptcha`."""
        if _redirected_to_check(response):
            raise EngineCaptcha("redirected to Baidu's security verification (CAPTCHA)")
        self.check_status(response)
        text = response.text
        tree = LexborHTMLParser(text)
        if _is_check_page(tree, text):
            raise EngineCaptcha("Baidu security verification (CAPTCHA) page")
        hits = ranked_hits(outermost(tree.css(_RESULTS)), self.name, _hit)
        if not hits and tree.css_first("#content_left, .nors") is None:
            # Neither results nor Baidu's "no results" notice: not a page this parser knows.
            raise EngineParseError("Baidu answered with a page that is not a results page")
        return hits
