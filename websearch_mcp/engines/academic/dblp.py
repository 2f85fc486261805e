"""dblp computer-science bibliography: GET /search/publ/api?q=..&format=json.

dblp's JSON is converted from XML: every number is a string, and an element that occurs once
is an object where it usually is a list (`hits.hit`, `authors.author`, `venue`, `ee`). dblp has
no year parameter, so a year range is applied to the returned records.
"""

from __future__ import annotations

import re
from typing import Any

from websearch_mcp.engines.base import Engine, clean_text
from websearch_mcp.engines.common import (
    api_error,
    as_int,
    as_list,
    iso_date,
    normalize_doi,
    not_json,
    try_json,
    unique,
)
from websearch_mcp.errors import EngineError, EngineParseError
from websearch_mcp.models import Hit, HttpRequest, HttpResponse, Query

# dblp tells namesakes apart with a number: "Wei Wang 0001".
_HOMONYM_RE = re.compile(r"\s+\d{4}$")


def _author_names(info: dict[str, Any]) -> tuple[str, ...]:
    authors = info.get("authors")
    entries = as_list(authors.get("author")) if isinstance(authors, dict) else []
    names = (
        entry.get("text") if isinstance(entry, dict) else entry
        for entry in entries
    )
    return unique(_HOMONYM_RE.sub("", str(name)) for name in names if name)


def _in_years(year: int | None, query: Query) -> bool:
    if year is None:
        return query.year_from is None and query.year_to is None
    if query.year_from is not None and year < query.year_from:
        return False
    return query.year_to is None or year <= query.year_to


class DBLP(Engine):
    """`result.hits.hit[]` with `info`: `title`, `authors.author`, `venue`, `year`, `doi`,
    `ee` (the publisher's landing page) and `url` (the dblp record)."""

    name = "dblp"
    kind = "academic"
    base_url = "https://dblp.org"
    default_timeout = 8.0

    def request(self, query: Query, key: str | None) -> HttpRequest:
        rows = min(max(query.max_results, 1), 1000)
        params: dict[str, Any] = {"q": query.text, "format": "json", "h": rows}
        if query.page > 1:
            params["f"] = (query.page - 1) * rows
        return HttpRequest("GET", "/search/publ/api", params=params)

    def parse(self, response: HttpResponse, query: Query) -> list[Hit]:
        data = try_json(response)
        self.check_status(response)
        if not isinstance(data, dict) or not isinstance(data.get("result"), dict):
            raise not_json(response) if data is None else EngineParseError("expected `result`")
        result = data["result"]
        status = result.get("status")
        code = status.get("@code") if isinstance(status, dict) else "200"
        if str(code) != "200":
            raise api_error(status.get("text") or f"dblp status {code}", response)
        hits_node = result.get("hits")
        if not isinstance(hits_node, dict):
            raise EngineError("dblp answer without `hits`")
        hits: list[Hit] = []
        for hit in as_list(hits_node.get("hit")):
            info = hit.get("info") if isinstance(hit, dict) else None
            if not isinstance(info, dict):
                continue
            title = clean_text(info.get("title"), 300)
            if title.endswith(".") and not title.endswith(".."):
                title = title[:-1]  # dblp ends every title with a period
            landing = next((u for u in as_list(info.get("ee")) if isinstance(u, str)), None)
            url = landing or info.get("url")
            year = as_int(info.get("year"))
            if not title or not isinstance(url, str) or not _in_years(year, query):
                continue
            venue = ", ".join(str(v) for v in as_list(info.get("venue")) if v)
            hits.append(
                Hit(
                    title=title,
                    url=url,
                    snippet="",
                    rank=len(hits) + 1,
                    engine=self.name,
                    published=iso_date(year),
                    authors=_author_names(info),
                    doi=normalize_doi(info.get("doi")),
                    venue=clean_text(venue, 300) or None,
                )
            )
        return hits
