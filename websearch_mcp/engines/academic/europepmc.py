"""Europe PMC REST API: `GET /europepmc/webservices/rest/search?query=..&format=json`.

Europe PMC pages with opaque cursors, which a stateless request cannot carry, so page N asks
for the first N pages at once and the parser keeps the last of them.
"""

from __future__ import annotations

import functools
from typing import Any, ClassVar

from websearch_mcp.dates import publication_date
from websearch_mcp.engines.academic._common import (
    date_in_asked_years,
    names,
    normalize_doi,
    title_text,
)
from websearch_mcp.engines.base import Engine
from websearch_mcp.engines.common import (
    as_dict,
    as_id,
    as_int,
    as_text,
    check_error_body,
    http_url,
    json_object,
    ranked_hits,
    result_list,
)
from websearch_mcp.engines.text import clean_text
from websearch_mcp.errors import EngineParseError
from websearch_mcp.models import Hit, HttpRequest, HttpResponse, Query


def search_query(query: Query) -> str:
    """The query, limited to publication years in Europe PMC's syntax when a range is asked."""
    if query.year_from is None and query.year_to is None:
        return query.text
    start = query.year_from if query.year_from is not None else 1000
    end = query.year_to if query.year_to is not None else 9999
    return f"({query.text}) AND (PUB_YEAR:[{start} TO {end}])"


def _venue(item: dict[str, Any]) -> str | None:
    journal = item.get("journalTitle") or as_dict(
        as_dict(item.get("journalInfo")).get("journal")
    ).get("title")
    return clean_text(journal) or None


def _pdf_url(item: dict[str, Any]) -> str | None:
    """An open-access PDF: from the full-text links (`core` results) or Europe PMC's renderer."""
    for link in as_dict(item.get("fullTextUrlList")).get("fullTextUrl") or []:
        if (
            isinstance(link, dict)
            and link.get("documentStyle") == "pdf"
            and str(link.get("availability", "")).lower().startswith(("open", "free"))
            and (url := http_url(link.get("url")))
        ):
            return url
    if item.get("isOpenAccess") == "Y" and (pmcid := as_text(item.get("pmcid")).strip()):
        return f"https://europepmc.org/articles/{pmcid}?pdf=render"
    return None


def _published(item: dict[str, Any], query: Query) -> str | None:
    """The first publication date; the issue's year (`pubYear`, on which Europe PMC matches a
    year range) when only that one lies in the asked years."""
    year = publication_date(item.get("pubYear"))
    first = publication_date(item.get("firstPublicationDate")) or year
    return date_in_asked_years(first, year, query)


def _hit(item: dict[str, Any], rank: int, engine: str, query: Query) -> Hit | None:
    title = title_text(item.get("title"))
    found = as_id(item.get("id"))
    if not title or not found:
        return None
    source = as_text(item.get("source")).strip() or "MED"
    author_string = as_text(item.get("authorString")).strip().rstrip(".")
    return Hit(
        title=title,
        url=f"https://europepmc.org/article/{source}/{found}",
        snippet=item.get("abstractText") or "",
        rank=rank,
        engine=engine,
        published=_published(item, query),
        authors=names(author_string.split(", ")) if author_string else (),
        doi=normalize_doi(item.get("doi")),
        ids={"pmid": pmid} if (pmid := str(item.get("pmid") or "").strip()).isdigit() else {},
        venue=_venue(item),
        citations=as_int(item.get("citedByCount")),
        pdf_url=_pdf_url(item),
    )


class EuropePMC(Engine):
    """Europe PMC: `resultList.result[]` with `title`, `authorString`, `journalTitle`,
    `firstPublicationDate`, `doi`, `pmid`, `pmcid`, `citedByCount`, `abstractText` (core
    results)."""

    name = "europepmc"
    kind = "academic"
    base_url = "https://www.ebi.ac.uk"
    default_timeout = 8.0

    max_rows: ClassVar[int] = 100
    # The API's largest `pageSize`: every page is read from the first result.
    max_depth: ClassVar[int] = 1000

    def request(self, query: Query, key: str | None) -> HttpRequest:
        """Parameters: `query` (with a PUB_YEAR range), `format=json`, `resultType=core`,
        `pageSize` covering every page up to the asked one."""
        rows = self.rows(query)
        params: dict[str, Any] = {
            "query": search_query(query),
            "format": "json",
            "resultType": "core",  # `lite` results have no abstract
            "pageSize": min(rows * query.page, self.max_depth),
        }
        return HttpRequest(
            "GET",
            "/europepmc/webservices/rest/search",
            params=params,
            headers={"Accept": "application/json"},
        )

    def parse(self, response: HttpResponse, query: Query) -> list[Hit]:
        """`resultList.result[]` -> hits, only the asked page's slice of them."""
        check_error_body(response, "errMsg", "message")
        self.check_status(response)
        result_holder = json_object(response, "Europe PMC").get("resultList")
        if not isinstance(result_holder, dict):
            raise EngineParseError("Europe PMC answered without a 'resultList'")
        items = result_list(result_holder, "result", "Europe PMC")
        if query.page > 1:
            rows = self.rows(query)
            items = items[(query.page - 1) * rows : query.page * rows]
        return ranked_hits(items, self.name, functools.partial(_hit, query=query))
