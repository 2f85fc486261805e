"""The service over MCP's stdio transport, for clients that start the server as a subprocess.

stdout carries the protocol and nothing else. The SDK's transport diverts file descriptor 1 to
stderr while it serves; `stdout_to_stderr` does the same before (start-up) and after
(shutdown), so that nothing any library prints can reach the client as a broken message.
The service ends when the client closes stdin.
"""

from __future__ import annotations

import contextlib
import logging
import os
import sys
from collections.abc import Iterator

from mcp.server.stdio import stdio_server

from websearch_mcp.config import Settings
from websearch_mcp.search.service import SearchService
from websearch_mcp.server import gc_settings
from websearch_mcp.server.observability import configure_logging
from websearch_mcp.server.tools import build_mcp

log = logging.getLogger("websearch_mcp.server.stdio")


@contextlib.contextmanager
def stdout_to_stderr() -> Iterator[None]:
    """Send `print` and whatever writes to file descriptor 1 (C code, children) to stderr.

    What `sys.stdout` buffered is flushed while fd 1 still points at stderr: it was not protocol.
    """
    original = sys.stdout
    wire = os.dup(1)
    try:
        os.dup2(2, 1)
        sys.stdout = sys.stderr
        try:
            yield
        finally:
            sys.stdout = original
            original.flush()
            os.dup2(wire, 1)
    finally:
        os.close(wire)


async def serve_stdio(settings: Settings) -> None:
    """Serve every tool of `settings` over stdin/stdout until stdin closes."""
    with stdout_to_stderr():
        configure_logging(settings.server.log_format, settings.server.log_level, settings.secrets())
        service = SearchService(settings)
        server = build_mcp(service, service.orchestrator.names("web")).server
        await service.start()
        gc_settings.settle()
        log.info("serving MCP over stdio")
    try:
        async with stdio_server() as (read, write):
            await server.run(read, write, server.create_initialization_options())
    finally:
        with stdout_to_stderr():
            await service.close()
            log.info("stdin closed: stopped")
