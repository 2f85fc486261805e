"""`GET /search?q=...&format=json`: the search service in SearXNG's JSON API shape.

Open WebUI, LiteLLM, LangChain's SearxSearchWrapper and other SearXNG clients can point at this
server unchanged. Parameters: `q`, `format` (json only), `pageno`, `time_range`, `language`,
`engines` (names this server does not know or never asks, being off or without a key, are
ignored, as SearXNG does) and `categories` (`general`, `news` for the news search, or `science`
for the academic search). POST with the same parameters in the query string or a form body
works too, as on SearXNG, and so does a search sent to `/`, redirected here as SearXNG
redirects it.
"""

from __future__ import annotations

import math
import re
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass, replace
from datetime import date, datetime, timedelta
from typing import Any, cast
from urllib.parse import urlparse

from starlette.requests import Request
from starlette.responses import JSONResponse, RedirectResponse, Response

from websearch_mcp.dates import utc_today
from websearch_mcp.errors import SearchFailed, ToolInputError
from websearch_mcp.search.answer import EngineOut, PaperOut, ResultOut, SearchOut
from websearch_mcp.search.service import FAILED_STATUSES
from websearch_mcp.server.argument_checks import as_time_range, engine_name
from websearch_mcp.server.arguments import (
    MAX_PAGE,
    MAX_RESULTS_LIMIT,
    AcademicSearchArgs,
    WebSearchArgs,
    academic_search_args,
    as_int,
    web_search_args,
)

CATEGORIES = ("general", "news", "science")
MAX_PAGENO = 1000
_NO_LANGUAGE = frozenset({"", "all", "auto"})
# Papers are often dated by their year (dblp) or month (PubMed's "2004 Feb") only.
_YEAR_OR_MONTH = re.compile(r"^\d{4}(?:-\d{2})?$")
#: SearXNG's own words for an engine that did not answer.
_REASONS = {"timeout": "timeout", "rate_limited": "too many requests", "error": "error"}


@dataclass(frozen=True, slots=True)
class SearxParams:
    """A `/search` request after validation."""

    query: str
    category: str
    pageno: int
    time_range: str | None
    language: str | None
    engines: list[str] | None


def _split(value: str | None) -> list[str]:
    return [part.strip().lower() for part in (value or "").split(",") if part.strip()]


def parse_params(
    params: Mapping[str, str],
    web_engines: Mapping[str, Collection[str]],
    academic_engines: Sequence[str],
) -> SearxParams:
    """Validate SearXNG's parameters; `ToolInputError` says what is wrong (answered with 400).
    `web_engines`: the web engines asked here, each with the categories it serves (`general`,
    `news`); a named engine that does not serve the search's category is not asked."""
    fmt = (params.get("format") or "json").strip().lower()
    if fmt != "json":
        raise ToolInputError(
            f"format={fmt!r} is not served: this endpoint answers SearXNG's JSON API only;"
            " use format=json"
        )
    query = params.get("q", "")
    if not query.strip():
        raise ToolInputError("q is required: /search?q=your+words&format=json")
    categories = _split(params.get("categories"))
    unknown = [c for c in categories if c not in CATEGORIES]
    if unknown:
        raise ToolInputError(
            f"category {unknown[0]!r} is not served here; categories: {', '.join(CATEGORIES)}"
        )
    asked = [engine_name(name) for name in _split(params.get("engines"))]
    academic = [name for name in asked if name in academic_engines]
    web = [name for name in asked if name in web_engines]
    science = "science" in categories and "general" not in categories
    if not categories and academic and not web:
        # Asking only for academic indexes is asking for papers; names not served here are
        # ignored, as everywhere else.
        science = True
    language = (params.get("language") or "").strip()
    time_range = (params.get("time_range") or "").strip().lower()
    news = not science and "news" in categories and "general" not in categories
    if not categories and web and all("general" not in web_engines[name] for name in web):
        news = True  # asking only for news engines (google_news) is asking for news
    category = "science" if science else "news" if news else "general"
    # Names of engines without this category are ignored as unknown ones are: with none left,
    # every engine of the category is asked.
    known = academic if science else [name for name in web if category in web_engines[name]]
    return SearxParams(
        query=query,
        category=category,
        pageno=as_int("pageno", params.get("pageno") or 1, 1, MAX_PAGENO),
        time_range=time_range or None,
        language=None if language.lower() in _NO_LANGUAGE else language,
        engines=known or None,
    )


