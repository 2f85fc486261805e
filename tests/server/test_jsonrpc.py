"""`POST /mcp` on the wire, as JSON-RPC: every id comes back exactly as it was sent, in both
protocol eras, and what the transport refuses is refused with the status and error it names.

One real server process (`websearch-mcp serve`) for the module; no engine is asked (a search
with a bad argument is refused before any is).
"""

from __future__ import annotations

import contextlib
import json
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
import yaml

from testing.server_helpers import MCP_HEADERS

#: Handshake-era requests name their revision in a header, or none (the SDK assumes one); the
#: 2026 revision stands alone: the header, the method's and name's headers, an envelope.
MODERN = "2026-07-28"
ERAS = [None, "2025-11-25", MODERN]
#: Ids JSON-RPC must answer as they were sent: integers past 64 bits (19 to 25 digits),
#: negative ones, strings.
IDS: list[int | str] = [
    1000000000000000000,
    98765432109876543210987,
    1000000000000000000000007,
    -5,
    -12345678901234567890,
    "1000000000000000000",
    "a request",
]


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@pytest.fixture(scope="module")
def url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    config = tmp_path_factory.mktemp("jsonrpc") / "websearch-mcp.yaml"
    config.write_text(
        yaml.safe_dump(
            {
                "engines": {"searxng": {"enabled": True, "base_url": "http://127.0.0.1:9"}},
                "cache": {"backend": "none"},
                "server": {"log_level": "warning", "rate_limit_per_minute": 0},
            }
        )
    )
    port = _free_port()
    command = [sys.executable, "-m", "websearch_mcp.cli", "serve", "--config", str(config)]
    process = subprocess.Popen([*command, "--port", str(port)])
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 60
        while True:
            assert process.poll() is None, "the server stopped"
            assert time.monotonic() < deadline, "the server did not start"
            with contextlib.suppress(httpx.TransportError):
                if httpx.get(f"{base}/healthz", timeout=2).status_code == 200:
                    break
            time.sleep(0.1)
        yield f"{base}/mcp"
    finally:
        process.send_signal(signal.SIGINT)
        process.wait(timeout=30)


def _request(request_id: Any, method: str, params: dict[str, Any], era: str | None) -> bytes:
    if era == MODERN:
        envelope = {
            "io.modelcontextprotocol/protocolVersion": MODERN,
            "io.modelcontextprotocol/clientCapabilities": {},
        }
        params = {**params, "_meta": envelope}
    message = {"jsonrpc": "2.0", "id": request_id, "method": method, "params": params}
    return json.dumps(message).encode()


def _headers(method: str, era: str | None, name: str | None = None) -> dict[str, str]:
    headers = dict(MCP_HEADERS)
    if era is not None:
        headers["MCP-Protocol-Version"] = era
    if era == MODERN:
        headers["Mcp-Method"] = method
        if name is not None:
            headers["Mcp-Name"] = name
    return headers


def _post(url: str, body: bytes, headers: dict[str, str]) -> tuple[bytes, dict[str, Any]]:
    response = httpx.post(url, content=body, headers=headers, timeout=10)
    assert response.status_code == 200, response.text
    return response.content, json.loads(response.content)


@pytest.mark.parametrize("era", ERAS)
@pytest.mark.parametrize("request_id", IDS)
def test_an_id_comes_back_exactly_as_sent(url: str, era: str | None, request_id: Any) -> None:
    listed = _request(request_id, "tools/list", {}, era)
    raw, reply = _post(url, listed, _headers("tools/list", era))
    assert type(reply["id"]) is type(request_id) and reply["id"] == request_id
    assert f'"id":{json.dumps(request_id)},'.encode() in raw  # the same JSON, digit for digit
    assert {t["name"] for t in reply["result"]["tools"]} >= {"web_search", "fetch_page"}
    # A tool call whose argument is an integer of thousands of digits: the argument becomes
    # text for the check to refuse by name, the id stays what it was.
    arguments = {"query": "x", "max_results": 0}
    called = _request(request_id, "tools/call", {"name": "web_search", "arguments": arguments}, era)
    called = called.replace(b'"max_results": 0', b'"max_results": ' + b"9" * 5000)
    raw, reply = _post(url, called, _headers("tools/call", era, "web_search"))
    assert type(reply["id"]) is type(request_id) and reply["id"] == request_id
    text = reply["result"]["content"][0]["text"]
    assert reply["result"]["isError"] and "max_results must be an integer from 1 to 50" in text


