"""Exposure: which listen addresses only this machine reaches, and the refusal to serve any other
without authentication."""

from __future__ import annotations

import ipaddress
from typing import TYPE_CHECKING

from websearch_mcp.errors import ConfigError

if TYPE_CHECKING:
    from websearch_mcp.config import ServerSettings


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
