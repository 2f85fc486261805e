"""Handshake-era requests to `POST /mcp` answered in one exchange.

A client of a handshake-era protocol revision (an `MCP-Protocol-Version` of 2025-11-25 or
earlier, or none) calls a tool with one POST. The SDK's stateless transport builds, for every
such request, a transport, memory streams, a dispatcher, a server task and a session, and
passes the request and its answer through them. In JSON-response mode they carry nothing but
the one answer, and they cost a fifth to a third of a cache hit's CPU.

`SingleExchange` hands such a request to the SDK's own request kernel (`serve_one`, which
serves protocol 2026-07-28 this way) in the request's own task, with a born-ready connection
of the request's revision, as the stateless transport makes one. It writes the answer as that
transport does: the same JSON-RPC response or error, the same status and content type. Every
other POST goes to the SDK unchanged: an `initialize`, a notification, a batch, a body that
does not parse or validate, an Accept or Content-Type the transport refuses, a 2026 revision.
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import AsyncIterator, Mapping
from dataclasses import dataclass, field
from typing import Any

import anyio
import orjson
import pydantic_core
from mcp.server.connection import Connection
from mcp.server.runner import serve_one
from mcp.server.streamable_http import check_accept_headers
from mcp.server.streamable_http_manager import StreamableHTTPSessionManager
from mcp.shared.dispatcher import CallOptions
from mcp.shared.exceptions import NoBackChannelError
from mcp.shared.jsonrpc_dispatcher import handler_exception_to_error_data
from mcp.shared.message import ServerMessageMetadata
from mcp.shared.transport_context import TransportContext
from mcp_types import (
    DEFAULT_NEGOTIATED_VERSION,
    ErrorData,
    JSONRPCError,
    JSONRPCRequest,
    JSONRPCResponse,
    RequestId,
    jsonrpc_message_adapter,
)
from mcp_types.version import HANDSHAKE_PROTOCOL_VERSIONS
from pydantic import ValidationError
from starlette.requests import Request
from starlette.responses import Response

log = logging.getLogger("websearch_mcp.exchange")

_VERSION_HEADER = b"mcp-protocol-version"
_JSON = "application/json"
# orjson writes these types its own way; refused, they go to the SDK's serialiser.
_ONLY_JSON_TYPES = (
    orjson.OPT_PASSTHROUGH_DATACLASS
    | orjson.OPT_PASSTHROUGH_DATETIME
    | orjson.OPT_PASSTHROUGH_SUBCLASS
)


@dataclass
class _NoWayBack:
    """The dispatch context of one request answered by a JSON body: the body holds the answer
    only, so notifications (progress included) have no way to the client and a request to the
    client cannot be sent, as on the stateless transport in JSON-response mode."""

    transport: TransportContext
    request_id: RequestId
    message_metadata: ServerMessageMetadata
    cancel_requested: anyio.Event = field(default_factory=anyio.Event)
    can_send_request: bool = False

    async def send_raw_request(
        self, method: str, params: Mapping[str, Any] | None, opts: CallOptions | None = None
    ) -> dict[str, Any]:
        raise NoBackChannelError(method)

    async def notify(
        self, method: str, params: Mapping[str, Any] | None, opts: CallOptions | None = None
    ) -> None:
        return None

    async def progress(
        self, progress: float, total: float | None = None, message: str | None = None
    ) -> None:
        return None


class SingleExchange:
    """Answers the common handshake-era POST (one JSON-RPC request, not `initialize`) of a
    stateless JSON-response `manager` without the per-request transport; `answer` returns None
    for anything else, which the caller hands to the manager."""

    def __init__(self, manager: StreamableHTTPSessionManager) -> None:
        if not (manager.stateless and manager.json_response):
            raise ValueError("one exchange answers only stateless JSON-response requests")
        self.server = manager.app
        #: What the server's lifespan yields, while `run()` is entered.
        self.lifespan_state: Any = None

    @contextlib.asynccontextmanager
    async def run(self) -> AsyncIterator[None]:
        """Enter the server's lifespan for the app's lifetime, as the manager does (this
        server's is the SDK's default, which yields an empty state)."""
        async with self.server.lifespan(self.server) as state:
            self.lifespan_state = state
            try:
                yield
            finally:
                self.lifespan_state = None

    async def answer(self, request: Request, body: bytes) -> Response | None:
        """The response to `request` (whose body is `body`), or None to leave it to the SDK."""
        eligible = _eligible(request, body)
        if eligible is None:
            return None
        message, version = eligible
        dctx = _NoWayBack(
            transport=TransportContext(kind="streamable-http", can_send_request=False),
            request_id=message.id,
            message_metadata=ServerMessageMetadata(request_context=request, can_send_request=False),
        )
        connection = Connection.from_envelope(version, None, None)
        try:
            result = await serve_one(
                self.server,
                dctx,  # type: ignore[arg-type]  # a DispatchContext by structure
                message.method,
                message.params,
                connection=connection,
                lifespan_state=self.lifespan_state,
            )
        except Exception as exc:
            error = handler_exception_to_error_data(exc)
            if error is None:
                # As the SDK's dispatcher answers a handler that raised.
                log.exception("handler for %r raised", message.method)
                error = ErrorData(code=0, message=str(exc))
            reply = JSONRPCError(jsonrpc="2.0", id=message.id, error=error)
            content = reply.model_dump_json(by_alias=True, exclude_unset=True).encode()
        else:
            content = response_json(message.id, result)
        return Response(content, headers={"Content-Type": _JSON})


def response_json(request_id: RequestId, result: dict[str, Any]) -> bytes:
    """`JSONRPCResponse(id=request_id, result=result)` as the SDK writes it (`model_dump_json`),
    the same bytes, written by orjson: a fifth of the instructions for a search's result. A
    value orjson does not write as JSON (an integer past 64 bits, a lone surrogate, a type the
    SDK's serialiser would convert) is left to the SDK's serialiser."""
    try:
        return orjson.dumps(
            {"jsonrpc": "2.0", "id": request_id, "result": result}, option=_ONLY_JSON_TYPES
        )
    except TypeError:
        reply = JSONRPCResponse(jsonrpc="2.0", id=request_id, result=result)
        return reply.model_dump_json(by_alias=True, exclude_unset=True).encode()


def _eligible(request: Request, body: bytes) -> tuple[JSONRPCRequest, str] | None:
    """The request and its protocol revision when the stateless transport would take it as it
    is; None when the SDK must see it (to refuse it, or to serve it in its own way)."""
    # The first header, as the SDK's routing reads it.
    version = next(
        (v.decode("latin-1") for k, v in request.scope["headers"] if k == _VERSION_HEADER), None
    )
    if version is not None and version not in HANDSHAKE_PROTOCOL_VERSIONS:
        return None
    # Both of the transport's checks: a prefix check ignoring case, then an exact media type.
    if request.headers.get("content-type", "").split(";")[0].strip() != _JSON:
        return None
    if not check_accept_headers(request)[0]:
        return None
    try:
        raw = pydantic_core.from_json(body)
    except ValueError:
        return None
    if not isinstance(raw, dict) or "id" not in raw or raw.get("method") == "initialize":
        return None
    try:
        message = jsonrpc_message_adapter.validate_python(raw, by_name=False)
    except ValidationError:
        return None
    if not isinstance(message, JSONRPCRequest):
        return None
    return message, version if version is not None else DEFAULT_NEGOTIATED_VERSION
