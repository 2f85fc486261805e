"""A fake OpenAI-compatible chat completions server on 127.0.0.1 for the summary tests.

`FakeLLM.app` serves `POST /v1/chat/completions`: with `stream: true` server-sent `data:` events
ending in `[DONE]`, otherwise one JSON completion. What each kind of request does is set per kind
(`stream_mode`, `plain_mode`): answer (`ok`), drop the connection after the first chunks (`break`),
end the stream cleanly but early, without `[DONE]` (`cut`), send well-formed JSON events that are
not completion chunks (`garble`: a `delta` that is text, not an object), answer 500 (`fail`), refuse
the key (`refuse`), answer 429 (`limit`), answer 400 as for a model it does not serve (`reject`),
not answer until `release()` (`hang`), send text without end, as fast as it is read (`flood`: a
model that ignores `max_tokens`), or send JSON nested too deep for any decoder (`deep`: as the
stream's one event, or as the body of a 500). Every request is kept.
"""

from __future__ import annotations

import asyncio
import json
import threading
import time
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from typing import Any, Literal

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse
from starlette.routing import Route

Mode = Literal[
    "ok", "break", "cut", "garble", "fail", "refuse", "limit", "reject", "hang", "flood", "deep"
]

#: JSON nested deeper than any decoder reads.
DEEP = "[" * 100_000 + "]" * 100_000

STREAMED = "asyncio runs coroutines on an event loop [1]. A tutorial walks through tasks [2]."
PLAIN = "From the plain completion: asyncio is the standard library for async I/O [1][3]."


@dataclass
class FakeLLM:
    """The fake server's behaviour and what it was sent."""

    stream_mode: Mode = "ok"
    plain_mode: Mode = "ok"
    #: Quoted in error answers, as some servers quote what they were sent.
    echo: str = ""
    requests: list[dict[str, Any]] = field(default_factory=list)
    headers: list[dict[str, str]] = field(default_factory=list)
    released: threading.Event = field(default_factory=threading.Event)
    #: The streamed answer's text, sent a word a chunk.
    streamed: str = STREAMED
    #: Why an answer ends: `length` is a model stopped at `max_tokens`, mid-sentence.
    finish: str = "stop"

    @property
    def app(self) -> Starlette:
        return Starlette(routes=[Route("/v1/chat/completions", self._complete, methods=["POST"])])

    def release(self) -> None:
        """End hanging requests."""
        self.released.set()

    def count(self, *, stream: bool) -> int:
        return sum(1 for body in self.requests if bool(body.get("stream")) is stream)

    async def _complete(self, request: Request) -> Response:
        body = await request.json()
        self.requests.append(body)
        self.headers.append(dict(request.headers))
        stream = bool(body.get("stream"))
        mode = self.stream_mode if stream else self.plain_mode
        if mode == "hang":
            # Until the test ends (`release`), so that the server can stop at once.
            end = time.monotonic() + 60
            while not self.released.is_set() and time.monotonic() < end:
                await asyncio.sleep(0.05)
        if mode == "deep" and not stream:
            return Response(DEEP, status_code=500, media_type="application/json")
        if mode == "fail":
            message = f"the model crashed {self.echo}".strip()
            return JSONResponse({"error": {"message": message}}, status_code=500)
        if mode == "refuse":
            message = f"Incorrect API key provided: {self.echo}"
            return JSONResponse({"error": {"message": message}}, status_code=401)
        if mode == "reject":
            message = f"The model `{body['model']}` does not exist"
            return JSONResponse({"error": {"message": message}}, status_code=400)
        if mode == "limit":
            message = "Rate limit reached for requests"
            return JSONResponse({"error": {"message": message}}, status_code=429)
        if mode == "flood" and not stream:
            return StreamingResponse(_flood_plain(), media_type="application/json")
        if not stream:
            return JSONResponse(
                {
                    "id": "chatcmpl-plain",
                    "object": "chat.completion",
                    "model": body["model"],
                    "choices": [
                        {
                            "index": 0,
                            "message": {"role": "assistant", "content": PLAIN},
                            "finish_reason": self.finish,
                        }
                    ],
                }
            )
        events = _events(body["model"], mode, self.streamed, self.finish)
        return StreamingResponse(events, media_type="text/event-stream")


def _chunk(model: str, delta: dict[str, Any], finish: str | None = None) -> str:
    event = {
        "id": "chatcmpl-stream",
        "object": "chat.completion.chunk",
        "model": model,
        "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
    }
    return f"data: {json.dumps(event)}\n\n"


async def _flood_plain() -> AsyncIterator[str]:
    yield '{"choices": [{"index": 0, "message": {"role": "assistant", "content": "'
    while True:
        yield "flood [1] " * 6_000
        await asyncio.sleep(0)


async def _events(model: str, mode: Mode, streamed: str, finish: str) -> AsyncIterator[str]:
    if mode == "flood":
        while True:
            yield _chunk(model, {"content": "flood [1] " * 6_000})
            await asyncio.sleep(0)
    if mode == "deep":
        yield f"data: {DEEP}\n\n"
        yield "data: [DONE]\n\n"
        return
    if mode == "garble":
        event = {"object": "chat.completion.chunk", "choices": [{"index": 0, "delta": STREAMED}]}
        yield f"data: {json.dumps(event)}\n\n"
        yield "data: [DONE]\n\n"
        return
    yield _chunk(model, {"role": "assistant", "content": ""})
    words = streamed.split(" ")
    for i, word in enumerate(words):
        if mode == "break" and i == 3:
            # Raising inside the body makes the server drop the connection mid-response.
            raise RuntimeError("the fake model broke off")
        if mode == "cut" and i == 3:
            return
        yield _chunk(model, {"content": word if i == 0 else f" {word}"})
        await asyncio.sleep(0.005)
    yield _chunk(model, {}, finish=finish)
    yield "data: [DONE]\n\n"