@pytest.mark.parametrize(
    ("body", "headers", "status", "code"),
    [
        (b'{"jsonrpc": "2.0", "id": 1,', MCP_HEADERS, 400, -32700),  # not JSON
        (b"[" + _request(1, "tools/list", {}, None) + b"]", MCP_HEADERS, 400, None),  # a batch
        (b'{"jsonrpc": "2.0", "id": 1}', MCP_HEADERS, 400, None),  # not a request
        (_request(1, "tools/list", {}, None), {**MCP_HEADERS, "Accept": "text/html"}, 406, None),
        (
            _request(1, "tools/list", {}, None),
            {**MCP_HEADERS, "Content-Type": "text/plain"},
            400,
            None,
        ),
        (
            _request(1, "tools/list", {}, None),
            {**MCP_HEADERS, "MCP-Protocol-Version": "1999-01-01"},
            400,
            None,
        ),
    ],
)
def test_what_the_transport_refuses_is_refused(
    url: str, body: bytes, headers: dict[str, str], status: int, code: int | None
) -> None:
    response = httpx.post(url, content=body, headers=headers, timeout=10)
    assert response.status_code == status, response.text
    if code is not None:
        assert response.json()["error"]["code"] == code


@pytest.mark.parametrize("era", ERAS)
def test_methods_not_served_and_bad_params_are_json_rpc_errors(url: str, era: str | None) -> None:
    cases = [
        ("prompts/list", {}, -32601),
        ("no/such/method", {}, -32601),
        # In the 2026 revision a call's name is in a header too, checked against the body first.
        ("tools/call", {"name": 5}, -32020 if era == MODERN else -32602),
    ]
    for method, params, code in cases:
        body = _request("x-7", method, params, era)
        response = httpx.post(url, content=body, headers=_headers(method, era), timeout=10)
        reply = response.json()
        assert reply["id"] == "x-7" and reply["error"]["code"] == code, (method, reply)


@pytest.mark.parametrize(
    ("tool", "arguments", "named"),
    [
        ("web_search", {"query": "\ud800 python"}, "query"),
        ("web_search", {"query": "python", "engines": ["searxng", "\udfff"]}, "engines"),
        ("fetch_page", {"url": "http://example.com/\ud800"}, "url"),
    ],
)
def test_a_lone_surrogate_is_refused_naming_its_argument(
    url: str, tool: str, arguments: dict[str, Any], named: str
) -> None:
    """JSON writes a lone surrogate as `\\ud800`; the 2026 revision's reading hands it on to the
    tool, where the cache key and the URL parser raised ("Error executing tool", naming
    nothing)."""
    called = _request(1, "tools/call", {"name": tool, "arguments": arguments}, MODERN)
    _, reply = _post(url, called, _headers("tools/call", MODERN, tool))
    text = reply["result"]["content"][0]["text"]
    assert reply["result"]["isError"] and f": {named} must be Unicode text (" in text, text


@pytest.mark.parametrize("era", [None, "2025-11-25"])
def test_a_lone_surrogate_before_the_2026_revision_is_a_parse_error(
    url: str, era: str | None
) -> None:
    """docs/tools.md: before the 2026 revision the SDK reads the request strictly, and a lone
    surrogate anywhere in it makes the whole body unreadable (no tool is called)."""
    called = _request(
        1, "tools/call", {"name": "web_search", "arguments": {"query": "\ud800"}}, era
    )
    response = httpx.post(url, content=called, headers=_headers("tools/call", era), timeout=10)
    assert response.status_code == 400
    assert response.json()["error"]["code"] == -32700, response.text
