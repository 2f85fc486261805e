"""Who is calling: the bearer token (or HTTP Basic password) presented and checked in constant
time, and the client's address behind trusted proxies."""

from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
import ipaddress
from collections.abc import Iterable, Sequence

from starlette.datastructures import Headers
from starlette.types import Scope

IPNetwork = ipaddress.IPv4Network | ipaddress.IPv6Network


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


def _address(text: str) -> ipaddress.IPv4Address | ipaddress.IPv6Address | None:
    """An IP address, or None; an IPv4-mapped one (`::ffff:10.0.0.2`: how a dual-stack `::`
    socket sees an IPv4 peer) is the IPv4 address it maps."""
    try:
        ip = ipaddress.ip_address(text)
    except ValueError:
        return None
    return (ip.ipv4_mapped or ip) if isinstance(ip, ipaddress.IPv6Address) else ip


def _in(networks: Sequence[IPNetwork], address: str) -> bool:
    ip = _address(address)
    return ip is not None and any(ip in net for net in networks)


#: RFC 6052's well-known prefix: an IPv4 address in its last 32 bits.
_NAT64 = ipaddress.IPv6Network("64:ff9b::/96")
#: RFC 8215's local-use prefix: a translator's own prefix of /48 to /96 inside it, its IPv4
#: address where that length puts it; one IPv4 client is one address of it whatever the length.
_NAT64_LOCAL = ipaddress.IPv6Network("64:ff9b:1::/48")


def limit_key(address: str) -> str:
    """The name limits count `address` under: an IPv6 address by its /64, which one host or
    home network is usually given whole (else each of its addresses would get its own tries)."""
    ip = _address(address)
    if isinstance(ip, ipaddress.IPv6Address):
        # An IPv4 client in an IPv6 address (NAT64/SIIT, Teredo) is its IPv4 address.
        if ip in _NAT64:
            return str(ipaddress.IPv4Address(int(ip) & 0xFFFFFFFF))
        if ip in _NAT64_LOCAL:
            return str(ip)
        if ip.teredo:
            return str(ip.teredo[1])
        return str(ipaddress.IPv6Network((ip, 64), strict=False))
    return address


def client_address(scope: Scope, trusted: Sequence[IPNetwork]) -> str:
    """The caller's IP: the peer, or when the peer is a trusted proxy, the right-most address of
    `X-Forwarded-For` that is not itself a trusted proxy (the left-most when all are). An IPv4
    peer of a dual-stack socket is named by its IPv4 address."""
    peer = (scope.get("client") or ("unknown", 0))[0]
    peer = str(_address(peer) or peer)
    if not trusted or not _in(trusted, peer):
        return peer
    values = Headers(scope=scope).getlist("x-forwarded-for")
    hops = [_without_port(h.strip()) for value in values for h in value.split(",") if h.strip()]
    for hop in reversed(hops):
        address = _address(hop)
        if address is None:
            return peer  # a forged or garbled chain: trust only what we saw
        if not _in(trusted, hop):
            return str(address)  # one client, however written (`::ffff:10.0.0.2` is 10.0.0.2)
    return str(_address(hops[0]) or hops[0]) if hops else peer


def _without_port(hop: str) -> str:
    """`203.0.113.7:4711` -> `203.0.113.7`, `[2001:db8::1]:4711` -> `2001:db8::1`."""
    if hop.startswith("[") and "]" in hop:
        return hop[1 : hop.index("]")]
    if hop.count(":") == 1:
        return hop.partition(":")[0]
    return hop
