"""Europe PMC REST API: GET /europepmc/webservices/rest/search?query=..&format=json.

Europe PMC pages with opaque cursors, which a stateless request cannot hold, so page N asks
for the first N pages at once and the parser keeps the last one.
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

_MAX_PAGE_SIZE = 1000  # the API's limit


def _page_size(query: Query) -> int:
    return min(max(query.max_results, 1), 100)


def search_query(query: Query) -> str:
    """The query, restricted to publication years in Europe PMC's own syntax when asked."""
    if query.year_from is None and query.year_to is None:
        return query.text
    start = query.year_from if query.year_from is not None else 1000
    end = query.year_to if query.year_to is not None else 9999
    return f"({query.text}) AND (PUB_YEAR:[{start} TO {end}])"


def _venue(item: dict[str, Any]) -> str | None:
    journal = item.get("journalTitle")
    if not journal and isinstance(item.get("journalInfo"), dict):
        inner = item["journalInfo"].get("journal")
        journal = inner.get("title") if isinstance(inner, dict) else None
    return clean_text(journal, 300) or None


def _pdf_url(item: dict[str, Any]) -> str | None:
    """An open-access PDF: from the full-text links (core results) or Europe PMC's renderer."""
    links = item.get("fullTextUrlList")
    for link in links.get("fullTextUrl", []) if isinstance(links, dict) else []:
        if (
            isinstance(link, dict)
            and link.get("documentStyle") == "pdf"
            and str(link.get("availability", "")).lower().startswith(("open", "free"))
        ):
            return link.get("url")
    if item.get("isOpenAccess") == "Y" and item.get("pmcid"):
        return f"https://europepmc.org/articles/{item['pmcid']}?pdf=render"
    return None


def _authors(item: dict[str, Any]) -> tuple[str, ...]:
    author_string = str(item.get("authorString") or "").strip().rstrip(".")
    return unique(author_string.split(", ")) if author_string else ()


class EuropePMC(Engine):
    """`resultList.result[]`: `title`, `authorString`, `journalTitle`, `pubYear`,
    `firstPublicationDate`, `doi`, `pmcid`, `citedByCount`, `abstractText` (core results)."""

    name = "europepmc"
    kind = "academic"
    base_url = "https://www.ebi.ac.uk"
    default_timeout = 8.0

    def request(self, query: Query, key: str | None) -> HttpRequest:
        params: dict[str, Any] = {
            "query": search_query(query),
            "format": "json",
            "resultType": "core",  # `lite` has no abstract
            "pageSize": min(_page_size(query) * query.page, _MAX_PAGE_SIZE),
        }
        return HttpRequest("GET", "/europepmc/webservices/rest/search", params=params)

    def parse(self, response: HttpResponse, query: Query) -> list[Hit]:
        data = try_json(response)
        if response.status >= 300 and isinstance(data, dict) and data.get("errMsg"):
            raise api_error(data["errMsg"], response)
        self.check_status(response)
        if not isinstance(data, dict):
            raise not_json(response)
        result_list = data.get("resultList")
        results = result_list.get("result", []) if isinstance(result_list, dict) else None
        if not isinstance(results, list):
            raise EngineParseError("`resultList.result` is not a list")
        if query.page > 1:
            size = _page_size(query)
            results = results[(query.page - 1) * size : query.page * size]
        hits: list[Hit] = []
        for item in results:
            if not isinstance(item, dict):
                continue
            title = clean_text(item.get("title"), 300)
            if not title or not item.get("id"):
                continue
            source = item.get("source") or "MED"
            hits.append(
                Hit(
                    title=title,
                    url=f"https://europepmc.org/article/{source}/{item['id']}",
                    snippet=clean_text(item.get("abstractText")),
                    rank=len(hits) + 1,
                    engine=self.name,
                    published=iso_date(item.get("firstPublicationDate"))
                    or iso_date(item.get("pubYear")),
                    authors=_authors(item),
                    doi=normalize_doi(item.get("doi")),
                    venue=_venue(item),
                    citations=as_int(item.get("citedByCount")),
                    pdf_url=_pdf_url(item),
                )
            )
        return hits
