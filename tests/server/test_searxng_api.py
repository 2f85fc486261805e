"""`/search` in SearXNG's JSON format: parameters, the shape field by field, real clients."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from datetime import date
from typing import Any

import aiohttp
import httpx
import pytest
import requests
from searxng_search import SearXNGSearch

from testing.fake_engines import FakeEngines, Fault
from testing.resilience_helpers import settings_for as lean_settings
from testing.server_helpers import settings_for
from testing.serving import serve_app
from websearch_mcp.engines.web.searxng import SearXNG
from websearch_mcp.errors import ToolInputError
from websearch_mcp.models import HttpResponse, Query
from websearch_mcp.search.service import SearchService
from websearch_mcp.server import searxng_api
from websearch_mcp.server.app import create_app
from websearch_mcp.server.searxng_api import parse_params, published_date, scored_in_order

TOKEN = "searx-client-token-0123456789"
WEB = {name: {"general"} for name in ("tavily", "duckduckgo")} | {
    name: {"general", "news"} for name in ("brave", "searxng")
}
ACADEMIC = ["arxiv", "crossref"]
TOP_KEYS = {
    "query",
    "number_of_results",
    "results",
    "answers",
    "corrections",
    "infoboxes",
    "suggestions",
    "unresponsive_engines",
}
RESULT_KEYS = {
    "url",
    "title",
    "content",
    "engine",
    "engines",
    "positions",
    "score",
    "category",
    "publishedDate",
    "parsed_url",
    "template",
    "thumbnail",
    "img_src",
    "priority",
}

# --- parameters -----------------------------------------------------------------------------


def test_params_defaults_and_mapping() -> None:
    p = parse_params({"q": "rust async", "format": "json"}, WEB, ACADEMIC)
    assert (p.query, p.category, p.pageno, p.time_range, p.language, p.engines) == (
        "rust async",
        "general",
        1,
        None,
        None,
        None,
    )
    p = parse_params(
        {
            "q": "x",
            "pageno": "3",
            "time_range": "month",
            "language": "en-US",
            "engines": "Tavily, google,searxng",
            "categories": "general",
        },
        WEB,
        ACADEMIC,
    )
    # Engines this server does not know are ignored, as SearXNG does.
    assert (p.pageno, p.time_range, p.language, p.engines) == (
        3,
        "month",
        "en-US",
        ["tavily", "searxng"],
    )
    assert (
        parse_params({"q": "x", "language": "all", "time_range": ""}, WEB, ACADEMIC).language
        is None
    )
    for anything in ("All", "AUTO", " auto "):
        assert parse_params({"q": "x", "language": anything}, WEB, ACADEMIC).language is None
    assert parse_params({"q": "x", "engines": "google"}, WEB, ACADEMIC).engines is None
    assert parse_params({"q": "x"}, WEB, ACADEMIC).category == "general"  # format defaults to json


def test_engines_may_be_named_as_searxng_and_people_write_them() -> None:
    # SearXNG's own names have spaces ("google news"), as the tools take them.
    web = {**WEB, "google_news": {"news"}}
    news = parse_params({"q": "x", "engines": "Google News"}, web, ACADEMIC)
    assert (news.engines, news.category) == (["google_news"], "news")
    academic = [*ACADEMIC, "semantic_scholar"]
    papers = parse_params({"q": "x", "engines": "semantic scholar, arxiv"}, WEB, academic)
    assert (papers.engines, papers.category) == (["semantic_scholar", "arxiv"], "science")


def test_params_science() -> None:
    assert parse_params({"q": "x", "categories": "science"}, WEB, ACADEMIC).category == "science"
    only_papers = parse_params({"q": "x", "engines": "arxiv,crossref"}, WEB, ACADEMIC)
    assert only_papers.category == "science" and only_papers.engines == ["arxiv", "crossref"]
    assert parse_params({"q": "x", "engines": "arxiv,tavily"}, WEB, ACADEMIC).category == "general"
    # Asking for the web as well as papers, or for the web by name, is a web search.
    both = parse_params({"q": "x", "categories": "science,general"}, WEB, ACADEMIC)
    assert both.category == "general"
    general = parse_params({"q": "x", "engines": "arxiv", "categories": "general"}, WEB, ACADEMIC)
    assert general.category == "general" and general.engines is None


def test_params_naming_only_news_engines_is_news() -> None:
    web = {**WEB, "google_news": {"news"}}
    only_news = parse_params({"q": "x", "engines": "google_news"}, web, ACADEMIC)
    assert only_news.category == "news" and only_news.engines == ["google_news"]
    mixed = parse_params({"q": "x", "engines": "google_news,brave"}, web, ACADEMIC)
    assert (mixed.category, mixed.engines) == ("general", ["brave"])


@pytest.mark.parametrize(
    ("params", "category", "engines"),
    [
        ({"engines": "google_news", "categories": "general"}, "general", None),
        ({"engines": "tavily", "categories": "news"}, "news", None),
        ({"engines": "tavily,brave", "categories": "news"}, "news", ["brave"]),
    ],
)
def test_engines_named_that_do_not_serve_the_category_are_not_asked(
    params: dict[str, str], category: str, engines: list[str] | None
) -> None:
    # Asked alone they would empty the answer without a word: every engine of it is asked.
    found = parse_params({"q": "x", **params}, {**WEB, "google_news": {"news"}}, ACADEMIC)
    assert (found.category, found.engines) == (category, engines)


@pytest.mark.parametrize(
    ("params", "message"),
    [
        ({"q": "x", "format": "html"}, "format='html' is not served"),
        ({"q": "x", "format": "rss"}, "use format=json"),
        ({"format": "json"}, "q is required"),
        ({"q": "   "}, "q is required"),
        ({"q": "x", "categories": "images"}, "category 'images' is not served"),
        ({"q": "x", "pageno": "0"}, "pageno must be an integer from 1 to 1000"),
        ({"q": "x", "pageno": "two"}, "pageno must be an integer"),
    ],
)
def test_params_errors(params: dict[str, str], message: str) -> None:
    with pytest.raises(ToolInputError, match=message):
        parse_params(params, WEB, ACADEMIC)


def test_published_date_as_searxng_writes_it() -> None:
    assert published_date("2026-11-02") == "2026-11-02T00:00:00"
    assert published_date("2026-11-02T10:30:00+00:00") == "2026-11-02T10:30:00+00:00"
    assert published_date(None) is None and published_date("last week") is None
    # A paper dated by its year or month only: the first day of it.
    assert published_date("2005") == "2005-01-01T00:00:00"
    assert published_date("2004-02") == "2004-02-01T00:00:00"


# --- the endpoint ---------------------------------------------------------------------------


@pytest.fixture
def server(engines_url: str) -> Iterator[str]:
    settings = settings_for(engines_url, brave=True, server={"auth_tokens": [TOKEN]})
    with serve_app(create_app(settings)) as url:
        yield url


def search(url: str, **params: Any) -> httpx.Response:
    return httpx.get(
        f"{url}/search",
        params={"format": "json", **params},
        headers={"Authorization": f"Bearer {TOKEN}"},
        timeout=10,
    )


def test_shape_field_by_field(fake: FakeEngines, server: str) -> None:
    fake.faults["brave"] = Fault(status=500, body=b"oops")
    response = search(server, q="python asyncio event loop")
    assert response.status_code == 200
    assert response.headers["content-type"].startswith("application/json")
    body = response.json()
    assert set(body) == TOP_KEYS
    assert body["query"] == "python asyncio event loop"
    for key in ("answers", "corrections", "infoboxes", "suggestions"):
        assert body[key] == []
    assert body["unresponsive_engines"] == [["brave", "error"]]
    results = body["results"]
    assert body["number_of_results"] == len(results) >= 4
    urls = [r["url"] for r in results]
    assert len(urls) == len(set(urls))
    scores = [r["score"] for r in results]
    assert scores == sorted(scores, reverse=True) and all(0 < s <= 1 for s in scores)
    for r in results:
        assert set(r) == RESULT_KEYS
        assert isinstance(r["title"], str) and r["title"]
        assert isinstance(r["content"], str) and r["content"]
        assert r["engine"] == r["engines"][0] and set(r["engines"]) <= {"tavily", "searxng"}
        assert len(r["positions"]) == len(r["engines"]) and all(p >= 1 for p in r["positions"])
        assert r["category"] == "general" and r["template"] == "default.html"
        assert len(r["parsed_url"]) == 6
        scheme, netloc, path = r["parsed_url"][:3]
        assert r["url"].startswith(f"{scheme}://{netloc}{path}")
    docs = next(r for r in results if r["url"].startswith("https://docs.python.org/3/library/asy"))
    assert set(docs["engines"]) == {"tavily", "searxng"} and docs["positions"] == [1, 1]
    assert docs["parsed_url"][1] == "docs.python.org"
    dated = [r for r in results if r["publishedDate"]]
    assert dated and dated[0]["publishedDate"].startswith("2026-03-01T")


def test_pages_and_filters(fake: FakeEngines, engines_url: str) -> None:
    settings = settings_for(engines_url, search={"max_results": 2})
    with serve_app(create_app(settings)) as url:
        first = httpx.get(f"{url}/search", params={"q": "python asyncio", "format": "json"}).json()
        second = httpx.get(
            f"{url}/search", params={"q": "python asyncio", "format": "json", "pageno": 2}
        ).json()
        far = httpx.get(f"{url}/search", params={"q": "python asyncio", "pageno": 40}).json()
        fake.reset()
        only = httpx.get(
            f"{url}/search",
            params={"q": "python asyncio", "engines": "searxng,google", "time_range": "week"},
        ).json()
    assert len(first["results"]) == 2 and 1 <= len(second["results"]) <= 2
    assert not {r["url"] for r in first["results"]} & {r["url"] for r in second["results"]}
    assert first["number_of_results"] >= 3
    assert far["results"] == [] and far["number_of_results"] == 0
    assert fake.counts["tavily"] == 0 and fake.counts["searxng"] == 1
    assert fake.last["searxng"].params["time_range"] == "week"
    assert all(r["engines"] == ["searxng"] for r in only["results"])


def test_engines_this_server_never_asks_are_ignored_as_unknown_ones(
    fake: FakeEngines, engines_url: str
) -> None:
    # SearXNG clients name SearXNG's engines (`engines=google`); here google and arxiv are off
    # and brave has no key. Named alone they must not empty the answer: SearXNG ignores engines
    # it has not got, and searches with the others.
    with serve_app(create_app(settings_for(engines_url))) as url:
        everything = {
            r["url"] for r in httpx.get(f"{url}/search", params={"q": "asyncio"}).json()["results"]
        }
        for engines in ("google", "brave", "arxiv", "google,arxiv"):
            fake.reset()
            params = {"q": "asyncio", "engines": engines}
            body = httpx.get(f"{url}/search", params=params).json()
            assert {r["url"] for r in body["results"]} == everything, engines
            assert body["number_of_results"] == len(everything) and fake.counts["tavily"] == 1
        fake.reset()
        only = httpx.get(f"{url}/search", params={"q": "asyncio", "engines": "google,searxng"})
    assert only.json()["results"] and fake.counts["tavily"] == 0
    assert all(r["engines"] == ["searxng"] for r in only.json()["results"])


def test_bad_requests_are_400_with_a_message(server: str) -> None:
    html = search(server, q="x", format="html")
    assert html.status_code == 400
    assert "format=json" in html.json()["error"]
    assert search(server, q="x", categories="images").status_code == 400
    bad_range = search(server, q="x", time_range="decade")
    assert bad_range.status_code == 400 and "time_range" in bad_range.json()["error"]
    assert search(server, q="x" * 600).status_code == 400


@pytest.mark.parametrize("pageno", ["1", "6", "51"])
@pytest.mark.parametrize("categories", ["general", "science"])
def test_bad_values_are_400_on_every_page(
    pageno: str, categories: str, fake: FakeEngines, server: str
) -> None:
    # A page past the last one has nothing to fetch, but its values are checked all the same.
    refusals = [({"time_range": "decade"}, "time_range"), ({"q": "x" * 600}, "query")]
    if categories == "general":  # papers are not searched by language
        refusals.append(({"language": "en!"}, "language"))
    for bad, named in refusals:
        refused = search(server, **{"q": "x", **bad}, categories=categories, pageno=pageno)
        assert refused.status_code == 400 and named in refused.json()["error"], refused.text
    assert sum(fake.counts.values()) == 0


def test_all_engines_failing_is_an_empty_answer(fake: FakeEngines, server: str) -> None:
    fake.faults.update({"tavily": Fault(status=503), "brave": Fault(status=429)})
    fake.faults["searxng"] = Fault(captcha=True)
    body = search(server, q="python").json()
    assert body["results"] == [] and body["number_of_results"] == 0
    reasons = dict(body["unresponsive_engines"])
    assert reasons["tavily"] == "error" and reasons["brave"] == "too many requests"
    assert reasons["searxng"] in ("CAPTCHA", "access denied", "error")


def test_an_engine_behind_a_captcha_or_a_refusal_is_unresponsive_for_that_reason(
    fake: FakeEngines, engines_url: str
) -> None:
    fake.faults["duckduckgo"] = Fault(captcha=True)
    fake.faults["bing"] = Fault(status=403, body="Forbidden")
    settings = lean_settings(engines_url, {"duckduckgo": {}, "bing": {}, "searxng": {}})
    with serve_app(create_app(settings)) as url:
        body = httpx.get(f"{url}/search", params={"q": "python asyncio"}, timeout=10).json()
    assert body["results"]  # searxng answered
    reasons = dict(body["unresponsive_engines"])
    assert reasons == {"duckduckgo": "CAPTCHA", "bing": "access denied"}


def test_a_result_link_no_url_parser_reads_is_left_out(fake: FakeEngines, server: str) -> None:
    # An unclosed IPv6 bracket: `urlparse` raises on it, for `parsed_url` as anywhere else.
    fake.results = lambda engine, query: [
        {"title": "Python asyncio", "url": "http://[fe80::1/asyncio", "snippet": "x", "score": 1},
        {"title": "asyncio", "url": "https://example.org/asyncio", "snippet": "y", "score": 0.5},
    ]
    response = search(server, q="python asyncio")
    assert response.status_code == 200
    assert [r["url"] for r in response.json()["results"]] == ["https://example.org/asyncio"]


# Five pages, two of them near-copies, in three engines' orders: the fused list keeps the
# copies apart, listing one result above another scored a little higher.
DOCS = {
    "a": ("asyncio event loop reference", "The event loop is the core of every asyncio "
          "application and runs tasks callbacks and network IO."),
    "b": ("asyncio event loop reference mirror", "The event loop is the core of every asyncio "
          "application and runs tasks callbacks and network IO."),
    "c": ("Python asyncio tutorial", "A walkthrough of Python asyncio with coroutines gather "
          "and timeouts."),
    "d": ("Understanding asyncio in Python", "How Python schedules coroutines with asyncio."),
    "e": ("asyncio docs index", "Python asyncio documentation for coroutines streams and "
          "subprocesses."),
}  # fmt: skip
ORDERS = {"tavily": "cedba", "brave": "cabed", "searxng": "acdeb"}


def test_results_come_in_score_order_as_searxng_clients_sort_them(
    fake: FakeEngines, server: str
) -> None:
    fake.results = lambda engine, query: [
        {"title": DOCS[k][0], "url": f"https://{k}.example/x", "snippet": DOCS[k][1]}
        for k in ORDERS.get(engine, "")
    ]
    results = search(server, q="python asyncio event loop").json()["results"]
    scores = [r["score"] for r in results]
    assert scores == sorted(scores, reverse=True)
    # The fused order stands: sorted by score (stably), a client shows the same list.
    assert [r["url"] for r in sorted(results, key=lambda r: -r["score"])] == [
        r["url"] for r in results
    ]


def test_scores_shown_in_order_keep_the_list_and_lower_only_what_rises() -> None:
    scores = [0.9, 0.6, 0.7, 0.5]
    results: list[Any] = [{"url": u, "score": s} for u, s in zip("abcd", scores, strict=True)]
    assert [r["score"] for r in scored_in_order(results)] == [0.9, 0.6, 0.6, 0.5]
    assert [r["url"] for r in scored_in_order(results)] == list("abcd")


class WithPapers(SearchService):
    """The real service with a stand-in academic search returning one paper."""

    seen: list[Any]

    # A stand-in answer: only the keys the endpoint reads, not a whole `PapersOut`.
    async def academic_search(self, args: Any) -> dict[str, Any]:  # type: ignore[override]
        self.seen.append(args)
        paper = {
            "title": "Attention Is All You Need",
            "url": "https://arxiv.org/abs/1706.03762",
            "snippet": "The Transformer, based solely on attention mechanisms.",
            "engines": ["arxiv"],
            "score": 0.9,
            "published": "2017-06-12",
            "authors": ["Ashish Vaswani", "Noam Shazeer"],
            "venue": "NeurIPS",
            "doi": "10.48550/arXiv.1706.03762",
            "pdf_url": "https://arxiv.org/pdf/1706.03762",
            "score_details": {"ranks": {"arxiv": 1}},
        }
        return {"query": args.query.text, "results": [paper], "engines": [], "partial": False}


def test_science_uses_academic_search(engines_url: str) -> None:
    settings = settings_for(engines_url)
    service = WithPapers(settings)
    service.seen = []
    with serve_app(create_app(settings, service=service)) as url:
        body = httpx.get(
            f"{url}/search", params={"q": "transformers", "categories": "science", "pageno": 2}
        ).json()
    assert service.seen[0].query.page == 2 and service.seen[0].query.text == "transformers"
    paper = body["results"][0]
    assert paper["category"] == "science" and paper["template"] == "paper.html"
    assert paper["journal"] == "NeurIPS" and paper["doi"] == "10.48550/arXiv.1706.03762"
    assert paper["authors"] == ["Ashish Vaswani", "Noam Shazeer"]
    assert paper["pdf_url"].endswith("1706.03762") and paper["positions"] == [1]
    assert paper["publishedDate"] == "2017-06-12T00:00:00"


@pytest.mark.parametrize(
    ("time_range", "first_year"),
    [("day", 2026), ("month", 2026), ("year", 2025), (None, None)],
)
def test_a_science_time_range_asks_for_the_papers_of_the_years_it_reaches(
    engines_url: str,
    monkeypatch: pytest.MonkeyPatch,
    time_range: str | None,
    first_year: int | None,
) -> None:
    monkeypatch.setattr(searxng_api, "utc_today", lambda: date(2026, 3, 15))
    settings = settings_for(engines_url)
    service = WithPapers(settings)
    service.seen = []
    params = {"q": "transformers", "categories": "science"}
    with serve_app(create_app(settings, service=service)) as url:
        assert httpx.get(f"{url}/search", params={**params, "time_range": time_range}).is_success
        refused = httpx.get(f"{url}/search", params={**params, "time_range": "decade"})
    assert service.seen[0].query.year_from == first_year
    assert refused.status_code == 400 and "time_range must be one of" in refused.text


def test_a_science_time_range_at_the_turn_of_the_year_reaches_into_the_last(
    engines_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A day, a week, a calendar month or a calendar year (a leap one too) back from these days
    # falls in the year before: its papers are asked for, never only this year's.
    cases = [
        ("day", date(2026, 1, 1), 2025),
        ("week", date(2026, 1, 6), 2025),
        ("month", date(2026, 1, 31), 2025),
        ("year", date(2024, 12, 31), 2023),
    ]
    today = [cases[0][1]]
    monkeypatch.setattr(searxng_api, "utc_today", lambda: today[0])
    settings = settings_for(engines_url)
    service = WithPapers(settings)
    service.seen = []
    with serve_app(create_app(settings, service=service)) as url:
        for time_range, day, _ in cases:
            today[0] = day
            params = {"q": "transformers", "categories": "science", "time_range": time_range}
            assert httpx.get(f"{url}/search", params=params).is_success
    assert [args.query.year_from for args in service.seen] == [year for *_, year in cases]


def test_a_science_page_past_the_last_is_empty_as_on_the_web(server: str) -> None:
    web = search(server, q="transformers", pageno="51")
    science = search(server, q="transformers", categories="science", pageno="51")
    for answer in (web, science):
        assert answer.status_code == 200, answer.text
        assert answer.json()["results"] == [] and answer.json()["number_of_results"] == 0


# --- real consumers -------------------------------------------------------------------------


def test_published_searxng_client_library(server: str) -> None:
    """`searxng-search` (PyPI) parses our answer as it parses a SearXNG instance's."""
    with SearXNGSearch(
        server, headers={"Authorization": f"Bearer {TOKEN}"}, timeout=10, retries=0
    ) as client:
        results = client.text("python asyncio event loop", language="en-US", max_results=3)
    assert len(results) == 3
    assert all(r["title"] and r["body"] for r in results)
    expected = search(server, q="python asyncio event loop", language="en-US").json()["results"]
    assert [r["href"] for r in results] == [r["url"] for r in expected[:3]]


