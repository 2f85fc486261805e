"""The Starlette application: routes, middleware (request ids, auth, limits) and the lifespan.

Routes: `POST /mcp` (MCP, stateless), `GET|POST /search` (SearXNG's JSON API), `GET /metrics`
(Prometheus), `GET /readyz` (the cache answers), `GET /healthz` (the process answers; the only
route that needs no token). Every request passes `Observer` (request id, access log, metrics)
and then `Guard` (Host, Origin, token, rate and concurrency limits, body cap).
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import AsyncIterator
from typing import Any

from mcp.server.transport_security import TransportSecuritySettings
from prometheus_client import CONTENT_TYPE_LATEST
from starlette.applications import Starlette
from starlette.middleware import Middleware
from starlette.requests import Request
from starlette.responses import JSONResponse, PlainTextResponse, Response
from starlette.routing import Route
from starlette.types import Receive, Scope, Send

from websearch_mcp import __version__
from websearch_mcp.config import Settings
from websearch_mcp.observability import Metrics, Observer
from websearch_mcp.searxng_api import search_endpoint
from websearch_mcp.security import Guard, check_exposure
from websearch_mcp.service import SearchService
from websearch_mcp.tools import build_mcp

log = logging.getLogger("websearch_mcp.app")

#: Shorter bearer tokens are easy to guess; the server warns at start.
MIN_TOKEN_CHARS = 16


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


async def cache_reachable(cache: Any) -> bool:
    """Whether the cache works: its `ping()` when it has one, else a lookup that must not fail.

    Every backend fails open, so a failed lookup shows only in its counters: an error counted
    or a call bypassed (a failure being waited out) means not reachable.
    """
    ping = getattr(cache, "ping", None)
    if callable(ping):
        return bool(await ping())
    stats = cache.stats
    before = (sum(stats.errors.values()), stats.bypassed)
    await cache.get("readyz", "probe")
    return (sum(stats.errors.values()), stats.bypassed) == before


async def readyz(request: Request) -> Response:
    """Ready when the cache (if the service has one) is reachable; 503 otherwise."""
    cache = getattr(request.app.state.service, "cache", None)
    if cache is None:
        return JSONResponse({"status": "ready", "cache": None})
    backend = getattr(cache, "backend", type(cache).__name__)
    if await cache_reachable(cache):
        return JSONResponse({"status": "ready", "cache": backend})
    return JSONResponse({"status": "not ready", "cache": backend}, status_code=503)


async def breaker_states(orchestrator: Any) -> dict[str, bool]:
    """Each enabled engine that has a circuit breaker: whether it is open now."""
    states: dict[str, bool] = {}
    for name, run in orchestrator.runs.items():
        breaker = getattr(run, "breaker", None)
        if breaker is not None and run.enabled:
            states[name] = await breaker.check() is not None
    return states


async def metrics_endpoint(request: Request) -> Response:
    metrics = request.app.state.metrics
    await metrics.refresh()
    return Response(metrics.render(), media_type=CONTENT_TYPE_LATEST)


def create_app(settings: Settings, service: SearchService | None = None) -> Starlette:
    """Build the ASGI app for `settings`; `service` may be injected by tests.

    Raises `ConfigError` when `server.host` is not a loopback address and there are neither
    tokens nor `allow_anonymous: true`.
    """
    check_exposure(settings.server)
    if any(len(token) < MIN_TOKEN_CHARS for token in settings.server.auth_tokens):
        log.warning("an auth token is shorter than %d characters: easy to guess", MIN_TOKEN_CHARS)
    service = service or SearchService(settings)
    metrics = Metrics()
    cache = getattr(service, "cache", None)
    if cache is not None:
        metrics.watch_cache(cache)
    metrics.watch_breakers(lambda: breaker_states(service.orchestrator))
    mcp = build_mcp(service, service.orchestrator.names("web"), metrics=metrics)
    mcp.streamable_http_app(
        stateless_http=True,
        json_response=True,
        host=settings.server.host,
        max_request_body_size=settings.server.max_body_bytes,
        # `Guard` checks Host and Origin for every route from the same settings; the SDK's own
        # check (loopback names only) would refuse hosts the configuration allows.
        transport_security=TransportSecuritySettings(enable_dns_rebinding_protection=False),
    )
    manager = mcp.session_manager

    @contextlib.asynccontextmanager
    async def lifespan(_: Starlette) -> AsyncIterator[None]:
        async with manager.run():
            await service.start()
            try:
                yield
            finally:
                await service.close()

    endpoint = MCPEndpoint(manager.handle_request)
    app = Starlette(
        routes=[
            Route("/mcp", endpoint=endpoint, methods=None),
            Route("/search", search_endpoint, methods=["GET", "POST"]),
            Route("/healthz", healthz, methods=["GET"]),
            Route("/readyz", readyz, methods=["GET"]),
            Route("/metrics", metrics_endpoint, methods=["GET"]),
        ],
        middleware=[
            Middleware(Observer, metrics=metrics),
            Middleware(Guard, server=settings.server, on_reject=metrics.reject),
        ],
        lifespan=lifespan,
    )
    app.state.service = service
    app.state.settings = settings
    app.state.metrics = metrics
    app.state.mcp = mcp
    return app
