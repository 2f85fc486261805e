"""Google Scholar's HTML results page: `GET /scholar?q=..`. Off by default: Scholar answers
automated traffic with a CAPTCHA very soon, reported as blocked so the breaker backs off."""

from __future__ import annotations

import re
from typing import Any, ClassVar

from selectolax.lexbor import LexborHTMLParser, LexborNode

from websearch_mcp.dates import publication_date
from websearch_mcp.engines.academic._common import names
from websearch_mcp.engines.base import Engine
from websearch_mcp.engines.common import http_url, ranked_hits
from websearch_mcp.engines.text import clean_text
from websearch_mcp.errors import EngineCaptcha, EngineParseError
from websearch_mcp.models import Hit, HttpRequest, HttpResponse, Query

# Markup only the CAPTCHA page has, and texts that mean a block when no result came with them.
_CAPTCHA_MARKUP = ('id="gs_captcha', 'id="captcha-form"', "/sorry/index")
_CAPTCHA_TEXTS = ("unusual traffic from your computer", "not a robot")
_NO_RESULTS = "did not match any articles"
_SEPARATOR_RE = re.compile(r"\s[-–]\s")
_YEAR_RE = re.compile(r"\b(1[5-9]\d\d|20\d\d)\b")
_DOMAIN_RE = re.compile(r"^[\w-]+(?:\.[\w-]+)+$")
_COUNT_RE = re.compile(r"\d[\d,.]*")


def byline(text: str) -> tuple[tuple[str, ...], str | None, str | None]:
    """`(authors, venue, year)` from a `gs_a` line such as
    "A Vaswani, N Shazeer… - Advances in neural …, 2017 - proceedings.neurips.cc"."""
    parts = [part.strip() for part in _SEPARATOR_RE.split(text)]
    authors = names(name.strip(" …") for name in parts[0].split(","))
    source = " - ".join(parts[1:-1]) if len(parts) > 2 else "".join(parts[1:])
    if _DOMAIN_RE.match(source):
        source = ""  # "Author - example.com": only the host, no venue
    year = _YEAR_RE.search(source)
    venue = _YEAR_RE.sub("", source).strip(" ,")
    return authors, venue or None, publication_date(year[1]) if year else None


def _cited_by(record: LexborNode) -> int | None:
    for link in record.css("div.gs_fl a"):
        if "cites=" in (link.attributes.get("href") or ""):
            found = _COUNT_RE.search(link.text())
            return int(re.sub(r"\D", "", found[0])) if found else None
    return None


def _pdf_url(block: LexborNode) -> str | None:
    link = block.css_first("div.gs_or_ggsm a") or block.css_first("div.gs_ggs a")
    return http_url(link.attributes.get("href")) if link is not None else None


def _hit(block: LexborNode, rank: int, engine: str) -> Hit | None:
    record = block.css_first("div.gs_ri")
    link = record.css_first("h3.gs_rt a") if record is not None else None
    url = http_url(link.attributes.get("href")) if link is not None else None
    if record is None or link is None or not url:
        return None  # [CITATION] records have no link
    line = record.css_first("div.gs_a")
    authors, venue, year = byline(clean_text(line.text(), 1000)) if line else ((), None, None)
    snippet = record.css_first("div.gs_rs")
    return Hit(
        title=link.text(),
        url=url,
        snippet=snippet.text() if snippet is not None else "",
        rank=rank,
        engine=engine,
        published=year,
        authors=authors,
        venue=venue,
        citations=_cited_by(record),
        pdf_url=_pdf_url(block),
    )


class GoogleScholar(Engine):
    """Scholar: `div.gs_r` blocks; `h3.gs_rt a` (title, link), `div.gs_a` (authors - venue,
    year - host), `div.gs_rs` (snippet), "Cited by N" in `div.gs_fl`, a PDF in `div.gs_ggs`."""

    name = "google_scholar"
    markup = False
    kind = "academic"
    base_url = "https://scholar.google.com"
    default_enabled = False
    default_timeout = 6.0
    scraped = True

    max_rows: ClassVar[int] = 20

    def request(self, query: Query, key: str | None) -> HttpRequest:
        """Parameters: `q`, `num`, `start`, `as_ylo`/`as_yhi` (year range), `hl=en`."""
        rows = min(query.max_results, self.max_rows)
        params: dict[str, Any] = {"q": query.text, "hl": "en", "as_sdt": "0,5", "num": rows}
        if query.page > 1:
            params["start"] = (query.page - 1) * rows
        if query.year_from is not None:
            params["as_ylo"] = query.year_from
        if query.year_to is not None:
            params["as_yhi"] = query.year_to
        return HttpRequest("GET", "/scholar", params=params, headers={"Accept": "text/html"})

    def parse(self, response: HttpResponse, query: Query) -> list[Hit]:
        """Result blocks -> hits; the CAPTCHA page raises `EngineCaptcha`."""
        text = response.text
        if "/sorry/" in response.url or any(marker in text for marker in _CAPTCHA_MARKUP):
            raise EngineCaptcha("Google Scholar CAPTCHA")
        self.check_status(response)
        tree = LexborHTMLParser(text)
        hits = ranked_hits(tree.css("div.gs_r"), self.name, _hit)
        if hits or _NO_RESULTS in text:
            return hits
        if any(marker in text for marker in _CAPTCHA_TEXTS):
            raise EngineCaptcha("Google Scholar CAPTCHA")
        if tree.css_first("#gs_res_ccl_mid, #gs_res_ccl") is None:
            raise EngineParseError("Google Scholar answered with a page that is not a results page")
        return hits
