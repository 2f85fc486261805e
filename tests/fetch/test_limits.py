"""The fetcher's limits against hostile servers on loopback: redirects, DNS rebinding, size caps,
decompression bombs, slow bodies and unsupported types."""

from __future__ import annotations

import asyncio
import codecs
import functools
import gzip
import socket
import ssl
import threading
import time
import tracemalloc
import zlib
from collections.abc import AsyncIterator, Iterator
from http.server import BaseHTTPRequestHandler
from typing import Any

import pytest

from testing.fetch_helpers import (
    LocalServer,
    page,
    redirect,
    send,
    settings_for,
    tls_files,
    wait_for,
)
from websearch_mcp.fetch import (
    FetchError,
    FetchRefused,
    FetchTimeout,
    FetchUnsupported,
    client,
    fetch_page,
)
from websearch_mcp.fetch.client import RawPage
from websearch_mcp.fetch.decoding import CappedDecoder, capped_chunks
from websearch_mcp.fetch.extract import ExtractLimits, extract
from websearch_mcp.fetch.ssrf import parse_address

MB = 1024 * 1024
TEXT = "<html><body><article><p>" + "Arrived at the destination page. " * 20 + "</p></article>"


@pytest.fixture
def server() -> Iterator[LocalServer]:
    with LocalServer() as running:
        running.routes["/end"] = page(TEXT)
        for n in range(1, 8):
            running.routes[f"/hop/{n}"] = redirect(f"/hop/{n - 1}" if n > 1 else "/end")
        yield running


async def test_redirect_chain_within_the_limit(server: LocalServer) -> None:
    result = await fetch_page(server.url("/hop/5"), settings=settings_for(server, max_redirects=5))
    assert "Arrived at the destination page." in result["content"]
    assert result["url"] == server.url("/hop/5") and result["final_url"] == server.url("/end")
    assert server.paths() == ["/hop/5", "/hop/4", "/hop/3", "/hop/2", "/hop/1", "/end"]


async def test_a_redirect_chain_too_long_fails_without_being_refused(server: LocalServer) -> None:
    # The page was fetched: the site's failure, not the address policy's refusal.
    with pytest.raises(FetchError, match="more than 5 redirects") as info:
        await fetch_page(server.url("/hop/6"), settings=settings_for(server, max_redirects=5))
    assert not isinstance(info.value, FetchRefused) and not info.value.reader_may_help
    assert "/end" not in server.paths() and len(server.seen) == 6


async def test_redirect_to_metadata_address_is_refused_before_connecting(
    server: LocalServer, connections: list[tuple[str, int]]
) -> None:
    server.routes["/meta"] = redirect("http://169.254.169.254/latest/meta-data/", 301)
    with pytest.raises(FetchRefused) as info:
        await fetch_page(
            server.url("/meta"), settings=settings_for(server, allowed_ports=[server.port, 80])
        )
    assert "redirected" in str(info.value) and "link-local address" in str(info.value)
    assert {host for host, _ in connections} == {"127.0.0.1"}


async def test_redirect_to_loopback_without_the_allowance_is_refused(
    server: LocalServer, connections: list[tuple[str, int]]
) -> None:
    server.routes["/secret"] = page("internal admin page", "text/plain")
    with LocalServer(host="127.0.0.2") as outer:
        outer.routes["/go"] = redirect(server.url("/secret"), 307)
        settings = settings_for(server, outer, allow_networks=["127.0.0.2/32"])
        with pytest.raises(FetchRefused, match="loopback address"):
            await fetch_page(outer.url("/go"), settings=settings)
        assert outer.paths() == ["/go"]
    assert server.seen == []
    assert {host for host, _ in connections} == {"127.0.0.2"}


@pytest.mark.parametrize(
    ("location", "message"),
    [("file:///etc/passwd", "uses file:"), ("gopher://127.0.0.1/x", "uses gopher:")],
)
async def test_redirect_to_other_schemes_is_refused(
    server: LocalServer, location: str, message: str
) -> None:
    server.routes["/jump"] = redirect(location)
    with pytest.raises(FetchRefused, match=message):
        await fetch_page(server.url("/jump"), settings=settings_for(server))


