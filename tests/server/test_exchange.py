"""Handshake-era requests answered in one exchange (`exchange.py`) get what the SDK's stateless
transport gives them. Each request is sent to one real server twice: answered by
`SingleExchange`, then by the SDK (with `answer` switched off), and the two responses compared
byte for byte. Requests the exchange leaves alone are checked to reach the SDK."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC
from pathlib import Path
from typing import Any

import httpx
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from mcp.server.lowlevel.server import Server
from mcp.server.runner import ServerRunner
from mcp.server.streamable_http_manager import StreamableHTTPSessionManager
from mcp_types import JSONRPCResponse

from testing.server_helpers import INITIALIZE, MCP_HEADERS, TOOLS_LIST, settings_for, tool_call
from testing.serving import serve_app
from websearch_mcp import exchange
from websearch_mcp.app import create_app

#: Each request: a search (answered from the cache, so both answers hold the same results),
#: bad arguments, a refused address, an unknown tool, a tool list, a ping, methods not served,
#: parameters of the wrong type, a string id.
REQUESTS: list[dict[str, Any]] = [
    tool_call({"query": "python asyncio"}),
    tool_call({"query": ""}, rid=2),
    tool_call({"query": "x", "max_results": "many"}, rid=3),
    tool_call({"url": "http://127.0.0.1/admin"}, "fetch_page", rid=4),
    tool_call({}, "no_such_tool", rid=5),
    TOOLS_LIST,
    {"jsonrpc": "2.0", "id": "ping-1", "method": "ping"},
    {"jsonrpc": "2.0", "id": 6, "method": "prompts/list"},
    {"jsonrpc": "2.0", "id": 7, "method": "no/such/method"},
    {"jsonrpc": "2.0", "id": 8, "method": "tools/call", "params": {"name": 5}},
    {"jsonrpc": "2.0", "id": 9, "method": "tools/call"},
]
#: No version header (the SDK then assumes 2025-03-26), and each handshake-era revision.
VERSIONS: list[str | None] = [None, "2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25"]


@pytest.fixture
def url(engines_url: str, tmp_path: Path) -> Iterator[str]:
    settings = settings_for(engines_url)
    settings = settings.model_copy(
        update={
            "cache": settings.cache.model_copy(
                update={"backend": "sqlite", "path": str(tmp_path / "cache.sqlite3")}
            )
        }
    )
    with serve_app(create_app(settings)) as base:
        yield base


@pytest.fixture
def answered(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The methods `SingleExchange` answered."""
    methods: list[str] = []
    real = exchange.serve_one

    async def counted(server: Any, dctx: Any, method: str, *args: Any, **kwargs: Any) -> Any:
        methods.append(method)
        return await real(server, dctx, method, *args, **kwargs)

    monkeypatch.setattr(exchange, "serve_one", counted)
    return methods


def _headers(version: str | None) -> dict[str, str]:
    return {**MCP_HEADERS, "MCP-Protocol-Version": version} if version else dict(MCP_HEADERS)


def _exchange(http: httpx.Client, url: str, body: Any, headers: dict[str, str]) -> tuple:
    reply = http.post(f"{url}/mcp", json=body, headers=headers)
    return reply.status_code, reply.headers.get("content-type"), reply.content


def _sdk_only(monkeypatch: pytest.MonkeyPatch) -> None:
    async def leave_it(self: Any, request: Any, body: bytes) -> None:
        return None

    monkeypatch.setattr(exchange.SingleExchange, "answer", leave_it)


