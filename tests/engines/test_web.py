"""Web engines: parsers on recorded responses, request builders, error mapping, fake servers."""

from __future__ import annotations

import base64
import json
import time
from datetime import UTC, date, datetime, timedelta
from typing import Any

import httpx
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from testing.damaged_answers import RECORDED, assert_keeps_contract, damaged, recorded_bodies
from testing.engine_answers import (
    assert_clean,
    assert_read_as_missing,
    edited,
    params_of,
    parse,
)
from testing.fake_engines import (
    ENGINE_NAMES,
    Body,
    FakeEngines,
    Fault,
    base_urls,
    fetch,
    serve_fake_engines,
)
from testing.shared import fixture_bytes
from testing.wire_formats import render, wikipedia_result
from websearch_mcp.engines.registry import ENGINES
from websearch_mcp.engines.web.bing import Bing, result_url
from websearch_mcp.engines.web.brave import Brave
from websearch_mcp.engines.web.duckduckgo import DuckDuckGo, region
from websearch_mcp.engines.web.exa import Exa
from websearch_mcp.engines.web.searxng import SearXNG
from websearch_mcp.engines.web.tavily import Tavily
from websearch_mcp.engines.web.wikipedia import Wikipedia, article_url
from websearch_mcp.errors import (
    EngineAuthError,
    EngineBlocked,
    EngineCaptcha,
    EngineError,
    EngineParseError,
    EngineRateLimited,
)
from websearch_mcp.models import Category, Hit, HttpResponse, Query

KEY = "sk-test-4f9a1c2e7b"
JSON_ENGINES = ("tavily", "brave", "exa", "searxng", "wikipedia")
#: The engines this file covers; the others have their own test files.
WEB = ("tavily", "brave", "exa", "searxng", "duckduckgo", "bing", "wikipedia")
KEYED = tuple(name for name in WEB if ENGINES[name].needs_key)


# --- declarations -------------------------------------------------------------------------------


@pytest.mark.parametrize("name", sorted(ENGINES))
def test_declarations_of_every_engine(name: str) -> None:
    cls = ENGINES[name]
    assert cls.name == name and cls.kind in ("web", "academic")
    assert cls.base_url.startswith(("https://", "http://"))
    assert not cls.base_url.endswith("/")
    assert cls.default_timeout > 0
    cls()  # the orchestrator builds engines without arguments


@pytest.mark.parametrize("name", WEB)
def test_declarations(name: str) -> None:
    cls = ENGINES[name]
    assert cls.name == name and cls.kind == "web"
    assert cls.base_url.startswith(("https://", "http://127.0.0.1"))
    assert not cls.base_url.endswith("/")
    assert cls.default_timeout > 0
    if cls.needs_key:
        assert cls.key_env == f"{name.upper()}_API_KEYS"
    else:
        assert cls.key_env is None
    cls()  # the orchestrator builds engines without arguments


def test_score_declared_only_where_engines_return_one() -> None:
    assert {n for n in WEB if ENGINES[n].returns_score} == {"tavily", "searxng"}


# --- Tavily -------------------------------------------------------------------------------------


def test_tavily_recorded_search() -> None:
    hits = parse(Tavily(), fixture_bytes("tavily/test_basic_search.json"))
    assert len(hits) == 5
    assert_clean(hits)
    first = hits[0]
    assert first.title == "Pydantic AI: Agent Framework"
    assert (
        first.url == "https://medium.com/ai-agent-insider/pydantic-ai-agent-framework-02b138e8db71"
    )
    assert first.score == pytest.approx(0.9999875)
    assert first.engine == "tavily" and first.published is None
    # Markdown headings and emphasis are gone from the snippet.
    assert first.snippet.startswith("AI Agent Insider. Pydantic AI: Agent Framework. Introducing")
    assert "**" not in first.snippet and "#" not in first.snippet
    assert hits[1].url == "https://ai.pydantic.dev/"
    assert hits[2].snippet == (
        "Pydantic AI lets you integrate large language models like GPT-5 directly into your"
        " Python applications."
    )
    assert hits[4].title == "Pydantic AI : r/LLMDevs"
    # A quotation in markdown italics (*"..."*) loses its stars too.
    assert hits[3].snippet.startswith('"Pydantic AI is a Python agent framework designed')
    assert "*" not in hits[3].snippet


def test_tavily_news_dates_and_skipped_items() -> None:
    body = {
        "results": [
            {"title": "No URL", "content": "x", "score": 0.5},
            {
                "title": "A",
                "url": "https://a.example/",
                "content": "",
                "score": "high",
                "published_date": "Wed, 15 Jan 2025 15:42:00 GMT",
            },
            {
                "title": "B",
                "url": "https://b.example/",
                "content": "b",
                "score": 0.4,
                "published_date": "2024-11-02",
            },
        ]
    }
    hits = parse(Tavily(), json.dumps(body))
    assert [h.url for h in hits] == ["https://a.example/", "https://b.example/"]
    assert [h.rank for h in hits] == [1, 2]
    assert hits[0].score is None  # not a number
    assert [h.published for h in hits] == ["2025-01-15", "2024-11-02"]


@pytest.mark.parametrize("printed", ["2019-00-00", "2019-03-00", "2019-00-15T10:00:00Z"])
def test_a_date_with_a_month_or_day_of_zero_is_no_date(printed: str) -> None:
    """Metadata writes an unknown month or day as 00; "2019-00-00" is no `YYYY-MM-DD` date."""
    body = {"results": [{"title": "A", "url": "https://a.example/", "published_date": printed}]}
    [hit] = parse(Tavily(), json.dumps(body))
    assert hit.published is None


def test_only_an_engine_that_cannot_filter_by_date_drops_what_it_dates_before_it() -> None:
    """docs/engines.md: an engine that cannot be asked for a time range (Jina) has its results
    dated before it left out, by the day of the engine's own clock; one that was asked for it
    (Tavily) keeps what it answered."""
    today = date(2090, 1, 10)  # past the real clock: only the engine's own day puts 2089 behind
    week = Query("q", time_range="week")
    recent = {"title": "A", "url": "https://a.example/", "date": "2090-01-09"}
    old = {"title": "B", "url": "https://b.example/", "date": "2089-12-01"}
    jina_body = {"code": 200, "data": [{**item, "description": "x"} for item in (recent, old)]}
    jina = ENGINES["jina"](today=lambda: today)
    assert [h.url for h in parse(jina, json.dumps(jina_body), query=week)] == [recent["url"]]
    tavily_body = {"results": [{"title": "B", "url": old["url"], "published_date": old["date"]}]}
    tavily = Tavily(today=lambda: today)
    assert [h.url for h in parse(tavily, json.dumps(tavily_body), query=week)] == [old["url"]]


def test_tavily_request() -> None:
    req = Tavily().request(Query("rust async", max_results=50, time_range="week"), KEY)
    assert (req.method, req.path) == ("POST", "/search")
    assert req.json == {
        "query": "rust async",
        "max_results": 20,
        "search_depth": "basic",
        "topic": "general",
        "include_answer": False,
        "include_raw_content": False,  # whole pages would fill the answer past its size cap
        "time_range": "week",
    }
    assert req.headers["Authorization"] == f"Bearer {KEY}"
    assert "time_range" not in Tavily().request(Query("x"), KEY).json


