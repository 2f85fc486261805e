"""The one place this project reaches into the MCP SDK past its public API, and why.

The SDK's low-level `Server` opens an OpenTelemetry span for every message it handles: its
`middleware` list holds an `OpenTelemetryMiddleware` from the start, and its documentation says
to drop that middleware from the list to opt out. The class lives in a private module
(`mcp.server._otel`), so it is imported here and nowhere else. `server.tracing: true` keeps it.

The tool layer derives a tool's schemas from its function's signature and takes no schema of
its own; the tools advertise flat schemas that name their bounds (`advertise`), set on the
fields of the layer's tool record that `tools/list` reads.

`tests/server/test_mcp_adapter.py` fails when the SDK changes under this module: the class
moved or renamed, no longer in a new server's list, spans opened by something else, or the
schemas set here not the ones listed.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from mcp.server import Server
from mcp.server._otel import OpenTelemetryMiddleware
from mcp.server.mcpserver.tools import Tool


def without_spans(server: Server[Any]) -> None:
    """Drop the SDK's OpenTelemetry middleware from `server` (a no-op span per message without
    an exporter, yet a cost on every one)."""
    server.middleware[:] = [
        m for m in server.middleware if not isinstance(m, OpenTelemetryMiddleware)
    ]


def advertise(
    made: Tool,
    input_schema: dict[str, Any],
    output_schema: Callable[[dict[str, Any]], dict[str, Any]],
) -> None:
    """List `made` with `input_schema`, and with its output schema as `output_schema` rewrites
    the one derived from its answer's type (answers are still checked against that type)."""
    made.parameters = input_schema
    made.fn_metadata.output_schema = output_schema(made.fn_metadata.output_schema or {})
