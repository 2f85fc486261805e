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

# DuckDuckGo's regions (`kl`), as its parameter help lists them: country-language, with a few
# codes of its own (`uk-en`, `xa-ar` for Arabia, `xl-es` for Latin America, `ct-ca` for Catalan).
_KNOWN_REGIONS = frozenset({
    "xa-ar", "xa-en", "ar-es", "au-en", "at-de", "be-fr", "be-nl", "br-pt", "bg-bg", "ca-en",
    "ca-fr", "ct-ca", "cl-es", "cn-zh", "co-es", "hr-hr", "cz-cs", "dk-da", "ee-et", "fi-fi",
    "fr-fr", "de-de", "gr-el", "hk-tzh", "hu-hu", "in-en", "id-id", "id-en", "ie-en", "il-he",
    "it-it", "jp-jp", "kr-kr", "lv-lv", "lt-lt", "xl-es", "my-ms", "my-en", "mx-es", "nl-nl",
    "nz-en", "no-no", "pe-es", "ph-en", "ph-tl", "pl-pl", "pt-pt", "ro-ro", "ru-ru", "sg-en",
    "sk-sk", "sl-sl", "za-en", "es-es", "se-sv", "ch-de", "ch-fr", "ch-it", "tw-tzh", "th-th",
    "tr-tr", "ua-uk", "uk-en", "us-en", "ue-es", "ve-es", "vn-vi",
})  # fmt: skip
# The region of a language and region (or script) that is not `<country>-<language>`.
_TAG_REGIONS = {
    "en-gb": "uk-en",
    "es-us": "ue-es",
    "es-419": "xl-es",
    "zh-tw": "tw-tzh",
    "zh-hk": "hk-tzh",
    "zh-hant": "tw-tzh",
}
# A language's usual region where it is not `<language>-<language>`.
_LANGUAGE_REGIONS = {
    "en": "us-en",
    "zh": "cn-zh",
    "ja": "jp-jp",
    "ko": "kr-kr",
    "ar": "xa-ar",
    "sv": "se-sv",
    "da": "dk-da",
    "cs": "cz-cs",
    "el": "gr-el",
    "he": "il-he",
    "uk": "ua-uk",
    "vi": "vn-vi",
    "et": "ee-et",
    "nb": "no-no",
    "nn": "no-no",
    "ca": "ct-ca",
    "ms": "my-ms",
    "tl": "ph-tl",
}

# DuckDuckGo's search pages, without the trailing slash: `/?q=`, `/html/?q=`, `/lite/?q=`.
_SEARCH_PATHS = frozenset({"", "/html", "/lite"})

# Visible text of DuckDuckGo's block pages (the anomaly challenge, the "error-lite" notice).
_BLOCK_MARKERS = (
    "anomaly",
    "unusual traffic",
    "captcha",
    "bots use duckduckgo",
    "error-lite@duckduckgo.com",
)


def region(language: str) -> str | None:
    """DuckDuckGo's `kl` for a language tag (`de` -> `de-de`, `pt-BR` -> `br-pt`, `zh-Hant-TW`
    -> `tw-tzh`); None for a language DuckDuckGo has no region for."""
    lang, *subtags = language.strip().lower().replace("_", "-").split("-")
    # The region is a two-letter country or a UN M.49 number (`419`); a script (`hant`) is not.
    area = next((s for s in subtags if (len(s) == 2 and s.isalpha()) or s.isdigit()), None)
    script = next((s for s in subtags if len(s) == 4 and s.isalpha()), None)
    for subtag in (area, script):
        if subtag and (found := _TAG_REGIONS.get(f"{lang}-{subtag}")):
            return found
    if area and f"{area}-{lang}" in _KNOWN_REGIONS:
        return f"{area}-{lang}"
    usual = _LANGUAGE_REGIONS.get(lang, f"{lang}-{lang}")
    return usual if usual in _KNOWN_REGIONS else None


def result_url(href: str | None) -> str | None:
    """The target of a result link: `//duckduckgo.com/l/?uddg=<target>` decoded, or direct."""
    url = http_url(href)
    if not url:
        return None
    host, path, query = link_parts(url)
    if host == "duckduckgo.com" or host.endswith(".duckduckgo.com"):
        if path.startswith("/l/"):
            return http_url(query_value(query, "uddg"))
        if path.startswith("/y.js") or path.rstrip("/") in _SEARCH_PATHS:
            return None  # ads (`/y.js?ad_domain=...`) and searches (`/?q=`, `/html/?q=`)
        # Any other of its pages linked directly (newer pages do) is a result: its help pages.
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
        if query.language and (kl := region(query.language)):
            data["kl"] = kl
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