def test_tavily_usage_limit_statuses_are_rate_limits() -> None:
    for status in (432, 433):
        with pytest.raises(EngineRateLimited, match="usage limit"):
            parse(Tavily(), '{"detail": {"error": "exceeded"}}', status)


@pytest.mark.parametrize(
    ("status", "body", "error", "kind"),
    [
        (400, '{"detail": {"error": "Query is too long."}}', "Query is too long.", EngineError),
        # A refused key keeps the service's own words for it.
        (
            401,
            '{"detail": {"error": "Unauthorized"}}',
            "HTTP 401: the API key was refused",
            EngineAuthError,
        ),
        (400, '{"detail": "Invalid time_range"}', "Invalid time_range", EngineError),
        (500, '{"detail": {"error": ""}}', "HTTP 500", EngineError),
    ],
)
def test_tavily_says_why_it_refused(status: int, body: str, error: str, kind: type) -> None:
    """Its refusals showed as "HTTP 400", its reason unread."""
    with pytest.raises(kind) as refused:
        parse(Tavily(), body, status)
    assert str(refused.value) == error


@pytest.mark.parametrize("value", [["a", "b"], {"value": "x y"}, True, 12345])
def test_tavily_content_of_another_type_is_no_snippet(value: Any) -> None:
    body = fixture_bytes("tavily/test_basic_search.json")
    assert_read_as_missing(Tavily(), body, ("results", 0, "content"), value, Query("q"))


# --- Brave --------------------------------------------------------------------------------------


def test_brave_recorded_web_search() -> None:
    hits = parse(Brave(), fixture_bytes("brave_api/web_search_hello_world.json"))
    assert len(hits) == 20
    assert_clean(hits)
    first = hits[0]
    assert first.title == '"Hello, World!" program - Wikipedia'
    assert first.url == "https://en.wikipedia.org/wiki/%22Hello,_World!%22_program"
    assert first.snippet.startswith(
        'A "Hello, World!" program is usually a simple computer program that emits'
    )
    assert "language's basic syntax" in first.snippet  # &#x27; unescaped
    assert first.published == "2024-12-27"  # page_age 2024-12-27T15:49:55
    assert first.score is None
    assert hits[1].published == "2019-09-06"
    learn = next(h for h in hits if h.url == "https://www.learnpython.org/en/Hello,_World!")
    assert learn.published is None  # neither page_age nor age
    # Without page_age, a calendar date in `age` dates the result.
    aged = edited(
        fixture_bytes("brave_api/web_search_hello_world.json"), ("web", "results", 1, "page_age")
    )
    assert parse(Brave(), aged)[1].published == "2019-09-06"  # age "September 6, 2019"
    # With both, page_age (a full timestamp) dates the result, whatever `age` says.
    apart = json.loads(fixture_bytes("brave_api/web_search_hello_world.json"))
    apart["web"]["results"][1]["age"] = "January 2, 2020"
    assert parse(Brave(), json.dumps(apart))[1].published == "2019-09-06"
    site = next(h for h in hits if h.url == "https://www.hello-world.com/")
    # Highlight tags inside a word leave no gap: "<strong>Hello</strong>-<strong>world</strong>.com"
    assert site.snippet.startswith("Hello-world.com: Learn languages with games")
    assert hits[-1].title == "Go by Example: Hello World"


def test_brave_recorded_news_search() -> None:
    hits = parse(Brave(), fixture_bytes("brave_api/news_search.json"))
    assert len(hits) == 20
    assert_clean(hits)
    assert hits[0].title == "World News and International Headlines : NPR"
    assert hits[0].url == "https://www.npr.org/sections/world/"
    assert hits[0].published == "2024-12-31"


def test_brave_empty_answers() -> None:
    assert parse(Brave(), '{"type": "search", "query": {"original": "zzqx"}}') == []
    assert parse(Brave(), '{"type": "search", "web": {"type": "search", "results": []}}') == []
    with pytest.raises(EngineParseError):
        parse(Brave(), '{"type": "search", "web": {"type": "search"}}')
    with pytest.raises(EngineParseError):
        parse(Brave(), '{"message": "hello"}')


def test_brave_request() -> None:
    brave = Brave()
    req = brave.request(Query("hello world", max_results=50, time_range="month", page=3), KEY)
    assert (req.method, req.path) == ("GET", "/res/v1/web/search")
    assert req.params == {"q": "hello world", "count": 20, "offset": 2, "freshness": "pm"}
    assert req.headers["X-Subscription-Token"] == KEY
    freshness = {
        tr: params_of(brave.request(Query("x", time_range=tr), KEY))["freshness"]
        for tr in ("day", "week", "month", "year")
    }
    assert freshness == {"day": "pd", "week": "pw", "month": "pm", "year": "py"}
    langs = {
        lang: params_of(brave.request(Query("x", language=lang), KEY))["search_lang"]
        for lang in ("de", "de-AT", "ja", "zh-CN", "zh-TW", "pt-BR", "en_GB")
    }
    assert langs == {
        "de": "de",
        "de-AT": "de",
        "ja": "jp",
        "zh-CN": "zh-hans",
        "zh-TW": "zh-hant",
        "pt-BR": "pt-br",
        "en_GB": "en-gb",
    }
    plain = brave.request(Query("x", max_results=5), KEY).params
    assert plain == {"q": "x", "count": 5}


def test_brave_is_sent_only_search_languages_it_lists() -> None:
    # Brave answers a `search_lang` outside its list with HTTP 422 ("Input should be 'ar', 'eu',
    # ... 'pt-br', 'pt-pt', ..."): a Portuguese or Norwegian search lost Brave altogether.
    langs = {
        lang: sent("brave", Query("x", language=lang)).get("search_lang")
        for lang in ("pt", "pt-PT", "pt-BR", "no", "nb-NO", "ja-JP", "id", "sw")
    }
    assert langs == {
        "pt": "pt-pt",
        "pt-PT": "pt-pt",
        "pt-BR": "pt-br",
        "no": "nb",
        "nb-NO": "nb",
        "ja-JP": "jp",
        "id": None,
        "sw": None,
    }


def test_brave_is_sent_its_code_for_language_tags_under_other_names() -> None:
    # Nynorsk and the old Hebrew tag name languages Brave lists under `nb` and `he`.
    langs = {
        lang: sent("brave", Query("x", language=lang)).get("search_lang")
        for lang in (
            "nn",
            "iw",
            "he-IL",
            "ko-KR",
            "zh-Hant-TW",
            "zh-Hant-HK",
            "zh-MO",
            "zh-Hans-CN",
        )
    }
    assert langs == {
        **{"nn": "nb", "iw": "he", "he-IL": "he", "ko-KR": "ko"},
        **{"zh-Hant-TW": "zh-hant", "zh-Hant-HK": "zh-hant", "zh-MO": "zh-hant"},
        "zh-Hans-CN": "zh-hans",
    }


# --- Exa ----------------------------------------------------------------------------------------


def test_exa_documented_highlights_example() -> None:
    hits = parse(Exa(), fixture_bytes("exa/docs_search_highlights_example.json"))
    assert len(hits) == 2
    assert_clean(hits)
    assert hits[0].url == "https://arxiv.org/html/2608.21702"
    assert hits[0].title.startswith("From Association to Causation: Improving Retrieval")
    assert hits[0].snippet.startswith("Retrieval-Augmented Generation (RAG) grounds LLM generation")
    assert hits[0].published is None
    assert hits[1].title == "Four retrieval techniques to improve RAG you need to know"
    assert hits[1].published == "2025-04-14"
    assert hits[1].score is None


