"""Engine requests on kept-alive connections the server has closed: sent once more, counted."""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import functools
import gzip
import json
import socket
import tracemalloc
from collections.abc import AsyncIterator
from types import SimpleNamespace
from typing import Any, Self

import aiohttp
import aiohttp.resolver
import httpx
import pytest

from testing.redis_server import free_port
from testing.server_helpers import RESULTS
from testing.wire_formats import render
from websearch_mcp.engines.registry import ENGINES
from websearch_mcp.errors import EngineError
from websearch_mcp.models import HttpRequest, Query
from websearch_mcp.net import engine_http
from websearch_mcp.net.engine_http import build_client, query_string, send
from websearch_mcp.search.configuration import parse_config
from websearch_mcp.search.fan_out import Orchestrator
from websearch_mcp.server.metrics import Metrics

SEARXNG_BODY, _ = render("searxng", RESULTS["searxng"])


class LoopbackServer:
    """A test HTTP server on 127.0.0.1: `handle` serves each connection while `serving()`."""

    server: asyncio.Server | None = None

    async def handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        raise NotImplementedError

    @property
    def url(self) -> str:
        assert self.server is not None
        return f"http://127.0.0.1:{self.server.sockets[0].getsockname()[1]}"

    @contextlib.asynccontextmanager
    async def serving(self) -> AsyncIterator[Self]:
        self.server = await asyncio.start_server(self.handle, "127.0.0.1", 0)
        try:
            yield self
        finally:
            self.server.close()


