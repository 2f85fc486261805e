"""OpenAlex: GET /works?search=.. (JSON). Abstracts come as an inverted index to rebuild."""

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

# Only what the parser reads: a full work record is tens of kilobytes.
_SELECT = (
    "id,doi,display_name,title,publication_date,publication_year,authorships,"
    "primary_location,best_oa_location,open_access,cited_by_count,abstract_inverted_index"
)


def rebuild_abstract(index: Any) -> str:
    """The text of an `abstract_inverted_index` ({word: [positions]})."""
    if not isinstance(index, dict):
        return ""
    placed: dict[int, str] = {}
    for word, positions in index.items():
        for position in positions if isinstance(positions, list) else ():
            if isinstance(position, int):
                placed[position] = word
    return " ".join(placed[p] for p in sorted(placed))


def _dict(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _year_filter(query: Query) -> str | None:
    start, end = query.year_from, query.year_to
    if start is not None and end is not None:
        return f"publication_year:{start}-{end}"
    if start is not None:
        return f"publication_year:>{start - 1}"
    if end is not None:
        return f"publication_year:<{end + 1}"
    return None


class OpenAlex(Engine):
    """`results[]` works: `display_name`, `doi`, `publication_date`, `authorships`,
    `primary_location`, `open_access.oa_url`, `cited_by_count`, `abstract_inverted_index`."""

    name = "openalex"
    kind = "academic"
    base_url = "https://api.openalex.org"
    default_timeout = 8.0

    def request(self, query: Query, key: str | None) -> HttpRequest:
        params: dict[str, Any] = {
            "search": query.text,
            "per-page": min(max(query.max_results, 1), 200),
            "page": query.page,
            "select": _SELECT,
        }
        if year_filter := _year_filter(query):
            params["filter"] = year_filter
        return HttpRequest("GET", "/works", params=params)

    def parse(self, response: HttpResponse, query: Query) -> list[Hit]:
        data = try_json(response)
        if response.status >= 300 and isinstance(data, dict) and data.get("error"):
            raise api_error(data.get("message") or data["error"], response)
        self.check_status(response)
        if not isinstance(data, dict):
            raise not_json(response)
        results = data.get("results", [])
        if not isinstance(results, list):
            raise EngineParseError("`results` is not a list")
        hits: list[Hit] = []
        for work in results:
            if not isinstance(work, dict):
                continue
            title = clean_text(work.get("display_name") or work.get("title"), 300)
            doi = normalize_doi(work.get("doi"))
            primary = _dict(work.get("primary_location"))
            best = _dict(work.get("best_oa_location"))
            url = primary.get("landing_page_url") or work.get("doi") or work.get("id")
            if not title or not isinstance(url, str):
                continue
            authors = (
                _dict(a.get("author")).get("display_name") or ""
                for a in work.get("authorships") or []
                if isinstance(a, dict)
            )
            hits.append(
                Hit(
                    title=title,
                    url=url,
                    snippet=clean_text(rebuild_abstract(work.get("abstract_inverted_index"))),
                    rank=len(hits) + 1,
                    engine=self.name,
                    published=iso_date(work.get("publication_date"))
                    or iso_date(work.get("publication_year")),
                    authors=unique(authors),
                    doi=doi,
                    venue=clean_text(_dict(primary.get("source")).get("display_name"), 300)
                    or None,
                    citations=as_int(work.get("cited_by_count")),
                    pdf_url=primary.get("pdf_url")
                    or best.get("pdf_url")
                    or _dict(work.get("open_access")).get("oa_url"),
                )
            )
        return hits