def test_exa_highlights_of_one_page_are_told_apart() -> None:
    # Each highlight is an excerpt of its own part of the page: run together, two read as one.
    item = {"url": "https://a.example/", "title": "T", "highlights": ["First part.", " ", "Later."]}
    [hit] = parse(Exa(), json.dumps({"results": [item]}).encode())
    assert hit.snippet == "First part. … Later."


def test_exa_pasted_text_result() -> None:
    hits = parse(Exa(), fixture_bytes("exa/pasted_keyword_search_with_text.json"))
    assert len(hits) == 1
    hit = hits[0]
    assert hit.title == "预报- 遵义 - 中国天气网"
    assert hit.url == "https://www.weather.com.cn/weather/101260201.shtml"
    assert hit.published == "2025-03-02"
    assert hit.snippet.startswith("今天 7天 8-15天 40天 雷达图")
    assert "<3级" in hit.snippet and "\n" not in hit.snippet


def test_exa_error_body_is_the_error_text() -> None:
    # Exa's documented error answer: a request id, a message for people and a tag.
    body = {"requestId": "r1", "error": "numResults must be 100 or less", "tag": "INVALID_REQUEST"}
    with pytest.raises(EngineError, match="numResults must be 100 or less") as caught:
        parse(Exa(), json.dumps(body), 400)
    assert type(caught.value) is EngineError
    body = {"requestId": "r2", "error": "Invalid API key", "tag": "INVALID_API_KEY"}
    with pytest.raises(EngineAuthError, match="Invalid API key"):
        parse(Exa(), json.dumps(body), 401)


@pytest.mark.parametrize(
    ("code", "detail", "error"),
    [
        (
            "SUBSCRIPTION_TOKEN_INVALID",
            "The provided subscription token is invalid.",
            EngineAuthError,
        ),
        ("RATE_LIMITED", "Request rate limit exceeded for plan.", EngineRateLimited),
        ("USAGE_LIMIT_EXCEEDED", "", EngineRateLimited),
        ("VALIDATION", "Unable to validate request parameter(s)", EngineError),
    ],
)
def test_brave_error_answers_say_why(code: str, detail: str, error: type[EngineError]) -> None:
    # Brave's error answer (a refused key is a 422, not a 401).
    body = {"type": "ErrorResponse", "error": {"id": "e1", "status": 422, "code": code}}
    if detail:
        body["error"]["detail"] = detail  # type: ignore[index]
    with pytest.raises(EngineError) as caught:
        parse(Brave(), json.dumps(body), 422)
    assert type(caught.value) is error
    assert str(caught.value) == (f"{detail} ({code})" if detail else code)


def test_exa_request_with_injected_clock() -> None:
    exa = Exa(today=lambda: date(2026, 3, 10))
    req = exa.request(Query("rag retrieval", max_results=7, time_range="week"), KEY)
    assert (req.method, req.path) == ("POST", "/search")
    assert req.json == {
        "query": "rag retrieval",
        "type": "auto",
        "numResults": 7,
        "contents": {"highlights": True},
        "startPublishedDate": "2026-03-03T00:00:00.000Z",
    }
    assert req.headers["x-api-key"] == KEY
    starts = {
        tr: exa.request(Query("x", time_range=tr), KEY).json["startPublishedDate"][:10]
        for tr in ("day", "month", "year")
    }
    assert starts == {"day": "2026-03-09", "month": "2026-02-08", "year": "2025-03-10"}
    assert "startPublishedDate" not in exa.request(Query("x"), KEY).json


def test_exa_default_clock_is_today() -> None:
    req = Exa().request(Query("x", time_range="day"), KEY)
    start = date.fromisoformat(req.json["startPublishedDate"][:10])
    assert timedelta(0) <= date.today() - start <= timedelta(days=2)


# --- SearXNG ------------------------------------------------------------------------------------


def searxng_envelope(*results: dict[str, Any]) -> bytes:
    """A whole `format=json` answer. The recorded sample is one element of `results[]` only."""
    return json.dumps(
        {
            "query": "why is the sky blue",
            "number_of_results": 0,
            "results": list(results),
            "answers": [],
            "corrections": [],
            "infoboxes": [],
            "suggestions": [],
            "unresponsive_engines": [],
        }
    ).encode()


def test_searxng_recorded_result_in_an_envelope() -> None:
    fragment = json.loads(fixture_bytes("searxng/single_result_object_fragment.json"))
    dated = dict(fragment, url="https://example.org/later", publishedDate="2023-05-01T00:00:00")
    hits = parse(SearXNG(), searxng_envelope(fragment, dated))
    assert len(hits) == 2
    assert_clean(hits)
    first = hits[0]
    assert first.title == "Why Is the Sky Blue?"
    assert first.url == "https://www.spectroscopyonline.com/view/why-sky-blue"
    assert first.score == pytest.approx(0.14285714285714285)
    # publishedDate is null; Google's printed date ("1 apr 2013 — ") becomes the date.
    assert first.published == "2013-04-01"
    assert first.snippet.startswith("A detailed look at what makes the sky appear blue")
    assert hits[1].published == "2023-05-01"


@pytest.mark.parametrize("value", [["a", "b"], {"value": "x y"}, True, 12345])
def test_searxng_content_of_another_type_is_no_snippet(value: Any) -> None:
    body = searxng_envelope(json.loads(fixture_bytes("searxng/single_result_object_fragment.json")))
    assert_read_as_missing(SearXNG(), body, ("results", 0, "content"), value, Query("q"))


def test_searxng_json_disabled_403_says_how_to_fix() -> None:
    with pytest.raises(EngineError) as caught:
        parse(SearXNG(), "<html><body>403 Forbidden</body></html>", 403)
    assert type(caught.value) is EngineError
    assert "settings.yml" in str(caught.value)
    assert "search.formats: [html, json]" in str(caught.value)


def test_searxng_empty_and_malformed() -> None:
    assert parse(SearXNG(), searxng_envelope()) == []
    with pytest.raises(EngineParseError):
        parse(SearXNG(), '{"query": "x", "results": "none"}')
    with pytest.raises(EngineParseError):
        parse(SearXNG(), "<!DOCTYPE html><html><body>SearXNG</body></html>")


def test_searxng_no_results_with_unresponsive_engines_is_an_error_naming_them() -> None:
    body = {
        "query": "x",
        "results": [],
        "unresponsive_engines": [["google", "timeout"], ["bing", "CAPTCHA"], ["qwant", None]],
    }
    with pytest.raises(EngineError) as caught:
        parse(SearXNG(), json.dumps(body))
    assert type(caught.value) is EngineError and caught.value.status == "error"
    assert str(caught.value) == (
        "no results; the instance's engines did not answer: google (timeout), bing (CAPTCHA), qwant"
    )
    many = {**body, "unresponsive_engines": [[f"e{i}", "timeout"] for i in range(8)]}
    with pytest.raises(EngineError, match=r"e4 \(timeout\) and 3 more$"):
        parse(SearXNG(), json.dumps(many))
    # With results, unresponsive engines are only a partial answer of the instance's own.
    answered = json.loads(searxng_envelope())
    answered["results"] = [{"url": "https://a.example/", "title": "A", "content": "a"}]
    answered["unresponsive_engines"] = [["google", "timeout"]]
    assert len(parse(SearXNG(), json.dumps(answered))) == 1


