"""Semantic Scholar Graph API: `GET /graph/v1/paper/search?query=..&fields=..` (JSON).

Works without a key (a shared, tightly rate-limited pool); a configured key goes in the
`x-api-key` header and buys a private rate limit.
"""

from __future__ import annotations

import functools
import re
from typing import Any, ClassVar

from websearch_mcp.dates import publication_date
from websearch_mcp.engines.academic._common import (
    author_names,
    date_in_asked_years,
    normalize_doi,
    title_text,
    without_format_tag,
)
from websearch_mcp.engines.base import Engine
from websearch_mcp.engines.common import (
    as_dict,
    as_id,
    as_int,
    as_text,
    check_error_body,
    error_message,
    http_url,
    json_object,
    object_list,
    ranked_hits,
)
from websearch_mcp.engines.text import clean_text
from websearch_mcp.models import Hit, HttpRequest, HttpResponse, Query

FIELDS = (
    "title,url,abstract,year,publicationDate,authors,venue,externalIds,citationCount,openAccessPdf"
)
_ID_NAMES = {"ArXiv": "arxiv", "PubMed": "pmid"}


def year_range(query: Query) -> str | None:
    """S2's `year` parameter: `2019-2021`, `2019-`, `-2021` or `2020`."""
    if query.year_from is None and query.year_to is None:
        return None
    start = "" if query.year_from is None else str(query.year_from)
    end = "" if query.year_to is None else str(query.year_to)
    return start if start == end else f"{start}-{end}"


def external_ids(paper: dict[str, Any]) -> dict[str, str]:
    """The paper's arXiv id and PubMed id from `externalIds`, for merging with other indexes."""
    found = as_dict(paper.get("externalIds"))
    ids = {name: as_id(found.get(key)) for key, name in _ID_NAMES.items()}
    return {name: value for name, value in ids.items() if value}


def _hit(paper: dict[str, Any], rank: int, engine: str, *, query: Query) -> Hit | None:
    # MEDLINE's records keep its final period, as PubMed and Europe PMC give them (title_text).
    title = title_text(without_format_tag(as_text(paper.get("title")).strip()))
    url = http_url(paper.get("url"))
    if not url and isinstance(paper.get("paperId"), str):
        url = f"https://www.semanticscholar.org/paper/{paper['paperId']}"
    if not title or not url:
        return None
    return Hit(
        title=title,
        url=url,
        snippet=paper.get("abstract") or "",
        rank=rank,
        engine=engine,
        published=_published(paper, query),
        authors=author_names(paper.get("authors")),
        doi=normalize_doi(as_dict(paper.get("externalIds")).get("DOI")),
        venue=clean_text(paper.get("venue")) or None,
        citations=as_int(paper.get("citationCount")),
        pdf_url=http_url(as_dict(paper.get("openAccessPdf")).get("url")),
        ids=external_ids(paper),
    )


def _published(paper: dict[str, Any], query: Query) -> str | None:
    """The paper's date, or its `year` where only that is in the asked years: S2 matches
    `year=` on that field, and a date of the year before (an online-first day) would drop the
    paper from the fused list, which is checked again on the date shown."""
    year = publication_date(paper.get("year"))
    return date_in_asked_years(publication_date(paper.get("publicationDate")) or year, year, query)


#: S2's answer (400) to a page past the results of the query.
_PAST_THE_END = "Requested data for this limit and/or offset is not available"


#: A hyphen joining two parts of a word ("COVID-19", "self‐attention").
_HYPHEN_IN_WORD = re.compile(r"(?<=\w)[-\u2010\u2011](?=\w)")


class SemanticScholar(Engine):
    """Semantic Scholar: `data[]` papers; a search without matches answers
    `{"total": 0, "offset": 0}` with no `data` key, which is an empty list."""

    name = "semantic_scholar"
    kind = "academic"
    base_url = "https://api.semanticscholar.org"
    needs_key = False  # keys are optional and used when configured
    default_timeout = 8.0
    key_env = None  # optional keys: SEMANTIC_SCHOLAR_API_KEYS
    # Titles and abstracts are plain text, without markup: "n<k and k>2" is no tag.
    markup = False

    max_rows: ClassVar[int] = 100
    # Relevance search serves the first 1,000 results: `offset` + `limit` at most 1,000.
    max_depth: ClassVar[int] = 1000

    def request(self, query: Query, key: str | None) -> HttpRequest:
        """Parameters: `query`, `fields`, `limit`, `offset`, `year`; the key in `x-api-key`. A
        page reaching past the first 1,000 results asks for those of it that are left."""
        rows = self.rows(query)
        offset = (query.page - 1) * rows
        params: dict[str, Any] = {
            # Its documentation: "Hyphenated query terms yield no matches (replace it with space
            # to find matches)": "COVID-19" found nothing.
            "query": _HYPHEN_IN_WORD.sub(" ", query.text),
            "fields": FIELDS,
            "limit": min(rows, self.max_depth - offset),
        }
        if offset:
            params["offset"] = offset
        if years := year_range(query):
            params["year"] = years
        headers = {"Accept": "application/json"}
        if key:
            headers["x-api-key"] = key
        return HttpRequest(
            "GET",
            "/graph/v1/paper/search",
            params=params,
            headers=headers,
            secrets=(key,) if key else (),
        )

    def parse(self, response: HttpResponse, query: Query) -> list[Hit]:
        """`data[]` -> hits; an error body (`{"error": ...}`, `{"message": ...}`) -> typed error,
        but for a page past the query's last result, which has no papers."""
        if (
            response.status == 400
            and query.page > 1
            and _PAST_THE_END in (error_message(response, "error") or "")
        ):
            return []
        check_error_body(response, "error", "message")
        self.check_status(response)
        papers = json_object(response, "Semantic Scholar").get("data", [])
        hit = functools.partial(_hit, query=query)
        return ranked_hits(object_list(papers, "Semantic Scholar", "data"), self.name, hit)
