"""Fakes of the chat completions answers real OpenAI-compatible servers give (Ollama, vLLM,
llama.cpp, OpenRouter, Azure, OpenAI): each request is answered by a handler, with a script of
raw server-sent event lines or a JSON body."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field
from typing import Any

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse
from starlette.routing import Route


def chunk(delta: dict[str, Any] | None = None, finish: str | None = None, **extra: Any) -> str:
    """One streamed completion chunk as an SSE line; `delta` None: a chunk with no choices."""
    choices = [] if delta is None else [{"index": 0, "delta": delta, "finish_reason": finish}]
    event = {"id": "c", "object": "chat.completion.chunk", "model": "m", "choices": choices}
    return f"data: {json.dumps({**event, **extra})}\n\n"


def completion(message: dict[str, Any], finish: str = "stop") -> dict[str, Any]:
    """A plain completion's body."""
    choice = {"index": 0, "message": {"role": "assistant", **message}, "finish_reason": finish}
    return {"id": "c", "object": "chat.completion", "choices": [choice]}


def words(text: str, **delta: Any) -> list[str]:
    """`text` streamed a word a chunk, as models do."""
    parts = text.split(" ")
    return [chunk({"content": w if i == 0 else f" {w}", **delta}) for i, w in enumerate(parts)]


#: A request's JSON body -> (status, SSE lines or a JSON body).
Handler = Callable[[dict[str, Any]], tuple[int, Any]]


@dataclass
class VendorLLM:
    """`POST` anywhere, answered by `handler`; every request body is kept."""

    handler: Handler
    requests: list[dict[str, Any]] = field(default_factory=list)

    @property
    def app(self) -> Starlette:
        return Starlette(routes=[Route("/{path:path}", self._complete, methods=["POST"])])

    async def _complete(self, request: Request) -> Response:
        body = await request.json()
        self.requests.append(body)
        status, payload = self.handler(body)
        if isinstance(payload, list):
            return StreamingResponse(_events(payload), media_type="text/event-stream")
        return JSONResponse(payload, status_code=status)


async def _events(lines: list[str]) -> AsyncIterator[str]:
    for line in lines:
        yield line
        await asyncio.sleep(0.001)
