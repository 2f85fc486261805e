"""The guarded HTTP GET behind `fetch_page`.

Every host is resolved once, every address it resolves to is checked against the address policy,
and the connection is opened to those checked addresses only: the network backend never resolves
a name itself, so a DNS answer that changes between check and connect (rebinding) has no effect.
The URL keeps the hostname, so the Host header, TLS SNI and certificate verification are for the
name. Redirects are followed by hand, each one checked the same way. The body is streamed under a
byte cap counted on the wire and again after decompression; Content-Length is only used to refuse
early. One overall deadline covers resolution, redirects and the body.
"""

from __future__ import annotations

import asyncio
import functools
import logging
import socket
import ssl
from collections.abc import Awaitable, Callable, Iterable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from email.message import Message

import httpcore
import httpx

from websearch_mcp.config import FetchSettings
from websearch_mcp.errors import (
    FetchBlocked,
    FetchError,
    FetchRefused,
    FetchTimeout,
    FetchUnsupported,
)
from websearch_mcp.fetch.decoding import ACCEPT_ENCODING, CappedDecoder, capped_chunks, too_large
from websearch_mcp.fetch.ssrf import AddressPolicy, check_url, default_port, parse_address

logger = logging.getLogger(__name__)

Resolver = Callable[[str, int], Awaitable[list[str]]]

USER_AGENT = "Mozilla/5.0 (compatible; websearch-mcp/0.1; page reader)"
ACCEPT = (
    "text/html,application/xhtml+xml,application/xml;q=0.9,application/json;q=0.9,"
    "application/pdf;q=0.9,text/plain;q=0.8,*/*;q=0.1"
)
_REDIRECTS = frozenset({301, 302, 303, 307, 308})
#: Statuses by which a server turns a reader away rather than failing.
_BLOCKING = frozenset({401, 403, 407, 429, 451})


@dataclass(frozen=True)
class RawPage:
    """A fetched body, decoded from its Content-Encoding, with what its headers said."""

    url: str
    final_url: str
    media_type: str  # lower case without parameters; "" when the server sent none
    charset: str | None
    body: bytes


#: Threads of their own for the lookups of page hosts. A page's lookup goes on after its fetch
#: has timed out, until the resolver gives up: with asyncio's default executor, a few hosts whose
#: name servers never answer would hold every thread that engine lookups and text extraction
#: need. Here they hold these only; a lookup still queued when its fetch ends is dropped.
_LOOKUPS = ThreadPoolExecutor(16, thread_name_prefix="websearch-page-lookup")


async def system_resolver(host: str, port: int) -> list[str]:
    """The addresses the system resolver gives for a host, in its order of preference."""
    loop = asyncio.get_running_loop()
    lookup = functools.partial(socket.getaddrinfo, host, port, type=socket.SOCK_STREAM)
    infos = await loop.run_in_executor(_LOOKUPS, lookup)
    return list(dict.fromkeys(str(info[4][0]) for info in infos))


@functools.cache
def _ssl_context() -> ssl.SSLContext:
    return httpx.create_ssl_context()


class _PinnedBackend(httpcore.AsyncNetworkBackend):
    """Connects a (host, port) only to the addresses checked for it; never resolves names."""

    def __init__(self, pins: dict[tuple[str, int], list[str]]) -> None:
        self._pins = pins
        self._inner = httpcore.AnyIOBackend()

    async def connect_tcp(
        self,
        host: str,
        port: int,
        timeout: float | None = None,
        local_address: str | None = None,
        socket_options: Iterable[httpcore.SOCKET_OPTION] | None = None,
    ) -> httpcore.AsyncNetworkStream:
        addresses = self._pins.get((host, port))
        if not addresses:
            raise httpcore.ConnectError("no checked address for this host")
        failure: Exception | None = None
        for address in addresses:
            try:
                return await self._inner.connect_tcp(
                    address, port, timeout, local_address, socket_options
                )
            except (httpcore.ConnectError, httpcore.ConnectTimeout) as err:
                failure = err
        assert failure is not None
        raise failure

    async def connect_unix_socket(
        self,
        path: str,
        timeout: float | None = None,
        socket_options: Iterable[httpcore.SOCKET_OPTION] | None = None,
    ) -> httpcore.AsyncNetworkStream:
        raise httpcore.ConnectError("unix sockets are not fetched")

    async def sleep(self, seconds: float) -> None:
        await self._inner.sleep(seconds)


