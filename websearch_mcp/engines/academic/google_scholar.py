"""Google Scholar, scraped: GET /scholar?q=.. (HTML). Off by default: Scholar answers automated
traffic with a CAPTCHA very soon, which is reported as blocked so the breaker backs off."""

from __future__ import annotations

import re
from typing import Any

from selectolax.lexbor import LexborHTMLParser, LexborNode

from websearch_mcp.engines.base import Engine, clean_text
from websearch_mcp.engines.common import as_int, iso_date, unique
from websearch_mcp.errors import EngineBlocked, EngineParseError
from websearch_mcp.models import Hit, HttpRequest, HttpResponse, Query

_CAPTCHA_MARKERS = ("gs_captcha", "unusual traffic from your computer", "/sorry/index", "not a robot")
_NO_RESULTS = "did not match any articles"
_SEPARATOR_RE = re.compile(r"\s[-–]\s")
_YEAR_RE = re.compile(r"\b(1[5-9]\d\d|20\d\d)\b")
_DIGITS_RE = re.compile(r"\d[\d,.]*")
_DOMAIN_RE = re.compile(r"^[\w-]+(\.[\w-]+)+$")


def byline(text: str) -> tuple[tuple[str, ...], str | None, str | None]:
    """`(authors, venue, year)` from a `gs_a` line such as
    "A Vaswani, N Shazeer… - Advances in neural …, 2017 - proceedings.neurips.cc"."""
    parts = [p.strip() for p in _SEPARATOR_RE.split(text)]
    authors = unique(name.strip(" …") for name in parts[0].split(","))
    source = " - ".join(parts[1:-1]) if len(parts) > 2 else "".join(parts[1:])
    if _DOMAIN_RE.match(source):
        source = ""  # "Author - example.com": the host, no venue
    year = _YEAR_RE.search(source)
    venue = _YEAR_RE.sub("", source).strip(" ,")
    return authors, venue or None, iso_date(year[1]) if year else None


def _cited_by(block: LexborNode) -> int | None:
    for link in block.css("div.gs_fl a"):
        if "cites=" in (link.attributes.get("href") or ""):
            found = _DIGITS_RE.search(link.text())
            return as_int(re.sub(r"\D", "", found[0])) if found else None
    return None


def _pdf_url(block: LexborNode) -> str | None:
    link = block.css_first("div.gs_or_ggsm a") or block.css_first("div.gs_ggs a")
    href = link.attributes.get("href") if link is not None else None
    return href if href and href.startswith(("http://", "https://")) else None


class GoogleScholar(Engine):
    """`div.gs_ri` records: `h3.gs_rt a` (title, link), `div.gs_a` (authors - venue, year -
    host), `div.gs_rs` (snippet), "Cited by N" in `div.gs_fl`, a PDF link in `div.gs_ggs`."""

    name = "google_scholar"
    kind = "academic"
    base_url = "https://scholar.google.com"
    default_enabled = False

    def request(self, query: Query, key: str | None) -> HttpRequest:
        rows = min(max(query.max_results, 1), 20)
        params: dict[str, Any] = {"q": query.text, "hl": "en", "as_sdt": "0,5", "num": rows}
        if query.page > 1:
            params["start"] = (query.page - 1) * rows
        if query.year_from is not None:
            params["as_ylo"] = query.year_from
        if query.year_to is not None:
            params["as_yhi"] = query.year_to
        return HttpRequest("GET", "/scholar", params=params)

    def parse(self, response: HttpResponse, query: Query) -> list[Hit]:
        text = response.text
        if "/sorry/" in response.url or any(marker in text for marker in _CAPTCHA_MARKERS):
            raise EngineBlocked("Google Scholar CAPTCHA")
        self.check_status(response)
        tree = LexborHTMLParser(text)
        hits: list[Hit] = []
        for block in tree.css("div.gs_r"):
            record = block.css_first("div.gs_ri")
            link = record.css_first("h3.gs_rt a") if record is not None else None
            if record is None or link is None:
                continue  # [CITATION] records have no link
            url = link.attributes.get("href") or ""
            title = clean_text(link.text(), 300)
            if not title or not url.startswith(("http://", "https://")):
                continue
            line = record.css_first("div.gs_a")
            authors, venue, year = byline(clean_text(line.text(), 1000)) if line else ((), None, None)
            snippet = record.css_first("div.gs_rs")
            hits.append(
                Hit(
                    title=title,
                    url=url,
                    snippet=clean_text(snippet.text()) if snippet is not None else "",
                    rank=len(hits) + 1,
                    engine=self.name,
                    published=year,
                    authors=authors,
                    venue=venue,
                    citations=_cited_by(record),
                    pdf_url=_pdf_url(block),
                )
            )
        if not hits and tree.css_first("#gs_res_ccl_mid, #gs_res_ccl") is None:
            if _NO_RESULTS not in text:
                raise EngineParseError("unrecognised Google Scholar page (no result list)")
        return hits
