"""Proxy choice, the shared TLS context, and the httpx client of the summary model."""

from __future__ import annotations

import contextlib
import functools
import ipaddress
import os
import ssl
from collections.abc import Iterable, Mapping, Sequence
from typing import Literal
from urllib.parse import urlsplit

# NO_PROXY matching as urllib reads the environment; in urllib.request on every platform,
# though typeshed leaves it out.
from urllib.request import proxy_bypass_environment  # type: ignore[attr-defined]

import httpx

from websearch_mcp import __version__

USER_AGENT = f"websearch-mcp/{__version__} (+https://github.com/websearch-mcp)"
#: Loggers that may print a request URL (and so a key sent as a query parameter), and the one
#: that prints a SOCKS proxy's login; a logger's filter never sees its children's records.
URL_LOGGERS = ("httpx", "httpcore", "httpcore.socks", "aiohttp.client", "aiohttp.internal")
#: Connections per client: in flight at once, and kept open between requests.
MAX_CONNECTIONS = 256
MAX_KEEPALIVE = 64


def ssl_context() -> ssl.SSLContext:
    """The shared TLS context for the CA settings in force (`SSL_CERT_FILE`, `SSL_CERT_DIR`)."""
    return _ssl_context_for(os.environ.get("SSL_CERT_FILE"), os.environ.get("SSL_CERT_DIR"))


@functools.cache
def _ssl_context_for(cert_file: str | None, cert_dir: str | None) -> ssl.SSLContext:
    # Loading the CA bundle is slow and large: one context per setting (the arguments key it).
    return httpx.create_ssl_context(trust_env=True)


def build_httpx_client(*, proxy: str | None = None) -> httpx.AsyncClient:
    """A pooled, keep-alive httpx client (the summary model's; engines use `engine_http`).

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
        verify=ssl_context(),
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
    """Whether `url`'s host is exempt by a NO_PROXY-style list (`*`, `example.com`, `.corp`,
    `10.0.0.0/8`)."""
    # urllib takes `*` only as the whole list: one from `proxy.no_proxy` joined to NO_PROXY's
    # entries would match nothing.
    if any(entry.strip() == "*" for entry in no_proxy):
        return True
    parts = urlsplit(url)
    if _in_networks(parts.hostname or "", no_proxy):
        return True
    host = parts.hostname or ""
    if parts.port:
        host = f"{host}:{parts.port}"
    return bool(no_proxy) and bool(proxy_bypass_environment(host, {"no": ",".join(no_proxy)}))


def _in_networks(host: str, no_proxy: Sequence[str]) -> bool:
    """Whether `host` is an address in a network of the list (`10.0.0.0/8`, as curl, requests
    and Go read NO_PROXY; urllib does not)."""
    try:
        address = ipaddress.ip_address(host)
    except ValueError:
        return False
    for entry in no_proxy:
        if "/" in entry:
            with contextlib.suppress(ValueError):
                if address in ipaddress.ip_network(entry.strip(), strict=False):
                    return True
    return False


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
