"""`Guard`: the one ASGI middleware that decides who may call the server, and how much.

In this order: Host (421) and Origin (403) against DNS rebinding (on the search routes also a
browser's request for another site's page that names no Origin: 403), the bearer token (401,
whose challenge on the status page's paths offers Basic too; 429 for an address that failed too
often), then for the search routes (`/mcp`, `/search`) the per-client rate limit (429), the body
(413 over the cap, 408 when it is not in within the read timeout) and only then the concurrency
limits (429 per client, 503 overall). The MCP SDK's own Host/Origin check is switched off by the
app so that the two can never disagree. `/healthz` passes untouched: it tells nothing but the
version; so do the well-known URIs, which no route serves (404: no OAuth here). The checks
themselves are in `origin_host`, `auth`, `exposure` and `rate_limits`.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable
from typing import TYPE_CHECKING

from starlette.datastructures import Headers
from starlette.middleware.cors import CORSMiddleware
from starlette.types import ASGIApp, Receive, Scope, Send

from websearch_mcp.server.middleware.auth import (
    TokenAuth,
    client_address,
    limit_key,
    parse_networks,
)
from websearch_mcp.server.middleware.body_limit import read_body_within
from websearch_mcp.server.middleware.exposure import serves_this_machine_only
from websearch_mcp.server.middleware.origin_host import OriginPolicy, from_unnamed_site
from websearch_mcp.server.middleware.rate_limits import ConcurrencyLimiter, RateLimiter

if TYPE_CHECKING:
    from websearch_mcp.config import ServerSettings

#: Called with a short reason ("unauthorized", "rate_limited", ...) for every refused request.
RejectHook = Callable[[str], None]

#: Paths that need no token and pass every check.
OPEN_PATHS = frozenset({"/healthz"})
#: Well-known URIs (RFC 8615), where a client refused with 401 looks for OAuth metadata: served
#: by no route, they answer 404 without a token, which tells it that the server takes no OAuth,
#: and its probes do not count as failed authentications.
WELL_KNOWN = "/.well-known/"
#: Paths that do work on behalf of a caller and so count against the limits.
LIMITED_PATHS = frozenset({"/mcp", "/search"})
#: The scope key under which `Guard` leaves the caller's identity for the access log.
CLIENT_KEY = "websearch.client"
#: ... and the caller's address (X-Forwarded-For from a trusted proxy), also when it has a token.
ADDRESS_KEY = "websearch.address"
REALM = 'Bearer realm="websearch-mcp"'
#: Paths a browser opens: their 401 also offers Basic (any user name, the token as password),
#: so that the browser asks for it.
BROWSER_PATHS = frozenset({"/status", "/status.json"})
BASIC_REALM = 'Basic realm="websearch-mcp", charset="UTF-8"'


async def _reject(
    send: Send,
    status: int,
    message: str,
    headers: dict[str, str] | None = None,
    challenges: tuple[str, ...] = (),
) -> None:
    body = json.dumps({"error": message}).encode()
    raw = [
        (b"content-type", b"application/json"),
        (b"content-length", str(len(body)).encode()),
        *((k.lower().encode(), v.encode()) for k, v in (headers or {}).items()),
        *((b"www-authenticate", challenge.encode()) for challenge in challenges),
    ]
    await send({"type": "http.response.start", "status": status, "headers": raw})
    await send({"type": "http.response.body", "body": body})


class SearchCORS:
    """CORS on the search routes (`LIMITED_PATHS`), by Starlette's `CORSMiddleware`, for the
    origins `Guard` allows: their pages may call `/mcp` and `/search` from a browser (the
    preflight needs no token) and read the answers, refusals and their challenges included.
    Other origins get no CORS header, and `Guard` refuses their requests; the other routes
    (status, metrics) get none: no other page reads them."""

    def __init__(self, app: ASGIApp, server: ServerSettings) -> None:
        self.app = app
        self.cors = CORSMiddleware(
            app,
            allow_origin_regex=OriginPolicy([], server.allowed_origins).origin_regex(),
            allow_methods=["GET", "POST"],
            allow_headers=["*"],  # each asked for is named back, `Authorization` included
            expose_headers=["WWW-Authenticate", "Retry-After"],
            # A page of an allowed public origin may call a server on a private address.
            allow_private_network=True,
        )

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        searching = scope["type"] == "http" and scope["path"] in LIMITED_PATHS
        await (self.cors if searching else self.app)(scope, receive, send)


def _retry_after(seconds: float) -> dict[str, str]:
    return {"Retry-After": str(max(1, math.ceil(seconds)))}


class Guard:
    """The ASGI middleware applying every check of this module and of `rate_limits` (see top)."""

    def __init__(
        self, app: ASGIApp, server: ServerSettings, on_reject: RejectHook | None = None
    ) -> None:
        self.app = app
        self.server = server
        self.policy = OriginPolicy(server.allowed_hosts, server.allowed_origins)
        self.auth = TokenAuth(server.auth_tokens)
        self.trusted = parse_networks(server.trusted_proxies)
        per_client = not serves_this_machine_only(server) or server.limit_local_clients
        self.rate = RateLimiter(
            server.rate_limit_per_minute if per_client else 0, server.rate_limit_burst
        )
        self.failures = RateLimiter(server.auth_failures_per_minute, server.auth_failure_burst)
        self.slots = ConcurrencyLimiter(
            server.max_concurrent_requests, server.max_concurrent_per_client if per_client else None
        )
        self.on_reject = on_reject

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        path = scope.get("path", "")
        if scope["type"] != "http" or path in OPEN_PATHS or path.startswith(WELL_KNOWN):
            await self.app(scope, receive, send)
            return
        headers = Headers(scope=scope)
        address = client_address(scope, self.trusted)
        scope[ADDRESS_KEY] = address
        scope[CLIENT_KEY] = client = limit_key(address)
        if not self.policy.host_allowed(headers.get("host")):
            await self._refuse(
                send, 421, "host", "this Host is not served here; add it to server.allowed_hosts"
            )
            return
        if not self.policy.origin_allowed(headers.get("origin")):
            await self._refuse(
                send, 403, "origin", "this Origin is not allowed; see server.allowed_origins"
            )
            return
        limited = scope["path"] in LIMITED_PATHS
        if limited and from_unnamed_site(headers.get("origin"), headers.get("sec-fetch-site")):
            await self._refuse(
                send, 403, "origin", "a page of another site may not search here without an Origin"
            )
            return
        if self.auth.enabled:
            browser = scope["path"] in BROWSER_PATHS
            token_id = await self._authenticate(headers, client, send, browser)
            if token_id is None:
                return
            client = scope[CLIENT_KEY] = token_id
        if not limited:
            replay = await self._body(scope, receive, send)
            if replay is not None:
                await self.app(scope, replay, send)
            return
        wait = self.rate.acquire(client)
        if wait > 0:
            await self._refuse(
                send, 429, "rate_limited", "rate limit exceeded; retry later", _retry_after(wait)
            )
            return
        # A slot is taken only once the whole body is in: a client sending slowly holds none.
        replay = await self._body(scope, receive, send)
        if replay is None:
            return
        refused = self.slots.enter(client)
        if refused == "client":
            await self._refuse(
                send,
                429,
                "client_busy",
                "too many requests in flight from this client",
                _retry_after(1),
            )
            return
        if refused == "total":
            await self._refuse(
                send, 503, "overloaded", "the server is at capacity; retry later", _retry_after(1)
            )
            return
        try:
            await self.app(scope, replay, send)
        finally:
            self.slots.leave(client)

    async def _authenticate(
        self, headers: Headers, client: str, send: Send, browser: bool = False
    ) -> str | None:
        """The caller's token id, or None once refused (401, or 429 while the `client` address
        has failed too often: then no token is even looked at, so guessing cannot go on). A
        `browser` path's 401 offers Basic as well as Bearer."""
        wait = self.failures.wait(client)
        if wait > 0:
            await self._refuse(
                send,
                429,
                "auth_throttled",
                "too many failed authentications from this address; retry later",
                _retry_after(wait),
            )
            return None
        token_id = self.auth.identify(headers.get("authorization"))
        if token_id is None:
            self.failures.acquire(client)
            given = "authorization" in headers
            challenge = REALM + (', error="invalid_token"' if given else "")
            message = "invalid bearer token" if given else "a bearer token is required"
            challenges = (challenge, BASIC_REALM) if browser else (challenge,)
            await self._refuse(send, 401, "unauthorized", message, challenges=challenges)
        return token_id

    async def _body(self, scope: Scope, receive: Receive, send: Send) -> Receive | None:
        """The body read ahead under the cap and the read timeout, as a replaying `receive`;
        None once refused (413, or 408 with the connection closed)."""
        limit = self.server.max_body_bytes
        declared = Headers(scope=scope).get("content-length")
        too_long = declared is not None and len(declared) > len(str(limit))
        if declared is not None and declared.isdigit() and (too_long or int(declared) > limit):
            await self._too_large(send)
            return None
        try:
            replay = await read_body_within(receive, limit, self.server.read_timeout_seconds)
        except TimeoutError:
            seconds = f"{self.server.read_timeout_seconds:g}"
            await self._refuse(
                send,
                408,
                "read_timeout",
                f"the request body did not arrive within {seconds} s",
                {"Connection": "close"},
            )
            return None
        if replay is None:
            await self._too_large(send)
        return replay

    async def _too_large(self, send: Send) -> None:
        await self._refuse(
            send, 413, "too_large", f"request body over {self.server.max_body_bytes} bytes"
        )

    async def _refuse(
        self,
        send: Send,
        status: int,
        reason: str,
        message: str,
        headers: dict[str, str] | None = None,
        challenges: tuple[str, ...] = (),
    ) -> None:
        if self.on_reject is not None:
            self.on_reject(reason)
        await _reject(send, status, message, headers, challenges)
