"""Google's HTML results page: `GET /search?q=..`. Off by default: Google soon answers automated
traffic with its consent interstitial or the "unusual traffic" CAPTCHA on /sorry/, both
reported as blocked so the breaker backs off."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from selectolax.lexbor import LexborHTMLParser, LexborNode

from websearch_mcp.dates import split_date_prefix
from websearch_mcp.engines.base import Engine
from websearch_mcp.engines.common import (
    first_text,
    http_url,
    link_parts,
    outermost,
    query_value,
    ranked_hits,
    web_hit,
)
from websearch_mcp.engines.web._google import QDR, language_params
from websearch_mcp.errors import EngineBlocked, EngineCaptcha, EngineParseError
from websearch_mcp.models import Hit, HttpRequest, HttpResponse, Query

_RESULTS_PER_PAGE = 10
_SNIPPETS = ("div.VwiC3b", "div[data-sncf]", "span.aCOpRe", "div.IsZvec", "span.st")
# Markup only the CAPTCHA page has; then what means a block when no result came with it.
# Elements, not words: the results page repeats the query, which may name "/sorry/index".
_CAPTCHA_ELEMENTS = '#captcha-form, form[action*="/sorry/"]'
_CAPTCHA_TEXT = "unusual traffic from your computer"
CAPTCHA = "Google 'unusual traffic' CAPTCHA"
_CONSENT_FORM = 'action="https://consent.google.'
_NO_RESULTS = "did not match any documents"


def _block(response: HttpResponse, tree: LexborHTMLParser) -> EngineBlocked | None:
    """The consent page or the "unusual traffic" CAPTCHA, by where the answer leads or its
    elements; None for any other answer."""
    target = response.url
    if 300 <= response.status < 400:
        target = response.headers.get("location", "")
    if "consent.google." in target:
        return EngineBlocked("Google consent page")
    if "/sorry/" in target or tree.css_first(_CAPTCHA_ELEMENTS) is not None:
        return EngineCaptcha(CAPTCHA)
    return None


def result_url(href: str | None) -> str | None:
    """The target of a result link: `/url?q=<target>` redirects decoded; links to Google's
    own search pages dropped."""
    if href and href.startswith(("/url?", "https://www.google.com/url?")):
        query = link_parts(href)[2]
        href = query_value(query, "q") or query_value(query, "url") or ""
    url = http_url(href)
    if not url:
        return None
    host, path, _ = link_parts(url)
    if host.startswith("www.google.") and path.startswith("/search"):
        return None
    return url


def _results(tree: LexborHTMLParser) -> Iterator[tuple[LexborNode, LexborNode, str]]:
    """`(block, heading, url)` per `div.g` block whose title is a link holding an `h3`, each
    URL once (Google nests and repeats blocks)."""
    seen: set[str] = set()
    for block in outermost(tree.css("div.g")):
        found = _title_link(block)
        url = result_url(found[0].attributes.get("href")) if found else None
        if found and url and url not in seen:
            seen.add(url)
            yield block, found[1], url


def _title_link(block: LexborNode) -> tuple[LexborNode, LexborNode] | None:
    for link in block.css("a[href]"):
        heading = link.css_first("h3")
        if heading is not None:
            return link, heading
    return None


def _hit(result: tuple[LexborNode, LexborNode, str], rank: int, engine: str) -> Hit | None:
    block, heading, url = result
    snippet, published = split_date_prefix(first_text(block, _SNIPPETS))
    return web_hit(url, heading.text(), snippet, rank, engine, published=published)


class Google(Engine):
    """Google web results: `div.g` blocks whose title is an `a` holding an `h3`."""

    name = "google"
    markup = False
    index = "google"
    base_url = "https://www.google.com"
    supports_time_range = True
    supports_language = True
    default_enabled = False
    scraped = True
    needs_proxy = True  # often blocked without one

    def request(self, query: Query, key: str | None) -> HttpRequest:
        """Parameters: `q`, `start`, `tbs` (qdr:d/w/m/y), `hl` and `lr` from the language."""
        params: dict[str, Any] = {"q": query.text, "ie": "utf8", "oe": "utf8"}
        if query.page > 1:
            params["start"] = (query.page - 1) * _RESULTS_PER_PAGE
        if query.time_range:
            params["tbs"] = QDR[query.time_range]
        params.update(language_params(query.language, restrict=True))
        return HttpRequest("GET", "/search", params=params, headers={"Accept": "text/html"})

    def parse(self, response: HttpResponse, query: Query) -> list[Hit]:
        """`div.g` blocks -> hits; the consent page raises `EngineBlocked`, a CAPTCHA
        `EngineCaptcha`."""
        text = response.text
        tree = LexborHTMLParser(text)
        if (block := _block(response, tree)) is not None:
            raise block
        self.check_status(response)
        hits = ranked_hits(_results(tree), self.name, _hit)
        if hits or _NO_RESULTS in text:
            return hits
        if _CAPTCHA_TEXT in text:
            raise EngineCaptcha(CAPTCHA)
        if _CONSENT_FORM in text:
            # The consent interstitial can also come as a page of its own (HTTP 200).
            raise EngineBlocked("Google consent page")
        if tree.css_first("#search, #rso, #res") is None:
            raise EngineParseError("Google answered with a page that is not a results page")
        return hits
