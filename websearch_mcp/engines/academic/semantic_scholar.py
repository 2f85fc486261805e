"""Semantic Scholar Graph API: GET /graph/v1/paper/search?query=..&fields=.. (JSON).

Works without a key (shared, tightly rate-limited pool); a key, when configured, goes in the
`x-api-key` header and buys a private rate limit.
"""

from __future__ import annotations

from typing import Any

from websearch_mcp.engines.base import Engine, clean_text
from websearch_mcp.engines.common import (
    api_error,
    as_int,
    iso_date,
    normalize_doi,
    not_json,
    try_json,
    unique,
)
from websearch_mcp.errors import EngineParseError
from websearch_mcp.models import Hit, HttpRequest, HttpResponse, Query

FIELDS = (
    "title,url,abstract,year,publicationDate,authors,venue,externalIds,citationCount,openAccessPdf"
)


def _year_range(query: Query) -> str | None:
    if query.year_from is None and query.year_to is None:
        return None
    start = "" if query.year_from is None else str(query.year_from)
    end = "" if query.year_to is None else str(query.year_to)
    return start if start == end else f"{start}-{end}"


class SemanticScholar(Engine):
    """`data[]` papers: `paperId`, `title`, `url`, `abstract`, `authors[].name`,
    `externalIds.DOI`, `venue`, `citationCount`, `openAccessPdf.url`. A search without
    matches answers `{"total": 0, "offset": 0}` with no `data` key."""

    name = "semantic_scholar"
    kind = "academic"
    base_url = "https://api.semanticscholar.org"
    default_timeout = 8.0

    def request(self, query: Query, key: str | None) -> HttpRequest:
        rows = min(max(query.max_results, 1), 100)
        params: dict[str, Any] = {"query": query.text, "fields": FIELDS, "limit": rows}
        if query.page > 1:
            params["offset"] = (query.page - 1) * rows
        if year := _year_range(query):
            params["year"] = year
        headers = {"x-api-key": key} if key else {}
        return HttpRequest(
            "GET", "/graph/v1/paper/search", params=params, headers=headers,
            secrets=(key,) if key else (),
        )

    def parse(self, response: HttpResponse, query: Query) -> list[Hit]:
        data = try_json(response)
        if response.status >= 300 and response.status != 429 and isinstance(data, dict):
            message = data.get("error") or data.get("message")
            if message:
                raise api_error(message, response)
        self.check_status(response)
        if not isinstance(data, dict):
            raise not_json(response)
        papers = data.get("data", [])
        if not isinstance(papers, list):
            raise EngineParseError("`data` is not a list")
        hits: list[Hit] = []
        for paper in papers:
            if not isinstance(paper, dict):
                continue
            title = clean_text(paper.get("title"), 300)
            url = paper.get("url") or (
                f"https://www.semanticscholar.org/paper/{paper['paperId']}"
                if paper.get("paperId")
                else None
            )
            if not title or not url:
                continue
            ids = paper.get("externalIds") if isinstance(paper.get("externalIds"), dict) else {}
            pdf = paper.get("openAccessPdf") if isinstance(paper.get("openAccessPdf"), dict) else {}
            authors = (
                str(a.get("name") or "") for a in paper.get("authors") or [] if isinstance(a, dict)
            )
            hits.append(
                Hit(
                    title=title,
                    url=url,
                    snippet=clean_text(paper.get("abstract")),
                    rank=len(hits) + 1,
                    engine=self.name,
                    published=iso_date(paper.get("publicationDate")) or iso_date(paper.get("year")),
                    authors=unique(authors),
                    doi=normalize_doi(ids.get("DOI")),
                    venue=clean_text(paper.get("venue"), 300) or None,
                    citations=as_int(paper.get("citationCount")),
                    pdf_url=pdf.get("url") or None,
                )
            )
        return hits
