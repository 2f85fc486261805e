"""PubMed through NCBI E-utilities, in two steps: esearch (JSON) finds PMIDs in relevance order,
esummary (JSON) describes them. `follow_up()` turns the first answer into the second request and
`parse()` reads the second. An optional NCBI key (`api_key`) raises the rate limit.
"""

from __future__ import annotations

import functools
from typing import Any, ClassVar

from websearch_mcp.dates import publication_date
from websearch_mcp.engines.academic._common import (
    author_names,
    date_in_asked_years,
    normalize_doi,
    title_text,
)
from websearch_mcp.engines.base import Engine
from websearch_mcp.engines.common import api_error, as_int, json_body, ranked_hits
from websearch_mcp.engines.text import clean_text
from websearch_mcp.errors import EngineError, EngineParseError
from websearch_mcp.models import Hit, HttpRequest, HttpResponse, Query

# NCBI wants both ends of a date range; these stand for an open end.
_MIN_YEAR, _MAX_YEAR = 1800, 3000


def _esearch(data: Any) -> dict[str, Any] | None:
    result = data.get("esearchresult") if isinstance(data, dict) else None
    return result if isinstance(result, dict) else None


def _ids(esearch: dict[str, Any]) -> list[str]:
    return [str(i) for i in _listed(esearch, "idlist") if str(i).isdigit()]


def _listed(container: dict[str, Any], key: str) -> list[Any]:
    """The list of ids under `key` (none when absent), else `EngineParseError`."""
    ids = container.get(key) or []
    if not isinstance(ids, list):
        raise EngineParseError(f"PubMed answered with {key!r} that is not a list")
    return ids


def _error(data: Any) -> str | None:
    """NCBI's error texts: a top-level `error` (rate limit, bad key) or `esearchresult.ERROR`,
    both possibly with HTTP 200."""
    if not isinstance(data, dict):
        return None
    esearch = _esearch(data) or {}
    message = data.get("error") or esearch.get("ERROR")
    return str(message) if message else None


def _doi(summary: dict[str, Any]) -> str | None:
    for article_id in summary.get("articleids") or []:
        if isinstance(article_id, dict) and article_id.get("idtype") == "doi":
            return normalize_doi(article_id.get("value"))
    return None


def _published(summary: dict[str, Any], query: Query) -> str | None:
    """The issue's date (`pubdate`), as PubMed cites a paper; the electronic one (`epubdate`)
    when only that one lies in the asked years: PubMed matches a year range on either, and the
    fused list is checked again on the date shown."""
    printed = publication_date(summary.get("pubdate"))
    printed = printed or publication_date(summary.get("sortpubdate"))
    return date_in_asked_years(printed, publication_date(summary.get("epubdate")), query)


def _hit(entry: tuple[str, Any], rank: int, engine: str, query: Query) -> Hit | None:
    """A hit for an esummary `(uid, summary)`; summaries of unknown ids carry an `error`."""
    uid, summary = entry
    if not isinstance(summary, dict) or summary.get("error"):
        return None
    title = title_text(summary.get("title"))
    if not title:
        return None
    return Hit(
        title=title,
        url=f"https://pubmed.ncbi.nlm.nih.gov/{uid}/",
        snippet="",  # summaries carry no abstract
        rank=rank,
        engine=engine,
        published=_published(summary, query),
        authors=author_names(summary.get("authors")),
        doi=_doi(summary),
        venue=clean_text(summary.get("fulljournalname") or summary.get("source")) or None,
        citations=as_int(summary.get("pmcrefcount")),  # citing articles in PubMed Central
    )


class PubMed(Engine):
    """PubMed: esummary `result.uids[]`, then `result[<uid>]` with `title`, `pubdate`
    ("2004 Feb"), `authors[].name`, `fulljournalname`, `articleids[]` (the DOI)."""

    name = "pubmed"
    kind = "academic"
    base_url = "https://eutils.ncbi.nlm.nih.gov"
    needs_key = False  # keys are optional and used when configured
    default_timeout = 8.0
    key_env = None  # optional keys: PUBMED_API_KEYS
    # NCBI's rate without a key (10 with one: `engines.pubmed.rate_limit`); a search is two
    # requests, esearch then esummary.
    rate_limit = 3.0

    max_rows: ClassVar[int] = 100

    def request(self, query: Query, key: str | None) -> HttpRequest:
        """esearch: `term`, `retmax`, `retstart`, relevance order, `mindate`/`maxdate` (pdat)."""
        rows = min(query.max_results, self.max_rows)
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
        return self._request("/entrez/eutils/esearch.fcgi", params, key)

    def follow_up(
        self, response: HttpResponse, query: Query, key: str | None
    ) -> HttpRequest | None:
        """esummary for the PMIDs an esearch answer found; None when there is nothing to
        summarise (no ids, an error that `parse` reports, or the answer is the summary)."""
        if not 200 <= response.status < 300:
            return None
        data = json_body(response)
        esearch = _esearch(data)
        if esearch is None or _error(data) or not (ids := _ids(esearch)):
            return None
        # As many as were asked for (`retmax`): a longer list is not sent on in one URL.
        ids = ids[: min(query.max_results, self.max_rows)]
        params = {"db": "pubmed", "id": ",".join(ids), "retmode": "json"}
        return self._request("/entrez/eutils/esummary.fcgi", params, key)

    @staticmethod
    def _request(path: str, params: dict[str, Any], key: str | None) -> HttpRequest:
        if key:
            params = {**params, "api_key": key}
        return HttpRequest(
            "GET",
            path,
            params=params,
            headers={"Accept": "application/json"},
            secrets=(key,) if key else (),
        )

    def parse(self, response: HttpResponse, query: Query) -> list[Hit]:
        """esummary -> hits in esearch order; an esearch without ids -> no hits."""
        data = json_body(response)
        if message := _error(data):
            raise api_error(message, response)
        self.check_status(response)
        if not isinstance(data, dict):
            raise EngineParseError("PubMed answered with a body that is not a JSON object")
        if (esearch := _esearch(data)) is not None:
            if _ids(esearch):
                raise EngineError("PubMed search answer reached the parser without its summary")
            return []
        result = data.get("result")
        if not isinstance(result, dict):
            raise EngineParseError("PubMed answered without an esummary 'result'")
        summaries = ((str(uid), result.get(str(uid))) for uid in _listed(result, "uids"))
        return ranked_hits(summaries, self.name, functools.partial(_hit, query=query))
