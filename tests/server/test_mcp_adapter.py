"""`mcp_adapter.py`, the one place the package reaches past the MCP SDK's public API: these tests
fail when the SDK changes under it, and when a private SDK name is used anywhere else."""

from __future__ import annotations

import ast
import contextlib
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from unittest import mock

import httpx
import pytest
from mcp.server import Server
from mcp.server import _otel as otel
from mcp.server._otel import OpenTelemetryMiddleware
from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.tools import Tool

from testing.server_helpers import MCP_HEADERS, settings_for, tool_call
from testing.serving import serve_app
from websearch_mcp.server.app import create_app
from websearch_mcp.server.mcp_adapter import advertise, without_spans

PACKAGE = Path(__file__).resolve().parents[2] / "websearch_mcp"
#: The SDK objects' private attributes a server might be tempted to reach.
PRIVATE_ATTRIBUTES = {"_lowlevel_server", "_request_handlers", "_tool_manager", "_session_manager"}


def test_a_new_server_opens_spans_through_the_middleware_the_adapter_drops() -> None:
    server: Server[Any] = Server("test")
    assert [type(m) for m in server.middleware] == [OpenTelemetryMiddleware]
    mine = mock.Mock()
    server.middleware.append(mine)
    without_spans(server)
    assert server.middleware == [mine]  # only the SDK's spans go


async def test_the_schemas_the_adapter_sets_are_the_ones_listed() -> None:
    def echo(text: str) -> dict[str, int]:
        return {"length": len(text)}

    made = Tool.from_function(echo, structured_output=True)
    bounded = {"type": "object", "properties": {"text": {"type": "string", "maxLength": 5}}}
    advertise(made, bounded, lambda derived: {**derived, "description": "rewritten"})
    [listed] = await MCPServer("test", tools=[made]).list_tools()
    assert listed.input_schema == bounded
    assert listed.output_schema is not None
    assert listed.output_schema["description"] == "rewritten"
    assert listed.output_schema["type"] == "object"  # derived from the answer's type


@pytest.mark.parametrize("tracing", [False, True])
def test_spans_only_with_tracing(
    engines_url: str, monkeypatch: pytest.MonkeyPatch, tracing: bool
) -> None:
    spans: list[str] = []

    @contextlib.contextmanager
    def recorded(*, name: str, **_: Any) -> Iterator[Any]:
        spans.append(name)
        yield mock.Mock()

    monkeypatch.setattr(otel, "otel_span", recorded)
    settings = settings_for(engines_url, server={"tracing": tracing})
    with serve_app(create_app(settings)) as url:
        body = tool_call({"query": "python"})
        reply = httpx.post(f"{url}/mcp", headers=MCP_HEADERS, json=body, timeout=10).json()
    assert reply["result"]["isError"] is False
    assert spans == (["tools/call web_search"] if tracing else [])


def _private(name: str) -> bool:
    return name.split(".")[0] in ("mcp", "mcp_types") and any(
        part.startswith("_") for part in name.split(".")
    )


def _private_sdk_names(path: Path) -> set[str]:
    """The SDK's private modules and names imported, and its private attributes read, in
    `path`."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom) and node.module:
            names = [node.module, *(f"{node.module}.{a.name}" for a in node.names)]
            found.update(n for n in names if _private(n) and not _private(n.rsplit(".", 1)[0]))
        elif isinstance(node, ast.Import):
            found.update(a.name for a in node.names if _private(a.name))
        elif isinstance(node, ast.Attribute) and node.attr in PRIVATE_ATTRIBUTES:
            found.add(node.attr)
    return found


def test_no_private_sdk_name_is_used_outside_the_adapter() -> None:
    used = {
        str(path.relative_to(PACKAGE)): names
        for path in sorted(PACKAGE.rglob("*.py"))
        if (names := _private_sdk_names(path))
    }
    assert used == {"server/mcp_adapter.py": {"mcp.server._otel"}}