def test_open_webui_style_request_with_the_token_in_the_url(server: str) -> None:
    """Open WebUI's SearXNG client sets no headers of its own: the token rides in the URL's
    credentials (sent as HTTP Basic), the parameters are SearXNG's, results sorted by score."""
    host = server.removeprefix("http://")
    params: dict[str, str | int] = {
        "q": "python asyncio",
        "format": "json",
        "pageno": 1,
        "safesearch": "1",
        "language": "en-US",
        "time_range": "",
        "categories": "",
        "theme": "simple",
        "image_proxy": 0,
    }
    response = requests.get(
        f"http://openwebui:{TOKEN}@{host}/search",
        headers={"Accept": "text/html", "User-Agent": "RAG Bot"},
        params=params,
        timeout=10,
    )
    response.raise_for_status()
    results = sorted(response.json()["results"], key=lambda r: r.get("score", 0), reverse=True)
    assert results and all(r["url"] and r["title"] and r["content"] for r in results)
    refused = requests.get(f"http://openwebui:wrong@{host}/search", params={"q": "x"}, timeout=10)
    assert refused.status_code == 401


def test_langchain_style_request_at_the_root_is_redirected_to_search(server: str) -> None:
    """LangChain's SearxSearchWrapper sends its search to the host it is given, the root
    (`searx_host="http://localhost:8888"`): SearXNG answers `/?q=...` with a 308 to `/search`,
    which `requests` (its sync client) and aiohttp (its async one) follow."""
    headers = {"Authorization": f"Bearer {TOKEN}"}
    params = {"language": "en", "format": "json", "q": "python asyncio event loop"}
    response = requests.get(server, headers=headers, params=params, timeout=10)
    assert response.ok, response.text
    assert [r.status_code for r in response.history] == [308]
    results = response.json()["results"]
    assert results and all({"title", "url", "engines", "category"} <= set(r) for r in results)
    expected = search(server, q="python asyncio event loop", language="en").json()["results"]
    assert [r["url"] for r in results] == [r["url"] for r in expected]

    async def fetch() -> tuple[int, dict[str, Any]]:
        async with (
            aiohttp.ClientSession() as session,
            session.post(server, headers=headers, data=params) as answer,
        ):
            return answer.status, await answer.json()

    status, body = asyncio.run(fetch())  # a POST stays a POST, form and all
    assert status == 200 and [r["url"] for r in body["results"]] == [r["url"] for r in expected]
    root = httpx.get(f"{server}/", headers=headers, timeout=10)
    assert root.status_code == 404  # no query: nothing to redirect
    assert requests.get(server, params=params, timeout=10).status_code == 401


