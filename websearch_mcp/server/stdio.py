"""The service over MCP's stdio transport, for clients that start the server as a subprocess.

stdout carries the protocol and nothing else. The SDK's transport diverts file descriptor 1 to
stderr while it serves; `stdout_to_stderr` does the same before (start-up) and after
(shutdown), so that nothing any library prints can reach the client as a broken message.
The client's lines are read as the HTTP endpoint reads a body: a tool call's integers too long
to read go to the tools as text, and a line that is no JSON-RPC message is answered with an
error (`client_lines`). The service ends when the client closes stdin
or exits, or on SIGTERM or SIGINT (how a client stops a server that does not exit, and Ctrl-C in
a terminal): either way the service is closed first.
"""

from __future__ import annotations

import asyncio
import contextlib
import io
import json
import logging
import math
import os
import signal
import sys
from collections.abc import AsyncIterator, Iterator
from typing import IO, Any

import anyio
from mcp.server import Server
from mcp.server.stdio import stdio_server
from mcp.shared.message import SessionMessage
from mcp.types import (
    INVALID_REQUEST,
    PARSE_ERROR,
    ErrorData,
    JSONRPCError,
    RequestId,
    jsonrpc_message_adapter,
)
from pydantic import ValidationError

from websearch_mcp.config import Settings
from websearch_mcp.fetch.pool import remove_fork_server_dir
from websearch_mcp.search.service import SearchService
from websearch_mcp.server import gc_settings
from websearch_mcp.server.argument_checks import long_numbers_as_text
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


class _Lines(anyio.AsyncFile[str]):
    """The client's messages, one a line, each as `long_numbers_as_text` makes it: the SDK's
    JSON parser drops a line holding a number of thousands of digits without an answer. So does
    its transport any line that is no JSON-RPC message, leaving the client waiting for ever:
    such a line is kept from it and its error (`refusal`) goes to `refusals` to be answered.
    Blank lines are skipped."""

    def __init__(self, fp: IO[str]) -> None:
        super().__init__(fp)
        self._refused, self.refusals = anyio.create_memory_object_stream[JSONRPCError](math.inf)

    async def __aiter__(self) -> AsyncIterator[str]:
        async for line in super().__aiter__():
            raw = line.encode()
            checked = long_numbers_as_text(raw)
            message = line if checked is raw else checked.decode()
            if not message.strip():
                continue
            error = refusal(message)
            if error is None:
                yield message
            else:
                self._refused.send_nowait(error)


def refusal(line: str) -> JSONRPCError | None:
    """The error answering `line` when it is no JSON-RPC message (validated as the SDK's
    transport validates it), else None: a parse error when it is not JSON, else an invalid
    request, with the request's id when it has one that reads (JSON-RPC's rule)."""
    try:
        jsonrpc_message_adapter.validate_json(line, by_name=False)
    except ValidationError as err:
        first = err.errors(include_url=False, include_input=False)[0]
        if first["type"] == "json_invalid":
            reason = first["msg"].removeprefix("Invalid JSON: ")
            error = ErrorData(code=PARSE_ERROR, message=f"Parse error: {reason}")
            return JSONRPCError(jsonrpc="2.0", id=None, error=error)
        where = ".".join(str(part) for part in first["loc"])
        error = ErrorData(code=INVALID_REQUEST, message=f"Invalid Request: {where}: {first['msg']}")
        return JSONRPCError(jsonrpc="2.0", id=_request_id(line), error=error)
    return None


def _request_id(line: str) -> RequestId | None:
    """The id of the request `line` holds (JSON, not a valid message), None when none reads."""
    try:
        message = json.loads(line)
    except (ValueError, RecursionError):
        return None
    match message:
        case {"method": _, "id": str() | int() as request_id} if not isinstance(request_id, bool):
            return request_id
    return None


@contextlib.contextmanager
def client_lines() -> Iterator[_Lines]:
    """The client's lines (`_Lines`), read from a copy of file descriptor 0 while 0 itself reads
    the null device, as the SDK's transport arranges when it reads stdin: no child process or
    library can take the protocol's bytes."""
    wire = os.dup(0)
    null = os.open(os.devnull, os.O_RDONLY)
    try:
        os.dup2(null, 0)
    finally:
        os.close(null)
    # Never closed: the thread reading it cannot be interrupted and may still be blocked on it.
    wire_file = os.fdopen(wire, "rb", closefd=False)
    try:
        # utf-8-sig: a byte order mark before the first line (.NET's UTF-8 writers put one) is
        # no part of the message.
        yield _Lines(io.TextIOWrapper(wire_file, encoding="utf-8-sig", errors="replace"))
    finally:
        os.dup2(wire, 0)


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
        remove_fork_server_dir()
        os._exit(0)
    serving.result()


async def _serve(server: Server) -> None:
    with client_lines() as stdin:
        try:
            async with stdio_server(stdin) as (read, write), anyio.create_task_group() as tasks:

                async def answer_refused() -> None:
                    # Once the session has closed `write`, nobody is left to answer.
                    with contextlib.suppress(anyio.ClosedResourceError):
                        async for error in stdin.refusals:
                            await write.send(SessionMessage(error))

                tasks.start_soon(answer_refused)
                await server.run(read, write, server.create_initialization_options())
                tasks.cancel_scope.cancel()  # the session is over: `write` is closed
        except* BrokenPipeError:
            # The client has exited (its end of stdout closed) with a call in flight: nobody is
            # left to answer, which ends the session as stdin closing does.
            log.info("the client has gone")