class _Fetch:
    """One guarded GET with its redirects; holds the addresses checked so far."""

    def __init__(self, settings: FetchSettings, resolver: Resolver) -> None:
        self.settings = settings
        self.resolver = resolver
        self.policy = AddressPolicy(settings.allow_networks)
        self.pins: dict[tuple[str, int], list[str]] = {}

    async def run(self, current: httpx.URL, original: str) -> RawPage:
        pool = httpcore.AsyncConnectionPool(
            ssl_context=_ssl_context(),
            network_backend=_PinnedBackend(self.pins),
            http1=True,
            http2=False,
            max_connections=2,
        )
        async with pool:
            for hop in range(self.settings.max_redirects + 1):
                await self._check(current, redirected=hop > 0)
                page, location = await self._get(pool, current, original)
                if page is not None:
                    return page
                try:
                    current = current.join(location)
                except httpx.InvalidURL:
                    raise FetchError("the page redirected to an invalid URL") from None
        # The page was fetched: a looping or endless redirect is the site's failure, not the
        # address policy's refusal. The reader is not asked: it would follow them anywhere.
        raise FetchError(
            f"more than {self.settings.max_redirects} redirects (the page may redirect in a loop)",
            reader_may_help=False,
        )

    async def _check(self, url: httpx.URL, *, redirected: bool) -> None:
        """Refuse the URL or pin its host to checked addresses, before any connection."""
        check_url(url, self.settings.allowed_ports, redirected=redirected)
        host, port = url.raw_host.decode("ascii"), default_port(url)
        if (host, port) in self.pins:
            return
        literal = parse_address(host)
        addresses = [str(literal)] if literal is not None else await self._resolve(host, port)
        for address in addresses:
            category = self.policy.refusal(address)
            if category is not None:
                logger.info("fetch refused: %s resolves to %s (%s)", url.host, address, category)
                what = "the page redirected to a host that" if redirected else "the host"
                raise FetchRefused(
                    f"refused: {what} points to a {category} address;"
                    " only public addresses are fetched"
                )
        self.pins[(host, port)] = addresses

    async def _resolve(self, host: str, port: int) -> list[str]:
        if host.lower().rstrip(".").split(".")[-1] == "localhost":
            # RFC 6761: this machine's loopback, whatever a resolver says or fails to say (a
            # failed lookup would send the name to the reader fallback, which reads it so).
            return ["127.0.0.1", "::1"]
        try:
            addresses = await self.resolver(host, port)
        except (OSError, UnicodeError):
            addresses = []
        if not addresses:
            raise FetchError(f"could not resolve the host {host}")
        return addresses

    async def _get(
        self, pool: httpcore.AsyncConnectionPool, url: httpx.URL, original: str
    ) -> tuple[RawPage | None, str]:
        """The page, or None and the Location to follow."""
        settings = self.settings
        read = min(settings.read_timeout_seconds, settings.timeout_seconds)
        timeouts = {"connect": settings.connect_timeout_seconds, "read": read, "write": read}
        headers = [
            (b"Host", url.netloc),
            (b"User-Agent", USER_AGENT.encode()),
            (b"Accept", ACCEPT.encode()),
            (b"Accept-Encoding", ACCEPT_ENCODING.encode()),
            (b"Accept-Language", b"en-US,en;q=0.9,*;q=0.5"),
        ]
        target = httpcore.URL(
            scheme=url.raw_scheme, host=url.raw_host, port=url.port, target=url.raw_path
        )
        try:
            async with pool.stream(
                "GET", target, headers=headers, extensions={"timeout": timeouts}
            ) as response:
                head = httpx.Headers(response.headers)
                if response.status in _REDIRECTS and head.get("location"):
                    return None, head["location"]
                if response.status >= 400:
                    failure = FetchBlocked if response.status in _BLOCKING else FetchError
                    raise failure(f"the server answered HTTP {response.status}")
                content_type = head.get("content-type", "")
                media_type = content_type.split(";", 1)[0].strip().lower()
                refuse_media_type(media_type)
                declared = head.get("content-length", "")
                if declared.isdigit() and int(declared) > settings.max_bytes:
                    raise too_large(settings.max_bytes)
                decoder = CappedDecoder(head.get("content-encoding", ""), settings.max_bytes)
                body = await _read_body(response, decoder, settings.max_bytes)
        except httpcore.TimeoutException as err:
            raise FetchTimeout(_timeout_text(err)) from None
        except (httpcore.NetworkError, httpcore.ProtocolError) as err:
            raise FetchError(_network_text(err, url)) from None
        return RawPage(original, str(url), media_type, _charset(content_type), body), ""


