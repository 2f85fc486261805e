"""HTTP client factory, proxy choice, and the one place where engine requests meet the network."""

from __future__ import annotations

import functools
import os
import ssl
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any, Literal
from urllib.parse import urlencode, urlsplit
from urllib.request import proxy_bypass_environment

import httpx

from websearch_mcp import __version__
from websearch_mcp.errors import EngineError
from websearch_mcp.models import HttpRequest, HttpResponse
from websearch_mcp.redaction import redact

USER_AGENT = f"websearch-mcp/{__version__} (+https://github.com/websearch-mcp)"
#: Engine answers larger than this are cut off and reported as an error: no engine sends this much.
MAX_RESPONSE_BYTES = 5 * 1024 * 1024
#: Loggers that may print a request URL (and so a key sent as a query parameter).
URL_LOGGERS = ("httpx", "httpcore")
#: Connections per client: in flight at once, and kept open between requests.
MAX_CONNECTIONS = 256
MAX_KEEPALIVE = 64


def _ssl_context() -> ssl.SSLContext:
    """The shared TLS context for the CA settings in force (`SSL_CERT_FILE`, `SSL_CERT_DIR`)."""
    return _ssl_context_for(os.environ.get("SSL_CERT_FILE"), os.environ.get("SSL_CERT_DIR"))


@functools.cache
def _ssl_context_for(cert_file: str | None, cert_dir: str | None) -> ssl.SSLContext:
    # Loading the CA bundle takes tens of milliseconds and megabytes: one context per setting.
    return httpx.create_ssl_context(trust_env=True)


def build_client(*, proxy: str | None = None) -> httpx.AsyncClient:
    """A pooled, keep-alive client (the orchestrator keeps one per engine and proxy).

    The proxy is always chosen explicitly (`choose_proxy`), so the environment's proxy variables
    are not read a second time here; its CA settings (`SSL_CERT_FILE`, `SSL_CERT_DIR`) still are.
    As many connections stay open as a busy server uses at once, so none is opened afresh
    for every request under load.
    """
    return httpx.AsyncClient(
        headers={"User-Agent": USER_AGENT},
        follow_redirects=True,
        max_redirects=5,
        proxy=proxy,
        trust_env=False,
        verify=_ssl_context(),
        limits=httpx.Limits(
            max_connections=MAX_CONNECTIONS, max_keepalive_connections=MAX_KEEPALIVE
        ),
        timeout=httpx.Timeout(10.0),
    )


def _split(value: str | None) -> list[str]:
    return [part.strip() for part in (value or "").split(",") if part.strip()]


def _env(environ: Mapping[str, str], name: str) -> str | None:
    # Lower case first, as curl and requests do.
    return environ.get(name.lower()) or environ.get(name.upper()) or None


def bypasses_proxy(url: str, no_proxy: Sequence[str]) -> bool:
    """Whether `url`'s host is exempt by a NO_PROXY-style list (`*`, `example.com`, `.corp`)."""
    parts = urlsplit(url)
    host = parts.hostname or ""
    if parts.port:
        host = f"{host}:{parts.port}"
    return bool(no_proxy) and bool(proxy_bypass_environment(host, {"no": ",".join(no_proxy)}))


def environment_proxy(url: str, environ: Mapping[str, str]) -> str | None:
    """The proxy the standard variables give for `url`: `<SCHEME>_PROXY`, else `ALL_PROXY`."""
    scheme = urlsplit(url).scheme or "https"
    value = _env(environ, f"{scheme}_proxy") or _env(environ, "all_proxy")
    if value and "://" not in value:
        value = f"http://{value}"  # `proxy.corp:3128` means an HTTP proxy
    return value


def choose_proxy(
    url: str,
    engine_proxy: str | Literal[False] | None,
    proxy_url: str | None,
    no_proxy: Iterable[str] = (),
    environ: Mapping[str, str] | None = None,
) -> str | None:
    """The proxy for requests to `url`, or None for a direct connection.

    In order: the engine's own setting (`false` means direct), hosts exempted by `no_proxy` or
    `NO_PROXY`, the configured `proxy.url`, then `HTTP(S)_PROXY` / `ALL_PROXY`.
    """
    if engine_proxy is False:
        return None
    if engine_proxy:
        return engine_proxy
    env = os.environ if environ is None else environ
    exempt = [*no_proxy, *_split(_env(env, "no_proxy"))]
    if bypasses_proxy(url, exempt):
        return None
    return proxy_url or environment_proxy(url, env)


#: Failures that mean a kept-alive connection was closed by the server before it answered.
STALE_CONNECTION_ERRORS = (httpx.RemoteProtocolError, httpx.ReadError, httpx.WriteError)


def query_string(params: Mapping[str, Any]) -> str:
    """`params` encoded as httpx would (`true`/`false`, None as empty, lists repeated)."""

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


async def send(
    client: httpx.AsyncClient,
    base_url: str,
    request: HttpRequest,
    timeout: float,
    on_retry: Callable[[], None] | None = None,
) -> HttpResponse:
    """Send an engine's request to `base_url` and read at most `MAX_RESPONSE_BYTES` of the answer.

    A request that fails on a kept-alive connection the server had closed (it did not answer at
    all) is sent once more within what is left of `timeout`; the pool has dropped the closed
    connection by then, so it goes out on another or a new one. `on_retry` hears of each.
    Network failures become `EngineError` with the failure's kind only: httpx messages may quote
    the URL, and a URL may carry a key in its query string.
    """
    # The query string is encoded here: httpx would parse the URL a second time to merge it.
    url = base_url + request.path
    if request.params:
        url += ("&" if "?" in url else "?") + query_string(request.params)
    deadline = time.monotonic() + timeout
    try:
        try:
            return await _exchange(client, url, request, timeout)
        except STALE_CONNECTION_ERRORS as err:
            left = deadline - time.monotonic()
            if isinstance(err, _ReadingFailed) or left <= 0:
                raise
            if on_retry is not None:
                on_retry()
            return await _exchange(client, url, request, left)
    except _ReadingFailed as err:
        raise EngineError(f"connection failed ({type(err.__cause__).__name__})") from None
    except httpx.TimeoutException:
        raise
    except httpx.HTTPError as err:
        raise EngineError(f"connection failed ({type(err).__name__})") from None


class _ReadingFailed(httpx.ReadError):
    """The connection failed after the answer had started: not a stale connection, no retry."""


async def _exchange(
    client: httpx.AsyncClient, url: str, request: HttpRequest, timeout: float
) -> HttpResponse:
    async with client.stream(
        request.method,
        url,
        json=request.json,
        data=request.data,
        headers=request.headers,
        timeout=timeout,
    ) as response:
        chunks: list[bytes] = []
        size = 0
        try:
            async for chunk in response.aiter_bytes():
                size += len(chunk)
                if size > MAX_RESPONSE_BYTES:
                    raise EngineError(f"response larger than {MAX_RESPONSE_BYTES // 1048576} MiB")
                chunks.append(chunk)
        except STALE_CONNECTION_ERRORS as err:
            raise _ReadingFailed("reading the answer failed") from err
        return HttpResponse(
            status=response.status_code,
            headers={k.lower(): v for k, v in response.headers.items()},
            content=b"".join(chunks),
            url=redact(str(response.url), request.secrets),
        )