async def test_redirect_to_a_port_not_allowed_is_refused_before_connecting(
    server: LocalServer, connections: list[tuple[str, int]]
) -> None:
    server.routes["/ssh"] = redirect("http://127.0.0.1:22/")
    with pytest.raises(FetchRefused, match="redirected to a URL that uses port 22"):
        await fetch_page(server.url("/ssh"), settings=settings_for(server))
    assert connections == [("127.0.0.1", server.port)]


async def test_a_host_whose_first_address_does_not_answer_is_read_at_the_next(
    server: LocalServer, connections: list[tuple[str, int]]
) -> None:
    # As with an IPv6 address first on a network without IPv6: nothing listens on 127.0.0.2.
    async def resolver(host: str, port: int) -> list[str]:
        return ["127.0.0.2", "127.0.0.1"]

    server.routes["/notes.txt"] = page("Notes on the northern rivers.", "text/plain")
    url = f"http://two.example:{server.port}/notes.txt"
    result = await fetch_page(url, settings=settings_for(server), resolver=resolver)
    assert result["content"] == "Notes on the northern rivers."
    assert connections == [("127.0.0.2", server.port), ("127.0.0.1", server.port)]


async def test_redirect_to_a_name_resolving_privately_is_refused(
    server: LocalServer, connections: list[tuple[str, int]]
) -> None:
    server.routes["/jump"] = redirect(f"http://intranet.example:{server.port}/")

    async def resolver(host: str, port: int) -> list[str]:
        return ["10.0.0.1"]

    with pytest.raises(FetchRefused, match="private address"):
        await fetch_page(server.url("/jump"), settings=settings_for(server), resolver=resolver)
    assert connections == [("127.0.0.1", server.port)]


