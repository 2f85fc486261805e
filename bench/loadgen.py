"""A light HTTP/1.1 load generator: raw asyncio protocols on keep-alive connections.

One connection per concurrent client; each sends a request, waits for the whole answer (framed by
`Content-Length`), then sends the next. Parsing stops at the status line and `Content-Length`, so
the generator spends far less per request than the server under test. Its own CPU time is measured,
so a report can show it was not the bottleneck.
"""

from __future__ import annotations

import asyncio
import json
import math
import resource
import socket
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

MCP_HEADERS = "Accept: application/json, text/event-stream\r\nContent-Type: application/json\r\n"
_HEAD_END = b"\r\n\r\n"
_LENGTH = b"\ncontent-length:"


def post(host: str, path: str, body: bytes, headers: str = MCP_HEADERS) -> bytes:
    """A complete keep-alive POST request."""
    head = f"POST {path} HTTP/1.1\r\nHost: {host}\r\n{headers}Content-Length: {len(body)}\r\n\r\n"
    return head.encode() + body


def get(host: str, path: str) -> bytes:
    """A complete keep-alive GET request."""
    return f"GET {path} HTTP/1.1\r\nHost: {host}\r\n\r\n".encode()


#: The protocol revision whose requests stand alone (no handshake; version, method and tool name
#: in the headers and in `_meta`), which the official client speaks by default. Requests without a
#: version header take the stateless path of the handshake revisions (2025-11-25 and before).
MODERN = "2026-07-28"


def tool_call(name: str, arguments: dict[str, Any], rid: int = 1, *, modern: bool = False) -> bytes:
    """A JSON-RPC `tools/call` body; `modern`: with the envelope of `MODERN`."""
    params: dict[str, Any] = {"name": name, "arguments": arguments}
    if modern:
        params["_meta"] = {
            "io.modelcontextprotocol/protocolVersion": MODERN,
            "io.modelcontextprotocol/clientCapabilities": {},
        }
    message = {"jsonrpc": "2.0", "id": rid, "method": "tools/call", "params": params}
    return json.dumps(message, separators=(",", ":")).encode()


def modern_headers(tool: str) -> str:
    """The headers of a `MODERN` `tools/call` of `tool`."""
    revision = f"MCP-Protocol-Version: {MODERN}\r\n"
    return f"{MCP_HEADERS}{revision}Mcp-Method: tools/call\r\nMcp-Name: {tool}\r\n"


class Connection(asyncio.Protocol):
    """One keep-alive connection with at most one request outstanding."""

    def __init__(self) -> None:
        self.buffer = bytearray()
        self.transport: asyncio.Transport | None = None
        self.waiter: asyncio.Future[tuple[int, bytes]] | None = None

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = transport  # type: ignore[assignment]
        sock = transport.get_extra_info("socket")
        if sock is not None:
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)

    def data_received(self, data: bytes) -> None:
        self.buffer += data
        if self.waiter is None:
            return
        end = self.buffer.find(_HEAD_END)
        if end < 0:
            return
        head = bytes(self.buffer[:end]).lower()
        at = head.find(_LENGTH)
        if at < 0:
            self._fail(ConnectionError("an answer without Content-Length"))
            return
        stop = head.find(b"\r", at + 1)
        length = int(head[at + len(_LENGTH) : stop if stop > 0 else None])
        total = end + 4 + length
        if len(self.buffer) < total:
            return
        status = int(head[9:12])
        body = bytes(self.buffer[end + 4 : total])
        del self.buffer[:total]
        waiter, self.waiter = self.waiter, None
        if not waiter.done():
            waiter.set_result((status, body))

    def _fail(self, exc: Exception) -> None:
        waiter, self.waiter = self.waiter, None
        if waiter is not None and not waiter.done():
            waiter.set_exception(exc)

    def connection_lost(self, exc: Exception | None) -> None:
        self._fail(ConnectionError("the server closed the connection"))

    async def request(self, data: bytes) -> tuple[int, bytes]:
        """Send one complete request; its status and body."""
        assert self.transport is not None
        self.waiter = asyncio.get_running_loop().create_future()
        self.transport.write(data)
        return await self.waiter

    def close(self) -> None:
        if self.transport is not None:
            self.transport.close()


@dataclass(slots=True)
class Run:
    """What one load run measured: per-request latency (seconds) in completion order."""

    latencies: list[float] = field(default_factory=list)
    failures: int = 0
    elapsed: float = 0.0
    client_cpu: float = 0.0  # CPU seconds the generator itself used
    checks: dict[str, int] = field(default_factory=dict)

    @property
    def completed(self) -> int:
        return len(self.latencies)

    @property
    def throughput(self) -> float:
        return self.completed / self.elapsed if self.elapsed else 0.0


#: Looks at an answer's status and body; returns a label to count (e.g. "partial") or None.
Check = Callable[[int, bytes], str | None]


async def connect(host: str, port: int) -> Connection:
    """A new keep-alive connection."""
    loop = asyncio.get_running_loop()
    return (await loop.create_connection(Connection, host, port))[1]


async def run_load(
    host: str,
    port: int,
    make: Callable[[int], bytes],
    *,
    count: int,
    concurrency: int,
    check: Check | None = None,
    on_done: Callable[[], None] | None = None,
    ramp: float = 0.0,
) -> Run:
    """Send `count` requests (`make(i)` for i in 0..count-1) over `concurrency` connections.

    A request answered with a status other than 200 counts as a failure; `check` may label
    answers (counted in `Run.checks`; the label "failed" also counts as a failure). With
    `ramp` (seconds), the clients start one after another over that time, as independent
    users do, instead of all in the same instant.
    """
    connections = [await connect(host, port) for _ in range(concurrency)]
    result = Run()
    next_index = 0

    async def client(conn: Connection, start: float) -> None:
        nonlocal next_index
        if start:
            await asyncio.sleep(start)
        while next_index < count:
            i = next_index
            next_index += 1
            data = make(i)
            started = time.perf_counter()
            status, body = await conn.request(data)
            result.latencies.append(time.perf_counter() - started)
            label = check(status, body) if check else None
            if status != 200 or label == "failed":
                result.failures += 1
            if label:
                result.checks[label] = result.checks.get(label, 0) + 1
            if on_done is not None:
                on_done()

    cpu_before = _cpu_seconds()
    started = time.perf_counter()
    try:
        await asyncio.gather(
            *(client(c, ramp * i / concurrency) for i, c in enumerate(connections))
        )
    finally:
        result.elapsed = time.perf_counter() - started
        result.client_cpu = _cpu_seconds() - cpu_before
        for conn in connections:
            conn.close()
    return result


def _cpu_seconds() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def percentile(values: Sequence[float], q: float) -> float:
    """Nearest-rank percentile (q in [0, 1])."""
    ordered = sorted(values)
    return ordered[max(0, min(len(ordered) - 1, math.ceil(q * len(ordered)) - 1))]
