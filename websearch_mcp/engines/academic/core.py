"""CORE (open-access aggregator) API v3: `GET /v3/search/works?q=..`, a Bearer key (JSON)."""

from __future__ import annotations

import re
from typing import Any, ClassVar
from urllib.parse import urlsplit

from websearch_mcp.dates import publication_date
from websearch_mcp.engines.academic._common import author_names, normalize_doi
from websearch_mcp.engines.base import Engine
from websearch_mcp.engines.common import (
    as_id,
    as_int,
    as_text,
    check_error_body,
    http_url,
    json_object,
    keyed_request,
    object_list,
    ranked_hits,
)
from websearch_mcp.engines.text import clean_text
from websearch_mcp.models import Hit, HttpRequest, HttpResponse, Query


def search_query(query: Query) -> str:
    """The query with CORE's own `yearPublished` conditions when a year range is asked."""
    conditions = []
    if query.year_from is not None:
        conditions.append(f"yearPublished>={query.year_from}")
    if query.year_to is not None:
        conditions.append(f"yearPublished<={query.year_to}")
    return " AND ".join([f"({query.text})", *conditions]) if conditions else query.text


def _links(work: dict[str, Any], kind: str) -> list[str]:
    return [
        url
        for link in work.get("links") or []
        if isinstance(link, dict)
        and link.get("type") == kind
        and (url := http_url(link.get("url")))
    ]


def _pdf_url(work: dict[str, Any]) -> str | None:
    """`downloadUrl` (or a download link) when it is a PDF; often it is an abstract page."""
    candidates = [http_url(work.get("downloadUrl")), *_links(work, "download")]
    return next(
        (url for url in candidates if url and urlsplit(url).path.lower().endswith(".pdf")), None
    )


def _venue(work: dict[str, Any]) -> str | None:
    for journal in work.get("journals") or []:
        if isinstance(journal, dict) and (title := clean_text(journal.get("title"))):
            return title
    return None


def _ids(work: dict[str, Any]) -> dict[str, str]:
    """The work's arXiv id and PubMed id (`arxivId`, `pubmedId`), for merging with other indexes."""
    found = {"arxiv": as_id(work.get("arxivId"))}
    if (pmid := as_id(work.get("pubmedId"))).isdigit():
        found["pmid"] = pmid
    return {name: value for name, value in found.items() if value}


#: Scripts that write a full name without a space (Chinese, Japanese, Korean).
_UNSPACED = re.compile(r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af]")


def _authors(work: dict[str, Any]) -> tuple[str, ...]:
    """The authors' names; a bare surname in a list of full names ("Bigoni" beside "Davide
    Bigoni", "Bertoldi") is one CORE took from the paper's references, and is left out."""
    found = author_names(work.get("authors"))
    full = tuple(name for name in found if " " in name or "," in name or _UNSPACED.search(name))
    return full or found


def _hit(work: dict[str, Any], rank: int, engine: str) -> Hit | None:
    title = as_text(work.get("title")).strip()
    display = _links(work, "display")
    url = display[0] if display else None
    if not url and (found := as_id(work.get("id"))):  # an integer, as CORE documents it
        url = f"https://core.ac.uk/works/{found}"
    if not title or not url:
        return None
    return Hit(
        title=title,
        url=url,
        snippet=work.get("abstract") or "",
        rank=rank,
        engine=engine,
        published=publication_date(work.get("publishedDate"))
        or publication_date(work.get("yearPublished")),
        authors=_authors(work),
        doi=normalize_doi(work.get("doi")),
        venue=_venue(work),
        citations=as_int(work.get("citationCount")),
        pdf_url=_pdf_url(work),
        ids=_ids(work),
    )


class Core(Engine):
    """CORE: `results[]` works with `title`, `abstract`, `authors[].name`, `doi`,
    `downloadUrl`, `links[]` (display / download), `publishedDate`, `yearPublished`."""

    name = "core"
    kind = "academic"
    base_url = "https://api.core.ac.uk"
    needs_key = True
    default_timeout = 10.0

    max_rows: ClassVar[int] = 100

    def request(self, query: Query, key: str | None) -> HttpRequest:
        """Parameters: `q` (with yearPublished conditions), `limit`, `offset`; a Bearer key."""
        rows = min(query.max_results, self.max_rows)
        params: dict[str, Any] = {"q": search_query(query), "limit": rows}
        if query.page > 1:
            params["offset"] = (query.page - 1) * rows
        return keyed_request("GET", "/v3/search/works", key, params=params)

    def parse(self, response: HttpResponse, query: Query) -> list[Hit]:
        """`results[]` -> hits; an error body's `message` names the cause."""
        check_error_body(response, "message")
        self.check_status(response)
        works = json_object(response, "CORE").get("results") or []
        return ranked_hits(object_list(works, "CORE", "results"), self.name, _hit)