def test_searxng_request() -> None:
    query = Query("sky blue", time_range="year", language="fr", page=2)
    req = SearXNG().request(query, None)
    assert (req.method, req.path) == ("GET", "/search")
    assert req.params == {
        "q": "sky blue",
        "format": "json",
        "pageno": 2,
        "time_range": "year",
        "language": "fr",
    }
    assert req.secrets == ()
    assert SearXNG().request(Query("x"), None).params == {"q": "x", "format": "json", "pageno": 1}


def test_searxng_is_sent_language_codes_in_its_own_form() -> None:
    # SearXNG accepts `language` only as `xx` or `xx-YY` and answers anything else with HTTP 400.
    langs = {
        lang: sent("searxng", Query("x", language=lang))["language"]
        for lang in ("en_GB", "EN", "zh-Hant-TW", "es-419", "pt-br", "de")
    }
    assert langs == {
        "en_GB": "en-GB",
        "EN": "en",
        "zh-Hant-TW": "zh-TW",
        "es-419": "es",
        "pt-br": "pt-BR",
        "de": "de",
    }


# --- DuckDuckGo ---------------------------------------------------------------------------------


def test_duckduckgo_recorded_page() -> None:
    hits = parse(DuckDuckGo(), fixture_bytes("duckduckgo_html/html_fake_cache_bypass_2020.html"))
    assert len(hits) == 25
    assert_clean(hits)
    first = hits[0]
    assert first.title == "Fake and free Bypass-on-Cookie, with CloudFlare edge cache..."
    assert first.url == (
        "https://medium.com/homullus/fake-and-free-bypass-on-cookie-with-cloudflare-edge-cache"
        "-workers-for-wordpress-72c36d23c174"
    )
    assert first.snippet.startswith("Bypass on cookie is a common HTTP caching technique.")
    assert hits[3].url == "https://en.wikipedia.org/wiki/Wikipedia:Bypass_your_cache"
    youtube = hits[5]
    assert youtube.url == "https://www.youtube.com/watch?v=Gta9XZ3fu6Q"  # %3F / %3D decoded
    assert all("duckduckgo.com" not in h.url for h in hits)
    assert all(h.published is None and h.score is None for h in hits)
    assert hits[-1].snippet.endswith("Setup Cache Bypass in the Navigation Tree.")
    assert "Cache Bypass > Setup" in hits[-1].snippet  # &gt; unescaped


def test_duckduckgo_recorded_403_is_blocked() -> None:
    with pytest.raises(EngineBlocked, match="403"):
        parse(DuckDuckGo(), fixture_bytes("duckduckgo_html/error_403_forbidden.html"), 403)


def test_duckduckgo_error_lite_notice_with_200_is_blocked() -> None:
    with pytest.raises(EngineBlocked):
        parse(DuckDuckGo(), fixture_bytes("duckduckgo_html/error_403_forbidden.html"))


DDG_PAGE = """<html><body><div class="serp__results"><div id="links" class="results">{}</div>
</div></body></html>"""


def ddg_result(href: str, title: str, snippet: str, extra_class: str = "") -> str:
    return (
        f'<div class="result results_links results_links_deep web-result {extra_class}">'
        f'<h2 class="result__title"><a class="result__a" href="{href}">{title}</a></h2>'
        f'<a class="result__snippet" href="{href}">{snippet}</a></div>'
    )


def test_duckduckgo_ads_skipped_and_direct_links_kept() -> None:
    page = DDG_PAGE.format(
        ddg_result(
            "https://duckduckgo.com/y.js?ad_domain=shop.example&amp;ad_provider=bing&amp;u3=x",
            "Buy now",
            "An ad",
            "result--ad",
        )
        + ddg_result("https://tracker.example/c?ad_domain=shop.example", "Ad 2", "Also an ad")
        + ddg_result("https://shop.example/offer", "Ad 3", "An ad by its class", "result--ad")
        + ddg_result("https://duckduckgo.com/y.js?ad_provider=bing&amp;u3=x", "Ad 4", "By its link")
        + ddg_result("https://docs.python.org/3/library/asyncio.html", "asyncio", "<b>Async</b> IO")
        + ddg_result("/relative/link", "Broken", "no absolute URL")
        + ddg_result("https://myduckduckgo.com/setup", "A site of its own", "not DuckDuckGo's")
        + ddg_result(
            "//duckduckgo.com/l/?uddg=https%3A%2F%2Fpeps.python.org%2Fpep-0492%2F&amp;rut=ab",
            "PEP 492",
            "Coroutines with async and await",
        )
    )
    hits = parse(DuckDuckGo(), page)
    assert [(h.rank, h.url) for h in hits] == [
        (1, "https://docs.python.org/3/library/asyncio.html"),
        (2, "https://myduckduckgo.com/setup"),
        (3, "https://peps.python.org/pep-0492/"),
    ]
    assert hits[0].snippet == "Async IO"


def test_duckduckgo_direct_link_to_its_own_site_is_an_organic_result() -> None:
    # A page that links results directly: an organic result on duckduckgo.com (a search about
    # DuckDuckGo) is a result, as it is when the same page comes through `/l/?uddg=`.
    help_page = "https://duckduckgo.com/duckduckgo-help-pages/results/syntax/"
    page = DDG_PAGE.format(
        ddg_result(help_page, "Search Syntax", "Operators")
        + ddg_result("https://duckduckgo.com/y.js?ad_provider=bing&amp;u3=x", "Ad", "An ad")
        + ddg_result("https://duckduckgo.com/?q=syntax&amp;ia=web", "Search", "More")
    )
    assert [h.url for h in parse(DuckDuckGo(), page)] == [help_page]


@pytest.mark.parametrize(
    "search",
    [
        "https://html.duckduckgo.com/html/?q=Fake+cache+bypass",
        "https://duckduckgo.com/html/?q=Fake+cache+bypass",
        "https://lite.duckduckgo.com/lite/?q=Fake+cache+bypass",
        "https://duckduckgo.com/?q=Fake+cache+bypass&amp;ia=web",
    ],
)
def test_duckduckgo_its_own_search_page_linked_absolutely_is_no_result(search: str) -> None:
    """Only `/?q=` was read as a search: a link to the HTML (or lite) search page, as the
    recorded page writes it relatively (`/html/`) but absolute, was a result."""
    recorded = fixture_bytes("duckduckgo_html/html_fake_cache_bypass_2020.html").decode()
    first = recorded.split('class="result__a" href="', 1)[1].split('"', 1)[0]
    hits = parse(DuckDuckGo(), recorded)
    assert [h.url for h in parse(DuckDuckGo(), recorded.replace(first, search))] == [
        h.url for h in hits[1:]
    ]


