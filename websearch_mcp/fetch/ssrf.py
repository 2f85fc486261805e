"""Which addresses and URLs the page fetcher may connect to.

Only public unicast addresses are fetched. Refused: loopback, private, link-local (cloud metadata
at 169.254.169.254 included), shared carrier-grade NAT space (100.64.0.0/10), multicast, reserved,
documentation, benchmarking, unspecified, IPv6 unique-local and site-local, and every IPv6 form that
embeds an IPv4 address (IPv4-mapped, IPv4-compatible, NAT64, 6to4) when the embedded address is
refused. Of IPv6 only global unicast (2000::/3) is reachable at all. `allow_networks` opens ranges
explicitly, for intranets and tests.

The tables are explicit rather than built on `ipaddress`'s `is_global`, whose answers differ
between Python versions (224.0.0.0/4 and 64:ff9b::/96 count as global in 3.11).
"""

from __future__ import annotations

import ipaddress
import re
from collections.abc import Iterable
from ipaddress import IPv4Address, IPv4Network, IPv6Address, IPv6Network

import httpx

from websearch_mcp.errors import FetchRefused

IPAddress = IPv4Address | IPv6Address

LOOPBACK = "loopback"
PRIVATE = "private"
LINK_LOCAL = "link-local"
SHARED = "shared (carrier-grade NAT)"
MULTICAST = "multicast"
RESERVED = "reserved"
UNSPECIFIED = "unspecified"


def _table(rows: Iterable[tuple[str, str]]) -> tuple[tuple[IPv4Network | IPv6Network, str], ...]:
    return tuple((ipaddress.ip_network(net), category) for net, category in rows)


_V4_REFUSED = _table(
    [
        ("0.0.0.0/8", UNSPECIFIED),
        ("10.0.0.0/8", PRIVATE),
        ("100.64.0.0/10", SHARED),
        ("127.0.0.0/8", LOOPBACK),
        ("169.254.0.0/16", LINK_LOCAL),
        ("172.16.0.0/12", PRIVATE),
        ("192.0.0.0/24", RESERVED),  # IETF protocol assignments
        ("192.0.2.0/24", RESERVED),  # documentation
        ("192.88.99.0/24", RESERVED),  # former 6to4 relay anycast
        ("192.168.0.0/16", PRIVATE),
        ("198.18.0.0/15", RESERVED),  # benchmarking
        ("198.51.100.0/24", RESERVED),  # documentation
        ("203.0.113.0/24", RESERVED),  # documentation
        ("224.0.0.0/4", MULTICAST),
        ("240.0.0.0/4", RESERVED),  # future use and the limited broadcast address
    ]
)

_V6_REFUSED = _table(
    [
        ("::/128", UNSPECIFIED),
        ("::1/128", LOOPBACK),
        ("64:ff9b:1::/48", RESERVED),  # local-use NAT64
        ("100::/64", RESERVED),  # discard-only
        ("2001::/23", RESERVED),  # IETF protocol assignments, Teredo included
        ("2001:db8::/32", RESERVED),  # documentation
        ("3fff::/20", RESERVED),  # documentation
        ("5f00::/16", RESERVED),  # segment routing identifiers
        ("fc00::/7", PRIVATE),  # unique-local
        ("fe80::/10", LINK_LOCAL),
        ("fec0::/10", PRIVATE),  # site-local (deprecated)
        ("ff00::/8", MULTICAST),
    ]
)

_GLOBAL_UNICAST_V6 = IPv6Network("2000::/3")
_NAT64 = IPv6Network("64:ff9b::/96")
_V4_COMPATIBLE = IPv6Network("::/96")


def embedded_ipv4(address: IPv6Address) -> IPv4Address | None:
    """The IPv4 address an IPv6 address stands for: mapped, NAT64, 6to4 or compatible forms."""
    if address.ipv4_mapped is not None:
        return address.ipv4_mapped
    if address.sixtofour is not None:
        return address.sixtofour
    if address in _NAT64 or (address in _V4_COMPATIBLE and int(address) > 1):
        return IPv4Address(int(address) & 0xFFFFFFFF)
    return None


def parse_address(text: str) -> IPAddress | None:
    """An address from a resolver or a URL host (brackets, IPv6 zone ids and the trailing dot
    of a fully qualified `127.0.0.1.` tolerated), IPv4 also as browsers read it: `2130706433`,
    `0x7f.1`, `127.1`, `0177.0.0.1`."""
    text = text.strip().strip("[]").removesuffix(".")
    if ":" in text:  # only an IPv6 address has a zone id; "285203916%36" is no address
        text = text.split("%", 1)[0]
    try:
        return ipaddress.ip_address(text)
    except ValueError:
        return _browser_ipv4(text)


