"""`tools/call` as the server reads and answers it: real uvicorn, fake engines on 127.0.0.1,
JSON-RPC over HTTP and the official MCP client."""

from __future__ import annotations

import logging
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from mcp import Client
from mcp.server.mcpserver.exceptions import ToolError
from mcp.types import CallToolResult
from prometheus_client.parser import text_string_to_metric_families

from testing.fake_engines import FakeEngines
from testing.server_helpers import MCP_HEADERS, settings_for, text_of, tool_call
from testing.serving import serve_app
from websearch_mcp.search.service import SearchService
from websearch_mcp.server.app import create_app
from websearch_mcp.server.tools import build_mcp

SECRET = "tvly-PLANTED-crash-2c8e41f07a"


@pytest.fixture
def server(engines_url: str) -> Iterator[str]:
    with serve_app(create_app(settings_for(engines_url))) as url:
        yield url


def call(url: str, arguments: dict[str, Any] | None, name: str = "web_search") -> dict[str, Any]:
    body = tool_call(arguments or {}, name=name)
    if arguments is None:
        del body["params"]["arguments"]
    response = httpx.post(f"{url}/mcp", headers=MCP_HEADERS, json=body, timeout=10)
    assert response.status_code == 200
    return response.json()["result"]


def outcomes(url: str) -> dict[str, float]:
    text = httpx.get(f"{url}/metrics", timeout=10).text
    return {
        s.labels["outcome"]: s.value
        for family in text_string_to_metric_families(text)
        for s in family.samples
        if s.name == "websearch_tool_requests_total" and s.labels["tool"] == "web_search"
    }


@pytest.mark.parametrize("arguments", [None, {}, {"max_results": 3}])
def test_a_call_without_a_required_argument_names_it(
    server: str, arguments: dict[str, Any] | None
) -> None:
    result = call(server, arguments)
    assert result["isError"] is True
    assert result["content"][0]["text"] == "Error executing tool web_search: query is required"
    page = call(server, {"max_chars": 10}, name="fetch_page")
    assert page["content"][0]["text"] == "Error executing tool fetch_page: url is required"
    assert outcomes(server) == {"invalid": 1.0}


def test_a_call_that_names_the_query_otherwise_is_told_which_name_it_sent(server: str) -> None:
    # The tool layer drops names a tool does not take: the error says the call's `q` is none
    # of its arguments, and which are.
    result = call(server, {"q": "python", "num_results": 5})
    assert result["isError"] is True
    assert result["content"][0]["text"] == (
        'Error executing tool web_search: query is required ("num_results", "q": no such'
        " argument; the arguments: query, max_results, time_range, engines, language, explain,"
        " read, category)"
    )
    many = call(server, {f"x{n}": n for n in range(7)}, name="fetch_page")["content"][0]["text"]
    assert many.startswith('Error executing tool fetch_page: url is required ("x0", "x1", "x2",')
    assert '"x4" and 2 more: no such argument; the arguments: url, max_chars, start)' in many
    # A name the tool does not take beside every one it needs is still dropped, as before.
    assert call(server, {"query": "python asyncio", "q": "x"})["isError"] is False


def test_a_model_is_told_every_mistake_at_once_and_what_to_send(server: str) -> None:
    # One more call should put a call right: every argument refused is named, and a URL that
    # holds an address, or lacks only its scheme, is shown what to send.
    def error(arguments: dict[str, Any], name: str = "web_search") -> str:
        result = call(server, arguments, name=name)
        assert result["isError"] is True
        text: str = result["content"][0]["text"]
        return text.removeprefix(f"Error executing tool {name}: ")

    several = error({"query": "x", "max_results": 100, "time_range": "7d", "language": "English"})
    assert several.count("; ") == 2
    assert "max_results" in several and "time_range" in several and "language" in several
    assert error({"url": "[docs](https://example.com/page)"}, "fetch_page") == (
        'url: only http and https URLs can be fetched (got "[docs](https://example.com/page)");'
        ' send "https://example.com/page"'
    )
    assert error({"url": "www.example.com/page"}, "fetch_page").endswith(
        '; send "https://www.example.com/page"'
    )
    assert error({"url": "file:///etc/passwd"}, "fetch_page").endswith('(got "file:///etc/passwd")')


def test_arguments_are_read_as_the_tools_take_them(fake: FakeEngines, server: str) -> None:
    # Text that is JSON is the query as typed, not the list it spells.
    searched = call(server, {"query": "[1, 2]", "engines": '["tavily"]', "added_by": "client"})
    assert searched["isError"] is False
    assert [e["name"] for e in searched["structuredContent"]["engines"]] == ["tavily"]
    assert fake.last["tavily"].query == "[1, 2]"
    assert fake.counts["searxng"] == 0
    named = call(server, {"query": "null", "max_results": "2", "time_range": "null"})
    assert named["isError"] is False and fake.last["searxng"].query == "null"
    assert len(named["structuredContent"]["results"]) == 2
    wrong = call(server, {"query": "x", "engines": '["altavista"]'})
    assert 'unknown engine "altavista"' in wrong["content"][0]["text"]
    # An engine of the other tool is said to be one, with the tool that asks it.
    paper = call(server, {"query": "x", "engines": ["arxiv"]})["content"][0]["text"]
    assert paper.startswith(
        'Error executing tool web_search: "arxiv" is an academic index: academic_search asks it;'
        " allowed: "
    ), paper
    web = call(server, {"query": "x", "engines": ["bing"]}, name="academic_search")
    assert '"bing" is a web engine: web_search asks it; allowed: arxiv' in web["content"][0]["text"]
    assert outcomes(server) == {"ok": 2.0, "invalid": 2.0}


