"""The Starlette application: routes, middleware (request ids, auth, limits) and the lifespan.

Routes: `POST /mcp` (MCP, stateless), `GET|POST /search` (SearXNG's JSON API; a search sent to `/`
is redirected there, as SearXNG does), `GET /metrics` (Prometheus), `GET /status` and `GET
/status.json` (the engines' health, see `status`), `GET /readyz` (the cache answers), `GET
/healthz` (the process answers; the only route that needs no token). Every request passes
`Observer` (request id, access log, metrics), CORS on `/mcp` and `/search` (a browser page of an
allowed origin may read the answers) and then `Guard` (Host, Origin, token, rate and concurrency
limits, body cap).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import sys
import time
from collections.abc import AsyncIterator
from typing import Any

from mcp.server.streamable_http_manager import StreamableHTTPSessionManager
from mcp.server.transport_security import TransportSecuritySettings
from prometheus_client import CONTENT_TYPE_LATEST
from starlette.applications import Starlette
from starlette.middleware import Middleware
from starlette.requests import Request
from starlette.responses import HTMLResponse, JSONResponse, PlainTextResponse, Response
from starlette.routing import Route
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from websearch_mcp import __version__
from websearch_mcp.config import Settings
from websearch_mcp.errors import ConfigError
from websearch_mcp.runtime import hold_runtime_dir, temporary_files_in_runtime_dir
from websearch_mcp.search.configuration import load_config
from websearch_mcp.search.service import SearchService
from websearch_mcp.server import gc_settings
from websearch_mcp.server.argument_checks import long_numbers_as_text
from websearch_mcp.server.metrics import Metrics
from websearch_mcp.server.middleware.body_limit import read_body, replaying
from websearch_mcp.server.middleware.exposure import check_exposure
from websearch_mcp.server.middleware.guard import Guard, SearchCORS
from websearch_mcp.server.middleware.slow_clients import set_worker_read_timeout
from websearch_mcp.server.observability import Observer, configure_logging
from websearch_mcp.server.searxng_api import index_endpoint, search_endpoint
from websearch_mcp.server.status.page import CONTENT_SECURITY_POLICY, render_page
from websearch_mcp.server.status.report import StatusSource, status_report
from websearch_mcp.server.status.shared import publish, status_dir
from websearch_mcp.server.tools import build_mcp
from websearch_mcp.server.workers import STARTUP_FAILURE, stop_with_parent

log = logging.getLogger("websearch_mcp.server.app")

#: Shorter bearer tokens are easy to guess; the server warns at start.
MIN_TOKEN_CHARS = 16


def wants_progress(body: bytes) -> bool:
    """Whether a JSON-RPC body asks for progress (has `params._meta.progressToken`)."""
    if b"progressToken" not in body:  # most bodies: not parsed here (the SDK parses them)
        return False
    try:
        message = json.loads(body)
    except (ValueError, RecursionError):  # not JSON, or nested too deep: the SDK refuses it
        return False
    match message:
        case {"params": {"_meta": {"progressToken": str() | int() as token}}}:
            return not isinstance(token, bool)
    return False


class MCPEndpoint:
    """`POST /mcp` to the SDK's stateless transport; other methods get 405.

    In stateless mode there is no server-to-client stream to open and no session to delete, and the
    SDK's own GET handler would hold the connection open forever.

    Responses are single JSON documents. With `progress_handle` (an SSE-mode transport, set up
    when summaries can stream), a request that asks for progress from a client accepting
    `text/event-stream` is answered as a stream instead, so that its progress notifications
    reach the client before the result. A tool call's arguments holding integers too long to
    read go to the tools as text (`argument_checks.long_numbers_as_text`).
    """

    def __init__(self, handle: ASGIApp, progress_handle: ASGIApp | None = None) -> None:
        self.handle = handle
        self.progress_handle = progress_handle

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http" and scope["method"] != "POST":
            response = PlainTextResponse(
                "Method Not Allowed: this stateless MCP endpoint takes POST only.",
                status_code=405,
                headers={"Allow": "POST"},
            )
            await response(scope, receive, send)
            return
        # The guard has already read the body under its cap, so this read is from memory.
        source = receive
        body, receive = await read_body(source)
        checked = long_numbers_as_text(body)
        if checked is not body:
            receive = replaying(checked, source)
        handle = self.handle
        if (
            self.progress_handle is not None
            and scope.get("http_version") != "1.0"
            and _accepts_stream(scope)
            and wants_progress(body)
        ):
            handle = self.progress_handle
        await _until_disconnect(handle, scope, receive, send, source)


async def _until_disconnect(
    handle: ASGIApp, scope: Scope, receive: Receive, send: Send, source: Receive
) -> None:
    """`handle` (the SDK answering one request) until it ends or the client goes away first.

    The SDK answering with one JSON document never reads past the body, so it would go on with a
    tool call whose client is gone: `source` (past the body) is watched here, and the call is
    cancelled when the client disconnects before the answer has begun, as a call cancelled on
    stdio is. Once it has begun, the end of the answer reads as a disconnect too, and a stream
    (progress) watches its own client.
    """
    begun = gone = False

    async def sending(message: Message) -> None:
        nonlocal begun
        begun = begun or message["type"] == "http.response.start"
        await send(message)

    answering = asyncio.ensure_future(handle(scope, receive, sending))

    async def watch() -> None:
        nonlocal gone
        while (await source())["type"] != "http.disconnect":
            pass
        if not begun:
            gone = True
            answering.cancel()

    watching = asyncio.ensure_future(watch())
    try:
        await answering
    except asyncio.CancelledError:
        if not gone:  # this request itself was cancelled (the server stopping)
            raise
    finally:
        watching.cancel()


def _accepts_stream(scope: Scope) -> bool:
    accept = Request(scope).headers.get("accept", "")
    return "text/event-stream" in accept and "application/json" in accept


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
    # The probe is no search's lookup: the hit or miss it counted is taken back at once (no
    # await between), so the hit share on /metrics and /status counts the tools' lookups only.
    stats.uncount(await cache.get("readyz", "probe"))
    return (sum(stats.errors.values()), stats.bypassed) == before


async def readyz(request: Request) -> Response:
    """Ready when the cache is reachable (always, with `cache.backend: none`); 503 otherwise,
    with the cause being waited out. The probe is bounded like every cache call."""
    cache = request.app.state.service.cache
    backend = cache.backend
    if await cache_reachable(cache):
        return JSONResponse({"status": "ready", "cache": backend})
    cause = cache.stats.cause or "error"
    return JSONResponse({"status": "not ready", "cache": backend, "cause": cause}, status_code=503)


async def status_json(request: Request) -> Response:
    """The status report (docs/status.md); never cached by a browser or proxy."""
    report = await status_report(request.app.state.status, request.scope.get("server"))
    return JSONResponse(report, headers={"Cache-Control": "no-store"})


async def status_page(request: Request) -> Response:
    """The status report as one self-contained HTML page, allowed nothing from outside."""
    report = await status_report(request.app.state.status, request.scope.get("server"))
    headers = {"Cache-Control": "no-store", "Content-Security-Policy": CONTENT_SECURITY_POLICY}
    return HTMLResponse(render_page(report), headers=headers)


async def metrics_endpoint(request: Request) -> Response:
    metrics = request.app.state.metrics
    await metrics.refresh()
    return Response(metrics.render(), media_type=CONTENT_TYPE_LATEST)


def create_app(
    settings: Settings, service: SearchService | None = None, *, settle_gc: bool = False
) -> Starlette:
    """Build the ASGI app for `settings`; `service` may be injected by tests. `settle_gc`:
    the app is the process's only one (a server), so its startup settles the collector
    (`gc_settings.settle`).

    Raises `ConfigError` when `server.host` is not a loopback address and there are neither
    tokens nor `allow_anonymous: true`.
    """
    check_exposure(settings.server)
    if any(len(token) < MIN_TOKEN_CHARS for token in settings.server.auth_tokens):
        log.warning("an auth token is shorter than %d characters: easy to guess", MIN_TOKEN_CHARS)
    service = service or SearchService(settings)
    metrics = Metrics()
    metrics.watch_cache(service.cache)
    metrics.watch_breakers(service.orchestrator.breaker_states)
    metrics.watch_retries(service.orchestrator.stale_retries)
    metrics.watch_engines(service)
    mcp = build_mcp(service, service.orchestrator.names("web"), metrics=metrics)
    transport: dict[str, Any] = {
        "stateless": True,
        "max_request_body_size": settings.server.max_body_bytes,
        # `Guard` checks Host and Origin for every route from the same settings; the SDK's own
        # check (loopback names only) would refuse hosts the configuration allows.
        "security_settings": TransportSecuritySettings(enable_dns_rebinding_protection=False),
    }
    manager = StreamableHTTPSessionManager(mcp.server, json_response=True, **transport)
    managers = [manager]
    if service.summarizer is not None:
        # Summaries stream: calls asking for progress get an SSE response (see MCPEndpoint).
        managers.append(StreamableHTTPSessionManager(mcp.server, json_response=False, **transport))

    status = StatusSource(service, settings, metrics, time.time(), status_dir())

    @contextlib.asynccontextmanager
    async def lifespan(_: Starlette) -> AsyncIterator[None]:
        async with contextlib.AsyncExitStack() as stack:
            for each in managers:
                await stack.enter_async_context(each.run())
            await service.start()
            if status.shared is not None:  # the other workers read this one's hour
                hour = publish(status.shared, service.orchestrator.activity, status.process)
                stack.push_async_callback(_cancelled, asyncio.create_task(hour))
            if settle_gc:
                gc_settings.settle()
            try:
                yield
            finally:
                await service.close()
                metrics.close()

    endpoint = MCPEndpoint(*(m.handle_request for m in managers))
    app = Starlette(
        routes=[
            Route("/mcp", endpoint=endpoint, methods=None),
            Route("/search", search_endpoint, methods=["GET", "POST"]),
            Route("/", index_endpoint, methods=["GET", "POST"]),
            Route("/healthz", healthz, methods=["GET"]),
            Route("/readyz", readyz, methods=["GET"]),
            Route("/metrics", metrics_endpoint, methods=["GET"]),
            Route("/status", status_page, methods=["GET"]),
            Route("/status.json", status_json, methods=["GET"]),
        ],
        middleware=[
            Middleware(Observer, metrics=metrics),
            Middleware(SearchCORS, server=settings.server),
            Middleware(Guard, server=settings.server, on_reject=metrics.reject),
        ],
        lifespan=lifespan,
    )
    app.router.redirect_slashes = False
    app.state.service = service
    app.state.settings = settings
    app.state.metrics = metrics
    app.state.status = status
    app.state.mcp = mcp.tools  # the tool layer (a benchmark adds a tool of its own)
    return app


async def _cancelled(task: asyncio.Task[None]) -> None:
    task.cancel()
    with contextlib.suppress(asyncio.CancelledError):
        await task


def worker_app() -> Starlette:
    """The ASGI app of one worker of a multi-process server (uvicorn's factory, see `workers`):
    the configuration the parent loaded."""
    try:
        settings = load_config()
    except ConfigError as err:
        # uvicorn's supervisor restarts a worker that dies, without end; on this status it stops:
        # a configuration that does not load fails every new worker the same way.
        print(f"error: {err}", file=sys.stderr)
        raise SystemExit(STARTUP_FAILURE) from None
    stop_with_parent()
    hold_runtime_dir()
    temporary_files_in_runtime_dir()  # the configuration is read: its paths stay as they are
    set_worker_read_timeout(settings.server.read_timeout_seconds)
    configure_logging(settings.server.log_format, settings.server.log_level, settings.secrets())
    return create_app(settings, settle_gc=True)
