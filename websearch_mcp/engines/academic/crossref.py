"""Crossref REST API: GET /works?query=..&rows=.. (JSON). Covers DOI-registered literature."""

from __future__ import annotations

import re
from typing import Any

from websearch_mcp.engines.base import Engine, clean_text
from websearch_mcp.engines.common import (
    api_error,
    as_int,
    iso_from_date_parts,
    normalize_doi,
    not_json,
    try_json,
    unique,
)
from websearch_mcp.errors import EngineParseError
from websearch_mcp.models import Hit, HttpRequest, HttpResponse, Query

# Only what the parser reads: full work records are large.
_SELECT = (
    "DOI,URL,title,author,container-title,abstract,is-referenced-by-count,"
    "published,published-print,published-online,issued,created"
)
_DATE_FIELDS = ("published", "issued", "published-print", "published-online", "created")
_ABSTRACT_LABEL_RE = re.compile(r"^(?:abstract|summary)\s*[:.]?\s+", re.IGNORECASE)


def _first(value: Any) -> str:
    """Crossref puts titles and container titles in lists."""
    if isinstance(value, list):
        value = next((v for v in value if isinstance(v, str) and v.strip()), "")
    return value if isinstance(value, str) else ""


def _authors(item: dict[str, Any]) -> tuple[str, ...]:
    names = []
    for author in item.get("author") or []:
        if not isinstance(author, dict):
            continue
        full = " ".join(str(author[p]) for p in ("given", "family") if author.get(p))
        names.append(full or str(author.get("name") or ""))
    return unique(names)


def _published(item: dict[str, Any]) -> str | None:
    for field in _DATE_FIELDS:
        if found := iso_from_date_parts(item.get(field)):
            return found
    return None


def _failure(data: dict[str, Any]) -> str:
    """The text of a `{"status": "failed", "message": [...]}` body."""
    message = data.get("message")
    if isinstance(message, list):
        parts = [str(m.get("message") or m) if isinstance(m, dict) else str(m) for m in message]
        return "; ".join(parts) or "request failed"
    return str(message or "request failed")


class Crossref(Engine):
    """`message.items[]`: `title` (list), `DOI`, `URL`, `author[]`, `container-title` (list),
    JATS `abstract`, date-parts dates and `is-referenced-by-count`."""

    name = "crossref"
    kind = "academic"
    base_url = "https://api.crossref.org"
    default_timeout = 8.0

    def request(self, query: Query, key: str | None) -> HttpRequest:
        rows = min(max(query.max_results, 1), 100)
        params: dict[str, Any] = {"query": query.text, "rows": rows, "select": _SELECT}
        if query.page > 1:
            params["offset"] = (query.page - 1) * rows
        filters = []
        if query.year_from is not None:
            filters.append(f"from-pub-date:{query.year_from:04d}")
        if query.year_to is not None:
            filters.append(f"until-pub-date:{query.year_to:04d}")
        if filters:
            params["filter"] = ",".join(filters)
        return HttpRequest("GET", "/works", params=params)

    def parse(self, response: HttpResponse, query: Query) -> list[Hit]:
        data = try_json(response)
        if isinstance(data, dict) and data.get("status") == "failed":
            raise api_error(_failure(data), response)
        self.check_status(response)
        if not isinstance(data, dict):
            raise not_json(response)
        message = data.get("message")
        items = message.get("items", []) if isinstance(message, dict) else None
        if not isinstance(items, list):
            raise EngineParseError("`message.items` is not a list")
        hits: list[Hit] = []
        for item in items:
            if not isinstance(item, dict):
                continue
            title = clean_text(_first(item.get("title")), 300)
            doi = normalize_doi(item.get("DOI"))
            url = item.get("URL") or (f"https://doi.org/{doi}" if doi else "")
            if not title or not url:
                continue
            abstract = _ABSTRACT_LABEL_RE.sub("", clean_text(item.get("abstract")))
            hits.append(
                Hit(
                    title=title,
                    url=url,
                    snippet=abstract,
                    rank=len(hits) + 1,
                    engine=self.name,
                    published=_published(item),
                    authors=_authors(item),
                    doi=doi,
                    venue=clean_text(_first(item.get("container-title")), 300) or None,
                    citations=as_int(item.get("is-referenced-by-count")),
                )
            )
        return hits
