"""The app asked as reverse proxies ask it: TLS ended at the proxy, a path prefix stripped,
HTTP/1.0 upstream, `X-Forwarded-For` hops with ports. Raw HTTP on a real socket, uvicorn's own
reading of forwarded headers off (as `websearch-mcp serve` runs it)."""

from __future__ import annotations

import json
import logging
import socket
from collections.abc import Iterator
from typing import Any
from urllib.parse import urljoin

import pytest

from testing.fake_llm import FakeLLM
from testing.server_helpers import settings_for
from testing.serving import serve_app
from websearch_mcp.config import LLMSettings
from websearch_mcp.server.app import create_app


@pytest.fixture(autouse=True)
def no_uvicorn_proxy_headers(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("FORWARDED_ALLOW_IPS", "")


def ask(url: str, request: bytes) -> tuple[int, dict[str, list[str]], bytes]:
    """Status, header fields (by lower-case name) and body of one raw request."""
    host, port = url.removeprefix("http://").split(":")
    with socket.create_connection((host, int(port)), timeout=10) as sock:
        sock.sendall(request)
        answer = b""
        while chunk := sock.recv(65536):
            answer += chunk
    head, _, body = answer.partition(b"\r\n\r\n")
    status_line, *lines = head.decode("latin-1").split("\r\n")
    fields: dict[str, list[str]] = {}
    for line in lines:
        name, _, value = line.partition(":")
        fields.setdefault(name.strip().lower(), []).append(value.strip())
    return int(status_line.split()[1]), fields, body


@pytest.fixture
def served(engines_url: str) -> Iterator[Any]:
    def serve(**server: Any) -> Any:
        return serve_app(create_app(settings_for(engines_url, server=server)))

    yield serve


def test_no_redirect_behind_a_tls_proxy_leads_to_plain_http(served: Any) -> None:
    # A proxy ends TLS; a redirect the app built from its own scheme would name http://.
    with served(allowed_hosts=["search.example.com"]) as url:
        for path in ("/status/", "/mcp/", "/search/?q=x"):
            request = f"GET {path} HTTP/1.1\r\nHost: search.example.com\r\n"
            status, fields, _ = ask(url, request.encode() + b"Connection: close\r\n\r\n")
            target = urljoin(f"https://search.example.com{path}", fields.get("location", [""])[0])
            assert not target.startswith("http://"), (path, status, fields)


def test_the_root_redirect_stays_under_a_stripped_path_prefix(served: Any) -> None:
    # Published at https://host/websearch/, the proxy stripping the prefix.
    with served() as url:
        request = b"GET /?q=x HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n"
        status, fields, _ = ask(url, request)
    assert status == 308
    location = fields["location"][0]
    assert urljoin("https://host/websearch/?q=x", location) == "https://host/websearch/search?q=x"
    assert urljoin("https://host/?q=x", location) == "https://host/search?q=x"


# Two IPv6 clients are two /64s (the limits count one /64 as one client).
@pytest.mark.parametrize("forwarded", ["203.0.113.{n}:4711", "[2001:db8:{n}::1]:4711"])
def test_forwarded_hops_with_ports_name_their_clients(served: Any, forwarded: str) -> None:
    # Azure Application Gateway and IIS ARR write `address:port` hops.
    with served(trusted_proxies=["127.0.0.1"], rate_limit_burst=1) as url:
        codes = []
        for n in (1, 2):
            hop = forwarded.format(n=n)
            request = "GET /search?q=x&format=json HTTP/1.1\r\nHost: 127.0.0.1\r\n"
            request += f"X-Forwarded-For: {hop}\r\n"
            codes.append(ask(url, request.encode() + b"Connection: close\r\n\r\n")[0])
    assert codes == [200, 200]


def test_one_ipv6_64_is_one_client_the_log_names_by_its_address(
    served: Any, caplog: pytest.LogCaptureFixture
) -> None:
    # A host given a /64 whole picks a new address for each request: one client, one burst;
    # the log still names the address each request came from.
    caplog.set_level(logging.INFO, logger="websearch_mcp.access")
    with served(trusted_proxies=["127.0.0.1"], rate_limit_burst=1) as url:
        codes = []
        for hop in ("2001:db8:1:2::7", "2001:db8:1:2::ffff"):
            request = "GET /search?q=x&format=json HTTP/1.1\r\nHost: 127.0.0.1\r\n"
            request += f"X-Forwarded-For: {hop}\r\n"
            codes.append(ask(url, request.encode() + b"Connection: close\r\n\r\n")[0])
    assert codes == [200, 429]
    record = next(r for r in caplog.records if getattr(r, "path", None) == "/search")
    fields = vars(record)  # the access line's extra fields
    assert (fields["address"], fields["client"]) == ("2001:db8:1:2::7", "2001:db8:1:2::/64")


def test_an_http10_proxy_gets_the_summary_as_one_answer(engines_url: str) -> None:
    # No Transfer-Encoding in a response to HTTP/1.0 (RFC 9112 6.1): nginx's default
    # proxy_http_version, and old proxies, get the JSON answer, not the progress stream.
    llm = FakeLLM()
    with serve_app(llm.app) as model:
        settings = settings_for(engines_url)
        settings.llm = LLMSettings(base_url=f"{model}/v1", model="fake-model")
        call = {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "tools/call",
            "params": {
                "name": "web_search",
                "arguments": {"query": "asyncio event loop", "intent": "code"},
                "_meta": {"progressToken": 7},
            },
        }
        body = json.dumps(call).encode()
        head = (
            "POST /mcp HTTP/1.0\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
            f"Accept: application/json, text/event-stream\r\nContent-Length: {len(body)}\r\n\r\n"
        )
        with serve_app(create_app(settings)) as url:
            status, fields, answer = ask(url, head.encode() + body)
        llm.release()
    assert status == 200 and "transfer-encoding" not in fields
    assert fields["content-type"][0].startswith("application/json")
    assert json.loads(answer)["result"]["structuredContent"]["summary"]