@pytest.mark.parametrize("version", VERSIONS)
def test_answers_are_the_sdks_byte_for_byte(
    url: str, version: str | None, answered: list[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    headers = _headers(version)
    with httpx.Client(timeout=10) as http:
        http.post(f"{url}/mcp", json=REQUESTS[0], headers=headers)  # fills the cache
        answered.clear()
        ours = [_exchange(http, url, body, headers) for body in REQUESTS]
        assert answered == [body["method"] for body in REQUESTS]
        _sdk_only(monkeypatch)
        sdks = [_exchange(http, url, body, headers) for body in REQUESTS]
    assert len(answered) == len(REQUESTS)  # the SDK's own path, not this module's
    for body, mine, theirs in zip(REQUESTS, ours, sdks, strict=True):
        assert mine == theirs, body
    search = httpx.Response(200, content=ours[0][2]).json()["result"]
    assert search["structuredContent"]["cached"] is True and not search["isError"]


def test_a_handler_that_raises_is_answered_as_the_sdk_answers_it(
    url: str, answered: list[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    def broken(*args: Any) -> dict[str, Any]:
        raise RuntimeError("the result could not be shaped")

    monkeypatch.setattr(ServerRunner, "_serialize", broken)
    ping = {"jsonrpc": "2.0", "id": 11, "method": "ping"}
    with httpx.Client(timeout=10) as http:
        ours = _exchange(http, url, ping, dict(MCP_HEADERS))
        assert answered == ["ping"]
        _sdk_only(monkeypatch)
        theirs = _exchange(http, url, ping, dict(MCP_HEADERS))
    assert ours == theirs
    error = httpx.Response(200, content=ours[2]).json()["error"]
    assert error["message"] == "the result could not be shaped"


@pytest.mark.parametrize(
    ("body", "headers", "status"),
    [
        (INITIALIZE, MCP_HEADERS, 200),
        ({"jsonrpc": "2.0", "method": "notifications/initialized"}, MCP_HEADERS, 202),
        ([TOOLS_LIST, TOOLS_LIST], MCP_HEADERS, 400),  # a batch
        ({"jsonrpc": "2.0", "id": 1}, MCP_HEADERS, 400),  # neither request nor response
        (TOOLS_LIST, {**MCP_HEADERS, "Accept": "text/html"}, 406),
        (TOOLS_LIST, {**MCP_HEADERS, "Content-Type": "text/plain"}, 400),
        (TOOLS_LIST, {**MCP_HEADERS, "MCP-Protocol-Version": "2026-07-28"}, 400),  # no _meta
        (TOOLS_LIST, {**MCP_HEADERS, "MCP-Protocol-Version": "1999-01-01"}, 400),
    ],
)
def test_everything_else_is_the_sdks(
    url: str, answered: list[str], body: Any, headers: dict[str, str], status: int
) -> None:
    with httpx.Client(timeout=10) as http:
        reply = http.post(f"{url}/mcp", json=body, headers=headers)
    assert reply.status_code == status, reply.text
    assert answered == []


def test_a_body_that_is_not_json_is_the_sdks(url: str, answered: list[str]) -> None:
    with httpx.Client(timeout=10) as http:
        reply = http.post(f"{url}/mcp", content=b'{"jsonrpc": "2.0", "id": 1,', headers=MCP_HEADERS)
    assert reply.status_code == 400 and reply.json()["error"]["code"] == -32700
    assert answered == []


@pytest.mark.parametrize(("stateless", "json_response"), [(True, False), (False, True)])
def test_only_a_stateless_json_manager_is_taken(stateless: bool, json_response: bool) -> None:
    manager = StreamableHTTPSessionManager(
        app=Server("test"), stateless=stateless, json_response=json_response
    )
    with pytest.raises(ValueError, match="stateless JSON-response"):
        exchange.SingleExchange(manager)


# JSON values, and values orjson does not write as the SDK does: integers past 64 bits, lone
# surrogates, keys that are not strings, dates.
_VALUES = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(-(2**70), 2**70)
    | st.floats()
    | st.text()
    | st.sampled_from(["\ud800", "\u2028", "é", "中文"])
    | st.datetimes(timezones=st.none() | st.just(UTC)),
    lambda children: (
        st.lists(children, max_size=4)
        | st.dictionaries(st.text() | st.integers(), children, max_size=4)
    ),
    max_leaves=20,
)


@settings(max_examples=400)
@given(_VALUES, st.integers(-(2**53), 2**53) | st.text())
def test_a_response_is_written_as_the_sdk_writes_it(value: Any, request_id: int | str) -> None:
    result = {"structuredContent": {"value": value}, "isError": False}
    try:
        reply = JSONRPCResponse(jsonrpc="2.0", id=request_id, result=result)
        expected = reply.model_dump_json(by_alias=True, exclude_unset=True).encode()
    except ValueError:  # what the SDK cannot write either (a lone surrogate)
        with pytest.raises(ValueError):
            exchange.response_json(request_id, result)
        return
    assert exchange.response_json(request_id, result) == expected
