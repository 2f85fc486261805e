"""DuckDuckGo's HTML endpoint (no JavaScript): `POST /html/` with form fields, HTML back."""

from __future__ import annotations

from selectolax.lexbor import LexborHTMLParser, LexborNode

from websearch_mcp.engines.base import Engine
from websearch_mcp.engines.common import (
    ResultBlocks,
    http_url,
    link_parts,
    query_value,
    ranked_hits,
    web_hit,
)
from websearch_mcp.errors import EngineBlocked, EngineCaptcha, EngineParseError
from websearch_mcp.models import Hit, HttpRequest, HttpResponse, Query

_TIME_RANGES = {"day": "d", "week": "w", "month": "m", "year": "y"}

# DuckDuckGo regions (`kl`) are country-language; a bare language gets its usual country. Japan
# and Korea are `jp-jp` and `kr-kr` whatever the tag says (`ja-JP` would make `jp-ja`).
_REGIONS = {
    "en": "us-en",
    "zh": "cn-zh",
    "ja": "jp-jp",
    "ja-jp": "jp-jp",
    "ko": "kr-kr",
    "ko-kr": "kr-kr",
    "en-gb": "uk-en",
    "zh-hans": "cn-zh",
    "zh-hant": "tw-tzh",
    "zh-tw": "tw-tzh",
    "zh-hk": "hk-tzh",
    "es-419": "xl-es",
    "ar": "xa-ar",
    "sv": "se-sv",
    "da": "dk-da",
    "cs": "cz-cs",
    "el": "gr-el",
    "he": "il-he",
    "uk": "ua-uk",
    "vi": "vn-vi",
}

# Visible text of DuckDuckGo's block pages (the anomaly challenge, the "error-lite" notice).
_BLOCK_MARKERS = (
    "anomaly",
    "unusual traffic",
    "captcha",
    "bots use duckduckgo",
    "error-lite@duckduckgo.com",
)


def region(language: str) -> str:
    """DuckDuckGo's `kl` for a language tag: `de` -> `de-de`, `pt-BR` -> `br-pt`, `zh-Hant-TW`
    -> `tw-tzh`."""
    tag = language.strip().lower().replace("_", "-")
    if tag in _REGIONS:
        return _REGIONS[tag]
    lang, *subtags = tag.split("-")
    # Only a two-letter subtag names a country: not a script (`zh-Hant-TW`).
    country = next((p for p in subtags if len(p) == 2 and p.isalpha()), None)
    if country:
        return _REGIONS.get(f"{lang}-{country}", f"{'uk' if country == 'gb' else country}-{lang}")
    return _REGIONS.get(lang, f"{lang}-{lang}")


def result_url(href: str | None) -> str | None:
    """The target of a result link: `//duckduckgo.com/l/?uddg=<target>` decoded, or direct."""
    url = http_url(href)
    if not url:
        return None
    host, path, query = link_parts(url)
    if host.endswith("duckduckgo.com"):
        if path.startswith("/l/"):
            return http_url(query_value(query, "uddg"))
        return None  # ads (`/y.js?ad_domain=...`) and DuckDuckGo's own pages
    if query_value(query, "ad_domain") is not None:
        return None
    return url


class DuckDuckGo(Engine):
    """DuckDuckGo HTML results. Keyless; blocks (202 pages, the anomaly CAPTCHA) are errors."""

    name = "duckduckgo"
    index = "bing"
    base_url = "https://html.duckduckgo.com"
    supports_time_range = True
    supports_language = True
    scraped = True
    needs_proxy = True  # often blocked without one

    def request(self, query: Query, key: str | None) -> HttpRequest:
        """The form a browser posts: `q`, `b` (first page), `df` time range, `kl` region."""
        data: dict[str, str] = {"q": query.text, "b": ""}
        if query.time_range:
            data["df"] = _TIME_RANGES[query.time_range]
        if query.language:
            data["kl"] = region(query.language)
        return HttpRequest(
            "POST",
            "/html/",
            data=data,
            headers={"Accept": "text/html", "Referer": f"{self.base_url}/"},
        )

    def parse(self, response: HttpResponse, query: Query) -> list[Hit]:
        """`div.result` blocks -> hits, ads skipped, redirect links decoded."""
        self.check_status(response)
        text = response.text
        if not text.strip():
            if response.status == 202:
                raise EngineBlocked("HTTP 202 with an empty page (DuckDuckGo throttling)")
            raise EngineParseError("DuckDuckGo answered with an empty body")
        tree = LexborHTMLParser(text)
        if tree.css_first("form#challenge-form, .anomaly-modal__title"):
            raise EngineCaptcha("CAPTCHA page (DuckDuckGo anomaly challenge)")
        blocks = ResultBlocks(tree, "div.result")
        parts = zip(
            blocks.nodes, blocks.first("a.result__a"), blocks.first(".result__snippet"), strict=True
        )
        hits = ranked_hits(parts, self.name, _hit)
        if hits:
            return hits
        if response.status == 202:
            raise EngineBlocked("HTTP 202 without results (DuckDuckGo throttling)")
        if tree.css_first("div.no-results"):
            return []
        # Visible text only: the query echoed in the search box must not look like a block.
        visible = (tree.body.text() if tree.body else text).lower()
        if any(marker in visible for marker in _BLOCK_MARKERS):
            raise EngineBlocked("block page (DuckDuckGo unusual traffic notice)")
        if tree.css_first("#links, div.results, div.serp__results"):
            return []
        raise EngineParseError("DuckDuckGo answered with a page that is not a results page")


def _hit(
    parts: tuple[LexborNode, LexborNode | None, LexborNode | None], rank: int, engine: str
) -> Hit | None:
    node, link, snippet = parts  # the result block, its title link and its snippet
    if "result--ad" in (node.attributes.get("class") or "") or link is None:
        return None
    url = result_url(link.attributes.get("href"))
    snippet_text = (snippet.inner_html or "") if snippet else ""
    return web_hit(url, link.inner_html, snippet_text, rank, engine)
