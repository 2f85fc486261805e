"""Google web search, scraped: GET /search?q=.. (HTML). Off by default: Google blocks automated
traffic quickly (consent interstitial, "unusual traffic" CAPTCHA on /sorry/), and both are
reported as blocked so the breaker backs off."""

from __future__ import annotations

from typing import Any
from urllib.parse import parse_qs, urlsplit

from selectolax.lexbor import LexborHTMLParser, LexborNode

from websearch_mcp.engines.base import Engine, clean_text
from websearch_mcp.engines.common import GOOGLE_QDR, google_language, outermost, split_date_prefix
from websearch_mcp.errors import EngineBlocked, EngineParseError
from websearch_mcp.models import Hit, HttpRequest, HttpResponse, Query

_SNIPPETS = ("div.VwiC3b", "div[data-sncf]", "span.aCOpRe", "div.IsZvec", "span.st")
_CAPTCHA_MARKERS = ("unusual traffic from your computer", 'id="captcha-form"', "/sorry/index")
_NO_RESULTS = "did not match any documents"


def _blocked_reason(response: HttpResponse, text: str) -> str | None:
    target = response.url
    if 300 <= response.status < 400:
        target = response.headers.get("location", "")
    if "consent.google." in target:
        return "Google consent page"
    if "/sorry/" in target or any(marker in text for marker in _CAPTCHA_MARKERS):
        return "Google 'unusual traffic' CAPTCHA"
    if 'action="https://consent.google.' in text:
        return "Google consent page"
    return None


def target_url(href: str) -> str | None:
    """The destination of a result link: `/url?q=<target>` redirects decoded, Google's own
    pages (`/search?..`, relative links) dropped."""
    if href.startswith("/url?") or href.startswith("https://www.google.com/url?"):
        params = parse_qs(urlsplit(href).query)
        href = (params.get("q") or params.get("url") or [""])[0]
    if not href.startswith(("http://", "https://")):
        return None
    host = urlsplit(href).hostname or ""
    if host.startswith("www.google.") and urlsplit(href).path.startswith("/search"):
        return None
    return href


def _title_link(block: LexborNode) -> tuple[LexborNode, LexborNode] | None:
    for link in block.css("a[href]"):
        heading = link.css_first("h3")
        if heading is not None:
            return link, heading
    return None


def _snippet(block: LexborNode) -> str:
    for selector in _SNIPPETS:
        found = block.css_first(selector)
        if found is not None and (text := clean_text(found.text())):
            return text
    return ""


class Google(Engine):
    """Organic results are `div.g` blocks whose title is an `a` holding an `h3`."""

    name = "google"
    base_url = "https://www.google.com"
    supports_time_range = True
    supports_language = True
    default_enabled = False

    def request(self, query: Query, key: str | None) -> HttpRequest:
        params: dict[str, Any] = {"q": query.text, "ie": "utf8", "oe": "utf8"}
        if query.page > 1:
            params["start"] = (query.page - 1) * 10
        if query.time_range:
            params["tbs"] = GOOGLE_QDR[query.time_range]
        hl, _, lr = google_language(query.language)
        if hl:
            params["hl"] = hl
        if lr:
            params["lr"] = lr
        return HttpRequest("GET", "/search", params=params)

    def parse(self, response: HttpResponse, query: Query) -> list[Hit]:
        text = response.text
        if reason := _blocked_reason(response, text):
            raise EngineBlocked(reason)
        self.check_status(response)
        tree = LexborHTMLParser(text)
        hits: list[Hit] = []
        seen: set[str] = set()
        for block in outermost(tree.css("div.g")):
            found = _title_link(block)
            if found is None:
                continue
            link, heading = found
            url = target_url(link.attributes.get("href") or "")
            if not url or url in seen:
                continue
            seen.add(url)
            published, snippet = split_date_prefix(_snippet(block))
            hits.append(
                Hit(
                    title=clean_text(heading.text(), 300) or url,
                    url=url,
                    snippet=snippet,
                    rank=len(hits) + 1,
                    engine=self.name,
                    published=published,
                )
            )
        if not hits and tree.css_first("#search, #rso, #res") is None and _NO_RESULTS not in text:
            raise EngineParseError("unrecognised Google page (no result list)")
        return hits
