"""Who may call the server: bearer tokens, Host and Origin checks, client identity, exposure.

`Guard` is the one ASGI middleware that decides, in this order: Host (421) and Origin (403)
against DNS rebinding, the bearer token (401), then for the search routes (`/mcp`, `/search`) the
per-client rate limit (429) and the concurrency limits (429 per client, 503 overall), and last
the body cap (413). The MCP SDK's own Host/Origin check is switched off by the app so that the two
can never disagree. `/healthz` passes untouched: it tells nothing but the version.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
import ipaddress
import json
import math
import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING
from urllib.parse import urlsplit

from starlette.datastructures import Headers
from starlette.types import ASGIApp, Receive, Scope, Send

from websearch_mcp.errors import ConfigError
from websearch_mcp.limits import ConcurrencyLimiter, RateLimiter, read_body

if TYPE_CHECKING:
    from websearch_mcp.config import ServerSettings

IPNetwork = ipaddress.IPv4Network | ipaddress.IPv6Network
#: Called with a short reason ("unauthorized", "rate_limited", ...) for every refused request.
RejectHook = Callable[[str], None]

#: Paths that need no token and pass every check.
OPEN_PATHS = frozenset({"/healthz"})
#: Paths that do work on behalf of a caller and so count against the limits.
LIMITED_PATHS = frozenset({"/mcp", "/search"})
#: The scope key under which `Guard` leaves the caller's identity for the access log.
CLIENT_KEY = "websearch.client"

LOOPBACK_HOSTS = ("127.0.0.1:*", "localhost:*", "[::1]:*")
LOOPBACK_ORIGINS = tuple(
    f"{scheme}://{host}:*"
    for scheme in ("http", "https")
    for host in ("127.0.0.1", "localhost", "[::1]")
)
REALM = 'Bearer realm="websearch-mcp"'
_HOST_RE = re.compile(r"^[A-Za-z0-9*][A-Za-z0-9._*-]*$")


# --- exposure -------------------------------------------------------------------------------


def is_loopback(host: str) -> bool:
    """Whether a listen address only accepts connections from this machine."""
    name = host.strip().strip("[]").lower()
    if name == "localhost":
        return True
    try:
        return ipaddress.ip_address(name).is_loopback
    except ValueError:
        return False


def check_exposure(server: ServerSettings) -> None:
    """Refuse to serve a non-loopback address with no tokens unless anonymity was asked for."""
    if is_loopback(server.host) or server.auth_tokens or server.allow_anonymous:
        return
    raise ConfigError(
        f"refusing to serve {server.host}:{server.port} without authentication: anyone who can"
        " reach that address could use this server and its API keys. Set bearer tokens"
        " (server.auth_tokens, or WEBSEARCH_MCP_TOKENS=t1,t2), or set"
        " server.allow_anonymous: true (WEBSEARCH_MCP_SERVER__ALLOW_ANONYMOUS=true) to serve"
        " without them on purpose."
    )


def serves_this_machine_only(server: ServerSettings) -> bool:
    """A loopback address, no tokens and no proxies: every caller is this machine's user.

    Such a server's one client is a local agent, often searching in parallel; refusing it
    protects nobody, so the per-client limits are off there (the overall limit still holds).
    Behind a reverse proxy (`trusted_proxies`) or with tokens, callers are remote.
    """
    return is_loopback(server.host) and not server.auth_tokens and not server.trusted_proxies


# --- Host and Origin patterns ---------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Pattern:
    """An allowed Host or Origin: `scheme` None for hosts; `host` "*" or "*.x" wildcards;
    `port` None (no port written), "*" (any or none) or digits."""

    scheme: str | None
    host: str
    port: str | None

    def matches(self, scheme: str | None, host: str, port: str | None) -> bool:
        if self.host == "*" and self.scheme is None and self.port == "*":
            return True
        if self.scheme is not None and self.scheme != scheme:
            return False
        if self.port != "*" and self.port != port:
            return False
        if self.host == "*":
            return True
        if self.host.startswith("*."):
            return host.endswith(self.host[1:])
        return host == self.host


def _split_host_port(text: str) -> tuple[str, str | None]:
    """`host[:port]` with `[v6]` brackets -> (host without brackets, lower-case; port or None)."""
    if text.startswith("["):
        end = text.find("]")
        if end < 0:
            raise ValueError("unclosed [")
        host, rest = text[1:end], text[end + 1 :]
        if rest and not rest.startswith(":"):
            raise ValueError("junk after ]")
        port = rest[1:] if rest else None
    elif text.count(":") == 1:
        host, port = text.split(":")
    else:
        host, port = text, None
    if port is not None and port != "*" and not port.isdigit():
        raise ValueError("bad port")
    if text.startswith("["):
        ipaddress.IPv6Address(host)  # ValueError when it is not one
    elif not _HOST_RE.match(host):
        raise ValueError("bad host")
    return host.lower(), port


def _check_wildcard(host: str, original: str) -> None:
    if "*" in host and host != "*" and not (host.startswith("*.") and "*" not in host[2:]):
        raise ConfigError(f"{original!r}: '*' may only stand alone or as the first label (*.x)")


def parse_host_pattern(text: str) -> Pattern:
    """`search.example.com`, `search.example.com:*`, `*.example.com`, `10.0.0.5:8338` or `*`."""
    if text.strip() == "*":
        return Pattern(None, "*", "*")
    try:
        host, port = _split_host_port(text.strip())
    except ValueError:
        raise ConfigError(
            f"{text!r} is not a host pattern such as search.example.com, *.example.com:* or"
            " 10.0.0.5:8338"
        ) from None
    _check_wildcard(host, text)
    return Pattern(None, host, port)


def parse_origin_pattern(text: str) -> Pattern:
    """`https://app.example.com`, `https://*.example.com`, `http://localhost:*` or `*`."""
    if text.strip() == "*":
        return Pattern(None, "*", "*")
    scheme, sep, rest = text.strip().partition("://")
    try:
        if not sep or scheme.lower() not in ("http", "https") or "/" in rest:
            raise ValueError
        host, port = _split_host_port(rest)
    except ValueError:
        raise ConfigError(
            f"{text!r} is not an origin pattern such as https://app.example.com,"
            " https://*.example.com or http://localhost:*"
        ) from None
    _check_wildcard(host, text)
    return Pattern(scheme.lower(), host, port)


class OriginPolicy:
    """Host and Origin validation against DNS rebinding; loopback names are always allowed."""

    def __init__(self, allowed_hosts: Iterable[str], allowed_origins: Iterable[str]) -> None:
        self.hosts = [parse_host_pattern(p) for p in (*LOOPBACK_HOSTS, *allowed_hosts)]
        self.origins = [parse_origin_pattern(p) for p in (*LOOPBACK_ORIGINS, *allowed_origins)]

    def host_allowed(self, value: str | None) -> bool:
        """Whether a `Host` header names this server as configured."""
        if not value:
            return False
        try:
            host, port = _split_host_port(value.strip())
        except ValueError:
            return False
        return any(p.matches(None, host, port) for p in self.hosts)

    def origin_allowed(self, value: str | None) -> bool:
        """Whether an `Origin` header is allowed; requests without one (not browsers) are."""
        if value is None:
            return True
        try:
            parts = urlsplit(value.strip())
            host = (parts.hostname or "").lower()
            port = str(parts.port) if parts.port is not None else None
        except ValueError:
            return False
        if not host or parts.path or parts.query:
            return False
        scheme = parts.scheme.lower()
        return any(p.matches(scheme, host, port) for p in self.origins)


# --- tokens and client identity -------------------------------------------------------------


def _digest(text: str) -> bytes:
    return hashlib.sha256(text.encode("utf-8")).digest()


def presented_token(authorization: str | None) -> str | None:
    """The token of `Authorization: Bearer <token>`, or of `Basic` credentials `<any>:<token>`.

    Basic is for clients that cannot set headers but take credentials in a URL
    (`http://user:<token>@host:8338/search`, as Open WebUI's SearXNG client does); a lone
    user name (`http://<token>@host`) counts as the token too.
    """
    scheme, _, value = (authorization or "").strip().partition(" ")
    value = value.strip()
    if scheme.lower() == "bearer":
        return value or None
    if scheme.lower() != "basic":
        return None
    try:
        user, _, password = base64.b64decode(value, validate=True).decode("utf-8").partition(":")
    except (binascii.Error, UnicodeDecodeError):
        return None
    return password or user or None


class TokenAuth:
    """Bearer tokens compared in constant time (digests of equal length, every token tried)."""

    def __init__(self, tokens: Sequence[str]) -> None:
        self._digests = [_digest(t) for t in tokens if t]

    @property
    def enabled(self) -> bool:
        return bool(self._digests)

    def identify(self, authorization: str | None) -> str | None:
        """The caller's id (`token:` + a digest prefix, never the token) or None when refused."""
        presented = presented_token(authorization)
        if presented is None:
            return None
        digest = _digest(presented)
        found = False
        for known in self._digests:
            found |= hmac.compare_digest(digest, known)
        return f"token:{digest.hex()[:12]}" if found else None


def parse_networks(items: Iterable[str]) -> list[IPNetwork]:
    """Addresses or CIDR ranges as networks (validated by the config already)."""
    return [ipaddress.ip_network(item, strict=False) for item in items]


def _in(networks: Sequence[IPNetwork], address: str) -> bool:
    try:
        ip = ipaddress.ip_address(address)
    except ValueError:
        return False
    return any(ip in net for net in networks)


def client_address(scope: Scope, trusted: Sequence[IPNetwork]) -> str:
    """The caller's IP: the peer, or when the peer is a trusted proxy, the right-most address of
    `X-Forwarded-For` that is not itself a trusted proxy (the left-most when all are)."""
    peer = (scope.get("client") or ("unknown", 0))[0]
    if not trusted or not _in(trusted, peer):
        return peer
    values = Headers(scope=scope).getlist("x-forwarded-for")
    hops = [hop.strip() for value in values for hop in value.split(",") if hop.strip()]
    for hop in reversed(hops):
        try:
            ipaddress.ip_address(hop)
        except ValueError:
            return peer  # a forged or garbled chain: trust only what we saw
        if not _in(trusted, hop):
            return hop
    return hops[0] if hops else peer


# --- the middleware -------------------------------------------------------------------------


async def _reject(
    send: Send, status: int, message: str, headers: dict[str, str] | None = None
) -> None:
    body = json.dumps({"error": message}).encode()
    raw = [
        (b"content-type", b"application/json"),
        (b"content-length", str(len(body)).encode()),
        *((k.lower().encode(), v.encode()) for k, v in (headers or {}).items()),
    ]
    await send({"type": "http.response.start", "status": status, "headers": raw})
    await send({"type": "http.response.body", "body": body})


def _retry_after(seconds: float) -> dict[str, str]:
    return {"Retry-After": str(max(1, math.ceil(seconds)))}


class Guard:
    """The ASGI middleware applying every check of this module and of `limits` (see top)."""

    def __init__(
        self, app: ASGIApp, server: ServerSettings, on_reject: RejectHook | None = None
    ) -> None:
        self.app = app
        self.server = server
        self.policy = OriginPolicy(server.allowed_hosts, server.allowed_origins)
        self.auth = TokenAuth(server.auth_tokens)
        self.trusted = parse_networks(server.trusted_proxies)
        per_client = not serves_this_machine_only(server) or server.limit_local_clients
        self.rate = RateLimiter(
            server.rate_limit_per_minute if per_client else 0, server.rate_limit_burst
        )
        self.slots = ConcurrencyLimiter(
            server.max_concurrent_requests, server.max_concurrent_per_client if per_client else None
        )
        self.on_reject = on_reject

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope["path"] in OPEN_PATHS:
            await self.app(scope, receive, send)
            return
        headers = Headers(scope=scope)
        address = client_address(scope, self.trusted)
        scope[CLIENT_KEY] = address
        if not self.policy.host_allowed(headers.get("host")):
            await self._refuse(
                send, 421, "host", "this Host is not served here; add it to server.allowed_hosts"
            )
            return
        if not self.policy.origin_allowed(headers.get("origin")):
            await self._refuse(
                send, 403, "origin", "this Origin is not allowed; see server.allowed_origins"
            )
            return
        client = address
        if self.auth.enabled:
            token_id = self.auth.identify(headers.get("authorization"))
            if token_id is None:
                given = "authorization" in headers
                challenge = REALM + (', error="invalid_token"' if given else "")
                message = "invalid bearer token" if given else "a bearer token is required"
                await self._refuse(
                    send, 401, "unauthorized", message, {"WWW-Authenticate": challenge}
                )
                return
            client = scope[CLIENT_KEY] = token_id
        if scope["path"] not in LIMITED_PATHS:
            await self._pass(scope, receive, send)
            return
        wait = self.rate.acquire(client)
        if wait > 0:
            await self._refuse(
                send, 429, "rate_limited", "rate limit exceeded; retry later", _retry_after(wait)
            )
            return
        refused = self.slots.enter(client)
        if refused == "client":
            await self._refuse(
                send,
                429,
                "client_busy",
                "too many requests in flight from this client",
                _retry_after(1),
            )
            return
        if refused == "total":
            await self._refuse(
                send, 503, "overloaded", "the server is at capacity; retry later", _retry_after(1)
            )
            return
        try:
            await self._pass(scope, receive, send)
        finally:
            self.slots.leave(client)

    async def _pass(self, scope: Scope, receive: Receive, send: Send) -> None:
        """Enforce the body cap (reading the body ahead), then call the app."""
        limit = self.server.max_body_bytes
        declared = Headers(scope=scope).get("content-length")
        if declared is not None and declared.isdigit() and int(declared) > limit:
            await self._too_large(send)
            return
        replay = await read_body(receive, limit)
        if replay is None:
            await self._too_large(send)
            return
        await self.app(scope, replay, send)

    async def _too_large(self, send: Send) -> None:
        await self._refuse(
            send, 413, "too_large", f"request body over {self.server.max_body_bytes} bytes"
        )

    async def _refuse(
        self,
        send: Send,
        status: int,
        reason: str,
        message: str,
        headers: dict[str, str] | None = None,
    ) -> None:
        if self.on_reject is not None:
            self.on_reject(reason)
        await _reject(send, status, message, headers)
