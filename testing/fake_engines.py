"""Fake search engines on 127.0.0.1 for integration tests and benchmarks.

`FakeEngines`: a Starlette app serving every engine under `/{engine}` plus its real request path
(`/tavily/search`, `/bing/search`, `/duckduckgo/html/` ...), answering with results rendered in
that engine's wire format (`testing.wire_formats.render`) or a fixed body, with per-engine
faults, request counts and the last request of each engine. `serve_fake_engines` runs it under
uvicorn (`testing.serving.serve_app`) and yields its base URL.

Point an engine at it with `engines.<name>.base_url = f"{base_url}/<name>"` (see `base_urls`).
"""

from __future__ import annotations

import asyncio
import json
import threading
import time
from collections import Counter
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

import httpx
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from testing.serving import serve_app
from testing.wire_formats import (
    CAPTCHA_PAGES,
    GARBAGE,
    GENERIC_CAPTCHA,
    HTML_TYPE,
    JSON_TYPE,
    RENDERERS,
    Result,
    render,
)
from websearch_mcp.models import HttpRequest, HttpResponse

#: `(engine_name, query_text) -> results` for the engine to answer with.
ResultsFn = Callable[[str, str], Sequence[Result]]

#: Each engine's real request path and methods (served under `/{engine}`).
ROUTES: dict[str, tuple[str, tuple[str, ...]]] = {
    "tavily": ("/search", ("POST",)),
    "brave": ("/res/v1/web/search", ("GET",)),
    "exa": ("/search", ("POST",)),
    "searxng": ("/search", ("GET",)),
    "duckduckgo": ("/html/", ("GET", "POST")),
    "bing": ("/search", ("GET",)),
    "wikipedia": ("/w/api.php", ("GET",)),
    "serper": ("/search", ("POST",)),
}
ENGINE_NAMES: tuple[str, ...] = tuple(ROUTES)


def base_urls(base_url: str) -> dict[str, str]:
    """The `base_url` to configure for each engine when one fake server serves them all."""
    return {name: f"{base_url.rstrip('/')}/{name}" for name in ENGINE_NAMES}


# --- the app ------------------------------------------------------------------------------------


@dataclass(slots=True)
class Fault:
    """What goes wrong for one engine. Several may combine: `delay` first, then the rest."""

    delay: float = 0.0  # seconds from the request to the answer (made meanwhile)
    status: int | None = None  # answer with this status and `body` instead of results
    body: bytes | str = b""
    retry_after: str | None = None  # sent as `Retry-After` (with any answer)
    captcha: bool = False  # the engine's CAPTCHA / bot-wall page, HTTP 200
    garbage: bool = False  # random bytes under the engine's usual content type
    hang: bool = False  # never answer (until the server stops)


@dataclass(slots=True)
class Body:
    """A fixed answer, such as a recorded fixture."""

    content: bytes
    status: int = 200
    content_type: str | None = None  # None: the engine's usual type
    headers: dict[str, str] = field(default_factory=dict)


@dataclass(slots=True)
class RecordedRequest:
    """The last request an engine received (header names lower-case)."""

    method: str
    path: str
    headers: dict[str, str]
    params: dict[str, str]
    form: dict[str, str]
    json: Any
    query: str
    key: str | None = None  # the API key it carried (header or `api_key`/`key` parameter)