def test_null_for_an_optional_argument_is_not_given(fake: FakeEngines, server: str) -> None:
    # The schemas no longer say null, but clients that send it for "left out" still work.
    nulls = {"time_range": None, "language": None, "engines": None}
    searched = call(server, {"query": "asyncio", **nulls})
    assert searched["isError"] is False and searched["structuredContent"]["results"]
    assert fake.last["searxng"].query == "asyncio"
    papers = call(server, {"query": "q", "year_from": None, "year_to": None}, "academic_search")
    # Past the argument checks: this server has no academic index to ask.
    assert papers["content"][0]["text"].endswith("academic_search: no engine is enabled")
    # Arguments with a default take it for null, sent as JSON or as its text.
    for null in (None, "null"):
        defaults = {"max_results": null, "explain": null, "read": null, "category": null}
        answer = call(server, {"query": "asyncio", **defaults})
        assert answer["isError"] is False, answer["content"]
        assert answer["structuredContent"]["results"]
        page = call(
            server, {"url": "http://10.0.0.1/", "max_chars": null, "start": null}, "fetch_page"
        )
        assert page["content"][0]["text"].startswith("Error executing tool fetch_page: refused:")
    wrong = call(server, {"query": "x", "time_range": "decade"})
    assert wrong["content"][0]["text"] == (
        "Error executing tool web_search: "
        'time_range must be one of day, week, month, year, any or left out (got "decade")'
    )


def test_an_unknown_tool_is_the_sdks_answer(server: str) -> None:
    result = call(server, {"query": "x"}, name="web_searches")
    assert result == {
        "content": [{"type": "text", "text": "Unknown tool: web_searches"}],
        "isError": True,
    }


async def test_the_official_client_gets_answers_and_errors(server: str) -> None:
    async with Client(f"{server}/mcp", mode="legacy", cache=None) as client:
        answer = await client.call_tool("web_search", {"query": "python asyncio"})
        refused = await client.call_tool("fetch_page", {"url": "http://10.0.0.1/"})
    assert not answer.is_error and answer.structured_content["results"]
    assert text_of(answer).startswith("1. ")
    assert refused.is_error
    assert text_of(refused).startswith("Error executing tool fetch_page: refused:")


def test_a_crash_says_only_the_tools_name_and_is_logged(
    engines_url: str, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    async def crash(self: SearchService, *args: Any, **kwargs: Any) -> Any:
        raise RuntimeError(f"broke holding {SECRET}")

    monkeypatch.setattr(SearchService, "web_search", crash)
    with (
        caplog.at_level(logging.ERROR, logger="websearch_mcp.server.tools"),
        serve_app(create_app(settings_for(engines_url))) as url,
    ):
        result = call(url, {"query": "python"})
        assert outcomes(url) == {"error": 1.0}
    assert result == {
        "content": [{"type": "text", "text": "Error executing tool web_search"}],
        "isError": True,
    }
    crashed = [r for r in caplog.records if r.name == "websearch_mcp.server.tools"]
    assert len(crashed) == 1 and crashed[0].exc_info is not None
    assert crashed[0].getMessage() == "tool 'web_search' raised an unexpected exception"


async def test_fresh_and_cached_answers_keep_to_the_published_schema(
    engines_url: str, tmp_path: Path
) -> None:
    # The official client checks each answer against the tool's output schema (and raises).
    plain = settings_for(engines_url)
    cache = plain.cache.model_copy(update={"backend": "sqlite", "path": tmp_path / "c.sqlite3"})
    settings = plain.model_copy(update={"cache": cache})
    with serve_app(create_app(settings)) as url:
        async with Client(f"{url}/mcp", mode="legacy", cache=None) as client:
            answers = [
                await client.call_tool("web_search", {"query": "python asyncio", "explain": True})
                for _ in range(2)
            ]
    fresh, cached = (a.structured_content for a in answers)
    assert fresh["cached"] is False and cached["cached"] is True
    assert cached["results"][0]["score_details"] == fresh["results"][0]["score_details"]


async def test_the_sdks_own_call_tool_answers_as_the_wire_does(engines_url: str) -> None:
    service = SearchService(settings_for(engines_url, server={"max_query_chars": 20}))
    tools = build_mcp(service, service.orchestrator.names("web")).tools
    await service.start()
    try:
        answer = await tools.call_tool("web_search", {"query": "python asyncio"})
        with pytest.raises(ToolError) as refused:
            await tools.call_tool("web_search", {"query": "x", "max_results": 0})
        # The lowered limit holds for every tool that takes a query, as advertised.
        with pytest.raises(ToolError) as too_long:
            await tools.call_tool("academic_search", {"query": "q" * 21})
    finally:
        await service.close()
    assert isinstance(answer, CallToolResult) and not answer.is_error
    assert answer.structured_content["results"]
    assert text_of(answer).startswith("1. ")
    assert str(refused.value) == (
        "Error executing tool web_search: max_results must be an integer from 1 to 50 (got 0)"
    )
    assert str(too_long.value) == (
        "Error executing tool academic_search: query must be at most 20 characters (got 21)"
    )
