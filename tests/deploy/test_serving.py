"""The test harness's server (`testing.serving`): stopped at once, it still lets a request in
flight finish and runs the app's lifespan shutdown, as uvicorn's own stop does. These fail when
uvicorn changes under the methods the harness overrides."""

from __future__ import annotations

import asyncio
import contextlib
import threading
import time
from collections.abc import AsyncIterator

import httpx
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import PlainTextResponse
from starlette.routing import Route

from testing.serving import serve_app


def _app(done: list[str]) -> Starlette:
    @contextlib.asynccontextmanager
    async def lifespan(_: Starlette) -> AsyncIterator[None]:
        yield
        await asyncio.sleep(0.05)
        done.append("lifespan shut down")

    async def slow(_: Request) -> PlainTextResponse:
        await asyncio.sleep(0.5)
        done.append("answered")
        return PlainTextResponse("ok")

    return Starlette(routes=[Route("/slow", slow)], lifespan=lifespan)


def test_a_stopped_server_shuts_its_app_down() -> None:
    done: list[str] = []
    with serve_app(_app(done)) as url:
        assert httpx.get(f"{url}/nothing", timeout=5).status_code == 404
    assert done == ["lifespan shut down"]


def test_a_request_in_flight_when_the_server_stops_is_answered_first() -> None:
    done: list[str] = []
    answers: list[int] = []
    with serve_app(_app(done)) as url:
        asking = threading.Thread(
            target=lambda: answers.append(httpx.get(f"{url}/slow", timeout=5).status_code)
        )
        asking.start()
        time.sleep(0.2)
    asking.join(timeout=5)
    assert answers == [200] and done == ["answered", "lifespan shut down"]
