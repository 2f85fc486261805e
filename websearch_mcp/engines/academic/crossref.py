"""Crossref REST API: `GET /works?query=..&rows=..` (JSON); DOI-registered literature."""

from __future__ import annotations

from typing import Any, ClassVar

from websearch_mcp.dates import date_from_parts
from websearch_mcp.engines.academic._common import names, normalize_doi, without_abstract_label
from websearch_mcp.engines.base import Engine
from websearch_mcp.engines.common import (
    api_error,
    as_int,
    as_text,
    http_url,
    json_body,
    json_object,
    ranked_hits,
)
from websearch_mcp.engines.text import clean_text, collapse_spaces, html_text
from websearch_mcp.errors import EngineParseError
from websearch_mcp.models import Hit, HttpRequest, HttpResponse, Query

# Only the fields the parser reads: full work records are large.
_SELECT = (
    "DOI,URL,title,author,container-title,abstract,is-referenced-by-count,"
    "published,published-print,published-online,issued,created"
)
_DATE_FIELDS = ("published", "issued", "published-print", "published-online", "created")


def _first(value: Any) -> str:
    """The first non-empty string of a Crossref list field (`title`, `container-title`)."""
    if isinstance(value, list):
        value = next((v for v in value if isinstance(v, str) and v.strip()), "")
    return value if isinstance(value, str) else ""


def _authors(item: dict[str, Any]) -> tuple[str, ...]:
    people = (a for a in item.get("author") or [] if isinstance(a, dict))
    return names(
        " ".join(text for part in ("given", "family") if (text := as_text(a.get(part))))
        or a.get("name")
        for a in people
    )


def _published(item: dict[str, Any]) -> str | None:
    for field in _DATE_FIELDS:
        if found := date_from_parts(item.get(field)):
            return found
    return None


def _failure(response: HttpResponse) -> str | None:
    """The text of a `{"status": "failed", "message": [...]}` body (any HTTP status)."""
    data = json_body(response)
    if not isinstance(data, dict) or data.get("status") != "failed":
        return None
    messages = data.get("message")
    if isinstance(messages, list):
        parts = [str(m.get("message") or m) if isinstance(m, dict) else str(m) for m in messages]
        return "; ".join(parts) or "request failed"
    return str(messages or "request failed")


def _hit(item: Any, rank: int, engine: str) -> Hit | None:
    if not isinstance(item, dict):
        return None
    # Titles carry markup (<i>, <sub>) and abstracts JATS: read into text here, as the label
    # that opens an abstract is taken off its text.
    title = collapse_spaces(html_text(_first(item.get("title"))))
    doi = normalize_doi(item.get("DOI"))
    url = http_url(item.get("URL")) or (f"https://doi.org/{doi}" if doi else None)
    if not title or not url:
        return None
    return Hit(
        title=title,
        url=url,
        snippet=without_abstract_label(collapse_spaces(html_text(as_text(item.get("abstract"))))),
        rank=rank,
        engine=engine,
        published=_published(item),
        authors=_authors(item),
        doi=doi,
        venue=clean_text(_first(item.get("container-title"))) or None,
        citations=as_int(item.get("is-referenced-by-count")),
    )


class Crossref(Engine):
    """Crossref: `message.items[]` with `title` (a list), `DOI`, `URL`, `author[]`,
    `container-title` (a list), a JATS `abstract`, date-parts dates, citation counts."""

    name = "crossref"
    markup = False
    kind = "academic"
    base_url = "https://api.crossref.org"
    returns_score = False  # its `score` is unbounded
    default_timeout = 8.0

    max_rows: ClassVar[int] = 100

    def request(self, query: Query, key: str | None) -> HttpRequest:
        """Parameters: `query`, `rows`, `offset`, `select`, `filter` (from/until-pub-date)."""
        rows = min(query.max_results, self.max_rows)
        params: dict[str, Any] = {"query": query.text, "rows": rows, "select": _SELECT}
        if query.page > 1:
            params["offset"] = (query.page - 1) * rows
        filters = []
        if query.year_from is not None:
            filters.append(f"from-pub-date:{query.year_from}")
        if query.year_to is not None:
            filters.append(f"until-pub-date:{query.year_to}")
        if filters:
            params["filter"] = ",".join(filters)
        return HttpRequest("GET", "/works", params=params, headers={"Accept": "application/json"})

    def parse(self, response: HttpResponse, query: Query) -> list[Hit]:
        """`message.items[]` -> hits; a `status: failed` body raises a typed error."""
        if failure := _failure(response):
            raise api_error(failure, response)
        self.check_status(response)
        message = json_object(response, "Crossref").get("message")
        items = message.get("items") if isinstance(message, dict) else None
        if not isinstance(items, list):
            raise EngineParseError("Crossref answered without a 'message.items' list")
        return ranked_hits(items, self.name, _hit)