class ClosingServer(LoopbackServer):
    """HTTP/1.1 on 127.0.0.1 that answers the first request of each connection with keep-alive
    and then closes the connection when the next request arrives, without answering it (as a
    server closing an idle connection just as the client reuses it). With `cut_body` it sends
    half of its first answer and closes."""

    def __init__(self, body: bytes, *, cut_body: bool = False) -> None:
        self.body = body
        self.cut_body = cut_body
        self.connections = 0
        self.answered = 0

    async def handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.connections += 1
        try:
            await reader.readuntil(b"\r\n\r\n")
            head = (
                b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\n"
                b"content-length: %d\r\n\r\n" % len(self.body)
            )
            if self.cut_body:
                writer.write(head + self.body[: len(self.body) // 2])
            else:
                writer.write(head + self.body)
                self.answered += 1
                await writer.drain()
                await reader.readuntil(b"\r\n\r\n")  # the reuse: closed unanswered
        except (asyncio.IncompleteReadError, ConnectionError):
            pass
        finally:
            writer.close()


@pytest.fixture
async def closing() -> AsyncIterator[ClosingServer]:
    async with ClosingServer(SEARXNG_BODY).serving() as fake:
        yield fake


REQUEST = HttpRequest("GET", "/search", params={"q": "python asyncio", "format": "json"})


async def test_a_closed_kept_alive_connection_is_retried_once_and_counted(
    closing: ClosingServer,
) -> None:
    retries: list[int] = []
    client = build_client()
    try:
        for _ in range(3):
            response = await send(client, closing.url, REQUEST, 5.0, lambda: retries.append(1))
            assert response.status == 200 and response.content == SEARXNG_BODY
    finally:
        await client.aclose()
    # The 2nd and 3rd requests each met a closed connection and went out on a new one.
    assert len(retries) == 2
    assert closing.answered == 3 and closing.connections == 3


async def test_no_retry_once_the_deadline_has_passed(
    closing: ClosingServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    client = build_client()
    retries: list[int] = []
    try:
        await send(client, closing.url, REQUEST, 5.0)  # leaves a connection the server closes
        # The reused connection fails once the budget is spent: `send`'s clock reads the start,
        # then a moment past the deadline (a zero budget would time out before sending at all).
        ticks = iter([0.0])
        clock = SimpleNamespace(monotonic=lambda: next(ticks, 10.0))
        monkeypatch.setattr(engine_http, "time", clock)
        with pytest.raises(EngineError, match="connection failed"):
            await send(client, closing.url, REQUEST, 5.0, lambda: retries.append(1))
    finally:
        await client.aclose()
    assert retries == []
    assert closing.answered == 1 and closing.connections == 1


async def test_an_answer_cut_short_is_an_error_not_a_retry() -> None:
    client = build_client()
    retries: list[int] = []
    async with ClosingServer(SEARXNG_BODY, cut_body=True).serving() as fake:
        try:
            with pytest.raises(
                EngineError, match=r"^connection failed \(the answer was cut off\)$"
            ):
                await send(client, fake.url, REQUEST, 5.0, lambda: retries.append(1))
        finally:
            await client.aclose()
    assert retries == [] and fake.connections == 1


async def test_a_refused_connection_is_an_error_not_a_retry() -> None:
    """Nothing listening means the engine is down, not that a kept-alive connection closed."""
    client = build_client()
    retries: list[int] = []
    try:
        with pytest.raises(
            EngineError, match=r"^connection failed \(could not connect: refused or unreachable\)$"
        ):
            await send(
                client, f"http://127.0.0.1:{free_port()}", REQUEST, 5.0, lambda: retries.append(1)
            )
    finally:
        await client.aclose()
    assert retries == []


class PlainTextServer(LoopbackServer):
    """Speaks plain HTTP where TLS is due: a TLS client's handshake fails."""

    async def handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        writer.write(b"HTTP/1.1 400 Bad Request\r\ncontent-length: 0\r\n\r\n")
        with contextlib.suppress(ConnectionError):
            await writer.drain()
        writer.close()


async def test_a_failed_tls_handshake_is_said_in_words() -> None:
    client = build_client()
    try:
        async with PlainTextServer().serving() as server:
            https = server.url.replace("http://", "https://")
            with pytest.raises(EngineError, match=r"^connection failed \(TLS handshake failed\)$"):
                await send(client, https, REQUEST, 5.0, lambda: None)
    finally:
        await client.aclose()


async def test_an_http_proxy_that_refuses_the_connection_is_said_to_be_the_proxy() -> None:
    # aiohttp's ClientProxyConnectionError is a ClientConnectorError: the engine is not the one
    # that could not be reached.
    client = build_client(proxy=f"http://127.0.0.1:{free_port()}")
    try:
        with pytest.raises(EngineError, match=r"^connection failed \(the proxy failed\)$"):
            await send(client, "http://engine.example", REQUEST, 5.0, lambda: None)
    finally:
        await client.aclose()


class HangUpServer(LoopbackServer):
    """Reads each request and closes the connection without a word of an answer."""

    async def handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        with contextlib.suppress(asyncio.IncompleteReadError, ConnectionError):
            await reader.readuntil(b"\r\n\r\n")
        writer.close()


async def test_a_server_that_hangs_up_unanswered_is_said_in_words() -> None:
    client = build_client()
    try:
        async with HangUpServer().serving() as server:
            with pytest.raises(
                EngineError,
                match=r"^connection failed \(the server closed the connection before answering\)$",
            ):
                await send(client, server.url, REQUEST, 5.0, lambda: None)
    finally:
        await client.aclose()


@pytest.mark.parametrize(
    ("proxy", "said"),
    [
        (None, "could not resolve the engine's host"),
        # Through a proxy only the proxy's host is looked up (the proxy resolves the engine's):
        # aiohttp raises the same DNS error for it, which is not the engine's.
        ("http://proxy.invalid:3128", "could not resolve the proxy's host"),
    ],
)
async def test_a_host_that_does_not_resolve_is_said_in_words(
    monkeypatch: pytest.MonkeyPatch, proxy: str | None, said: str
) -> None:
    async def unresolved(*args: Any, **kwargs: Any) -> Any:  # no query leaves the machine
        raise socket.gaierror(socket.EAI_NONAME, "Name or service not known")

    monkeypatch.setattr(aiohttp.resolver.DefaultResolver, "resolve", unresolved)
    client = build_client(proxy=proxy)
    try:
        with pytest.raises(EngineError, match=rf"^connection failed \({said}\)$"):
            await send(client, "http://engine.invalid", REQUEST, 5.0, lambda: None)
    finally:
        await client.aclose()


def _settings(url: str) -> Any:
    engines: dict[str, Any] = {name: {"enabled": False} for name in ENGINES}
    engines["searxng"] = {"enabled": True, "base_url": url}
    return parse_config(
        {"engines": engines, "search": {"retry": {"retries": 0}}, "cache": {"backend": "none"}},
        "test",
        environ={},
    )


async def test_searches_survive_closed_connections_and_metrics_count_the_retries(
    closing: ClosingServer,
) -> None:
    orchestrator = Orchestrator(_settings(closing.url), environ={})
    metrics = Metrics()
    metrics.watch_retries(orchestrator.stale_retries)
    try:
        for text in ("python asyncio", "python asyncio tasks"):
            runs, _ = orchestrator.choose("web", None)
            fan = await orchestrator.fan_out(Query(text), runs, 5.0)
            [report] = [r for r in fan.reports if r.name == "searxng"]
            assert report.status == "ok", report
    finally:
        await orchestrator.close()
    await metrics.refresh()
    assert 'websearch_engine_stale_retries_total{engine="searxng"} 1.0' in metrics.render().decode()


def test_query_string_encodes_as_httpx_does() -> None:
    params: dict[str, str | bool | int | list[str] | None] = {
        "q": "a b/c 中文 %20",
        "safe": True,
        "off": False,
        "none": None,
        "n": 3,
        "l": ["x", "y"],
    }
    assert query_string(params) == str(httpx.QueryParams(params))


@functools.cache
def bomb() -> bytes:
    return gzip.compress(bytes(200 * 1024 * 1024), compresslevel=9)


class PathServer(LoopbackServer):
    """HTTP/1.1 keep-alive on 127.0.0.1: `/hop/N` redirects to `/hop/N-1` until `/hop/0`
    answers 200; `/set` sets a cookie; `/echo` answers with the Cookie header it got.
    `/gzip` answers a gzip-compressed JSON body, `/bomb` 200 MB of zeros in 200 KB. A POST on a
    reused connection is closed unanswered. `/away/<port>` redirects to `localhost:<port>`.
    `bodies` keeps each body with its Content-Type, `headers` each request's headers."""

    def __init__(self) -> None:
        self.requests: list[str] = []
        self.bodies: list[tuple[str, bytes]] = []
        self.headers: list[dict[str, str]] = []

    async def handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        served = 0
        try:
            while True:
                head = (await reader.readuntil(b"\r\n\r\n")).decode("latin-1")
                line, *fields = head.split("\r\n")
                method, target, _ = line.split(" ", 2)
                headers = dict(f.split(": ", 1) for f in fields if ": " in f)
                length = int(headers.get("Content-Length", "0"))
                if length:
                    kind = next((v for k, v in headers.items() if k.lower() == "content-type"), "")
                    self.bodies.append((kind, await reader.readexactly(length)))
                self.requests.append(f"{method} {target}")
                self.headers.append({k.lower(): v for k, v in headers.items()})
                if method == "POST" and served:
                    return  # closed as the client reuses it: the stale case, for a POST
                served += 1
                writer.write(self.answer(target, headers))
                await writer.drain()
        except (asyncio.IncompleteReadError, ConnectionError):
            pass
        finally:
            writer.close()

    @staticmethod
    def answer(target: str, headers: dict[str, str]) -> bytes:
        extra, body, status = "", b"{}", "200 OK"
        if target.startswith("/hop/") and (hops := int(target.rsplit("/", 1)[1])) > 0:
            status, extra = "302 Found", f"Location: /hop/{hops - 1}\r\n"
        elif target.startswith("/away/"):  # to this server under another name: another origin
            port = target.rsplit("/", 1)[1]
            status, extra = "302 Found", f"Location: http://localhost:{port}/hop/0\r\n"
        elif target == "/set":
            extra = "Set-Cookie: session=abc; Path=/\r\n"
        elif target == "/echo":
            body = json.dumps({"cookie": headers.get("Cookie", "")}).encode()
        elif target == "/gzip":
            extra, body = "Content-Encoding: gzip\r\n", gzip.compress(SEARXNG_BODY)
        elif target == "/bomb":
            extra, body = "Content-Encoding: gzip\r\n", bomb()
        return (
            f"HTTP/1.1 {status}\r\n{extra}content-type: application/json\r\n"
            f"content-length: {len(body)}\r\n\r\n"
        ).encode() + body


@pytest.fixture
async def paths() -> AsyncIterator[PathServer]:
    async with PathServer().serving() as fake:
        yield fake


async def test_redirects_are_followed_up_to_five_and_the_final_url_is_reported(
    paths: PathServer,
) -> None:
    client = build_client()
    try:
        response = await send(client, paths.url, HttpRequest("GET", "/hop/5"), 5.0)
        assert response.status == 200 and response.url == f"{paths.url}/hop/0"
        with pytest.raises(EngineError, match=r"^connection failed \(too many redirects\)$"):
            await send(client, paths.url, HttpRequest("GET", "/hop/6"), 5.0)
    finally:
        await client.aclose()


async def test_a_key_sent_in_a_header_of_its_own_is_not_sent_on_to_another_host(
    paths: PathServer,
) -> None:
    """Brave, Exa and Serper send their key in a header of their own (`X-Subscription-Token`,
    `x-api-key`, `X-API-KEY`), which the client, unlike `Authorization`, keeps on a redirect:
    an answer redirecting elsewhere must not collect it."""
    key = "brave-redirect-secret-1"
    port = paths.url.rsplit(":", 1)[1]
    client = build_client()
    try:
        request = HttpRequest(
            "GET", f"/away/{port}", headers={"X-Subscription-Token": key}, secrets=(key,)
        )
        away = await send(client, paths.url, request, 5.0)
        same = await send(client, paths.url, dataclasses.replace(request, path="/hop/1"), 5.0)
    finally:
        await client.aclose()
    assert away.status == 200 and away.url.startswith("http://localhost:")
    assert same.status == 200
    first, elsewhere, *within = paths.headers
    assert first["x-subscription-token"] == key
    assert "x-subscription-token" not in elsewhere and elsewhere["host"].startswith("localhost:")
    assert [h["x-subscription-token"] for h in within] == [key, key]  # the same origin: kept


async def test_a_base_url_with_spaces_or_accents_is_sent_encoded(paths: PathServer) -> None:
    client = build_client()
    request = HttpRequest("GET", "/hop/0", params={"q": "é b"})
    try:
        assert (await send(client, f"{paths.url}/sé arch", request, 5.0)).status == 200
    finally:
        await client.aclose()
    assert paths.requests == ["GET /s%C3%A9%20arch/hop/0?q=%C3%A9+b"]


async def test_compressed_answers_are_read_decompressed(paths: PathServer) -> None:
    client = build_client()
    try:
        response = await send(client, paths.url, HttpRequest("GET", "/gzip"), 5.0)
    finally:
        await client.aclose()
    assert response.content == SEARXNG_BODY


async def test_a_compression_bomb_is_cut_off_within_bounded_memory(paths: PathServer) -> None:
    client = build_client()
    bomb()  # made by the server's side before memory is counted
    tracemalloc.start()
    try:
        with pytest.raises(EngineError, match="larger than 5 MiB"):
            await send(client, paths.url, HttpRequest("GET", "/bomb"), 10.0)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
        await client.aclose()
    assert peak < 32 * 1024 * 1024  # the cap and one decompressed step, not 200 MB


async def test_cookies_persist_per_client_even_on_an_address(paths: PathServer) -> None:
    client, other = build_client(), build_client()
    try:
        await send(client, paths.url, HttpRequest("GET", "/set"), 5.0)
        echoed = await send(client, paths.url, HttpRequest("GET", "/echo"), 5.0)
        assert json.loads(echoed.content) == {"cookie": "session=abc"}
        fresh = await send(other, paths.url, HttpRequest("GET", "/echo"), 5.0)
        assert json.loads(fresh.content) == {"cookie": ""}
    finally:
        await client.aclose()
        await other.aclose()


async def test_a_post_on_a_closed_kept_alive_connection_is_sent_again(paths: PathServer) -> None:
    client = build_client()
    retries: list[int] = []
    request = HttpRequest("POST", "/search", json={"query": "python"})
    try:
        for _ in range(2):
            response = await send(client, paths.url, request, 5.0, lambda: retries.append(1))
            assert response.status == 200
    finally:
        await client.aclose()
    assert retries == [1]
    assert paths.requests == ["POST /search"] * 3


async def test_bodies_are_sent_encoded_with_their_type(paths: PathServer) -> None:
    form = {"q": "é b&c", "safe": True, "none": None, "l": ["x", "y"]}
    requests = [
        HttpRequest("POST", "/hop/0", json={"query": '中文 "quoted"', "n": 3, "on": True}),
        HttpRequest("POST", "/hop/0", data=form),
        HttpRequest("POST", "/hop/0", json=[1], headers={"content-type": "application/x-ndjson"}),
    ]
    for request in requests:
        client = build_client()  # one each: the server closes a reused connection on a POST
        try:
            assert (await send(client, paths.url, request, 5.0)).status == 200
        finally:
            await client.aclose()
    (json_type, json_body), (form_type, form_body), (own_type, own_body) = paths.bodies
    assert json_type == "application/json"
    assert json.loads(json_body) == {"query": '中文 "quoted"', "n": 3, "on": True}
    assert form_type == "application/x-www-form-urlencoded"
    assert form_body.decode() == query_string(form) == "q=%C3%A9+b%26c&safe=true&none=&l=x&l=y"
    assert (own_type, own_body) == ("application/x-ndjson", b"[1]")


async def test_a_client_serves_one_event_loop_after_another(paths: PathServer) -> None:
    client = build_client()

    async def once(close: bool) -> int:
        status = (await send(client, paths.url, HttpRequest("GET", "/hop/0"), 5.0)).status
        if close:
            await client.aclose()
        return status

    # Each call in an event loop of its own (the fixture's server keeps serving this one).
    first = await asyncio.to_thread(asyncio.run, once(False))
    second = await asyncio.to_thread(asyncio.run, once(True))
    assert (first, second) == (200, 200)