async def test_dns_rebinding_connects_only_to_the_checked_address(
    server: LocalServer, connections: list[tuple[str, int]], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The first answer passes the check; later answers point elsewhere. The name is resolved
    once, through the resolver only, and the connection goes to the checked address."""
    server.routes["/r"] = redirect("/end")  # a second request to the same host
    answers: list[str] = []

    async def rebinding(host: str, port: int) -> list[str]:
        answers.append(host)
        return ["127.0.0.1"] if len(answers) == 1 else ["10.0.0.1"]

    system_lookups: list[str | bytes] = []
    real_getaddrinfo = socket.getaddrinfo

    def recording_getaddrinfo(host, *args, **kwargs):  # type: ignore[no-untyped-def]
        system_lookups.append(host)
        return real_getaddrinfo(host, *args, **kwargs)

    monkeypatch.setattr(socket, "getaddrinfo", recording_getaddrinfo)
    url = f"http://rebind.example:{server.port}/r"
    result = await fetch_page(url, settings=settings_for(server), resolver=rebinding)
    assert "Arrived at the destination page." in result["content"]
    assert answers == ["rebind.example"]
    assert connections and all(host == "127.0.0.1" for host, _ in connections)
    # Any system lookup during the fetch was of a numeric address, never of the name.
    assert all(parse_address(str(host)) is not None for host in system_lookups)
    assert {s.headers["host"] for s in server.seen} == {f"rebind.example:{server.port}"}


@pytest.fixture
def tls_server(tmp_path) -> Iterator[tuple[LocalServer, str, list[str]]]:  # type: ignore[no-untyped-def]
    """An HTTPS server on 127.0.0.1 with a certificate for secure.example; records the SNI."""
    pytest.importorskip("cryptography")
    cert, key = tls_files(tmp_path, "secure.example")
    context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    context.load_cert_chain(cert, key)
    sni: list[str] = []
    context.sni_callback = lambda sock, name, ctx: sni.append(name)  # type: ignore[assignment]
    with LocalServer(tls=context) as running:
        running.routes["/end"] = page(TEXT)
        yield running, cert, sni


async def _to_loopback(host: str, port: int) -> list[str]:
    return ["127.0.0.1"]


async def test_https_to_the_checked_address_keeps_sni_and_verification_for_the_name(
    tls_server: tuple[LocalServer, str, list[str]],
    connections: list[tuple[str, int]],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    server, cert, sni = tls_server
    monkeypatch.setattr(client, "_ssl_context", lambda: ssl.create_default_context(cafile=cert))
    url = server.url("/end", host="secure.example")
    result = await fetch_page(url, settings=settings_for(server), resolver=_to_loopback)
    assert "Arrived at the destination page." in result["content"]
    assert sni == ["secure.example"]
    assert connections == [("127.0.0.1", server.port)]
    assert server.seen[0].headers["host"] == f"secure.example:{server.port}"


async def test_https_certificate_for_another_name_is_rejected(
    tls_server: tuple[LocalServer, str, list[str]], monkeypatch: pytest.MonkeyPatch
) -> None:
    server, cert, _ = tls_server
    monkeypatch.setattr(client, "_ssl_context", lambda: ssl.create_default_context(cafile=cert))
    url = server.url("/end", host="other.example")
    with pytest.raises(FetchError, match=r"TLS certificate verification failed for other\.example"):
        await fetch_page(url, settings=settings_for(server), resolver=_to_loopback)
    assert server.seen == []


async def test_https_untrusted_certificate_is_rejected(
    tls_server: tuple[LocalServer, str, list[str]],
) -> None:
    server, _, _ = tls_server
    url = server.url("/end", host="secure.example")
    with pytest.raises(FetchError, match="TLS certificate verification failed"):
        await fetch_page(url, settings=settings_for(server), resolver=_to_loopback)
    assert server.seen == []


def stream_body(total: int, sent: list[int], content_length: int | None = None):  # type: ignore[no-untyped-def]
    """A handler sending `total` bytes of text in 64 KiB pieces, recording how many got out."""

    def handle(handler: BaseHTTPRequestHandler) -> None:
        handler.send_response(200)
        handler.send_header("Content-Type", "text/plain")
        if content_length is not None:
            handler.send_header("Content-Length", str(content_length))
        handler.end_headers()
        chunk = b"a" * 65536
        count = 0
        try:
            while count < total:
                handler.wfile.write(chunk)
                count += len(chunk)
        except OSError:
            pass
        sent.append(count)

    return handle


async def test_50_mb_body_is_cut_at_the_cap(server: LocalServer) -> None:
    sent: list[int] = []
    server.routes["/huge"] = stream_body(50 * MB, sent)
    started = time.monotonic()
    with pytest.raises(FetchError, match="too large: the page is bigger than the 1,048,576-byte"):
        await fetch_page(server.url("/huge"), settings=settings_for(server, max_bytes=MB))
    assert time.monotonic() - started < 5
    assert wait_for(lambda: bool(sent))
    assert sent[0] < 25 * MB  # the reader stopped; the rest was never taken off the wire


async def test_declared_oversize_body_is_refused_early(server: LocalServer) -> None:
    sent: list[int] = []
    server.routes["/declared"] = stream_body(50 * MB, sent, content_length=50 * MB)
    with pytest.raises(FetchError, match="too large"):
        await fetch_page(server.url("/declared"), settings=settings_for(server, max_bytes=MB))


async def test_declared_oversize_is_refused_from_the_header_alone(server: LocalServer) -> None:
    # Content-Length one byte past the cap, and a short body: only the header can say too large.
    def liar(handler: BaseHTTPRequestHandler) -> None:
        handler.send_response(200)
        handler.send_header("Content-Type", "text/plain")
        handler.send_header("Content-Length", str(MB + 1))
        handler.end_headers()
        handler.wfile.write(b"short")  # then the connection closes

    server.routes["/liar"] = liar
    with pytest.raises(FetchError, match="too large: the page is bigger than the 1,048,576-byte"):
        await fetch_page(server.url("/liar"), settings=settings_for(server, max_bytes=MB))
    # A page of exactly the cap, declared as such, is read.
    server.routes["/exact"] = page(b"a" * 1024, "text/plain")
    exact = await fetch_page(server.url("/exact"), settings=settings_for(server, max_bytes=1024))
    assert exact["total_chars"] == 1024


@functools.cache
def gzip_bomb(decoded: int = 200 * MB) -> bytes:
    packer = zlib.compressobj(9, zlib.DEFLATED, zlib.MAX_WBITS | 16)
    zeros = bytes(MB)
    parts = [packer.compress(zeros) for _ in range(decoded // MB)]
    return b"".join(parts) + packer.flush()


async def test_gzip_bomb_is_stopped(server: LocalServer) -> None:
    bomb = gzip_bomb()
    assert len(bomb) < MB  # small on the wire, 200 MB decoded
    server.routes["/bomb"] = lambda h: send(h, 200, bomb, "text/html", {"Content-Encoding": "gzip"})
    tracemalloc.start()
    try:
        with pytest.raises(FetchError, match="too large"):
            await fetch_page(server.url("/bomb"), settings=settings_for(server, max_bytes=2 * MB))
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 40 * MB  # decoding stopped near the cap instead of expanding 200 MB


async def test_gzip_within_the_cap_is_decoded(server: LocalServer) -> None:
    server.routes["/gz"] = lambda h: send(
        h, 200, gzip.compress(TEXT.encode()), "text/html", {"Content-Encoding": "gzip"}
    )
    result = await fetch_page(server.url("/gz"), settings=settings_for(server))
    assert "Arrived at the destination page." in result["content"]


def drip(handler: BaseHTTPRequestHandler) -> None:
    handler.send_response(200)
    handler.send_header("Content-Type", "text/plain")
    handler.end_headers()
    try:
        for _ in range(100):  # at most 5 s, one byte every 50 ms
            handler.wfile.write(b"x")
            handler.wfile.flush()
            time.sleep(0.05)
    except OSError:
        pass


async def test_slow_drip_past_the_overall_timeout(server: LocalServer) -> None:
    server.routes["/drip"] = drip
    started = time.monotonic()
    with pytest.raises(FetchError, match="timed out after 1 s"):
        await fetch_page(server.url("/drip"), settings=settings_for(server, timeout_seconds=1.0))
    assert time.monotonic() - started < 3


def silent(handler: BaseHTTPRequestHandler) -> None:
    time.sleep(1.5)  # accepts, then says nothing for longer than the read timeout


async def test_read_timeout_when_the_server_goes_quiet(server: LocalServer) -> None:
    server.routes["/silent"] = silent
    settings = settings_for(server, read_timeout_seconds=0.3)
    with pytest.raises(FetchError, match="timed out: the server stopped sending"):
        await fetch_page(server.url("/silent"), settings=settings)


#: Names under this domain never resolve: their lookups hang, as behind a silent name server.
UNANSWERED = ".unanswered.test"


@pytest.fixture
def silent_dns(monkeypatch: pytest.MonkeyPatch) -> Iterator[threading.Event]:
    """The C library's lookups of names under `UNANSWERED` hang until the event is set (a name
    server that never answers, which a hostile domain can have); other names resolve as usual."""
    release = threading.Event()
    real = socket.getaddrinfo

    def lookup(host: Any, *args: Any, **kwargs: Any) -> Any:
        if isinstance(host, str) and host.endswith(UNANSWERED):
            release.wait(30)
            raise socket.gaierror(socket.EAI_AGAIN, "Temporary failure in name resolution")
        return real(host, *args, **kwargs)

    monkeypatch.setattr(socket, "getaddrinfo", lookup)
    yield release
    release.set()


async def test_pages_at_once_look_their_hosts_up_at_once(
    server: LocalServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A name server taking 0.6 s a name: six pages read together wait for it once, not six times.
    real = socket.getaddrinfo

    def lookup(host: Any, *args: Any, **kwargs: Any) -> Any:
        if isinstance(host, str) and host.endswith(".slow.test"):
            time.sleep(0.6)
            host = "127.0.0.1"
        return real(host, *args, **kwargs)

    monkeypatch.setattr(socket, "getaddrinfo", lookup)
    server.routes["/notes.txt"] = page("Notes on the northern rivers.", "text/plain")
    settings = settings_for(server)
    urls = [f"http://p{i}.slow.test:{server.port}/notes.txt" for i in range(6)]
    started = time.monotonic()
    pages = await asyncio.gather(*(fetch_page(url, settings=settings) for url in urls))
    assert time.monotonic() - started < 2.0
    assert {p["content"] for p in pages} == {"Notes on the northern rivers."}


async def test_names_that_never_resolve_hold_up_no_other_page_or_lookup(
    server: LocalServer, silent_dns: threading.Event
) -> None:
    # Each page times out, but its lookup goes on in a thread until the resolver gives up.
    # Many at once (a hostile site's links, read: 10 over several searches) must not take the
    # threads that other pages and the engines' own lookups run in.
    server.routes["/notes.txt"] = page("Notes on the northern rivers.", "text/plain")
    settings = settings_for(server, timeout_seconds=1.0)
    hung = [f"http://h{i}{UNANSWERED}:{server.port}/" for i in range(40)]
    try:
        outcomes = await asyncio.gather(
            *(fetch_page(url, settings=settings) for url in hung), return_exceptions=True
        )
        assert all(isinstance(outcome, FetchTimeout) for outcome in outcomes), outcomes
        started = time.monotonic()
        async with asyncio.timeout(5):
            result = await fetch_page(server.url("/notes.txt"), settings=settings)
            # How engine requests look their hosts up (httpx over anyio, in asyncio's threads).
            await asyncio.get_running_loop().getaddrinfo("localhost", server.port)
        assert result["content"] == "Notes on the northern rivers."
        assert time.monotonic() - started < settings.timeout_seconds + 1
    finally:
        silent_dns.set()


@pytest.mark.parametrize(
    ("content_type", "body"),
    [
        ("image/png", b"\x89PNG\r\n\x1a\n" + bytes(64)),
        ("application/zip", b"PK\x03\x04" + bytes(64)),
        ("video/mp4", bytes(64)),
    ],
)
async def test_unsupported_content_types_are_refused(
    server: LocalServer, content_type: str, body: bytes
) -> None:
    server.routes["/file"] = page(body, content_type)
    with pytest.raises(FetchError, match=f"unsupported content type {content_type}"):
        await fetch_page(server.url("/file"), settings=settings_for(server))


async def test_undeclared_binary_is_refused(server: LocalServer) -> None:
    server.routes["/blob"] = page(
        b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR", "application/octet-stream"
    )
    with pytest.raises(FetchError, match="binary data"):
        await fetch_page(server.url("/blob"), settings=settings_for(server))


@pytest.mark.parametrize("content_type", ["text/plain", "text/html", "application/json"])
async def test_binary_data_sent_as_text_is_refused(server: LocalServer, content_type: str) -> None:
    # Servers label files they do not know as text (Apache's old DefaultType text/plain):
    # browsers sniff such a body for binary data, and so does the fetcher.
    server.routes["/blob"] = page(
        b"PK\x03\x04\x14\x00\x00\x00\x08\x00" + bytes(range(256)) * 8, content_type
    )
    with pytest.raises(
        FetchUnsupported, match=f"unsupported content \\({content_type}, binary data\\)"
    ):
        await fetch_page(server.url("/blob"), settings=settings_for(server))


async def test_utf_16_text_is_not_taken_for_binary_data(server: LocalServer) -> None:
    text = "Utf-16 text holds NUL bytes of its own."
    server.routes["/bom"] = page(codecs.BOM_UTF16_LE + text.encode("utf-16-le"), None)
    server.routes["/declared"] = page(text.encode("utf-16-be"), "text/plain; charset=utf-16be")
    for path in ("/bom", "/declared"):
        result = await fetch_page(server.url(path), settings=settings_for(server))
        assert result["content"] == text
    html = f"<html><head><title>Wide</title></head><body><article><p>{text}</p></article></body>"
    server.routes["/html"] = page(codecs.BOM_UTF16_LE + html.encode("utf-16-le"), None)
    result = await fetch_page(server.url("/html"), settings=settings_for(server))
    assert result["content_type"] == "text/html" and result["content"] == text


def test_decoder_caps_exactly() -> None:
    data = b"z" * 5000
    assert CappedDecoder("gzip", 5000).feed(gzip.compress(data)) == data
    with pytest.raises(FetchError, match="too large"):
        CappedDecoder("gzip", 4999).feed(gzip.compress(data))


def test_decoder_handles_deflate_forms_and_chains() -> None:
    data = b"hello deflate " * 100
    raw = zlib.compressobj(6, zlib.DEFLATED, -zlib.MAX_WBITS)
    raw_deflate = raw.compress(data) + raw.flush()
    for body in (zlib.compress(data), raw_deflate):
        decoder = CappedDecoder("deflate", MB)
        assert decoder.feed(body[:10]) + decoder.feed(body[10:]) + decoder.finish() == data
    chained = gzip.compress(zlib.compress(data))  # deflate applied first, then gzip
    assert CappedDecoder("deflate, gzip", MB).feed(chained) == data
    assert CappedDecoder("identity", MB).feed(data) == data


def test_decoder_refuses_a_long_chain_of_codings() -> None:
    # Every coding is a zlib stage with its own window, and every byte passes every stage on
    # the event loop: a page sent with `gzip` thousands of times in its header would cost the
    # service its memory and its loop's time. Browsers and curl stop at a handful of codings.
    with pytest.raises(FetchError, match="content encoding"):
        CappedDecoder(",".join(["gzip"] * 1000), MB)
    data = b"two codings are still read"
    assert CappedDecoder("gzip, gzip", MB).feed(gzip.compress(gzip.compress(data))) == data
    # At most four, as the error says: a fifth is refused.
    four = data
    for _ in range(4):
        four = gzip.compress(four)
    assert CappedDecoder(", ".join(["gzip"] * 4), MB).feed(four) == data
    with pytest.raises(FetchError, match="5 content encodings"):
        CappedDecoder(", ".join(["gzip"] * 5), MB)


def test_decoder_reads_x_gzip_as_gzip() -> None:
    assert CappedDecoder("x-gzip", 100).feed(gzip.compress(b"legacy label")) == b"legacy label"


def test_decoder_rejects_unknown_and_corrupt_encodings() -> None:
    with pytest.raises(FetchError, match=r"unsupported content encoding \(br\)"):
        CappedDecoder("br", MB)
    # The server's header is quoted, within bounds however long it is.
    with pytest.raises(FetchError) as long_name:
        CappedDecoder("z" * 8000, MB)
    assert f"({'z' * 40}...)" in str(long_name.value) and len(str(long_name.value)) < 120
    with pytest.raises(FetchError, match="gzip compression is corrupt"):
        CappedDecoder("gzip", MB).feed(b"this is not gzip data at all")
    # Neither zlib-wrapped nor raw: tried both ways, once each.
    with pytest.raises(FetchError, match="deflate compression is corrupt"):
        CappedDecoder("deflate", MB).feed(b"this is not deflate data at all")


async def test_capped_chunks_pass_a_body_at_the_cap_and_stop_one_byte_past_it() -> None:
    async def stream(*chunks: bytes) -> AsyncIterator[bytes]:
        for chunk in chunks:
            yield chunk

    assert [c async for c in capped_chunks(stream(b"abc", b"de"), 5)] == [b"abc", b"de"]
    seen: list[bytes] = []
    with pytest.raises(FetchError, match="too large"):
        async for chunk in capped_chunks(stream(b"abc", b"def", b"never"), 5):
            seen.append(chunk)
    assert seen == [b"abc"]


def _limits(max_text_chars: int = 1000) -> ExtractLimits:
    return ExtractLimits(
        timeout_seconds=5.0,
        max_text_chars=max_text_chars,
        max_html_nodes=50_000,
        max_pdf_pages=500,
        max_pdf_decoded_bytes=4 * 1024 * 1024,
        workers=1,
        memory_bytes=768 * 1024 * 1024,
    )


def _raw(body: bytes, media_type: str = "text/plain", charset: str | None = None) -> RawPage:
    return RawPage("https://example.org/t", "https://example.org/t", media_type, charset, body)


async def test_text_exactly_at_max_text_chars_is_not_said_to_be_cut() -> None:
    document = await extract(_raw(b"a" * 1000), _limits(1000))
    assert document.content == "a" * 1000 and document.capped is None


async def test_utf_32_text_with_its_byte_order_mark_is_read() -> None:
    text = "Utf-32 text holds NUL bytes of its own."
    for bom, codec in ((codecs.BOM_UTF32_LE, "utf-32-le"), (codecs.BOM_UTF32_BE, "utf-32-be")):
        document = await extract(_raw(bom + text.encode(codec)), _limits())
        assert document.content == text


async def test_binary_data_whose_first_nul_comes_late_in_the_sniffed_part_is_refused() -> None:
    body = b"A" * 3000 + b"\x00\x01\x02\x03" + bytes(range(256))
    with pytest.raises(FetchUnsupported, match="binary data"):
        await extract(_raw(body), _limits())


async def test_a_redirect_status_without_a_location_is_read_as_the_page() -> None:
    with LocalServer() as server:
        server.routes["/moved"] = lambda h: send(
            h, 302, b"moved, no forwarding address", "text/plain"
        )
        result = await fetch_page(server.url("/moved"), settings=settings_for(server))
    assert result["content"] == "moved, no forwarding address"


async def test_undeclared_utf_8_cut_inside_a_character_is_still_read_as_utf_8() -> None:
    # fetch.max_bytes may end the body inside a character; the rest is still UTF-8.
    text = "Price: 5 \u20ac, total 10 \u20ac. " * 4
    body = (text + "\u20ac").encode()[:-1]  # the last euro sign cut after two of its three bytes
    document = await extract(_raw(body), _limits(10_000))
    assert document.content == text + "\ufffd"
