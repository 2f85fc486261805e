"""Host and Origin checks against DNS rebinding and other sites' pages: the patterns
`server.allowed_hosts` and `server.allowed_origins` name, and the loopback names, which are
always allowed."""

from __future__ import annotations

import re
from collections.abc import Iterable
from urllib.parse import urlsplit

from websearch_mcp.config.patterns import (
    Pattern,
    parse_host_pattern,
    parse_origin_pattern,
    split_host_port,
)

LOOPBACK_HOSTS = ("127.0.0.1:*", "localhost:*", "[::1]:*")
LOOPBACK_ORIGINS = tuple(
    f"{scheme}://{host}:*"
    for scheme in ("http", "https")
    for host in ("127.0.0.1", "localhost", "[::1]")
)
#: `Sec-Fetch-Site` of a request a browser makes for a page of another site.
OTHER_SITES = frozenset({"cross-site", "same-site"})


def from_unnamed_site(origin: str | None, fetch_site: str | None) -> bool:
    """Whether a browser made this request for another site's page without naming that page's
    origin: it sends no `Origin` with a GET for an `<img>`, `<script>` or frame, so that such a
    page could otherwise search here with the operator's keys, unseen."""
    return origin is None and (fetch_site or "").strip().lower() in OTHER_SITES


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

    def origin_regex(self) -> str:
        """The allowed origins as one regular expression, for Starlette's CORS middleware: the
        `Origin` a browser sends (lower case, no path, default port left out) matches it
        exactly when `origin_allowed` holds."""
        return "(?i)" + "|".join(f"(?:{_origin_regex(p)})" for p in self.origins)


def _origin_regex(pattern: Pattern) -> str:
    if pattern.scheme is None:  # `*`: any origin
        return r"[a-z][a-z0-9+.-]*://[^/?#]+"
    if pattern.host == "*":
        host = r"[^/?#:\[\]]+|\[[0-9a-f:.]+\]"
    elif pattern.host.startswith("*."):
        host = r"[^/?#:\[\]]*" + re.escape(pattern.host[1:])
    elif ":" in pattern.host:  # IPv6, bracketed in an origin
        host = re.escape(f"[{pattern.host}]")
    else:
        host = re.escape(pattern.host)
    port = {"*": r"(?::[0-9]+)?", None: ""}.get(pattern.port, f":{pattern.port}")
    return f"{re.escape(pattern.scheme)}://(?:{host}){port}"
