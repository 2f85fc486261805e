"""The `server` section: where the HTTP server listens, who may call it, how much, how it logs."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BeforeValidator, Field

from websearch_mcp.config.patterns import parse_host_pattern, parse_origin_pattern
from websearch_mcp.config.types import (
    Section,
    TextList,
    as_texts,
    each,
    networks,
    printable_secret,
    split_commas,
)


def _tokens(value: Any) -> Any:
    # An empty token would match an empty credential, and a bare `-` item is null: either
    # would switch authentication off without anyone asking for that.
    value = split_commas(value)
    if isinstance(value, list):
        for number, item in enumerate(value, 1):
            if item is None or (isinstance(item, str) and not item.strip()):
                kind = "null (a bare '-' item)" if item is None else "empty or blank"
                raise ValueError(
                    f"token {number} is {kind}: every token must be a non-empty string;"
                    " remove the item, or leave the list empty for no tokens"
                )
            if isinstance(item, str):
                try:
                    printable_secret(item)
                except ValueError as err:
                    raise ValueError(f"token {number} {err}") from None
    return as_texts(value)


def _workers(value: Any) -> Any:
    # One message for both kinds, rather than one per branch of the union
    # ("server.workers.constrained-int: ...", "server.workers.literal['auto']: ...").
    if value == "auto":
        return value
    if isinstance(value, str) and value.strip().isdecimal():
        value = int(value)
    if isinstance(value, int) and not isinstance(value, bool) and 1 <= value <= 64:
        return value
    raise ValueError("must be a number from 1 to 64 or auto")


class ServerSettings(Section):
    """The HTTP server: where it listens, who may call it, how much, and how it logs."""

    host: str = "127.0.0.1"
    port: int = Field(8338, ge=1, le=65535)
    auth_tokens: Annotated[list[str], BeforeValidator(_tokens)] = Field(
        default_factory=list, repr=False
    )
    allow_anonymous: bool = False
    allowed_origins: Annotated[TextList, each(parse_origin_pattern)] = Field(default_factory=list)
    allowed_hosts: Annotated[TextList, each(parse_host_pattern)] = Field(default_factory=list)
    # Peers whose X-Forwarded-For is believed (reverse proxies), as addresses or CIDR ranges.
    trusted_proxies: Annotated[TextList, networks("an address or CIDR network")] = Field(
        default_factory=list
    )
    max_body_bytes: int = Field(1_048_576, ge=1024)
    max_concurrent_requests: int = Field(64, ge=1)
    max_concurrent_per_client: int = Field(8, ge=1)
    rate_limit_per_minute: int = Field(120, ge=0)  # per client; 0 turns the limit off
    rate_limit_burst: int = Field(20, ge=1)
    # Failed authentications per client address (token guessing); 0 turns the limit off.
    auth_failures_per_minute: int = Field(10, ge=0)
    auth_failure_burst: int = Field(20, ge=1)
    # A request's headers must arrive within this, then its body within this again, else 408
    # and the connection closes.
    read_timeout_seconds: float = Field(10.0, gt=0, le=300)
    # The per-client limits also on a server only this machine reaches (middleware `exposure`).
    limit_local_clients: bool = False
    # The tools' own limit is 500 characters; this may only lower it.
    max_query_chars: int = Field(500, ge=1, le=500)
    log_format: Literal["text", "json"] = "text"
    log_level: Literal["debug", "info", "warning", "error"] = "info"
    # An OpenTelemetry span per MCP message (the SDK's); recorded only where an OpenTelemetry
    # SDK and exporter are installed and configured, which the image does not include.
    tracing: bool = False
    # Processes serving one port (`auto`: one per core); they share the cache file, cooldowns,
    # breakers and metrics.
    workers: Annotated[
        Annotated[int, Field(ge=1, le=64)] | Literal["auto"], BeforeValidator(_workers)
    ] = 1
