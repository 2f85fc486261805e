"""End to end: real uvicorn serving the app, fake engines on 127.0.0.1, the official MCP client."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from typing import Any

import httpx
import pytest
from mcp import Client

from testing.fake_engines import Body, FakeEngines, Fault, ResultsFn, base_urls, serve_fake_engines
from testing.fetch_helpers import LocalServer, page
from testing.fetch_helpers import settings_for as fetch_settings
from testing.resilience_helpers import web_search
from testing.server_helpers import text_of, tool_call
from testing.serving import serve_app
from websearch_mcp import __version__
from websearch_mcp.cli import main as cli_main
from websearch_mcp.config import Settings
from websearch_mcp.engines.registry import ENGINES
from websearch_mcp.search.configuration import parse_config
from websearch_mcp.server.app import create_app

JSON_HEADERS = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}
SHARED_URL = "https://docs.python.org/3/library/asyncio.html"

# Three engines in three wire formats return overlapping lists: the shared URL comes back as
# http/www/utm variants that must merge into one result found by all three.
LISTS: dict[str, list[dict[str, Any]]] = {
    "tavily": [
        {
            "title": "asyncio — Asynchronous I/O",
            "url": SHARED_URL,
            "snippet": "asyncio is a library to write concurrent code with async/await.",
            "score": 0.95,
        },
        {
            "title": "Python asyncio tutorial",
            "url": "https://realpython.com/async-io-python/",
            "snippet": "A walkthrough of async IO in Python: coroutines, event loop, tasks.",
            "score": 0.8,
        },
        {
            "title": "Cheap shoes sale",
            "url": "https://shoes.example.com/sale",
            "snippet": "Buy shoes.",
            "score": 0.2,
        },
    ],
    "brave": [
        {
            "title": "Python asyncio tutorial",
            "url": "https://realpython.com/async-io-python",
            "snippet": "Async IO in Python: a complete walkthrough.",
        },
        {
            "title": "asyncio — Asynchronous I/O — Python 3 docs",
            "url": "http://www.docs.python.org/3/library/asyncio.html?utm_source=brave",
            "snippet": "asyncio is the foundation of many Python asynchronous frameworks.",
        },
    ],
    "searxng": [
        {
            "title": "asyncio docs",
            "url": "https://docs.python.org/3/library/asyncio.html/",
            "snippet": "Python asyncio documentation: asynchronous I/O, event loop, coroutines.",
            "score": 3.0,
        },
        {
            "title": "Concurrency with asyncio in Python",
            "url": "https://superfastpython.com/python-asyncio/",
            "snippet": "Python asyncio guide: event loop, tasks and coroutines explained.",
        },
    ],
}


def results_for(engine: str, query: str) -> list[dict[str, Any]]:
    return LISTS.get(engine, [])


def make_settings(base: str, **search: Any) -> Settings:
    urls = base_urls(base)
    engines: dict[str, Any] = {name: {"enabled": False} for name in ENGINES}
    engines["tavily"] = {"api_keys": ["tvly-test-key-1"], "base_url": urls["tavily"]}
    engines["brave"] = {"api_keys": ["brave-test-key"], "base_url": urls["brave"]}
    engines["searxng"] = {"enabled": True, "base_url": urls["searxng"]}
    return parse_config(
        {
            "engines": engines,
            "search": {"deadline_seconds": 3, **search},
            "cache": {"backend": "none"},
        },
        "test",
        environ={},
    )


@pytest.fixture
def engine_results() -> ResultsFn:
    return results_for


@pytest.fixture
def server(engines_url: str) -> Iterator[str]:
    with serve_app(create_app(make_settings(engines_url))) as url:
        yield url


async def test_official_client_lists_and_calls_web_search(server: str) -> None:
    async with Client(f"{server}/mcp", mode="legacy", cache=None) as client:
        tools = await client.list_tools()
        tool = next(t for t in tools.tools if t.name == "web_search")
        assert tool.annotations is not None
        assert tool.annotations.read_only_hint and tool.annotations.idempotent_hint
        assert tool.input_schema["properties"]["max_results"]["maximum"] == 50
        assert tool.output_schema is not None
        result = await client.call_tool(
            "web_search", {"query": "python asyncio event loop", "explain": True}
        )
    assert not result.is_error
    answer = result.structured_content
    urls = [r["url"] for r in answer["results"]]
    # The five distinct pages, the shared one merged from three URL variants.
    assert len([u for u in urls if "docs.python.org" in u]) == 1
    top = answer["results"][0]
    assert "docs.python.org/3/library/asyncio.html" in top["url"]
    assert top["engines"] == sorted(top["engines"], key=lambda e: top["score_details"]["ranks"][e])
    assert set(top["engines"]) == {"tavily", "brave", "searxng"}
    details = top["score_details"]
    for signal in ("rrf", "alignment", "domain", "consensus", "final", "ranks"):
        assert signal in details
    # A client that reads only the text sees the details it asked for, under each result.
    assert text_of(result).count("\n   details: {") == len(answer["results"])
    shown = text_of(result).split("\n   details: ", 1)[1].split("\n", 1)[0]
    assert json.loads(shown) == details
    assert details["ranks"] == {"tavily": 1, "brave": 2, "searxng": 1}
    assert {e["name"]: e["status"] for e in answer["engines"]} == {
        "tavily": "ok",
        "brave": "ok",
        "searxng": "ok",
    }
    assert answer["cached"] is False and answer["partial"] is False
    # The text rendering carries the same list for text-only clients.
    text = text_of(result)
    assert "1. " in text and top["url"] in text and "engines: " in text


async def test_modern_protocol_revision(server: str) -> None:
    async with Client(f"{server}/mcp", mode="2026-07-28", cache=None) as client:
        assert client.protocol_version == "2026-07-28"
        tools = await client.list_tools()
        assert "web_search" in [t.name for t in tools.tools]
        result = await client.call_tool("web_search", {"query": "asyncio", "max_results": "2"})
    assert not result.is_error
    assert len(result.structured_content["results"]) == 2


async def test_search_max_results_is_the_default_the_tool_advertises_and_uses(
    engines_url: str,
) -> None:
    with serve_app(create_app(make_settings(engines_url, max_results=2))) as url:
        async with Client(f"{url}/mcp", mode="legacy", cache=None) as client:
            tools = await client.list_tools()
            web = next(t for t in tools.tools if t.name == "web_search")
            result = await client.call_tool("web_search", {"query": "asyncio"})
            more = await client.call_tool("web_search", {"query": "asyncio", "max_results": 4})
            null = await client.call_tool("web_search", {"query": "asyncio", "max_results": None})
    assert web.input_schema["properties"]["max_results"]["default"] == 2
    assert len(result.structured_content["results"]) == 2
    assert len(null.structured_content["results"]) == 2  # null is "not given"
    assert len(more.structured_content["results"]) == 4


def test_stateless_http_without_initialize(server: str) -> None:
    with httpx.Client(timeout=10) as http:
        listed = http.post(
            f"{server}/mcp",
            headers=JSON_HEADERS,
            json={"jsonrpc": "2.0", "id": 1, "method": "tools/list"},
        )
        assert listed.status_code == 200
        assert "mcp-session-id" not in listed.headers
        names = {t["name"] for t in listed.json()["result"]["tools"]}
        assert {"web_search", "fetch_page"} <= names
        called = http.post(
            f"{server}/mcp",
            headers=JSON_HEADERS,
            json=tool_call({"query": "asyncio"}),
        )
        assert called.status_code == 200 and "mcp-session-id" not in called.headers
        assert called.json()["result"]["structuredContent"]["results"]
        for method in ("GET", "DELETE"):
            response = http.request(method, f"{server}/mcp", headers=JSON_HEADERS)
            assert response.status_code == 405
            assert response.headers["allow"] == "POST"
        health = http.get(f"{server}/healthz")
        assert health.status_code == 200
        assert health.json() == {"status": "ok", "version": __version__}


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        ({"query": ""}, "query must not be empty"),
        ({"query": "x", "max_results": 0}, "max_results must be an integer from 1 to 50"),
        ({"query": "x", "max_results": 500}, "max_results must be an integer from 1 to 50"),
        (
            {"query": "x", "engines": ["altavista"]},
            'unknown engine "altavista"; allowed: baidu, bing, brave',
        ),
        # Which of them this server asks, so that the next call names one that answers.
        ({"query": "x", "engines": ["tavly"]}, "(on here: brave, searxng, tavily)"),
        ({"query": "x", "time_range": "decade"}, "time_range must be one of day, week"),
    ],
)
def test_invalid_arguments_are_tool_errors(server: str, arguments: dict, message: str) -> None:
    response = httpx.post(
        f"{server}/mcp", headers=JSON_HEADERS, json=tool_call(arguments), timeout=10
    )
    result = response.json()["result"]
    assert result["isError"] is True
    assert message in result["content"][0]["text"]


def test_one_engine_failing_is_reported_not_raised(fake: FakeEngines, server: str) -> None:
    fake.faults["brave"] = Fault(status=500, body=b"oops")
    fake.faults["searxng"] = Fault(captcha=True)
    response = httpx.post(
        f"{server}/mcp",
        headers=JSON_HEADERS,
        json=tool_call({"query": "python asyncio"}),
        timeout=10,
    )
    answer = response.json()["result"]["structuredContent"]
    statuses = {e["name"]: e for e in answer["engines"]}
    assert statuses["tavily"]["status"] == "ok"
    assert statuses["brave"]["status"] == "error" and "500" in statuses["brave"]["error"]
    assert statuses["searxng"]["status"] in ("error", "blocked")
    assert answer["partial"] is True
    assert all(r["engines"] == ["tavily"] for r in answer["results"])


async def test_searxng_whose_own_engines_failed_is_an_error_naming_them(
    fake: FakeEngines, server: str
) -> None:
    silent = {"query": "q", "results": [], "unresponsive_engines": [["google", "timeout"]]}
    fake.bodies["searxng"] = Body(json.dumps(silent).encode())
    async with Client(f"{server}/mcp", mode="legacy", cache=None) as client:
        result = await client.call_tool("web_search", {"query": "python asyncio"})
    searxng = next(e for e in result.structured_content["engines"] if e["name"] == "searxng")
    assert searxng["status"] == "error"
    assert searxng["error"] == "no results; the instance's engines did not answer: google (timeout)"
    assert result.structured_content["partial"] is True


def test_all_engines_failing_is_a_tool_error_listing_each(fake: FakeEngines, server: str) -> None:
    fake.faults.update({name: Fault(status=503) for name in ("tavily", "brave", "searxng")})
    response = httpx.post(
        f"{server}/mcp",
        headers=JSON_HEADERS,
        json=tool_call({"query": "python"}),
        timeout=10,
    )
    result = response.json()["result"]
    assert result["isError"] is True
    text = result["content"][0]["text"]
    for name in ("tavily: error", "brave: error", "searxng: error"):
        assert name in text


def test_deadline_fuses_what_arrived(fake: FakeEngines, engines_url: str) -> None:
    fake.faults["brave"] = Fault(hang=True)
    settings = make_settings(engines_url, deadline_seconds=1)
    with serve_app(create_app(settings)) as url:
        started = time.monotonic()
        response = httpx.post(
            f"{url}/mcp",
            headers=JSON_HEADERS,
            json=tool_call({"query": "python asyncio"}),
            timeout=10,
        )
        took = time.monotonic() - started
    answer = response.json()["result"]["structuredContent"]
    statuses = {e["name"]: e["status"] for e in answer["engines"]}
    assert statuses == {"tavily": "ok", "brave": "timeout", "searxng": "ok"}
    assert answer["partial"] is True and answer["results"]
    assert took < 2.5


def test_engine_settings_min_score_max_size_weight(fake: FakeEngines, engines_url: str) -> None:
    settings = make_settings(engines_url)
    settings.engines["tavily"] = settings.engines["tavily"].model_copy(
        update={"min_score": 0.5, "max_size": 1}
    )
    with serve_app(create_app(settings)) as url:
        response = httpx.post(
            f"{url}/mcp",
            headers=JSON_HEADERS,
            timeout=10,
            json=tool_call({"query": "python asyncio", "explain": True}),
        )
    answer = response.json()["result"]["structuredContent"]
    tavily = next(e for e in answer["engines"] if e["name"] == "tavily")
    assert tavily["results"] == 1  # score 0.2 dropped by min_score, then cut to max_size 1
    assert not any("shoes" in r["url"] for r in answer["results"])
    assert not any("realpython" in r["url"] and "tavily" in r["engines"] for r in answer["results"])


def test_a_time_range_leaves_out_what_an_engine_without_one_dates_before_it(
    fake: FakeEngines, engines_url: str
) -> None:
    """docs/engines.md: where an engine cannot filter by date (Jina), its results are filtered
    after the fact on their `published` date; undated ones stay."""
    today = datetime.now(UTC).date()
    pages = [
        ("https://jina.example/today", today.isoformat()),
        ("https://jina.example/2019", "2019-05-01T08:00:00Z"),
        ("https://jina.example/last-month", (today - timedelta(days=40)).isoformat()),
        ("https://jina.example/undated", None),
    ]
    data = [
        {"title": f"python asyncio {url}", "url": url, "description": "asyncio", "date": when}
        for url, when in pages
    ]
    fake.bodies["jina"] = json.dumps({"code": 200, "data": data}).encode()
    settings = make_settings(engines_url)
    settings.engines["jina"] = settings.engines["jina"].model_copy(
        update={
            "enabled": True,
            "api_keys": ["jina-test-key"],
            "base_url": f"{engines_url}/other/jina",
        }
    )
    with serve_app(create_app(settings)) as url:
        week = web_search(url, "python asyncio", time_range="week")["structuredContent"]
        month = web_search(url, "python asyncio", time_range="month")["structuredContent"]
        any_time = web_search(url, "python asyncio")["structuredContent"]

    def from_jina(answer: dict[str, Any]) -> set[str]:
        return {r["url"] for r in answer["results"] if "jina" in r["engines"]}

    assert from_jina(week) == from_jina(month) == {pages[0][0], pages[3][0]}
    assert from_jina(any_time) == {url for url, _ in pages}
    jina = next(e for e in week["engines"] if e["name"] == "jina")
    assert jina["status"] == "ok" and jina["results"] == 2


def test_keyed_engine_without_key_is_skipped(engines_url: str) -> None:
    settings = make_settings(engines_url)
    settings.engines["brave"] = settings.engines["brave"].model_copy(update={"api_keys": []})
    with serve_app(create_app(settings)) as url:
        response = httpx.post(
            f"{url}/mcp",
            headers=JSON_HEADERS,
            timeout=10,
            json=tool_call({"query": "python asyncio"}),
        )
    answer = response.json()["result"]["structuredContent"]
    brave = next(e for e in answer["engines"] if e["name"] == "brave")
    assert brave == {
        "name": "brave",
        "status": "skipped",
        "results": 0,
        "error": "no API key configured",
    }
    assert answer["partial"] is False


def test_a_disabled_engine_is_reported_only_when_asked_for(fake: FakeEngines, server: str) -> None:
    """docs/engines.md, statuses: `skipped` is "disabled when explicitly requested"; a search
    that names no engines does not mention the disabled ones."""

    def search(arguments: dict[str, Any]) -> dict[str, Any]:
        response = httpx.post(
            f"{server}/mcp", headers=JSON_HEADERS, timeout=10, json=tool_call(arguments)
        )
        return response.json()["result"]["structuredContent"]

    asked = search({"query": "python asyncio", "engines": ["searxng", "bing"]})
    assert asked["engines"][-1] == {
        "name": "bing",
        "status": "skipped",
        "results": 0,
        "error": "disabled in the configuration",
    }
    assert [e["name"] for e in asked["engines"]] == ["searxng", "bing"]
    assert fake.counts["bing"] == 0 and asked["partial"] is False
    plain = search({"query": "python asyncio"})
    assert "bing" not in {e["name"] for e in plain["engines"]}


def test_an_engine_off_by_default_and_never_configured_says_how_to_turn_it_on(
    engines_url: str,
) -> None:
    # Not "disabled in the configuration", which sends the reader to a setting not there.
    settings = make_settings(engines_url)
    del settings.engines["google"]
    with serve_app(create_app(settings)) as url:
        arguments = {"query": "python asyncio", "engines": ["searxng", "google"]}
        response = httpx.post(
            f"{url}/mcp", headers=JSON_HEADERS, timeout=10, json=tool_call(arguments)
        )
    google = response.json()["result"]["structuredContent"]["engines"][-1]
    assert google == {
        "name": "google",
        "status": "skipped",
        "results": 0,
        "error": "off by default (set engines.google.enabled: true)",
    }


def test_asking_for_engines_limits_the_fan_out(fake: FakeEngines, server: str) -> None:
    response = httpx.post(
        f"{server}/mcp",
        headers=JSON_HEADERS,
        timeout=10,
        json=tool_call({"query": "python asyncio", "engines": ["brave"]}),
    )
    answer = response.json()["result"]["structuredContent"]
    assert [e["name"] for e in answer["engines"]] == ["brave"]
    assert fake.counts["tavily"] == 0 and fake.counts["brave"] == 1


def test_cli_search_json_and_text(engines_url: str, tmp_path, monkeypatch, capsys) -> None:
    urls = base_urls(engines_url)
    config = tmp_path / "c.yaml"
    config.write_text(
        "cache: {backend: none}\n"
        "engines:\n"
        "  duckduckgo: {enabled: false}\n  bing: {enabled: false}\n  wikipedia: {enabled: false}\n"
        f"  searxng: {{enabled: true, base_url: '{urls['searxng']}'}}\n",
        encoding="utf-8",
    )
    for var in ("TAVILY_API_KEYS", "BRAVE_API_KEYS", "EXA_API_KEYS"):
        monkeypatch.delenv(var, raising=False)
    assert cli_main(["search", "python asyncio", "--config", str(config), "--json"]) == 0
    answer = json.loads(capsys.readouterr().out)
    assert answer["results"][0]["engines"] == ["searxng"]
    assert cli_main(["search", "python asyncio", "--config", str(config)]) == 0
    out = capsys.readouterr().out
    assert out.startswith("1. ") and "engines: " in out
    assert cli_main(["search", "", "--config", str(config)]) == 1
    assert "query must not be empty" in capsys.readouterr().err


ARTICLE = (
    "<html><head><title>Rivers</title></head><body><nav><a href='/'>Home menu</a></nav>"
    "<article><h1>Rivers of the North</h1>"
    + "".join(
        f"<p>Paragraph {i} about the rivers of the north and their long winters.</p>"
        for i in range(40)
    )
    + "</article></body></html>"
)


async def test_fetch_page_tool_reads_in_windows_and_refuses_private(engines_url: str) -> None:
    with LocalServer(routes={"/article": page(ARTICLE)}) as site:
        settings = make_settings(engines_url)
        settings.fetch = fetch_settings(site)
        with serve_app(create_app(settings)) as url:
            async with Client(f"{url}/mcp", mode="legacy", cache=None) as client:
                first = await client.call_tool(
                    "fetch_page", {"url": site.url("/article"), "max_chars": "1000"}
                )
                second = await client.call_tool(
                    "fetch_page",
                    {
                        "url": site.url("/article"),
                        "max_chars": 1000,
                        "start": first.structured_content["next_start"],
                    },
                )
                refused = await client.call_tool(
                    "fetch_page", {"url": f"http://169.254.169.254:{site.port}/latest/"}
                )
                bad = await client.call_tool("fetch_page", {"url": "file:///etc/passwd"})
    page1 = first.structured_content
    assert page1["title"] == "Rivers" or "Rivers" in page1["content"]
    assert "Paragraph 0" in page1["content"] and "Home menu" not in page1["content"]
    assert page1["truncated"] is True and page1["next_start"] == 1000
    assert second.structured_content["start"] == 1000
    assert (page1["content"] + second.structured_content["content"]).startswith(page1["content"])
    assert "start=1000" in text_of(first)
    assert refused.is_error and "refused" in text_of(refused)
    assert bad.is_error and "only http and https" in text_of(bad)


async def test_fetch_pages_text_says_when_the_page_is_dated_cut_or_ended(
    engines_url: str,
) -> None:
    # A text-only client reads what the structured answer says: the page's date, the extraction
    # cap that cut the text (the page is longer than any window reads), a start past the end.
    long_text = "".join(f"Line {i} of a long plain text file.\n" for i in range(200))
    dated = ARTICLE.replace(
        "<head>", "<head><meta property='article:published_time' content='2024-05-01'>"
    )
    routes = {"/notes.txt": page(long_text, "text/plain"), "/dated": page(dated)}
    with LocalServer(routes=routes) as site:
        settings = make_settings(engines_url)
        settings.fetch = fetch_settings(site, max_text_chars=1000)
        with serve_app(create_app(settings)) as url:
            async with Client(f"{url}/mcp", mode="legacy", cache=None) as client:
                whole = await client.call_tool("fetch_page", {"url": site.url("/notes.txt")})
                past = await client.call_tool(
                    "fetch_page", {"url": site.url("/notes.txt"), "start": 5000}
                )
                article = await client.call_tool("fetch_page", {"url": site.url("/dated")})
    capped = whole.structured_content
    assert capped["capped"] and capped["total_chars"] == 1000 and "next_start" not in capped
    assert text_of(whole).endswith(f"[capped: {capped['capped']}]"), text_of(whole)
    ended = past.structured_content
    assert ended["content"] == "" and ended["start"] == 5000
    assert "[nothing from start=5000: the text has 1000 characters" in text_of(past)
    assert article.structured_content["published"] == "2024-05-01"
    assert f"{site.url('/dated')}\npublished 2024-05-01\n" in text_of(article)


def test_cli_fetch(tmp_path, monkeypatch, capsys) -> None:
    with LocalServer(routes={"/article": page(ARTICLE)}) as site:
        monkeypatch.setenv("WEBSEARCH_MCP_FETCH__ALLOW_NETWORKS", "['127.0.0.0/8']")
        monkeypatch.setenv("WEBSEARCH_MCP_FETCH__ALLOWED_PORTS", f"[{site.port}]")
        assert cli_main(["fetch", site.url("/article"), "--max-chars", "500"]) == 0
        out = capsys.readouterr().out
        assert "Paragraph 0" in out and "call again with start=500" in out
        assert cli_main(["fetch", "gopher://example.com/"]) == 1
        assert "only http and https" in capsys.readouterr().err


def test_one_result_per_page_however_the_engines_spell_its_link(engines_url: str) -> None:
    """An internationalised host in either spelling is one page; Latin-1 query values and
    `#!` routes that differ are different pages, each with the engines that returned it."""
    lists: dict[str, list[dict[str, Any]]] = {
        "tavily": [
            {"title": "Bücher", "url": "https://xn--bcher-kva.de/katalog", "snippet": "Katalog"},
            {"title": "Müller", "url": "https://verein.de/mitglied?name=M%FCller", "snippet": ""},
            {"title": "Route 1", "url": "https://app.example/#!/artikel/1", "snippet": ""},
        ],
        "brave": [
            {"title": "Bücher", "url": "https://www.bücher.de/katalog/", "snippet": "Katalog"},
            {"title": "Möller", "url": "https://verein.de/mitglied?name=M%F6ller", "snippet": ""},
            {"title": "Route 2", "url": "https://app.example/#!/artikel/2", "snippet": ""},
        ],
    }
    answer = _fused_lists(lists, "bücher katalog")
    results = answer["results"]
    by_title: dict[str, list[dict[str, Any]]] = {}
    for result in results:
        by_title.setdefault(result["title"], []).append(result)
    assert sorted(by_title) == ["Bücher", "Möller", "Müller", "Route 1", "Route 2"]
    (books,) = by_title["Bücher"]
    assert sorted(books["engines"]) == ["brave", "tavily"]
    assert books["score_details"]["ranks"] == {"tavily": 1, "brave": 1}
    assert by_title["Müller"][0]["engines"] == ["tavily"]
    assert by_title["Möller"][0]["engines"] == ["brave"]


def test_a_page_one_engine_gave_no_title_takes_the_title_another_engine_gave(
    engines_url: str,
) -> None:
    """An engine without a title for a page (its title is then the URL) ranks it first: the
    merged result still has the title another engine gave the page."""
    agents = "https://ai.pydantic.dev/agents/"
    lists: dict[str, list[dict[str, Any]]] = {
        "tavily": [
            {"title": "", "url": agents, "snippet": "Agents are the primary interface."},
            {"title": "", "url": "https://ai.pydantic.dev/tools/", "snippet": "Tools."},
        ],
        "brave": [
            {"title": "Pydantic AI", "url": "https://ai.pydantic.dev/", "snippet": "Agents."},
            {"title": "Agents - Pydantic AI", "url": agents, "snippet": "Agents."},
        ],
    }
    answer = _fused_lists(lists, "pydantic ai agents")
    by_url = {result["url"]: result for result in answer["results"]}
    assert by_url[agents]["score_details"]["ranks"] == {"tavily": 1, "brave": 2}
    assert by_url[agents]["title"] == "Agents - Pydantic AI"
    # A page no engine gave a title keeps its URL as its title.
    assert by_url["https://ai.pydantic.dev/tools/"]["title"] == "https://ai.pydantic.dev/tools/"


def _fused_lists(lists: dict[str, list[dict[str, Any]]], query: str) -> dict[str, Any]:
    """`web_search` (explained) over engines answering `lists` (engine -> its results), as the
    agent gets it over MCP."""
    with serve_fake_engines(FakeEngines(lambda engine, _query: lists.get(engine, []))) as base:
        settings = make_settings(base)
        settings.engines["searxng"] = settings.engines["searxng"].model_copy(
            update={"enabled": False}
        )
        with serve_app(create_app(settings)) as url:
            answer: dict[str, Any] = web_search(url, query, explain=True)["structuredContent"]
    return answer
