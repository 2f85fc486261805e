"""Requests an attacker would send: empty tokens in the config, stalled and half-sent requests,
numbers of thousands of digits, token guessing. Real uvicorn on 127.0.0.1 throughout."""

from __future__ import annotations

import json
import logging
import socket
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx
import pytest
import uvicorn
from uvicorn.protocols.http.auto import AutoHTTPProtocol

from testing.server_helpers import MCP_HEADERS, TOOLS_LIST, bearer, settings_for
from testing.server_helpers import tool_call as call_body
from testing.serving import serve_app
from websearch_mcp.cli import main as cli_main
from websearch_mcp.errors import ConfigError, ToolInputError
from websearch_mcp.search.configuration import load_config, parse_config
from websearch_mcp.server.app import create_app
from websearch_mcp.server.arguments import as_int
from websearch_mcp.server.middleware.slow_clients import header_deadline_protocol

TOKEN = "tok-hostile-requests-0123456789"
HUGE = "9" * 5000
#: Sent as a bare JSON number of 5000 digits (which Python could not even print).
HUGE_INT = "<huge-int>"


# --- 2. empty, blank and null tokens ---------------------------------------------------------


@pytest.mark.parametrize(
    ("server", "environ"),
    [
        ({"auth_tokens": [""]}, {}),
        ({"auth_tokens": ["   "]}, {}),
        ({"auth_tokens": [None]}, {}),  # a bare `-` item in YAML
        ({"auth_tokens": [TOKEN, ""]}, {}),
        ({}, {"WEBSEARCH_MCP_SERVER__AUTH_TOKENS": '[""]'}),
    ],
)
def test_empty_blank_or_null_token_is_a_config_error(server: dict, environ: dict) -> None:
    data = {"server": {"host": "0.0.0.0", **server}, "cache": {"backend": "none"}}
    with pytest.raises(ConfigError, match=r"server\.auth_tokens") as caught:
        parse_config(data, "c.yaml", environ=environ)
    assert "non-empty" in str(caught.value)


