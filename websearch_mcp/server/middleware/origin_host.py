"""Host and Origin checks against DNS rebinding: the patterns `server.allowed_hosts` and
`server.allowed_origins` name, and the loopback names, which are always allowed."""

from __future__ import annotations

from collections.abc import Iterable
from urllib.parse import urlsplit

from websearch_mcp.config.patterns import (
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
