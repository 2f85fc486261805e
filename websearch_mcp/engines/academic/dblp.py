"""dblp computer-science bibliography: `GET /search/publ/api?q=..&format=json`.

dblp's JSON is converted from XML: numbers are strings, and an element that occurs once is an
object where it is usually a list (`hits.hit`, `authors.author`, `venue`, `ee`). dblp has no
year parameter, so a year range is applied to the records it returns.
"""

from __future__ import annotations

import re
from typing import Any, ClassVar

from websearch_mcp.dates import publication_date
from websearch_mcp.engines.academic._common import names, normalize_doi, title_text
from websearch_mcp.engines.base import Engine
from websearch_mcp.engines.common import (
    api_error,
    as_dict,
    as_int,
    as_list,
    as_text,
    http_url,
    json_object,
    ranked_hits,
)
from websearch_mcp.engines.text import clean_text
from websearch_mcp.errors import EngineParseError
from websearch_mcp.models import Hit, HttpRequest, HttpResponse, Query

# dblp tells namesakes apart with a number: "Wei Wang 0001".
_HOMONYM_RE = re.compile(r"\s+\d{4}$")


def _authors(info: dict[str, Any]) -> tuple[str, ...]:
    entries = as_list(as_dict(info.get("authors")).get("author"))
    raw = (entry.get("text") if isinstance(entry, dict) else entry for entry in entries)
    return names(_HOMONYM_RE.sub("", name) for name in raw if isinstance(name, str))


def _in_years(year: int | None, query: Query) -> bool:
    if query.year_from is None and query.year_to is None:
        return True
    if year is None:
        return False
    if query.year_from is not None and year < query.year_from:
        return False
    return query.year_to is None or year <= query.year_to


def _hit(info: dict[str, Any], rank: int, engine: str) -> Hit | None:
    title = title_text(info.get("title"))
    landing = next((url for ee in as_list(info.get("ee")) if (url := http_url(ee))), None)
    url = landing or http_url(info.get("url"))
    if not title or not url:
        return None
    venue = ", ".join(text for v in as_list(info.get("venue")) if (text := as_text(v)))
    return Hit(
        title=title,
        url=url,
        snippet="",  # dblp has no abstracts
        rank=rank,
        engine=engine,
        published=publication_date(info.get("year")),
        authors=_authors(info),
        doi=normalize_doi(info.get("doi")),
        venue=clean_text(venue) or None,
    )


class DBLP(Engine):
    """dblp: `result.hits.hit[]`, each with `info`: `title`, `authors.author`, `venue`, `year`,
    `doi`, `ee` (the publisher's page, preferred as URL) and `url` (the dblp record)."""

    name = "dblp"
    kind = "academic"
    base_url = "https://dblp.org"
    default_timeout = 8.0

    max_rows: ClassVar[int] = 1000

    def request(self, query: Query, key: str | None) -> HttpRequest:
        """Parameters: `q`, `format=json`, `h` (hits), `f` (first hit, for later pages)."""
        rows = min(query.max_results, self.max_rows)
        params: dict[str, Any] = {"q": query.text, "format": "json", "h": rows}
        if query.page > 1:
            params["f"] = (query.page - 1) * rows
        return HttpRequest(
            "GET", "/search/publ/api", params=params, headers={"Accept": "application/json"}
        )

    def parse(self, response: HttpResponse, query: Query) -> list[Hit]:
        """`result.hits.hit` (a list, a lone object, or absent) -> hits in the asked years."""
        self.check_status(response)
        result = json_object(response, "dblp").get("result")
        if not isinstance(result, dict):
            raise EngineParseError("dblp answered without a 'result' object")
        status = as_dict(result.get("status"))
        if str(status.get("@code", "200")) != "200":
            raise api_error(status.get("text") or f"dblp status {status['@code']}", response)
        hits_node = result.get("hits")
        if not isinstance(hits_node, dict):
            raise EngineParseError("dblp answered without a 'hits' object")
        records = (
            as_dict(hit.get("info") if isinstance(hit, dict) else None)
            for hit in as_list(hits_node.get("hit"))
        )
        in_years = (info for info in records if _in_years(as_int(info.get("year")), query))
        return ranked_hits(in_years, self.name, _hit)