def test_litellm_style_request_with_a_bearer_token(server: str) -> None:
    """LiteLLM's SearXNG provider: GET /search?q=..&format=json with `Bearer <api key>`."""
    response = httpx.get(
        f"{server}/search?q=python+asyncio&format=json&language=en",
        headers={"Authorization": f"Bearer {TOKEN}", "Content-Type": "application/json"},
        timeout=10,
    )
    assert response.status_code == 200
    first = response.json()["results"][0]
    assert {"title", "url", "content", "publishedDate"} <= set(first)


def test_this_projects_searxng_engine_reads_it(server: str) -> None:
    response = search(server, q="python asyncio event loop")
    hits = SearXNG().hits(
        HttpResponse(200, {"content-type": "application/json"}, response.content),
        Query("python asyncio event loop"),
    )
    assert [h.url for h in hits] == [r["url"] for r in response.json()["results"]]
    assert hits[0].score == response.json()["results"][0]["score"]
    assert any(h.published == "2026-03-01" for h in hits)


def test_the_first_page_past_the_last_result_asks_no_engine(
    fake: FakeEngines, engines_url: str
) -> None:
    # 10 a page, 50 results at most: page 6 starts at the 51st, past the last one there can be.
    settings = settings_for(engines_url, search={"max_results": 10})
    with serve_app(create_app(settings)) as url:
        fake.reset()
        past = httpx.get(f"{url}/search", params={"q": "python asyncio", "pageno": 6}).json()
        assert past["results"] == [] and past["number_of_results"] == 0
        assert sum(fake.counts.values()) == 0
        last = httpx.get(f"{url}/search", params={"q": "python asyncio", "pageno": 5}).json()
    assert last["number_of_results"] > 0 and sum(fake.counts.values()) > 0


def test_general_with_news_is_the_general_search() -> None:
    assert parse_params({"q": "x", "categories": "news"}, WEB, ACADEMIC).category == "news"
    both = parse_params({"q": "x", "categories": "general,news"}, WEB, ACADEMIC)
    assert both.category == "general"
