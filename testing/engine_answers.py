"""Engine answers made by hand for the parser tests, and parsing them the way the service does."""

from __future__ import annotations

from websearch_mcp.engines.base import Engine
from websearch_mcp.models import Hit, HttpResponse, Query


def resp(body: bytes | str, status: int = 200, url: str = "", **headers: str) -> HttpResponse:
    """An answer with `body`; header names as keywords, `_` for `-` (`retry_after=...`)."""
    content = body.encode() if isinstance(body, str) else body
    return HttpResponse(status, {k.replace("_", "-"): v for k, v in headers.items()}, content, url)


def parse(
    engine: Engine,
    body: bytes | str,
    status: int = 200,
    query: Query | None = None,
    **headers: str,
) -> list[Hit]:
    """`engine`'s hits from an answer with `body` to `query` (by default "test query")."""
    return engine.parse(resp(body, status, **headers), query or Query("test query"))