FETCHED_TYPES = "HTML, text, JSON, XML and PDF"


def refuse_media_type(media_type: str) -> None:
    """Refuse a declared type the fetcher cannot read (no type, or octet-stream, is sniffed)."""
    if media_type in ("", "application/octet-stream", "binary/octet-stream"):
        return
    main, _, sub = media_type.partition("/")
    readable = (
        main == "text"
        or sub in ("json", "xml", "pdf", "x-pdf", "xhtml+xml", "javascript", "x-ndjson")
        or sub.endswith(("+json", "+xml"))
    )
    if not readable:
        raise FetchUnsupported(
            f"unsupported content type {media_type}: only {FETCHED_TYPES} pages are read",
            reader_may_help=False,
        )


def _charset(content_type: str) -> str | None:
    message = Message()
    message["content-type"] = content_type
    charset = message.get_content_charset()
    return charset or None


async def _read_body(response: httpcore.Response, decoder: CappedDecoder, cap: int) -> bytes:
    chunks = [decoder.feed(chunk) async for chunk in capped_chunks(response.aiter_stream(), cap)]
    return b"".join([*chunks, decoder.finish()])


def _timeout_text(err: httpcore.TimeoutException) -> str:
    if isinstance(err, httpcore.ConnectTimeout):
        return "timed out connecting to the server"
    return "timed out: the server stopped sending"


def _network_text(err: Exception, url: httpx.URL) -> str:
    # Only the kind of failure: the OS texts name the resolved addresses.
    cause: BaseException | None = err
    while cause is not None:
        if isinstance(cause, ssl.SSLCertVerificationError):
            return f"TLS certificate verification failed for {url.host}"
        if isinstance(cause, ssl.SSLError):
            return f"TLS handshake with {url.host} failed"
        cause = cause.__cause__ or cause.__context__
    if isinstance(err, httpcore.ConnectError):
        return f"could not connect to {url.host}"
    return f"the connection to {url.host} failed while reading the page"


async def guarded_get(
    url: str, settings: FetchSettings, resolver: Resolver | None = None
) -> RawPage:
    """GET an http(s) URL under the address policy and the limits of `settings`.

    Raises FetchRefused for URLs the policy does not allow (before connecting) and FetchError for
    failures: resolution, connection, timeouts, HTTP errors, size and unsupported content types.
    """
    fetch = _Fetch(settings, resolver or system_resolver)
    try:
        parsed = httpx.URL(url)
    except httpx.InvalidURL as err:
        raise FetchRefused(f"refused: the URL is invalid ({err})") from None
    try:
        async with asyncio.timeout(settings.timeout_seconds):
            return await fetch.run(parsed, url)
    except TimeoutError:
        raise FetchTimeout(f"timed out after {settings.timeout_seconds:g} s") from None