def test_duckduckgo_blocks() -> None:
    ddg = DuckDuckGo()
    empty_results_page = DDG_PAGE.format("")
    with pytest.raises(EngineBlocked, match="202"):
        parse(ddg, empty_results_page, 202)
    with pytest.raises(EngineBlocked, match="202"):
        parse(ddg, "", 202)
    anomaly = (
        '<html><body><form id="challenge-form" action="//duckduckgo.com/anomaly.js">'
        '<div class="anomaly-modal__title">Unfortunately, bots use DuckDuckGo too.</div>'
        "</form></body></html>"
    )
    with pytest.raises(EngineBlocked, match="CAPTCHA"):
        parse(ddg, anomaly)
    # The challenge's title alone is the CAPTCHA (rested for an hour), not a notice.
    title_only = '<html><body><div class="anomaly-modal__title">Bots use DuckDuckGo too.</div>'
    with pytest.raises(EngineCaptcha):
        parse(ddg, title_only + "</body></html>")
    with pytest.raises(EngineBlocked):
        parse(ddg, "<html><body><p>Please solve the CAPTCHA to continue.</p></body></html>")
    with pytest.raises(EngineBlocked):
        parse(
            ddg, "<html><body><p>We detected unusual traffic from your network.</p></body></html>"
        )
    # The challenge's words without its markup are the notice.
    with pytest.raises(EngineBlocked):
        parse(ddg, "<html><body><p>Unfortunately, bots use DuckDuckGo too.</p></body></html>")
    with pytest.raises(EngineRateLimited):
        parse(ddg, empty_results_page, 429, retry_after="60")


def test_duckduckgo_no_results_and_not_a_page() -> None:
    no_results = (
        '<html><body><form><input name="q" value="captcha anomaly"></form>'
        + DDG_PAGE.format('<div class="no-results">No results.</div>')
        + "</body></html>"
    )
    assert parse(DuckDuckGo(), no_results) == []  # the echoed query is no block marker
    # Nor is it where the notice shows it, or on a results page without the notice.
    shown = DDG_PAGE.format('<div class="no-results">No results for "captcha solver".</div>')
    assert parse(DuckDuckGo(), shown) == []
    echoed = DDG_PAGE.format("").replace(
        "<body>", '<body><form><input name="q" value="unusual traffic"></form>'
    )
    assert parse(DuckDuckGo(), echoed) == []
    with pytest.raises(EngineParseError):
        parse(DuckDuckGo(), '{"results": []}')
    with pytest.raises(EngineParseError):
        parse(DuckDuckGo(), "")


def test_duckduckgo_request() -> None:
    ddg = DuckDuckGo()
    req = ddg.request(Query("fake cache bypass", time_range="week", language="de"), None)
    assert (req.method, req.path) == ("POST", "/html/")
    assert req.data == {"q": "fake cache bypass", "b": "", "df": "w", "kl": "de-de"}
    assert req.params is None and req.json is None
    assert ddg.request(Query("x"), None).data == {"q": "x", "b": ""}
    ranges = {
        tr: (ddg.request(Query("x", time_range=tr), None).data or {})["df"]
        for tr in ("day", "week", "month", "year")
    }
    assert ranges == {"day": "d", "week": "w", "month": "m", "year": "y"}
    assert [region(tag) for tag in ("en", "en-GB", "pt-BR", "zh-CN", "ja", "fr")] == [
        "us-en",
        "uk-en",
        "br-pt",
        "cn-zh",
        "jp-jp",
        "fr-fr",
    ]


def test_duckduckgo_is_sent_the_regions_of_japan_and_korea() -> None:
    # DuckDuckGo's regions for Japan and Korea are `jp-jp` and `kr-kr`; `jp-ja` is no region.
    regions = {
        lang: sent("duckduckgo", Query("x", language=lang))["kl"]
        for lang in ("ja", "ja-JP", "ko", "ko-KR", "pt-BR")
    }
    assert regions == {
        "ja": "jp-jp",
        "ja-JP": "jp-jp",
        "ko": "kr-kr",
        "ko-KR": "kr-kr",
        "pt-BR": "br-pt",
    }


def test_duckduckgo_is_sent_its_regions_for_tags_with_scripts_and_other_codes() -> None:
    # Tags `web_search` accepts with a script or a numeric region, and languages DuckDuckGo files
    # under another code: each goes as a region DuckDuckGo lists. One it has none for (Swahili)
    # is left out rather than sent as a made-up `sw-sw`.
    tags = {
        "zh-Hant-TW": "tw-tzh",
        "zh-Hant-HK": "hk-tzh",
        "zh-Hant": "tw-tzh",
        "zh-Hans": "cn-zh",
        "zh-Hans-CN": "cn-zh",
        "es-419": "xl-es",
        "es-US": "ue-es",
        "ar-SA": "xa-ar",
        "et": "ee-et",
        "nb-NO": "no-no",
        "ca": "ct-ca",
        "ms": "my-ms",
        "sl-SI": "sl-sl",
        "de-AT": "at-de",
        "pt_BR": "br-pt",
        "nn": "no-no",
        "tl": "ph-tl",
    }
    fake = FakeEngines(answer)
    ddg = DuckDuckGo()
    sent_kl: dict[str, str | None] = {}
    with serve_fake_engines(fake) as base, httpx.Client(timeout=5) as client:
        for tag in [*tags, "sw"]:
            request = ddg.request(Query("x", language=tag), None)
            fetch(client, base_urls(base)["duckduckgo"], request)
            sent_kl[tag] = fake.last["duckduckgo"].form.get("kl")
    assert sent_kl == {**tags, "sw": None}


# --- Bing ---------------------------------------------------------------------------------------


def test_bing_recorded_page() -> None:
    hits = parse(Bing(), fixture_bytes("bing_html/search_fake_cache_bypass_2020.html"))
    assert len(hits) == 10
    assert_clean(hits)
    assert hits[0].title == "Fake and free Bypass-on-Cookie, with CloudFlare edge cache ..."
    assert hits[0].url.startswith("https://medium.com/homullus/fake-and-free-bypass-on-cookie")
    assert hits[0].snippet.startswith("Fake it till you make it.")
    assert hits[1].url == "https://en.wikipedia.org/wiki/Wikipedia:Bypass_your_cache"
    # A rich card has no paragraph: its visible tab gives the snippet.
    assert hits[4].title == "Web cache - Wikipedia"
    assert hits[4].snippet.startswith("A Web cache is an information technology")
    # "12/5/2019 · How to ..." -> date taken off the snippet.
    wikihow = hits[7]
    assert wikihow.published == "2019-12-05"
    assert wikihow.snippet.startswith("How to Bypass Registration on Websites")
    assert hits[8].published == "2013-03-25"
    assert hits[8].snippet.startswith("Hence, cache is very useful")
    assert [h.published for h in hits].count(None) == 8


def bing_page(items: str) -> str:
    return f'<html><body><ol id="b_results">{items}</ol></body></html>'


def test_bing_redirect_links_dates_and_class_lists() -> None:
    target = "https://example.com/path?x=1&y=%C3%A9"
    encoded = base64.urlsafe_b64encode(target.encode()).decode().rstrip("=")
    href = f"https://www.bing.com/ck/a?!&amp;&amp;p=9f1&amp;ptn=3&amp;u=a1{encoded}&amp;ntb=1"
    items = (
        f'<li class="b_algo b_vtl" data-tag=""><h2><a href="{href}">Example <strong>page</strong>'
        '</a></h2><div class="b_caption"><p>Mar 3, 2020 · The <strong>page</strong> text.</p>'
        "</div></li>"
        '<li class="b_ad"><h2><a href="https://ads.example/">Ad</a></h2></li>'
        '<li class="b_algo"><h2><a href="https://b.example/">B</a></h2>'
        '<div class="b_caption"><p>3 days ago · Fresh text.</p></div></li>'
        '<li class="b_algo"><h2><a href="https://www.bing.com/ck/a?u=zz">Broken</a></h2></li>'
    )
    hits = parse(Bing(), bing_page(items))
    assert [(h.rank, h.url) for h in hits] == [(1, target), (2, "https://b.example/")]
    assert hits[0].title == "Example page"
    assert hits[0].snippet == "The page text."
    assert hits[0].published == "2020-03-03"
    assert (hits[1].snippet, hits[1].published) == ("Fresh text.", None)


