"""PubMed through NCBI E-utilities, in two steps: esearch (JSON) finds the PMIDs in relevance
order, esummary (JSON) describes them. `follow_up()` turns the first answer into the second
request; `parse()` reads the second. An optional NCBI key raises the rate limit (3 -> 10/s).
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
from websearch_mcp.errors import EngineError, EngineParseError
from websearch_mcp.models import Hit, HttpRequest, HttpResponse, Query

# NCBI wants both ends of a date range; these stand for "open".
_MIN_YEAR, _MAX_YEAR = 1800, 3000


def _key_params(key: str | None) -> tuple[dict[str, str], tuple[str, ...]]:
    return ({"api_key": key}, (key,)) if key else ({}, ())


def _esearch(data: Any) -> dict[str, Any] | None:
    result = data.get("esearchresult") if isinstance(data, dict) else None
    return result if isinstance(result, dict) else None


def _ids(result: dict[str, Any]) -> list[str]:
    return [str(i) for i in result.get("idlist") or [] if str(i).isdigit()]


def _doi(summary: dict[str, Any]) -> str | None:
    for article_id in summary.get("articleids") or []:
        if isinstance(article_id, dict) and article_id.get("idtype") == "doi":
            return normalize_doi(article_id.get("value"))
    return None


class PubMed(Engine):
    """esummary `result.uids[]` then `result[<uid>]`: `title`, `pubdate` ("2004 Feb"),
    `authors[].name`, `fulljournalname`, `articleids[]` (DOI). No abstract in summaries."""

    name = "pubmed"
    kind = "academic"
    base_url = "https://eutils.ncbi.nlm.nih.gov/entrez/eutils"
    default_timeout = 8.0

    def request(self, query: Query, key: str | None) -> HttpRequest:
        rows = min(max(query.max_results, 1), 100)
        params: dict[str, Any] = {
            "db": "pubmed",
            "term": query.text,
            "retmode": "json",
            "retmax": rows,
            "sort": "relevance",
        }
        if query.page > 1:
            params["retstart"] = (query.page - 1) * rows
        if query.year_from is not None or query.year_to is not None:
            params["datetype"] = "pdat"
            params["mindate"] = query.year_from if query.year_from is not None else _MIN_YEAR
            params["maxdate"] = query.year_to if query.year_to is not None else _MAX_YEAR
        key_params, secrets = _key_params(key)
        return HttpRequest("GET", "/esearch.fcgi", params=params | key_params, secrets=secrets)

    def follow_up(self, response: HttpResponse, query: Query, key: str | None) -> HttpRequest | None:
        """The esummary request for the PMIDs an esearch answer found; None when there is
        nothing to summarise (no ids, an error, or the answer is already the summary)."""
        if not 200 <= response.status < 300:
            return None
        result = _esearch(try_json(response))
        if result is None or result.get("ERROR"):
            return None
        ids = _ids(result)
        if not ids:
            return None
        key_params, secrets = _key_params(key)
        params = {"db": "pubmed", "id": ",".join(ids), "retmode": "json"} | key_params
        return HttpRequest("GET", "/esummary.fcgi", params=params, secrets=secrets)

    def parse(self, response: HttpResponse, query: Query) -> list[Hit]:
        data = try_json(response)
        if isinstance(data, dict) and data.get("error"):
            raise api_error(data["error"], response)
        esearch = _esearch(data)
        if esearch is not None and esearch.get("ERROR"):
            raise api_error(esearch["ERROR"], response)  # NCBI reports these with HTTP 200
        self.check_status(response)
        if not isinstance(data, dict):
            raise not_json(response)
        if esearch is not None:
            if _ids(esearch):
                raise EngineError("PubMed search answer without its summary step")
            return []
        result = data.get("result")
        if not isinstance(result, dict):
            raise EngineParseError("expected an esummary `result`")
        hits: list[Hit] = []
        for uid in result.get("uids") or []:
            summary = result.get(str(uid))
            if not isinstance(summary, dict) or summary.get("error"):
                continue
            title = clean_text(summary.get("title"), 300)
            if not title:
                continue
            authors = (
                str(a.get("name") or "")
                for a in summary.get("authors") or []
                if isinstance(a, dict)
            )
            hits.append(
                Hit(
                    title=title,
                    url=f"https://pubmed.ncbi.nlm.nih.gov/{uid}/",
                    snippet="",
                    rank=len(hits) + 1,
                    engine=self.name,
                    published=iso_date(summary.get("pubdate"))
                    or iso_date(summary.get("sortpubdate")),
                    authors=unique(authors),
                    doi=_doi(summary),
                    venue=clean_text(summary.get("fulljournalname") or summary.get("source"), 300)
                    or None,
                    citations=as_int(summary.get("pmcrefcount")),
                )
            )
        return hits