def published_date(value: str | None) -> str | None:
    """`2026-11-02` as SearXNG writes dates (`2026-11-02T00:00:00`); a paper dated by its year
    or month (`2005`, `2004-02`) by the first day of it; None when unreadable."""
    if not value:
        return None
    try:
        return datetime.fromisoformat(value).isoformat()
    except ValueError:
        pass
    if _YEAR_OR_MONTH.match(value):
        value = f"{value}-01-01"[:10]
    try:
        return f"{date.fromisoformat(value).isoformat()}T00:00:00"
    except ValueError:
        return None


def searxng_result(result: ResultOut | PaperOut, category: str) -> dict[str, Any]:
    """One fused result as a SearXNG result object (paper fields for `science`)."""
    engines = list(result.get("engines", []))
    details = result.get("score_details") or {}
    ranks = {**details.get("ranks", {}), **details.get("linked", {})}
    out: dict[str, Any] = {
        "url": result["url"],
        "title": result.get("title", ""),
        "content": result.get("snippet", ""),
        "engine": engines[0] if engines else "",
        "engines": engines,
        "positions": [ranks[e] for e in engines if e in ranks],
        "score": result.get("score", 0.0),
        "category": category,
        "publishedDate": published_date(result.get("published")),
        **({"source": result["source"]} if result.get("source") else {}),
        "parsed_url": list(urlparse(result["url"])),
        "template": "paper.html" if category == "science" else "default.html",
        "thumbnail": None,
        "img_src": "",
        "priority": "",
    }
    if category == "science":
        fields: Mapping[str, object] = result  # a paper's
        for ours, theirs in (
            ("authors", "authors"),
            ("venue", "journal"),
            ("doi", "doi"),
            ("pdf_url", "pdf_url"),
        ):
            if value := fields.get(ours):
                out[theirs] = value
    return out


def unresponsive(reports: Sequence[EngineOut]) -> list[list[str]]:
    """`[[engine, reason], ...]` for every engine that was asked and did not answer."""
    out = []
    for report in reports:
        status = report["status"]
        if status not in FAILED_STATUSES:
            continue
        if status == "blocked":
            reason = (
                "CAPTCHA" if "captcha" in (report.get("error") or "").lower() else "access denied"
            )
        else:
            reason = _REASONS.get(status, status)
        out.append([report["name"], reason])
    return out


def searxng_answer(
    query: str,
    results: Sequence[ResultOut],
    reports: Sequence[EngineOut],
    category: str,
    total: int | None = None,
) -> dict[str, Any]:
    """The whole SearXNG JSON body."""
    return {
        "query": query,
        "number_of_results": len(results) if total is None else total,
        "results": [searxng_result(r, category) for r in results],
        "answers": [],
        "corrections": [],
        "infoboxes": [],
        "suggestions": [],
        "unresponsive_engines": unresponsive(reports),
    }


def _error(message: str) -> Response:
    return JSONResponse({"error": message}, status_code=400)


async def _params(request: Request) -> dict[str, str]:
    params: dict[str, str] = {}
    if request.method == "POST":
        form = await request.form()
        params.update({k: v for k, v in form.items() if isinstance(v, str)})
    params.update(request.query_params)
    return params


async def index_endpoint(request: Request) -> Response:
    """`GET|POST /?q=...`: a 308 to `/search`, as SearXNG answers a search sent to its root
    (where LangChain's SearxSearchWrapper sends it); 308 keeps a POST a POST, body and all."""
    if not (await _params(request)).get("q"):
        return JSONResponse({"error": "not found; search with /search?q=...&format=json"}, 404)
    query = request.url.query
    return RedirectResponse(f"search?{query}" if query else "search", status_code=308)


