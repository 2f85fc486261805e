"""Engine requests on the wire: one keep-alive pool per engine and proxy, and `send`.

Engine requests go through aiohttp rather than httpx: its client spends much less CPU time per
request (docs/benchmarks.md, `bench.client`), and a search sends one per engine. httpx stays for
`fetch_page` (its pinned connections) and the summary model.
"""

from __future__ import annotations

import asyncio
import functools
import logging
import time
from collections.abc import Callable, Mapping
from typing import Any
from urllib.parse import unquote, urlencode, urlsplit

import aiohttp
import orjson
from aiohttp_socks import (
    ProxyConnectionError,
    ProxyConnector,
    ProxyError,
    ProxyTimeoutError,
    ProxyType,
)
from yarl import URL

from websearch_mcp.errors import EngineError
from websearch_mcp.models import HttpRequest, HttpResponse
from websearch_mcp.net.http import USER_AGENT, ssl_context
from websearch_mcp.redaction import redact

#: Engine answers larger than this are cut off and reported as an error: no engine sends this much.
MAX_RESPONSE_BYTES = 5 * 1024 * 1024
#: Connections per pool in flight at once; idle ones are closed after `KEEPALIVE_SECONDS`.
MAX_CONNECTIONS = 256
KEEPALIVE_SECONDS = 5.0
#: Redirects followed per request.
MAX_REDIRECTS = 5
_SOCKS = {"socks5": False, "socks5h": True}
#: No timer of aiohttp's: `send` runs under its caller's deadline.
_CALLER_BOUNDS = aiohttp.ClientTimeout()  # scheme -> the proxy resolves names (rdns)

log = logging.getLogger(__name__)


class EngineClient:
    """A pooled keep-alive client for one engine and proxy (None: direct).

    The aiohttp session is made on first use, in the event loop that uses it (a session belongs
    to one loop), and made again if another loop uses the client later. Cookies persist per
    client, as scraped engines expect, for IP-address hosts too.
    """

    def __init__(self, proxy: str | None = None) -> None:
        self.proxy = proxy
        self._session: aiohttp.ClientSession | None = None
        self._loop: asyncio.AbstractEventLoop | None = None

    def session(self) -> aiohttp.ClientSession:
        loop = asyncio.get_running_loop()
        if self._session is None or self._loop is not loop or self._session.closed:
            self._session = self._new_session()
            self._loop = loop
        return self._session

    def _new_session(self) -> aiohttp.ClientSession:
        options: dict[str, Any] = {
            "limit": MAX_CONNECTIONS,
            "keepalive_timeout": KEEPALIVE_SECONDS,
            "ssl": ssl_context(),
        }
        proxy = self.proxy
        scheme = urlsplit(proxy).scheme if proxy else ""
        if proxy and scheme in _SOCKS:
            parts = urlsplit(proxy)
            connector: aiohttp.BaseConnector = ProxyConnector(
                proxy_type=ProxyType.SOCKS5,
                host=parts.hostname or "",
                port=parts.port or 1080,
                username=unquote(parts.username) if parts.username else None,
                password=unquote(parts.password) if parts.password else None,
                rdns=_SOCKS[scheme],
                **options,
            )
            proxy = None
        else:
            connector = aiohttp.TCPConnector(**options)
        session = aiohttp.ClientSession(
            connector=connector,
            headers={"User-Agent": USER_AGENT},
            cookie_jar=aiohttp.CookieJar(unsafe=True),
            proxy=proxy,
        )
        # `send` retries a request that met a closed kept-alive connection itself, for every
        # method, within the engine's time, and counts it; aiohttp's own silent retry would
        # hide it from that count (and covers GET only). aiohttp has no public switch for it;
        # tests/net/test_http_send.py fails when this attribute stops turning it off.
        session._retry_connection = False
        return session

    async def aclose(self) -> None:
        if self._session is not None and not self._session.closed:
            await self._session.close()
        self._session = None