class FakeEngines:
    """All eight fake engines in one Starlette app (`self.app`), under `/{engine}/...`.

    `results(engine, query)` gives what an engine answers unless `bodies[engine]` fixes the
    answer; `faults[engine]` breaks it, and `key_faults[api_key]` breaks only the requests made
    with that key (401 for one key, 200 for another). All may be changed while the server runs.
    `counts[engine]` counts requests, `key_counts[api_key]` requests per key; `last[engine]` is
    the latest `RecordedRequest`. Engines without a wire format here are served under
    `/other/{name}/...` with `bodies[name]` or `faults[name]` (404 when neither is set).
    """

    max_hang_seconds = 60.0

    def __init__(
        self,
        results: ResultsFn | None = None,
        *,
        bodies: Mapping[str, bytes | Body] | None = None,
        faults: Mapping[str, Fault] | None = None,
    ) -> None:
        self.results: ResultsFn = results or (lambda engine, query: [])
        self.bodies: dict[str, bytes | Body] = dict(bodies or {})
        self.faults: dict[str, Fault] = dict(faults or {})
        self.key_faults: dict[str, Fault] = {}
        self.counts: Counter[str] = Counter()
        self.key_counts: Counter[str] = Counter()
        self.last: dict[str, RecordedRequest] = {}
        self._released = threading.Event()
        self.app = Starlette(routes=self._routes())

    def reset(self) -> None:
        """Forget counts and recorded requests."""
        self.counts.clear()
        self.key_counts.clear()
        self.last.clear()

    def release_hangs(self) -> None:
        """Let hanging requests finish (with a 503) so that the server can stop."""
        self._released.set()

    def _routes(self) -> list[Route]:
        routes = []
        for engine, (path, methods) in ROUTES.items():
            endpoint = self._endpoint(engine)
            routes.append(Route(f"/{engine}{path}", endpoint, methods=list(methods)))
            if path.endswith("/"):  # DuckDuckGo's `/html/` is also reached as `/html`
                routes.append(Route(f"/{engine}{path[:-1]}", endpoint, methods=list(methods)))
        routes.append(Route("/other/{engine}/{path:path}", self._other, methods=["GET", "POST"]))
        return routes

    async def _other(self, request: Request) -> Response:
        """An engine without a wire format here: its fixed body or fault, else 404."""
        engine = request.path_params["engine"]
        if engine not in self.bodies and engine not in self.faults:
            return Response(b"Not Found", 404, media_type="text/plain")
        recorded = await _record(request, engine)
        self._count(engine, recorded)
        return await self._answer(engine, recorded.query, recorded.key)

    def _count(self, engine: str, recorded: RecordedRequest) -> None:
        self.counts[engine] += 1
        if recorded.key:
            self.key_counts[recorded.key] += 1
        self.last[engine] = recorded

    def _endpoint(self, engine: str) -> Callable[[Request], Any]:
        async def endpoint(request: Request) -> Response:
            recorded = await _record(request, engine)
            self._count(engine, recorded)
            return await self._answer(engine, recorded.query, recorded.key)

        return endpoint

    async def _answer(self, engine: str, query: str, key: str | None = None) -> Response:
        fault = (self.key_faults.get(key) if key else None) or self.faults.get(engine) or Fault()
        due = time.monotonic() + fault.delay
        # The answer is made while the delay runs, as a remote engine's is: requests that fall
        # due together are then answered at their delay, not one render after another.
        response = None if fault.hang else self._response(engine, query, fault)
        if fault.delay:
            await asyncio.sleep(max(0.0, due - time.monotonic()))
        if response is None:
            await self._hang()
            return Response(b"", 503, headers=_retry_after(fault))
        return response

    def _response(self, engine: str, query: str, fault: Fault) -> Response:
        headers = _retry_after(fault)
        content_type = RENDERERS[engine][1] if engine in RENDERERS else JSON_TYPE
        if fault.status is not None:
            body = fault.body.encode() if isinstance(fault.body, str) else fault.body
            return Response(body, fault.status, headers=headers, media_type=content_type)
        if fault.captcha:
            page = CAPTCHA_PAGES.get(engine, GENERIC_CAPTCHA)
            return Response(page, 200, headers=headers, media_type=HTML_TYPE)
        if fault.garbage:
            return Response(GARBAGE, 200, headers=headers, media_type=content_type)
        fixed = self.bodies.get(engine)
        if fixed is not None:
            if isinstance(fixed, bytes):
                fixed = Body(fixed)
            return Response(
                fixed.content,
                fixed.status,
                headers={**fixed.headers, **headers},
                media_type=fixed.content_type or content_type,
            )
        if engine not in RENDERERS:
            return Response(b"Not Found", 404, media_type="text/plain")
        body, content_type = render(engine, self.results(engine, query), query)
        return Response(body, 200, headers=headers, media_type=content_type)

    async def _hang(self) -> None:
        deadline = time.monotonic() + self.max_hang_seconds
        while not self._released.is_set() and time.monotonic() < deadline:
            await asyncio.sleep(0.05)


def _retry_after(fault: Fault) -> dict[str, str]:
    return {"retry-after": fault.retry_after} if fault.retry_after else {}


async def _record(request: Request, engine: str) -> RecordedRequest:
    raw = await request.body()
    form: dict[str, str] = {}
    payload: Any = None
    ctype = request.headers.get("content-type", "")
    if ctype.startswith("application/x-www-form-urlencoded"):
        form = {k: str(v) for k, v in (await request.form()).items()}
    elif ctype.startswith("application/json"):
        try:
            payload = json.loads(raw)
        except ValueError:
            payload = None
    params = dict(request.query_params)
    return RecordedRequest(
        method=request.method,
        path=request.url.path,
        headers={k.lower(): v for k, v in request.headers.items()},
        params=params,
        form=form,
        json=payload,
        query=query_text_of(engine, params, form, payload),
        key=_api_key(request.headers, params),
    )


def _api_key(headers: Mapping[str, str], params: Mapping[str, str]) -> str | None:
    """The key a request carries, in any of the ways the keyed engines send one."""
    auth = headers.get("authorization", "")
    if auth.lower().startswith("bearer ") and auth[7:].strip():
        return auth[7:].strip()
    for name in ("x-subscription-token", "x-api-key"):
        if headers.get(name):
            return headers[name]
    return params.get("api_key") or params.get("key") or None


def query_text_of(
    engine: str, params: Mapping[str, str], form: Mapping[str, str], payload: Any
) -> str:
    """The query text an engine's request carries (its parameters, form or JSON body)."""
    if engine in ("tavily", "exa"):
        return str(payload.get("query", "")) if isinstance(payload, dict) else ""
    if engine == "serper":
        return str(payload.get("q", "")) if isinstance(payload, dict) else ""
    if engine == "wikipedia":
        return params.get("srsearch", "")
    return form.get("q") or params.get("q", "")


# --- running it ---------------------------------------------------------------------------------


@contextmanager
def serve_fake_engines(
    fake: FakeEngines, *, host: str = "127.0.0.1", tls: tuple[str, str] | None = None
) -> Iterator[str]:
    """`serve_app(fake.app)` that also releases hanging requests before stopping."""
    with serve_app(fake.app, host=host, tls=tls) as base_url:
        try:
            yield base_url
        finally:
            fake.release_hangs()


def fetch(client: httpx.Client, base_url: str, request: HttpRequest) -> HttpResponse:
    """Send an engine's request as the orchestrator does, synchronously (for tests)."""
    response = client.request(
        request.method,
        base_url + request.path,
        params=request.params,
        json=request.json,
        data=request.data,
        headers=request.headers,
    )
    return HttpResponse(
        status=response.status_code,
        headers={k.lower(): v for k, v in response.headers.items()},
        content=response.content,
        url=str(response.url),
    )
