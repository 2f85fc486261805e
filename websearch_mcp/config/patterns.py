"""Host and Origin patterns as `server.allowed_hosts` and `server.allowed_origins` write them.

A malformed pattern raises `ValueError`, which the settings' validation reports under the key.
"""

from __future__ import annotations

import ipaddress
import re
from dataclasses import dataclass

_HOST_RE = re.compile(r"^[A-Za-z0-9*][A-Za-z0-9._*-]*$")


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


def split_host_port(text: str) -> tuple[str, str | None]:
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
        raise ValueError(f"{original!r}: '*' may only stand alone or as the first label (*.x)")


def parse_host_pattern(text: str) -> Pattern:
    """`search.example.com`, `search.example.com:*`, `*.example.com`, `10.0.0.5:8338` or `*`."""
    if text.strip() == "*":
        return Pattern(None, "*", "*")
    try:
        host, port = split_host_port(text.strip())
    except ValueError:
        raise ValueError(
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
        host, port = split_host_port(rest)
    except ValueError:
        raise ValueError(
            f"{text!r} is not an origin pattern such as https://app.example.com,"
            " https://*.example.com or http://localhost:*"
        ) from None
    _check_wildcard(host, text)
    return Pattern(scheme.lower(), host, port)
