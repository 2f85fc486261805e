"""Fake engines on aiohttp's web server, for the latency benchmark: cheap enough not to be the
load.

`testing.fake_engines.FakeEngines` (Starlette under uvicorn and h11, with faults, counts and
recorded requests for the tests) spends more CPU per request than the service would notice in a
real engine. Every fresh search asks all eight engines at once, so under many concurrent
searches its one process fell behind and answered late: the harness's own queue, counted as the
service's overhead. Real engines do their work on their own machines. This server answers
the same requests with the same bodies (the engines' wire formats from `testing.wire_formats`,
the results of a `ResultsFn`) on aiohttp's web server with its C HTTP parser, and makes each
answer while its delay runs, so that requests falling due together are answered on time.
"""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Awaitable, Callable, Mapping

from aiohttp import web

from testing.fake_engines import ROUTES, ResultsFn, query_text_of
from testing.wire_formats import render

Handler = Callable[[web.Request], Awaitable[web.Response]]


def _handler(engine: str, delay: float, results: ResultsFn) -> Handler:
    async def answer(request: web.Request) -> web.Response:
        due = time.monotonic() + delay
        form: dict[str, str] = {}
        payload = None
        if request.content_type == "application/x-www-form-urlencoded":
            form = {k: str(v) for k, v in (await request.post()).items()}
        elif request.content_type == "application/json":
            try:
                payload = json.loads(await request.read())
            except ValueError:
                payload = None
        text = query_text_of(engine, dict(request.query), form, payload)
        body, content_type = render(engine, results(engine, text), text)
        await asyncio.sleep(max(0.0, due - time.monotonic()))
        return web.Response(body=body, headers={"Content-Type": content_type})

    return answer


def engines_app(delays: Mapping[str, float], results: ResultsFn) -> web.Application:
    """Each engine of `delays` on its real request path under `/{engine}`, answering with
    `results(engine, query)` after its delay (seconds from the request)."""
    app = web.Application()
    for engine, delay in delays.items():
        path, methods = ROUTES[engine]
        answer = _handler(engine, delay, results)
        for method in methods:
            app.router.add_route(method, f"/{engine}{path}", answer)
            if path.endswith("/"):  # DuckDuckGo's `/html/` is also reached as `/html`
                app.router.add_route(method, f"/{engine}{path[:-1]}", answer)
    return app
