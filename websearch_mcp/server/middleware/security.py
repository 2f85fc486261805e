"""Who may call the server: exposure, Host and Origin patterns, bearer tokens, client identity.

The checks that `guard.Guard` applies to every request, and the refusal to serve a non-loopback
address without authentication.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
import ipaddress
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING
from urllib.parse import urlsplit

from starlette.datastructures import Headers
from starlette.types import Scope

from websearch_mcp.config.patterns import (
    parse_host_pattern,
    parse_origin_pattern,
    split_host_port,
)
from websearch_mcp.errors import ConfigError

if TYPE_CHECKING:
    from websearch_mcp.config import ServerSettings

IPNetwork = ipaddress.IPv4Network | ipaddress.IPv6Network

LOOPBACK_HOSTS = ("127.0.0.1:*", "localhost:*", "[::1]:*")
LOOPBACK_ORIGINS = tuple(
    f"{scheme}://{host}:*"
    for scheme in ("http", "https")
    for host in ("127.0.0.1", "localhost", "[::1]")
)


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
            host, port = split_host_port(value.strip())
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