def build_client(*, proxy: str | None = None) -> EngineClient:
    """A pooled, keep-alive engine client (the orchestrator keeps one per engine and proxy)."""
    return EngineClient(proxy)


def query_string(params: Mapping[str, Any]) -> str:
    """`params` encoded as form data (`true`/`false`, None as empty, lists repeated)."""

    def text(value: Any) -> str:
        if value is True or value is False:
            return "true" if value else "false"
        return "" if value is None else str(value)

    pairs = [
        (key, text(item))
        for key, value in params.items()
        for item in (value if isinstance(value, list | tuple) else (value,))
    ]
    return urlencode(pairs)


@functools.lru_cache(maxsize=256)
def _quoted(url: str) -> str:
    """`url` (a configured base URL and an engine's path, a few distinct ones) with anything
    not allowed in a URL percent-encoded, as the request line needs it."""
    return str(URL(url))


_FORM = "application/x-www-form-urlencoded"


def _body(request: HttpRequest) -> tuple[bytes | None, dict[str, str]]:
    """The request's body as bytes, and its headers with the body's type unless the engine set
    one. Encoded here because aiohttp's own encoders cost more than the rest of a request: a
    form is built through a multipart writer (a uuid per request), JSON by the json module."""
    if request.json is not None:
        body, kind = orjson.dumps(request.json), "application/json"
    elif request.data is not None:
        body, kind = query_string(request.data).encode(), _FORM
    else:
        return None, request.headers
    if any(name.lower() == "content-type" for name in request.headers):
        return body, request.headers
    return body, {**request.headers, "Content-Type": kind}


def _secrets_stay_home(
    url: URL, headers: Mapping[str, str], secrets: tuple[str, ...]
) -> tuple[aiohttp.ClientMiddlewareType, ...]:
    """What keeps the headers that carry a key (Brave's `X-Subscription-Token`, Exa's and
    Serper's `x-api-key`) off a redirect to another origin: aiohttp drops only `Authorization`
    there, and an answer redirecting elsewhere would collect the key. Empty without such a
    header, as most requests are."""
    carrying = [name for name, value in headers.items() if any(s and s in value for s in secrets)]
    if not carrying:
        return ()
    origin = url.origin()

    async def keep_home(
        hop: aiohttp.ClientRequest, handler: aiohttp.ClientHandlerType
    ) -> aiohttp.ClientResponse:
        if hop.url.origin() != origin:
            for name in carrying:
                hop.headers.popall(name, None)
        return await handler(hop)

    return (keep_home,)


class _ReadingFailed(Exception):
    """The connection failed after the answer had started: not a stale connection, no retry."""


def _stale(err: BaseException) -> bool:
    """Whether `err` means a kept-alive connection was closed by the server before it answered
    (a refused or unreachable connection is not that)."""
    if isinstance(err, aiohttp.ClientConnectorError):
        return False
    return isinstance(err, aiohttp.ServerDisconnectedError | aiohttp.ClientOSError)


