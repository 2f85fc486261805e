"""The Starlette application: the MCP endpoint, health, and the service's lifespan."""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, PlainTextResponse, Response
from starlette.routing import Route
from starlette.types import Receive, Scope, Send

from websearch_mcp import __version__
from websearch_mcp.config import Settings
from websearch_mcp.service import SearchService
from websearch_mcp.tools import build_mcp


class MCPEndpoint:
    """`POST /mcp` to the SDK's stateless transport; other methods get 405.

    In stateless mode there is no server-to-client stream to open and no session to delete, and the
    SDK's own GET handler would hold the connection open forever.
    """

    def __init__(self, handle: object) -> None:
        self.handle = handle

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http" and scope["method"] != "POST":
            response = PlainTextResponse(
                "Method Not Allowed: this stateless MCP endpoint takes POST only.",
                status_code=405,
                headers={"Allow": "POST"},
            )
            await response(scope, receive, send)
            return
        await self.handle(scope, receive, send)  # type: ignore[operator]


async def healthz(_: Request) -> Response:
    return JSONResponse({"status": "ok", "version": __version__})


def create_app(settings: Settings, service: SearchService | None = None) -> Starlette:
    """Build the ASGI app for `settings`; `service` may be injected by tests."""
    service = service or SearchService(settings)
    mcp = build_mcp(service, service.orchestrator.names("web"))
    mcp.streamable_http_app(
        stateless_http=True,
        json_response=True,
        host=settings.server.host,
        max_request_body_size=settings.server.max_body_bytes,
    )
    manager = mcp.session_manager

    @contextlib.asynccontextmanager
    async def lifespan(_: Starlette) -> AsyncIterator[None]:
        async with manager.run():
            try:
                yield
            finally:
                await service.close()

    endpoint = MCPEndpoint(manager.handle_request)
    app = Starlette(
        routes=[
            Route("/mcp", endpoint=endpoint, methods=None),
            Route("/healthz", healthz, methods=["GET"]),
        ],
        lifespan=lifespan,
    )
    app.state.service = service
    app.state.settings = settings
    return app