# A result as Bing serves it since 2023 (its markup, trimmed): the snippet opens with an icon
# label, `<span class="algoSlug_icon">WEB</span>`.
BING_SLUG = (
    '<ol id="b_results"><li class="b_algo b_ccontain"><h2><a target="_blank" href="'
    "https://www.bing.com/ck/a?!&amp;&amp;p=214aed&amp;ptn=3&amp;ver=2&amp;hsh=3"
    '&amp;u=a1aHR0cHM6Ly9ibG9nLmdvb2dsZS9hdXRob3JzL3N1bmRhci1waWNoYWkv&amp;ntb=1">'
    "Sundar Pichai | Google Blog</a></h2>"
    '<div class="b_caption" role="contentinfo"><p class="b_lineclamp2 b_algoSlug">'
    '<span class="algoSlug_icon" data-priority="2">WEB</span>{date}Learn about Sundar Pichai,'
    " the CEO of Google and Alphabet.</p></div></li></ol>"
)


@pytest.mark.parametrize(
    ("date", "published"),
    [("", None), ('<span class="news_dt">Mar 3, 2024</span>&nbsp;&#0183;&#32;', "2024-03-03")],
)
def test_bing_snippets_leave_out_the_icon_label_and_read_the_date_after_it(
    date: str, published: str | None
) -> None:
    (hit,) = parse(Bing(), BING_SLUG.format(date=date))
    assert hit.url == "https://blog.google/authors/sundar-pichai/"
    assert hit.snippet == "Learn about Sundar Pichai, the CEO of Google and Alphabet."
    assert hit.published == published


def test_bing_result_url_decoding() -> None:
    assert result_url("https://www.bing.com/ck/a?!&&u=a1aHR0cHM6Ly9weXRob24ub3JnLw&ntb=1") == (
        "https://python.org/"
    )
    assert result_url("https://direct.example/a") == "https://direct.example/a"
    assert result_url("https://www.bing.com/ck/a?u=a1!!!") is None
    # Only the `a1` form is a base64 target: another is not decoded as one.
    assert result_url("https://www.bing.com/ck/a?u=a0aHR0cHM6Ly9weXRob24ub3JnLw") is None
    assert result_url("/search?q=related") is None


def test_bing_blocks_empty_and_malformed() -> None:
    captcha = (
        "<html><body><h1>One last step</h1><p>Our systems have detected unusual traffic from"
        " your computer network.</p></body></html>"
    )
    with pytest.raises(EngineBlocked, match="CAPTCHA"):
        parse(Bing(), captcha)
    no_results = bing_page('<li class="b_no"><h1>There are no results for zzqx</h1></li>')
    assert parse(Bing(), no_results) == []
    assert parse(Bing(), bing_page('<li class="b_ans">An answer card, no web result</li>')) == []
    with pytest.raises(EngineParseError):
        parse(Bing(), '{"not": "html"}')
    # Each sign of a challenge on its own: the form, the widget's id, the words.
    for page in (
        '<html><body><form action="/challenge/verify"><input name="t"></form></body></html>',
        '<html><body><div id="b_captcha"></div></body></html>',
        "<html><body><p>Please verify you are a human.</p></body></html>",
        "<html><body><p>Are you a robot?</p></body></html>",
    ):
        with pytest.raises(EngineBlocked, match="CAPTCHA"):
            parse(Bing(), page)


def test_bing_finding_nothing_for_a_query_naming_a_captcha_is_no_block() -> None:
    # Bing echoes the query in its notice: a block's words there are the query's, and calling
    # the answer a CAPTCHA would rest Bing for an hour for every search.
    for query in ("recaptcha enterprise 0x8f3a", "are you a robot zzqx", "unusual traffic zzqx"):
        notice = f"<li class='b_no'><h1>There are no results for <strong>{query}</strong></h1>"
        assert parse(Bing(), bing_page(notice + "</li>")) == [], query


def test_bing_request() -> None:
    bing = Bing(today=lambda: date(2026, 3, 10))
    req = bing.request(Query("fake cache bypass", page=2, time_range="day", language="de-AT"), None)
    assert (req.method, req.path) == ("GET", "/search")
    assert req.params == {
        "q": "fake cache bypass",
        "first": 11,
        "filters": 'ex1:"ez1"',
        "setlang": "de",
        "cc": "AT",
    }
    days = (date(2026, 3, 10) - date(1970, 1, 1)).days
    year = params_of(bing.request(Query("x", time_range="year"), None))["filters"]
    assert year == f'ex1:"ez5_{days - 365}_{days}"'
    presets = {
        tr: params_of(bing.request(Query("x", time_range=tr), None))["filters"]
        for tr in ("day", "week", "month")
    }
    assert presets == {"day": 'ex1:"ez1"', "week": 'ex1:"ez2"', "month": 'ex1:"ez3"'}
    assert bing.request(Query("x", language="fr"), None).params == {"q": "x", "setlang": "fr"}
    # The tag as a client may write it: the language lower-case, the country upper-case.
    cased = bing.request(Query("x", language="PT_br"), None).params
    assert cased == {"q": "x", "setlang": "pt", "cc": "BR"}


def test_bing_is_sent_a_country_only_where_the_language_tag_names_one() -> None:
    # `cc` is a country: a script (`Hans`, `Latn`) or a world region (`419`) is none.
    countries = {
        lang: sent("bing", Query("x", language=lang)).get("cc")
        for lang in ("zh-Hans", "zh-Hant-TW", "sr-Latn", "sr-Latn-RS", "es-419", "pt-BR")
    }
    assert countries == {
        "zh-Hans": None,
        "zh-Hant-TW": "TW",
        "sr-Latn": None,
        "sr-Latn-RS": "RS",
        "es-419": None,
        "pt-BR": "BR",
    }


# --- Wikipedia ----------------------------------------------------------------------------------


def test_wikipedia_recorded_searches() -> None:
    hits = parse(Wikipedia(), fixture_bytes("wikipedia/search_srlimit3.json"))
    assert len(hits) == 3
    assert_clean(hits)
    assert hits[0].title == "Python (programming language)"
    assert hits[0].url == "https://en.wikipedia.org/wiki/Python_(programming_language)"
    assert hits[0].snippet.startswith("Python is a high-level, general-purpose programming")
    # `timestamp` is the last edit, not a publication date.
    assert all(h.published is None for h in hits)
    more = parse(Wikipedia(), fixture_bytes("wikipedia/search_srinfo_suggestion.json"))
    assert len(more) == 10
    assert more[-1].title == "Python" and more[-1].url == "https://en.wikipedia.org/wiki/Python"
    zen = next(h for h in more if h.title == "Zen of Python")
    assert 'collection of 19 "guiding principles"' in zen.snippet


def test_wikipedia_urls() -> None:
    # The same URL Brave reports for this article.
    assert article_url('"Hello, World!" program') == (
        "https://en.wikipedia.org/wiki/%22Hello,_World!%22_program"
    )
    assert article_url("C++") == "https://en.wikipedia.org/wiki/C%2B%2B"
    body = fixture_bytes("wikipedia/search_srlimit3.json")
    german = Wikipedia().hits(
        HttpResponse(200, {}, body, url="https://de.wikipedia.org/w/api.php?srsearch=x"), Query("x")
    )
    assert german[0].url == "https://de.wikipedia.org/wiki/Python_(programming_language)"
    local = Wikipedia().hits(
        HttpResponse(200, {}, body, url="http://127.0.0.1:9999/wikipedia/w/api.php"), Query("x")
    )
    assert local[0].url.startswith("https://en.wikipedia.org/wiki/")


