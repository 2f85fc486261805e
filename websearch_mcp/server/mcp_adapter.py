"""The one place this project reaches into the MCP SDK past its public API, and why.

The SDK's low-level `Server` opens an OpenTelemetry span for every message it handles: its
`middleware` list holds an `OpenTelemetryMiddleware` from the start, and its documentation says
to drop that middleware from the list to opt out. The class lives in a private module
(`mcp.server._otel`), so it is imported here and nowhere else. `server.tracing: true` keeps it.

`tests/server/test_mcp_adapter.py` fails when the SDK changes under this module: the class
moved or renamed, no longer in a new server's list, or spans opened by something else.
"""

from __future__ import annotations

from typing import Any

from mcp.server import Server
from mcp.server._otel import OpenTelemetryMiddleware


def without_spans(server: Server[Any]) -> None:
    """Drop the SDK's OpenTelemetry middleware from `server` (a no-op span per message without
    an exporter, yet a cost on every one)."""
    server.middleware[:] = [
        m for m in server.middleware if not isinstance(m, OpenTelemetryMiddleware)
    ]