def _browser_ipv4(host: str) -> IPv4Address | None:
    """The IPv4 address of a host written as one to four numbers (the WHATWG URL standard's
    IPv4 parser), or None. Resolvers read these forms only without a trailing dot, while a
    reader API reads them always: so they are read here, whatever the resolver does."""
    parts = host.split(".")
    numbers = [_ipv4_number(part) for part in parts]
    if len(parts) > 4 or None in numbers:
        return None
    *leading, last = [n for n in numbers if n is not None]
    if any(n > 255 for n in leading) or last >= 256 ** (5 - len(parts)):
        return None
    return IPv4Address(sum(n << 8 * (3 - i) for i, n in enumerate(leading)) + last)


def _ipv4_number(part: str) -> int | None:
    """One number of an IPv4 host: decimal, hexadecimal after `0x`, octal after a leading 0."""
    if part[:2].lower() == "0x":
        digits, base = part[2:], 16
    elif len(part) > 1 and part.startswith("0"):
        digits, base = part[1:], 8
    else:
        digits, base = part, 10
    if not digits:
        return 0 if base == 16 else None
    if not (digits.isascii() and digits.isalnum()):  # int() would take "_", "+" and spaces
        return None
    try:
        return int(digits, base)
    except ValueError:
        return None


#: What a host name is made of (IDNA-encoded); a browser ends a host at a backslash, reads
#: percent-escapes and so on, where a name lookup just fails and a reader API would read another
#: host.
_NAME = re.compile(r"[a-z0-9_.-]+", re.ASCII | re.IGNORECASE)


def _ends_in_number(host: str) -> bool:
    """Whether browsers take `host` for an IPv4 address (valid or not): its last label is a
    number."""
    last = host.removesuffix(".").rpartition(".")[2]
    if last.isascii() and last.isdecimal():
        return True
    return bool(last) and _ipv4_number(last) is not None


class AddressPolicy:
    """Decides whether one address may be connected to."""

    def __init__(self, allow_networks: Iterable[str] = ()) -> None:
        self._allowed = tuple(ipaddress.ip_network(net, strict=False) for net in allow_networks)

    def refusal(self, address: str | IPAddress) -> str | None:
        """None when the address may be fetched, else the kind of network it is in."""
        ip = parse_address(address) if isinstance(address, str) else address
        if ip is None:
            return RESERVED
        if self._is_allowed(ip):
            return None
        if isinstance(ip, IPv4Address):
            return _lookup(ip, _V4_REFUSED)
        inner = embedded_ipv4(ip)
        if inner is not None:
            return self.refusal(inner)
        category = _lookup(ip, _V6_REFUSED)
        if category is None and ip not in _GLOBAL_UNICAST_V6:
            return RESERVED
        return category

    def _is_allowed(self, ip: IPAddress) -> bool:
        return any(ip.version == net.version and ip in net for net in self._allowed)


def _lookup(ip: IPAddress, table: tuple[tuple[IPv4Network | IPv6Network, str], ...]) -> str | None:
    for network, category in table:
        if ip in network:
            return category
    return None


def default_port(url: httpx.URL) -> int:
    """The port a URL connects to."""
    return url.port or (443 if url.scheme == "https" else 80)


def readable_host(url: httpx.URL) -> bool:
    """Whether the URL's host reads as a name: `url.host` raises idna's error (a ValueError)
    for an `xn--` label that decodes to no valid name, such as `xn--a.example`."""
    try:
        return bool(url.host)
    except ValueError:
        return False


def check_url(url: httpx.URL, allowed_ports: Iterable[int], *, redirected: bool = False) -> None:
    """Refuse URLs that are not plain http(s) to an allowed port. Addresses are checked later."""
    where = "the page redirected to a URL that" if redirected else "the URL"
    if url.scheme not in ("http", "https"):
        scheme = url.scheme or "(none)"
        raise FetchRefused(f"refused: {where} uses {scheme}:, only http and https are fetched")
    if not url.raw_host:
        raise FetchRefused(f"refused: {where} has no host")
    if not readable_host(url):
        raise FetchRefused(f"refused: {where} has a host that is not a valid international name")
    if url.userinfo:
        raise FetchRefused(f"refused: {where} carries credentials (user:password@)")
    host = url.raw_host.decode("ascii")
    if parse_address(host) is None and (not _NAME.fullmatch(host) or _ends_in_number(host)):
        # A name lookup fails on these; a browser or a reader API would read an address.
        raise FetchRefused(f"refused: {where} has a host that is neither a name nor an address")
    ports = sorted(set(allowed_ports))
    port = default_port(url)
    if port not in ports:
        allowed = ", ".join(str(p) for p in ports)
        raise FetchRefused(f"refused: {where} uses port {port} (allowed ports: {allowed})")