async def send(
    client: EngineClient,
    base_url: str,
    request: HttpRequest,
    timeout: float,
    on_retry: Callable[[], None] | None = None,
) -> HttpResponse:
    """Send an engine's request to `base_url` and read at most `MAX_RESPONSE_BYTES` of the answer.

    A request that fails on a kept-alive connection the server had closed (it did not answer at
    all) is sent once more within what is left of `timeout`; the pool has dropped the closed
    connection by then, so it goes out on another or a new one. `on_retry` hears of each.
    Network failures become `EngineError` with the failure's kind only, as a client's message
    may quote the URL, and a URL may carry a key.

    The caller bounds the call: it runs under the caller's `asyncio.timeout` of `timeout`
    seconds, which raises `TimeoutError`. aiohttp's own timer would be a second one per request,
    at a cost every request would pay (`bench.client`).
    """
    url = _quoted(base_url + request.path)
    if request.params:
        url += ("&" if "?" in url else "?") + query_string(request.params)
    deadline = time.monotonic() + timeout
    try:
        try:
            return await _exchange(client, url, request, timeout)
        except aiohttp.ClientError as err:
            left = deadline - time.monotonic()
            if not _stale(err) or left <= 0:
                raise
            if on_retry is not None:
                on_retry()
            return await _exchange(client, url, request, left)
    except _ReadingFailed as err:
        raise EngineError(f"connection failed ({_failure_words(err.__cause__)})") from None
    except aiohttp.ClientHttpProxyError as err:  # its status is the proxy's, not the engine's
        raise EngineError(
            f"connection failed (the proxy refused the tunnel: HTTP {err.status})"
        ) from None
    # A SOCKS proxy's failures are aiohttp_socks's own exceptions, not aiohttp's.
    except (aiohttp.ClientError, ProxyError, ProxyConnectionError, ProxyTimeoutError) as err:
        if (
            isinstance(err, aiohttp.ClientConnectorDNSError)
            and client.proxy
            and err.host == urlsplit(client.proxy).hostname
        ):  # through an HTTP proxy only the proxy's host is looked up here
            raise EngineError("connection failed (could not resolve the proxy's host)") from None
        raise EngineError(f"connection failed ({_failure_words(err)})") from None
    except ValueError:  # an unusable URL or proxy address
        raise EngineError(
            "connection failed (the engine's or the proxy's address is invalid)"
        ) from None


#: What a network failure was, in words an agent reads (never the exception's class), the
#: first kind that matches: aiohttp's DNS and TLS errors are connection errors too.
_FAILURES: tuple[tuple[type[BaseException] | tuple[type[BaseException], ...], str], ...] = (
    (aiohttp.ClientConnectorDNSError, "could not resolve the engine's host"),
    (aiohttp.ClientSSLError, "TLS handshake failed"),
    (aiohttp.ClientProxyConnectionError, "the proxy failed"),
    (aiohttp.ClientConnectorError, "could not connect: refused or unreachable"),
    ((ProxyError, ProxyConnectionError, ProxyTimeoutError), "the proxy failed"),
    (aiohttp.TooManyRedirects, "too many redirects"),
    (aiohttp.ServerDisconnectedError, "the server closed the connection before answering"),
    (aiohttp.ClientPayloadError, "the answer was cut off"),
)


def _failure_words(err: BaseException | None) -> str:
    """`_FAILURES`' words for `err`, or "the connection broke"."""
    return next(
        (words for kind, words in _FAILURES if isinstance(err, kind)), "the connection broke"
    )


async def _exchange(
    client: EngineClient, url: str, request: HttpRequest, timeout: float
) -> HttpResponse:
    if timeout <= 0:
        raise TimeoutError
    body, headers = _body(request)
    target = URL(url, encoded=True)  # encoded above, once; not quoted again
    async with client.session().request(
        request.method,
        target,
        data=body,
        headers=headers,
        timeout=_CALLER_BOUNDS,
        max_redirects=MAX_REDIRECTS + 1,  # aiohttp counts the answer that would be one too many
        middlewares=_secrets_stay_home(target, headers, request.secrets),
    ) as response:
        chunks: list[bytes] = []
        size = 0
        try:
            async for chunk in response.content.iter_any():
                size += len(chunk)
                if size > MAX_RESPONSE_BYTES:
                    raise EngineError(f"response larger than {MAX_RESPONSE_BYTES // 1048576} MiB")
                chunks.append(chunk)
        except aiohttp.ClientError as err:
            raise _ReadingFailed("reading the answer failed") from err
        answered = redact(str(response.url), request.secrets)
        if log.isEnabledFor(logging.DEBUG):  # the URL holds the query: only when debugging
            log.debug("HTTP Request: %s %s %d", request.method, answered, response.status)
        return HttpResponse(
            status=response.status,
            headers={k.lower(): v for k, v in response.headers.items()},
            content=b"".join(chunks),
            url=answered,
        )