def test_check_config_says_why_for_a_bare_dash(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    config = tmp_path / "c.yaml"
    config.write_text("server:\n  host: 0.0.0.0\n  auth_tokens:\n    -\n", encoding="utf-8")
    assert cli_main(["check-config", str(config)]) == 2
    err = capsys.readouterr().err
    assert "server.auth_tokens" in err and "null" in err


def test_numbers_of_thousands_of_digits_in_the_config_are_errors(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=r"server\.port") as err:
        parse_config({}, "env", environ={"WEBSEARCH_MCP_SERVER__PORT": HUGE})
    # The value shown is cut: the line is the message, 80 characters of it and the variable.
    assert max(map(len, str(err.value).splitlines())) < 250
    assert str(err.value).endswith("...); from WEBSEARCH_MCP_SERVER__PORT")
    config = tmp_path / "c.yaml"
    config.write_text(f"server:\n  port: {HUGE}\n", encoding="utf-8")
    with pytest.raises(ConfigError, match=r"server\.port") as err:
        load_config(config)
    assert max(map(len, str(err.value).splitlines())) < 200


# --- 3. stalled requests ----------------------------------------------------------------------


def _protocols() -> list[Any]:
    """uvicorn's two HTTP implementations: httptools, which the server runs on, and h11."""
    from uvicorn.protocols.http.h11_impl import H11Protocol
    from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol

    return [pytest.param(H11Protocol, id="h11"), pytest.param(HttpToolsProtocol, id="httptools")]


@pytest.fixture(params=_protocols())
def protocol(request: pytest.FixtureRequest) -> Any:
    return request.param


@contextmanager
def serve_with_deadline(app: Any, seconds: float, base: Any) -> Iterator[tuple[str, int]]:
    """`app` under uvicorn with the header-deadline protocol, as `websearch-mcp serve` runs it."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    sock.bind(("127.0.0.1", 0))
    config = uvicorn.Config(
        app, log_level="warning", access_log=False, http=header_deadline_protocol(seconds, base)
    )
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    try:
        while not server.started:
            assert thread.is_alive()
            time.sleep(0.01)
        yield sock.getsockname()
    finally:
        server.should_exit = True
        thread.join(timeout=10)
        sock.close()


def read_all(conn: socket.socket, timeout: float) -> tuple[bytes, float]:
    """Everything the server sends until it closes, and when it closed."""
    conn.settimeout(timeout)
    data = b""
    while chunk := conn.recv(65536):
        data += chunk
    return data, time.monotonic()


def test_half_sent_headers_get_408_and_are_closed(engines_url: str, protocol: Any) -> None:
    app = create_app(settings_for(engines_url, server={"read_timeout_seconds": 1}))
    with serve_with_deadline(app, 1.0, protocol) as (host, port):
        conns = [socket.create_connection((host, port)) for _ in range(4)]
        started = time.monotonic()
        for conn in conns:
            conn.sendall(b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Le")
        for conn in conns:
            data, closed = read_all(conn, timeout=5)
            assert data.startswith(b"HTTP/1.1 408"), data
            assert closed - started < 3
            conn.close()
        # A connection that stalls after a first complete request is cut the same way.
        with socket.create_connection((host, port)) as conn:
            conn.sendall(b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
            time.sleep(0.3)
            conn.sendall(b"GET /healthz HTTP/1.1\r\nHo")
            data, _ = read_all(conn, timeout=5)
            assert data.count(b"HTTP/1.1 200") == 1 and b"HTTP/1.1 408" in data


def test_oversized_headers_get_431_and_are_closed(engines_url: str) -> None:
    # The deadline alone bounds headers by time, not size: within it a client could send
    # hundreds of MiB of one header line, all of it held in the server's memory. On the
    # protocol `serve` runs (httptools, which has no limit of its own).
    app = create_app(settings_for(engines_url, server={"read_timeout_seconds": 30}))
    with serve_with_deadline(app, 30.0, AutoHTTPProtocol) as (host, port):
        with socket.create_connection((host, port)) as conn:
            started = time.monotonic()
            conn.sendall(b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Big: ")
            time.sleep(0.2)
            conn.sendall(b"a" * 100_000)
            data, closed = read_all(conn, timeout=5)
        assert data.startswith(b"HTTP/1.1 431"), data[:100]
        assert b"request headers over 65536 bytes" in data
        assert closed - started < 3
        # Headers of an ordinary size are still served.
        url = f"http://{host}:{port}/healthz"
        assert httpx.get(url, headers={"X-Big": "a" * 8000}, timeout=5).status_code == 200


def test_the_header_limit_is_per_request_on_a_kept_alive_connection(engines_url: str) -> None:
    # Heads of 30 KB sent in three parts, one after another on one connection: over 64 KiB in
    # all, each under it, so each is served.
    app = create_app(settings_for(engines_url, server={"read_timeout_seconds": 30}))
    with (
        serve_with_deadline(app, 30.0, AutoHTTPProtocol) as (host, port),
        socket.create_connection((host, port)) as conn,
    ):
        for _ in range(4):
            conn.sendall(b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Big: ")
            time.sleep(0.1)
            conn.sendall(b"a" * 30_000)
            time.sleep(0.1)
            conn.sendall(b"\r\n\r\n")
        conn.sendall(b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n")
        data, _ = read_all(conn, timeout=5)
    assert data.count(b"HTTP/1.1 200") == 5 and b"HTTP/1.1 431" not in data, data[:200]


def test_slow_bodies_get_408_and_hold_no_slot(engines_url: str, protocol: Any) -> None:
    # Per-client limits apply on loopback only when asked for; asked here, so that the stalled
    # bodies would hold this client's slots if they took any.
    server = {
        "read_timeout_seconds": 1,
        "max_concurrent_per_client": 2,
        "limit_local_clients": True,
    }
    app = create_app(settings_for(engines_url, server=server))
    with serve_with_deadline(app, 5.0, protocol) as (host, port):
        head = (
            b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
            b"Accept: application/json, text/event-stream\r\nContent-Length: 100\r\n\r\n{"
        )
        conns = [socket.create_connection((host, port)) for _ in range(8)]
        started = time.monotonic()
        for conn in conns:
            conn.sendall(head)
        time.sleep(0.3)
        # Eight stalled bodies hold none of the client's two slots.
        answer = httpx.post(
            f"http://{host}:{port}/mcp", headers=MCP_HEADERS, json=TOOLS_LIST, timeout=5
        )
        assert answer.status_code == 200
        for conn in conns:
            data, closed = read_all(conn, timeout=5)
            assert data.startswith(b"HTTP/1.1 408") and b"did not arrive within 1 s" in data
            assert data.count(b"HTTP/1.1") == 1 and closed - started < 3  # closed with it
            conn.close()


# --- 4. huge numbers --------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("tool", "arguments", "message"),
    [
        ("web_search", {"query": "asyncio", "max_results": HUGE}, "max_results must be"),
        ("web_search", {"query": "asyncio", "max_results": HUGE_INT}, "max_results must be"),
        ("web_search", {"query": "asyncio", "explain": HUGE_INT}, "explain must be"),
        ("academic_search", {"query": "asyncio", "page": HUGE}, "page must be"),
        ("academic_search", {"query": "asyncio", "year_from": HUGE}, "year_from must be"),
        ("fetch_page", {"url": "http://127.0.0.1/", "start": HUGE}, "start must be"),
        ("fetch_page", {"url": "http://127.0.0.1/", "max_chars": HUGE}, "max_chars must"),
    ],
)
def test_huge_numbers_are_refused_naming_the_argument(
    engines_url: str, tool: str, arguments: dict, message: str
) -> None:
    with serve_app(create_app(settings_for(engines_url))) as url:
        response = httpx.post(
            f"{url}/mcp", headers=MCP_HEADERS, json=call_body(arguments, name=tool), timeout=10
        )
    result = response.json()["result"]
    text = result["content"][0]["text"]
    assert result["isError"] and message in text, text
    assert len(text) < 300  # the reason, not the 5000 digits


@pytest.mark.parametrize("digits", [19, 5000])
def test_a_bare_json_number_of_many_digits_is_refused_naming_the_argument(
    engines_url: str, digits: int
) -> None:
    body = json.dumps(call_body({"query": "asyncio", "max_results": HUGE_INT}))
    with serve_app(create_app(settings_for(engines_url))) as url:
        response = httpx.post(
            f"{url}/mcp",
            headers=MCP_HEADERS,
            content=body.replace(f'"{HUGE_INT}"', "9" * digits),
            timeout=10,
        )
        # The same endpoint still takes ordinary numbers as numbers.
        fine = httpx.post(
            f"{url}/mcp",
            headers=MCP_HEADERS,
            content=body.replace(f'"{HUGE_INT}"', "3"),
            timeout=10,
        )
    result = response.json()["result"]
    text = result["content"][0]["text"]
    assert result["isError"] and "max_results must be an integer from 1 to 50" in text, text
    assert len(text) < 300
    assert not fine.json()["result"].get("isError")


def test_integers_python_cannot_print_are_described_not_echoed() -> None:
    with pytest.raises(ToolInputError, match=r"max_results must be an integer from 1 to 50") as e:
        as_int("max_results", 10**5000, 1, 50)
    assert "a number of about 5001 digits" in str(e.value)


@pytest.mark.parametrize("tool", ["web_search", "academic_search"])
def test_an_unknown_engine_name_of_any_length_is_shown_cut(
    engines_url: str, tool: str, caplog: pytest.LogCaptureFixture
) -> None:
    # Each call would otherwise write its megabyte of name to the log and send it back.
    name = "x" * 900_000
    caplog.set_level(logging.INFO, logger="websearch_mcp.server.tools")
    with serve_app(create_app(settings_for(engines_url))) as url:
        body = call_body({"query": "asyncio", "engines": [name]}, name=tool)
        response = httpx.post(f"{url}/mcp", headers=MCP_HEADERS, json=body, timeout=10)
    result = response.json()["result"]
    text = result["content"][0]["text"]
    assert result["isError"] and 'unknown engine "xxxxx' in text and "allowed: " in text, text
    assert len(text) < 1000
    (line,) = [r.getMessage() for r in caplog.records if "unknown engine" in r.getMessage()]
    assert len(line) < 1000


#: A model is configured (never asked: the body is refused first), so that `/mcp` looks into a
#: body asking for progress to choose between a JSON and a streamed answer.
WITH_MODEL = {
    "WEBSEARCH_MCP_LLM__BASE_URL": "http://127.0.0.1:9/v1",
    "WEBSEARCH_MCP_LLM__MODEL": "m",
    "LLM_API_KEY": "sk-test",
}


@pytest.mark.parametrize(
    ("environ", "depth", "extra"),
    [
        # Nested deeper than Python goes as it looks for long integers in the arguments ...
        pytest.param({}, 600, {"max_results": HUGE_INT}, id="long-number"),
        # ... or as it reads a body asking for progress (with a model, to choose a stream).
        pytest.param(WITH_MODEL, 100_000, {}, id="progress"),
    ],
)
def test_deeply_nested_arguments_are_a_parse_error(
    engines_url: str, environ: dict, depth: int, extra: dict
) -> None:
    message = call_body({"query": "asyncio", "deep": "<nested>", **extra})
    if not extra:
        message["params"]["_meta"] = {"progressToken": "p"}
    body = (
        json.dumps(message)
        .replace('"<nested>"', "[" * depth + "]" * depth)
        .replace(f'"{HUGE_INT}"', "9" * 30)
    )
    with serve_app(create_app(settings_for(engines_url, environ=environ))) as url:
        response = httpx.post(f"{url}/mcp", headers=MCP_HEADERS, content=body, timeout=10)
        after = httpx.post(f"{url}/mcp", headers=MCP_HEADERS, json=TOOLS_LIST, timeout=10)
    # A JSON-RPC parse error, as for any body nested too deep, and the server goes on.
    assert response.status_code == 400, response.text[:200]
    assert response.json()["error"]["code"] == -32700
    assert after.status_code == 200


def test_huge_pageno_and_content_length_are_400_and_413(engines_url: str) -> None:
    with serve_app(create_app(settings_for(engines_url))) as url:
        page = httpx.get(f"{url}/search", params={"q": "asyncio", "pageno": HUGE}, timeout=10)
        assert page.status_code == 400
        assert "pageno must be an integer from 1 to" in page.json()["error"]
        host, port = url.removeprefix("http://").split(":")
        with socket.create_connection((host, int(port))) as conn:
            conn.sendall(
                b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: %s\r\n\r\n"
                % HUGE.encode()
            )
            data, _ = read_all(conn, timeout=5)
        assert data.startswith((b"HTTP/1.1 413", b"HTTP/1.1 400")), data[:100]


# --- 5. token guessing ------------------------------------------------------------------------


def test_failed_authentications_are_throttled_per_address(engines_url: str) -> None:
    server = {"auth_tokens": [TOKEN], "trusted_proxies": ["127.0.0.1"]}
    settings = settings_for(engines_url, server=server)

    def guess(http: httpx.Client, token: str, address: str) -> httpx.Response:
        headers = {**bearer(token), "X-Forwarded-For": address}
        return http.post(f"{url}/mcp", headers=headers, json=TOOLS_LIST)

    with serve_app(create_app(settings)) as url, httpx.Client(timeout=10) as http:
        # One host guessing from a new address of its IPv6 /64 each time is one address.
        statuses = [
            guess(http, f"guess-{n}", f"2001:db8:1:2::{n:x}").status_code for n in range(30)
        ]
        assert statuses[:20] == [401] * 20 and set(statuses[20:]) == {429}
        throttled = guess(http, "guess-x", "2001:db8:1:2:ffff::1")
        assert int(throttled.headers["retry-after"]) >= 1
        # While throttled no token is even looked at: a right guess learns nothing either.
        assert guess(http, TOKEN, "2001:db8:1:2::1").status_code == 429
        assert guess(http, TOKEN, "2001:db8:1:3::1").status_code == 200  # another network
        assert guess(http, "guess-y", "203.0.113.9").status_code == 401


def test_clients_that_authenticate_are_not_slowed(engines_url: str) -> None:
    settings = settings_for(
        engines_url, server={"auth_tokens": [TOKEN], "rate_limit_per_minute": 0}
    )
    with serve_app(create_app(settings)) as url, httpx.Client(timeout=10) as http:
        for _ in range(60):
            answer = http.post(f"{url}/mcp", headers=bearer(TOKEN), json=TOOLS_LIST)
            assert answer.status_code == 200