def test_wikipedia_api_errors_and_empty() -> None:
    empty = '{"batchcomplete": "", "query": {"searchinfo": {"totalhits": 0}, "search": []}}'
    assert parse(Wikipedia(), empty) == []
    with pytest.raises(EngineRateLimited):
        parse(Wikipedia(), '{"error": {"code": "ratelimited", "info": "slow down"}}')
    with pytest.raises(EngineError, match="maxlag") as caught:
        parse(Wikipedia(), '{"error": {"code": "maxlag", "info": "Waiting for db1"}}')
    assert "db1" not in str(caught.value)
    with pytest.raises(EngineParseError):
        parse(Wikipedia(), '{"batchcomplete": ""}')


def test_wikipedia_request() -> None:
    req = Wikipedia().request(Query("python programming", max_results=80, page=3), None)
    assert (req.method, req.path) == ("GET", "/w/api.php")
    assert req.params == {
        "action": "query",
        "list": "search",
        "srsearch": "python programming",
        "format": "json",
        "srlimit": 50,
        "utf8": 1,
        "sroffset": 100,
    }
    assert "sroffset" not in params_of(Wikipedia().request(Query("x"), None))


# --- every engine: status mapping, broken bodies, keys --------------------------------------------


@pytest.mark.parametrize("name", sorted(ENGINES))
def test_429_is_rate_limited_with_retry_after(name: str) -> None:
    with pytest.raises(EngineRateLimited) as caught:
        parse(ENGINES[name](), "slow down", 429, retry_after="12")
    assert caught.value.retry_after == 12.0


@pytest.mark.parametrize("name", sorted(ENGINES))
def test_server_error_is_an_engine_error(name: str) -> None:
    with pytest.raises(EngineError, match="HTTP 502"):
        parse(ENGINES[name](), "<html>bad gateway</html>", 502)


BROKEN_JSON: dict[str, str | bytes] = {
    "truncated": '{"results": [{"title": "secret-looking body", "url": "https://a',
    "html": "<!DOCTYPE html><html><body><h1>secret-looking body</h1></body></html>",
    "wrong json": '["secret-looking body"]',
    "binary": b"\x89PNG\r\n\x1a\n\x00\x00secret-looking body\xff\xfe",
}


@pytest.mark.parametrize("name", JSON_ENGINES)
@pytest.mark.parametrize("kind", sorted(BROKEN_JSON))
def test_json_engines_reject_broken_bodies_briefly(name: str, kind: str) -> None:
    with pytest.raises(EngineParseError) as caught:
        parse(ENGINES[name](), BROKEN_JSON[kind])
    text = str(caught.value)
    assert len(text) < 100
    assert "secret-looking" not in text


@pytest.mark.parametrize("name", ["duckduckgo", "bing"])
@pytest.mark.parametrize("charset", ["undefined", "idna", "punycode", "utf-7", "no-such-charset"])
def test_pages_sent_with_a_charset_no_codec_decodes_are_read_as_utf8(
    name: str, charset: str
) -> None:
    # "charset=undefined" is what a server templating an unset variable sends; Python has a
    # codec of that name that decodes nothing.
    page = fixture_bytes(RECORDED[name][0][0])
    hits = parse(ENGINES[name](), page, content_type=f"text/html; charset={charset}")
    assert hits == parse(ENGINES[name](), page, content_type="text/html; charset=utf-8")


@pytest.mark.parametrize(
    ("name", "path", "category"),
    [
        (name, path, category)
        for name, answers in RECORDED.items()
        if ENGINES[name].kind == "web" and name != "google_news"  # in test_news.py
        for path, category in answers
    ],
)
@settings(max_examples=30, deadline=None)
@given(data=st.data())
def test_damaged_recorded_answers_are_hits_or_an_engine_error(
    name: str, path: str, category: Category, data: st.DataObject
) -> None:
    body, content_type = data.draw(damaged(fixture_bytes(path), recorded_bodies()))
    query = Query("test query", category=category)
    assert_keeps_contract(ENGINES[name](), body, query, content_type)


@pytest.mark.parametrize("name", sorted(ENGINES))
@pytest.mark.parametrize("content_type", ["application/json", "text/html; charset=utf-8"])
def test_another_engines_recorded_answer_is_hits_or_an_engine_error(
    name: str, content_type: str
) -> None:
    for body in recorded_bodies():
        for query in (Query("test query"), Query("test query", category="news")):
            assert_keeps_contract(ENGINES[name](), body, query, content_type)


@pytest.mark.parametrize("name", KEYED)
@pytest.mark.parametrize("status", [401, 403])
def test_keyed_engines_refused_key_is_auth_error(name: str, status: int) -> None:
    engine = ENGINES[name]()
    body = json.dumps({"error": f"invalid key {KEY}"})
    with pytest.raises(EngineAuthError) as caught:
        parse(engine, body, status)
    assert KEY not in str(caught.value)


@pytest.mark.parametrize("name", KEYED)
def test_a_keyed_engines_payment_required_rests_the_key_as_a_quota_does(name: str) -> None:
    # 402: the account behind this key has no credit left (Exa's documented answer), so the
    # key rests and the provider's next key is tried, as after a quota answer.
    with pytest.raises(EngineRateLimited) as caught:
        parse(ENGINES[name](), json.dumps({"requestId": "r1"}), 402)
    assert "402" in str(caught.value)


@pytest.mark.parametrize("name", KEYED)
def test_keyed_requests_carry_the_key_as_a_secret(name: str) -> None:
    req = ENGINES[name]().request(Query("q", time_range="day", language="en"), KEY)
    assert req.secrets == (KEY,)
    assert any(KEY in value for value in req.headers.values())
    assert KEY not in repr(req) and KEY not in str(req)
    assert KEY not in json.dumps(req.json or {}) and KEY not in str(req.params or {})


@pytest.mark.parametrize("name", [n for n in WEB if n not in KEYED])
def test_keyless_requests_have_no_secrets(name: str) -> None:
    req = ENGINES[name]().request(Query("q"), None)
    assert req.secrets == ()


# --- fake engines: wire formats round-trip through the parsers -----------------------------------

GENERIC: list[dict[str, Any]] = [
    {
        "title": 'Tokio & "async" I/O guide',
        "url": "https://example.com/guide?x=1&y=two",
        "snippet": 'Tokio\'s runtime: scheduling & "work stealing" — ünïcode 東京',
        "score": 0.91,
        "published": "2024-02-29",
    },
    {
        "title": "Second result",
        "url": "https://docs.example.org/путь/page",
        "snippet": "A plain second snippet.",
        "score": 0.7,
    },
    {
        "title": "Third",
        "url": "http://old.example.net/",
        "snippet": "Third snippet.",
        "score": 0.5,
        "published": "2019-12-05",
    },
]
DATED = {"tavily", "brave", "exa", "searxng", "bing"}