async def search_endpoint(request: Request) -> Response:
    """`GET|POST /search`: one search answered in SearXNG's JSON format."""
    state = request.app.state
    service, metrics, settings = state.service, state.metrics, state.settings
    orchestrator = service.orchestrator
    # An engine this server never asks (off, no key) is as unknown to a SearXNG client as one
    # it has not got: named alone, it would empty the answer without a word.
    web, academic = (
        [name for name in orchestrator.names(kind) if orchestrator.left_out(name) is None]
        for kind in ("web", "academic")
    )
    served = {name: orchestrator.runs[name].engine.categories for name in web}
    size = settings.search.max_results
    try:
        params = parse_params(await _params(request), served, academic)
        science = params.category == "science"
        first = 0 if science else (params.pageno - 1) * size
        past = params.pageno > MAX_PAGE if science else first >= MAX_RESULTS_LIMIT
        if past:  # nothing to fetch, but a value the first page refuses is refused here too
            _search_args(replace(params, pageno=1), size, settings.server.max_query_chars)
    except ToolInputError as err:
        return _error(str(err))
    if past:
        return JSONResponse(searxng_answer(params.query, [], [], params.category, 0))
    tool = "academic_search" if science else "web_search"
    try:
        with metrics.track(tool, "searxng") as record:
            args = _search_args(params, size, settings.server.max_query_chars)
            if isinstance(args, AcademicSearchArgs):
                record.answer = answer = await service.academic_search(args)
            else:
                record.answer = answer = await service.web_search(args)
    except ToolInputError as err:
        return _error(str(err))
    except SearchFailed as err:
        reports = cast(list[EngineOut], [r.to_dict() for r in err.reports])
        return JSONResponse(searxng_answer(params.query, [], reports, params.category, 0))
    return _page(answer, first, size, params.category)


#: How far back each `time_range` reaches, in days.
_RANGE_DAYS = {"day": 1, "week": 7, "month": 31, "year": 366}


def _first_year(time_range: str | None) -> int | None:
    """The year a `time_range` reaches back into: papers are dated by the year, so `science`
    gives the papers of that year on (a wider range than the web's, never a narrower one)."""
    if time_range is None:
        return None
    return (utc_today() - timedelta(days=_RANGE_DAYS[time_range])).year


def _search_args(
    params: SearxParams, size: int, max_query_chars: int
) -> WebSearchArgs | AcademicSearchArgs:
    """The search a `/search` request asks for, checked as the tools check theirs."""
    if params.category == "science":
        return academic_search_args(
            query=params.query,
            max_results=size,
            engines=params.engines,
            page=params.pageno,
            year_from=_first_year(as_time_range(params.time_range)),
            explain=True,
            max_query_chars=max_query_chars,
        )
    # Every page comes from the same full list (one fan-out, one cache entry).
    return web_search_args(
        params.query,
        MAX_RESULTS_LIMIT,
        params.time_range,
        params.engines,
        params.language,
        True,
        category=params.category,
        max_query_chars=max_query_chars,
    )


def scored_in_order(results: Sequence[ResultOut]) -> list[ResultOut]:
    """`results` with scores that never rise down the list. SearXNG lists results by score, and
    its clients sort them by it (Open WebUI does): the order that keeps near-duplicates apart,
    which can list a result above one scored a little higher, must survive that."""
    shown: list[ResultOut] = []
    floor = math.inf
    for result in results:
        floor = min(floor, result.get("score", 0.0))
        shown.append(result if result.get("score") == floor else {**result, "score": floor})
    return shown


def _page(answer: SearchOut, first: int, size: int, category: str) -> Response:
    """One page of the answer's results in SearXNG's shape."""
    results = scored_in_order(answer["results"])
    return JSONResponse(
        searxng_answer(
            answer["query"],
            results[first : first + size],
            answer["engines"],
            category,
            total=len(results),
        )
    )
