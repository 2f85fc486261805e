"""The service over MCP's stdio transport, for clients that start the server as a subprocess.

stdout carries the protocol and nothing else. The SDK's transport diverts file descriptor 1 to
stderr while it serves; `stdout_to_stderr` does the same before (start-up) and after
(shutdown), so that nothing any library prints can reach the client as a broken message.
The service ends when the client closes stdin, or on SIGTERM or SIGINT (how a client stops a
server that does not exit, and Ctrl-C in a terminal): either way the service is closed first.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import signal
import sys
from collections.abc import Iterator
from typing import Any

from mcp.server import Server
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


def stop_signal() -> asyncio.Future[signal.Signals]:
    """A future set to the first SIGTERM or SIGINT received. Where the event loop cannot handle
    signals (Windows) they keep Python's default."""
    loop = asyncio.get_running_loop()
    received: asyncio.Future[signal.Signals] = loop.create_future()

    def stop(signum: signal.Signals) -> None:
        if not received.done():
            received.set_result(signum)

    for signum in (signal.SIGTERM, signal.SIGINT):
        with contextlib.suppress(NotImplementedError):
            loop.add_signal_handler(signum, stop, signum)
    return received


async def serve_stdio(settings: Settings) -> None:
    """Serve every tool of `settings` over stdin/stdout until stdin closes or a stop signal."""
    stopped = stop_signal()
    with stdout_to_stderr():
        configure_logging(settings.server.log_format, settings.server.log_level, settings.secrets())
        service = SearchService(settings)
        server = build_mcp(service, service.orchestrator.names("web")).server
        await service.start()
        gc_settings.settle()
        log.info("serving MCP over stdio")
    serving = asyncio.ensure_future(_serve(server))
    either: list[asyncio.Future[Any]] = [serving, stopped]
    try:
        await asyncio.wait(either, return_when=asyncio.FIRST_COMPLETED)
    finally:
        serving.cancel()  # the calls in flight end
        with stdout_to_stderr():
            await service.close()
            log.info("%s: stopped", stopped.result().name if stopped.done() else "stdin closed")
    if stopped.done():
        # The transport's thread reading stdin cannot be interrupted, and the interpreter would
        # wait for it at exit until the client closes stdin: the process ends here.
        logging.shutdown()
        os._exit(0)
    serving.result()


async def _serve(server: Server) -> None:
    async with stdio_server() as (read, write):
        await server.run(read, write, server.create_initialization_options())