@pytest.mark.parametrize("name", ENGINE_NAMES)
def test_rendered_results_round_trip(name: str) -> None:
    results = GENERIC
    if name == "wikipedia":  # the format carries titles only; URLs come from them
        results = [wikipedia_result(r["title"], r["snippet"]) for r in GENERIC]
    body, content_type = render(name, results, "tokio guide")
    hits = ENGINES[name]().hits(
        HttpResponse(200, {"content-type": content_type}, body), Query("tokio guide")
    )
    assert [(h.title, h.url, h.snippet) for h in hits] == [
        (r["title"], r["url"], r["snippet"]) for r in results
    ]
    assert [h.engine for h in hits] == [name] * 3
    if name in DATED:
        assert [h.published for h in hits] == ["2024-02-29", None, "2019-12-05"]
    if name in ("tavily", "searxng"):
        assert hits[0].score == 0.91 and hits[2].score == 0.5


def test_searxng_results_are_ranked_by_its_scores_not_its_display_grouping() -> None:
    # The recorded news answer lists its second-best result (score 0.5, "positions": [2])
    # seventh, after results grouped by their thumbnails.
    now = datetime(2024, 12, 31, 18, 0, tzinfo=UTC)
    body = fixture_bytes("news/searxng/browse-API_searxng_news_artificial-intelligence.json")
    hits = parse(SearXNG(now=lambda: now), body, query=Query("ai", category="news"))
    scores = [h.score for h in hits]
    assert scores == sorted(scores, reverse=True)  # type: ignore[type-var]
    second = hits[1]
    assert second.title.startswith("Advanced Micro Devices vs. Alphabet") and second.rank == 2


@pytest.mark.parametrize("name", ENGINE_NAMES)
def test_rendered_empty_lists_parse_as_empty(name: str) -> None:
    body, content_type = render(name, [], "zzqx")
    hits = ENGINES[name]().hits(HttpResponse(200, {"content-type": content_type}, body), Query("q"))
    assert hits == []


# --- fake engines: the server ---------------------------------------------------------------------


def answer(engine: str, query: str) -> list[dict[str, Any]]:
    if engine == "wikipedia":
        return [wikipedia_result(f"{query} (wiki)", "wiki text")]
    return [
        {"title": f"{engine}: {query}", "url": f"https://{engine}.example/1", "snippet": "one"},
        {"title": f"{engine} two", "url": f"https://{engine}.example/2", "snippet": "two"},
    ]


def sent(name: str, query: Query) -> dict[str, str]:
    """The query parameters (or form fields) engine `name` puts on the wire for `query`, as a
    fake server on 127.0.0.1 receives them."""
    fake = FakeEngines(answer)
    engine = ENGINES[name]()
    key = KEY if engine.needs_key else None
    with serve_fake_engines(fake) as base, httpx.Client(timeout=5) as client:
        fetch(client, base_urls(base)[name], engine.request(query, key))
    return fake.last[name].form or fake.last[name].params


def test_fake_server_serves_every_engine_on_its_real_path() -> None:
    fake = FakeEngines(answer)
    query = Query("pgvector hnsw", time_range="week", language="de")
    with serve_fake_engines(fake) as base, httpx.Client(timeout=5) as client:
        urls = base_urls(base)
        for name in ENGINE_NAMES:
            engine = ENGINES[name]()
            key = KEY if engine.needs_key else None
            hits = engine.hits(fetch(client, urls[name], engine.request(query, key)), query)
            expected = "pgvector hnsw (wiki)" if name == "wikipedia" else f"{name}: pgvector hnsw"
            assert hits[0].title == expected, name
            assert fake.counts[name] == 1
        assert fake.last["tavily"].headers["authorization"] == f"Bearer {KEY}"
        assert fake.last["tavily"].json["time_range"] == "week"
        assert fake.last["exa"].headers["x-api-key"] == KEY
        assert fake.last["brave"].headers["x-subscription-token"] == KEY
        assert fake.last["brave"].params == {
            "q": "pgvector hnsw",
            "count": "10",
            "freshness": "pw",
            "search_lang": "de",
        }
        assert fake.last["duckduckgo"].method == "POST"
        assert fake.last["duckduckgo"].form["kl"] == "de-de"
        assert fake.last["searxng"].params["format"] == "json"
        assert fake.last["wikipedia"].path == "/wikipedia/w/api.php"
        assert fake.last["bing"].params["setlang"] == "de"
        # GET on DuckDuckGo's endpoint works too, with or without the trailing slash.
        got = client.get(f"{urls['duckduckgo']}/html", params={"q": "get query"})
        assert got.status_code == 200 and fake.last["duckduckgo"].query == "get query"
        fake.reset()
        assert not fake.counts and not fake.last


def test_a_json_answer_nested_too_deep_is_no_json() -> None:
    # Deeper than either JSON reader goes: a parse error naming the engine, like any other body
    # that is not JSON, not an unexpected RecursionError.
    nested = b"[" * 100_000 + b"]" * 100_000
    fake = FakeEngines(answer, bodies={"brave": Body(nested, content_type="application/json")})
    brave = Brave()
    with serve_fake_engines(fake) as base, httpx.Client(timeout=5) as client:
        response = fetch(client, base_urls(base)["brave"], brave.request(Query("x"), KEY))
        with pytest.raises(EngineParseError, match="not JSON"):
            brave.hits(response, Query("x"))


def test_fake_server_faults_and_fixed_bodies() -> None:
    fake = FakeEngines(
        answer,
        faults={
            "brave": Fault(status=429, body='{"type": "ErrorResponse"}', retry_after="7"),
            "duckduckgo": Fault(captcha=True),
            "bing": Fault(captcha=True),
            "exa": Fault(garbage=True),
            "tavily": Fault(delay=0.3),
            "wikipedia": Fault(hang=True),
        },
        bodies={"searxng": Body(b"Forbidden", status=403, content_type="text/plain")},
    )
    query = Query("x")

    def call(name: str, client: httpx.Client, base: str) -> list[Hit]:
        engine = ENGINES[name]()
        request = engine.request(query, KEY if engine.needs_key else None)
        return engine.hits(fetch(client, base_urls(base)[name], request), query)

    with serve_fake_engines(fake) as base, httpx.Client(timeout=5) as client:
        with pytest.raises(EngineRateLimited) as limited:
            call("brave", client, base)
        assert limited.value.retry_after == 7.0
        with pytest.raises(EngineBlocked):
            call("duckduckgo", client, base)
        with pytest.raises(EngineBlocked):
            call("bing", client, base)
        with pytest.raises(EngineParseError):
            call("exa", client, base)
        with pytest.raises(EngineError, match=r"settings\.yml"):
            call("searxng", client, base)
        started = time.perf_counter()
        assert call("tavily", client, base)[0].title == "tavily: x"
        assert time.perf_counter() - started >= 0.3
        with pytest.raises(httpx.ReadTimeout):
            wiki = Wikipedia()
            client.get(
                base_urls(base)["wikipedia"] + "/w/api.php",
                params=wiki.request(query, None).params,
                timeout=0.5,
            )
        assert fake.counts["wikipedia"] == 1
        # Faults and bodies can change while the server runs.
        fake.faults.pop("duckduckgo")
        fake.bodies["duckduckgo"] = fixture_bytes(
            "duckduckgo_html/html_fake_cache_bypass_2020.html"
        )
        assert len(call("duckduckgo", client, base)) == 25
        stopping = time.perf_counter()
    assert time.perf_counter() - stopping < 5  # the hanging request did not hold up shutdown
