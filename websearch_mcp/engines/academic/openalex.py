"""OpenAlex: `GET /works?search=..` (JSON). Abstracts come as an inverted index to rebuild."""

from __future__ import annotations

import re
from typing import Any, ClassVar
from urllib.parse import urlsplit

from websearch_mcp.dates import publication_date
from websearch_mcp.engines.academic._common import names, normalize_doi, without_abstract_label
from websearch_mcp.engines.base import Engine
from websearch_mcp.engines.common import (
    as_dict,
    as_int,
    as_text,
    check_error_body,
    http_url,
    json_object,
    ranked_hits,
    result_list,
)
from websearch_mcp.engines.text import clean_text
from websearch_mcp.models import Hit, HttpRequest, HttpResponse, Query

# Only the fields the parser reads: a full work record is tens of kilobytes.
_SELECT = (
    "id,doi,ids,display_name,title,publication_date,publication_year,authorships,"
    "primary_location,best_oa_location,open_access,cited_by_count,abstract_inverted_index"
)
# `ids.pmid` is a link: https://pubmed.ncbi.nlm.nih.gov/29456894
_PMID_RE = re.compile(r"(?:pubmed\.ncbi\.nlm\.nih\.gov/|^)(\d{1,9})/?$")


def pubmed_id(ids: dict[str, Any]) -> dict[str, str]:
    """`{"pmid": "29456894"}` from a work's `ids`, or nothing when it has no PubMed id."""
    found = _PMID_RE.search(str(ids.get("pmid") or "").strip())
    return {"pmid": found[1]} if found else {}


def rebuild_abstract(index: Any) -> str:
    """The text of an `abstract_inverted_index` (`{word: [positions]}`)."""
    if not isinstance(index, dict):
        return ""
    placed: dict[int, str] = {}
    for word, positions in index.items():
        for position in positions if isinstance(positions, list) else ():
            if isinstance(position, int):
                placed[position] = word
    return " ".join(placed[p] for p in sorted(placed))


def _pdf_only(url: str | None) -> str | None:
    """`oa_url` when it is a PDF (`.pdf`, `/pdf/...`, PubMed Central's `.../pdf`): without a
    location's `pdf_url` it is that location's landing page."""
    path = urlsplit(url).path.lower() if url else ""
    return url if path.endswith((".pdf", "/pdf")) or "/pdf/" in path else None


def _venue(*locations: dict[str, Any]) -> str | None:
    """The journal (or conference) of the first location whose source is one: a `repository`
    source (Europe PMC, Zenodo, a university's archive) holds a copy and is no venue."""
    for location in locations:
        source = as_dict(location.get("source"))
        if source.get("type") != "repository" and (name := clean_text(source.get("display_name"))):
            return name
    return None


def year_filter(query: Query) -> str | None:
    """`publication_year:2019-2021`, `:>2018` or `:<2022` for the asked year range."""
    start, end = query.year_from, query.year_to
    if start is not None and end is not None:
        return f"publication_year:{start}-{end}"
    if start is not None:
        return f"publication_year:>{start - 1}"
    if end is not None:
        return f"publication_year:<{end + 1}"
    return None


def _hit(work: dict[str, Any], rank: int, engine: str) -> Hit | None:
    title = (as_text(work.get("display_name")) or as_text(work.get("title"))).strip()
    primary = as_dict(work.get("primary_location"))
    url = http_url(primary.get("landing_page_url")) or http_url(work.get("doi"))
    url = url or http_url(work.get("id"))
    if not title or not url:
        return None
    authorships = (a for a in work.get("authorships") or [] if isinstance(a, dict))
    return Hit(
        title=title,
        url=url,
        snippet=without_abstract_label(rebuild_abstract(work.get("abstract_inverted_index"))),
        rank=rank,
        engine=engine,
        published=publication_date(work.get("publication_date"))
        or publication_date(work.get("publication_year")),
        authors=names(as_dict(a.get("author")).get("display_name") for a in authorships),
        doi=normalize_doi(work.get("doi")),
        ids=pubmed_id(as_dict(work.get("ids"))),
        venue=_venue(primary, as_dict(work.get("best_oa_location"))),
        citations=as_int(work.get("cited_by_count")),
        pdf_url=http_url(primary.get("pdf_url"))
        or http_url(as_dict(work.get("best_oa_location")).get("pdf_url"))
        or _pdf_only(http_url(as_dict(work.get("open_access")).get("oa_url"))),
    )


class OpenAlex(Engine):
    """OpenAlex: `results[]` works with `display_name`, `doi`, `publication_date`,
    `authorships`, `primary_location`, `open_access.oa_url`, `cited_by_count`."""

    name = "openalex"
    kind = "academic"
    base_url = "https://api.openalex.org"
    default_timeout = 8.0
    # Optional keys (OPENALEX_API_KEYS), sent as `api_key`: without one OpenAlex allows a few
    # searches a day.
    key_env = None

    max_rows: ClassVar[int] = 200

    def request(self, query: Query, key: str | None) -> HttpRequest:
        """Parameters: `search`, `per-page`, `page`, `select`, `filter` (publication_year),
        `api_key` when one is configured."""
        params: dict[str, Any] = {
            "search": query.text,
            "per-page": min(query.max_results, self.max_rows),
            "page": query.page,
            "select": _SELECT,
        }
        if years := year_filter(query):
            params["filter"] = years
        if key:
            params["api_key"] = key
        return HttpRequest(
            "GET",
            "/works",
            params=params,
            headers={"Accept": "application/json"},
            secrets=(key,) if key else (),
        )

    def parse(self, response: HttpResponse, query: Query) -> list[Hit]:
        """`results[]` -> hits; the abstract is rebuilt, `oa_url` is the full-text fallback."""
        check_error_body(response, "message", "error")
        self.check_status(response)
        works = result_list(json_object(response, "OpenAlex"), "results", "OpenAlex")
        return ranked_hits(works, self.name, _hit)
