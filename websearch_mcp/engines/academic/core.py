"""CORE (open-access aggregator) API v3: GET /v3/search/works?q=.. with a Bearer key (JSON)."""

from __future__ import annotations

from typing import Any
from urllib.parse import urlsplit

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


def search_query(query: Query) -> str:
    """The query with CORE's own `yearPublished` conditions when a year range is asked."""
    conditions = []
    if query.year_from is not None:
        conditions.append(f"yearPublished>={query.year_from}")
    if query.year_to is not None:
        conditions.append(f"yearPublished<={query.year_to}")
    if not conditions:
        return query.text
    return " AND ".join([f"({query.text})", *conditions])


def _is_pdf(url: Any) -> bool:
    return isinstance(url, str) and urlsplit(url).path.lower().endswith(".pdf")


def _landing(work: dict[str, Any]) -> str | None:
    for link in work.get("links") or []:
        if isinstance(link, dict) and link.get("type") == "display" and link.get("url"):
            return str(link["url"])
    return f"https://core.ac.uk/works/{work['id']}" if work.get("id") is not None else None


def _pdf_url(work: dict[str, Any]) -> str | None:
    """`downloadUrl` when it is a PDF; for many records it is only an abstract page."""
    candidates = [work.get("downloadUrl")]
    candidates += [
        link.get("url")
        for link in work.get("links") or []
        if isinstance(link, dict) and link.get("type") == "download"
    ]
    return next((str(url) for url in candidates if _is_pdf(url)), None)


def _venue(work: dict[str, Any]) -> str | None:
    for journal in work.get("journals") or []:
        if isinstance(journal, dict) and (title := clean_text(journal.get("title"), 300)):
            return title
    return None


class Core(Engine):
    """`results[]` works: `title`, `abstract`, `authors[].name`, `doi`, `downloadUrl`,
    `links[]` (display / download), `publishedDate`, `yearPublished`, `citationCount`."""

    name = "core"
    kind = "academic"
    base_url = "https://api.core.ac.uk"
    needs_key = True
    default_timeout = 10.0

    def request(self, query: Query, key: str | None) -> HttpRequest:
        rows = min(max(query.max_results, 1), 100)
        params: dict[str, Any] = {"q": search_query(query), "limit": rows}
        if query.page > 1:
            params["offset"] = (query.page - 1) * rows
        headers = {"Authorization": f"Bearer {key}"} if key else {}
        return HttpRequest(
            "GET", "/v3/search/works", params=params, headers=headers,
            secrets=(key,) if key else (),
        )

    def parse(self, response: HttpResponse, query: Query) -> list[Hit]:
        data = try_json(response)
        if response.status >= 300 and isinstance(data, dict) and data.get("message"):
            raise api_error(data["message"], response)
        self.check_status(response)
        if not isinstance(data, dict):
            raise not_json(response)
        results = data.get("results") or []
        if not isinstance(results, list):
            raise EngineParseError("`results` is not a list")
        hits: list[Hit] = []
        for work in results:
            if not isinstance(work, dict):
                continue
            title = clean_text(work.get("title"), 300)
            url = _landing(work)
            if not title or not url:
                continue
            authors = (
                str(a.get("name") or "") for a in work.get("authors") or [] if isinstance(a, dict)
            )
            hits.append(
                Hit(
                    title=title,
                    url=url,
                    snippet=clean_text(work.get("abstract")),
                    rank=len(hits) + 1,
                    engine=self.name,
                    published=iso_date(work.get("publishedDate"))
                    or iso_date(work.get("yearPublished")),
                    authors=unique(authors),
                    doi=normalize_doi(work.get("doi")),
                    venue=_venue(work),
                    citations=as_int(work.get("citationCount")),
                    pdf_url=_pdf_url(work),
                )
            )
        return hits
