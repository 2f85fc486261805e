"""CPU time per engine request on the client side, layer by layer, from one run.

    python -m bench.client             # 5 rounds of 2,000 requests per variant
    python -m bench.client --rounds 3 --requests 1000

A minimal keep-alive HTTP/1.1 server in its own process answers every request at once with
the same 2 KB JSON body, so that only this process's CPU time is counted (`time.process_time`).
Variants, interleaved round by round and reported as the median round:

- `send()`: what the orchestrator calls for every engine request (`websearch_mcp.net.engine_http`,
  on aiohttp), a GET, then a POST with a JSON body (the keyed engines) and one with a form
  (DuckDuckGo);
- `aiohttp session alone`: the same request straight through aiohttp, without `send()`'s checks;
- `httpx client`: the path engine requests took before, httpx's client with the query encoded
  once (as `send()` did then);
- `httpx transport alone`: httpx's connection pool without the client's layers;
- `httpcore pool alone`: httpcore's pool with no httpx at all.

The event loop is uvloop when it is installed, as under `websearch-mcp serve`.
"""

from __future__ import annotations

import argparse
import asyncio
import importlib
import statistics
import subprocess
import sys
import time
from collections.abc import Awaitable, Callable
from importlib.util import find_spec
from urllib.parse import urlencode

import httpcore
import httpx
from yarl import URL

from websearch_mcp.models import HttpRequest
from websearch_mcp.net.engine_http import build_client, query_string, send
from websearch_mcp.net.http import build_httpx_client

SERVER = """
import asyncio, sys
BODY = b'{"results": [' + b','.join(
    b'{"title": "result %d", "url": "https://example.com/page/%d", "content": "snippet"}' % (i, i)
    for i in range(20)) + b']}'
ANSWER = (b"HTTP/1.1 200 OK\\r\\ncontent-type: application/json\\r\\ncontent-length: %d\\r\\n\\r\\n"
          % len(BODY) + BODY)

async def handle(reader, writer):
    try:
        while True:
            await reader.readuntil(b"\\r\\n\\r\\n")
            writer.write(ANSWER)
    except Exception:
        writer.close()

async def main():
    server = await asyncio.start_server(handle, "127.0.0.1", 0)
    print(server.sockets[0].getsockname()[1], flush=True)
    await server.serve_forever()

asyncio.run(main())
"""

REQUEST = HttpRequest(
    "GET",
    "/search",
    params={"q": "python asyncio event loop", "format": "json", "pageno": 1},
    headers={"Accept": "application/json"},
)
#: What the keyed engines send (a JSON body) and DuckDuckGo (a form), through the same `send()`.
JSON_REQUEST = HttpRequest(
    "POST",
    "/search",
    json={"query": "python asyncio event loop", "num_results": 20, "type": "auto"},
    headers={"Accept": "application/json"},
)
FORM_REQUEST = HttpRequest("POST", "/html/", data={"q": "python asyncio event loop", "b": ""})
TIMEOUT = {"connect": 5.0, "read": 5.0, "write": 5.0, "pool": 5.0}

Variant = Callable[[], Awaitable[object]]


def variants(base: str) -> tuple[dict[str, Variant], list[Callable[[], Awaitable[None]]]]:
    client = build_client()
    before = build_httpx_client()
    transport = httpx.AsyncHTTPTransport(limits=httpx.Limits(max_keepalive_connections=64))
    pool = httpcore.AsyncConnectionPool(max_keepalive_connections=64)
    url = base + REQUEST.path
    full = f"{url}?{urlencode(REQUEST.params or {})}"
    headers = {"User-Agent": "bench", **REQUEST.headers}

    encoded = f"{url}?{query_string(REQUEST.params or {})}"

    async def session_alone() -> None:
        session = client.session()
        async with session.get(URL(encoded, encoded=True), headers=REQUEST.headers) as response:
            await response.read()

    async def httpx_client() -> None:
        async with before.stream("GET", encoded, headers=REQUEST.headers, timeout=5.0) as response:
            [chunk async for chunk in response.aiter_bytes()]

    async def transport_alone() -> None:
        request = httpx.Request("GET", full, headers=headers, extensions={"timeout": TIMEOUT})
        response = await transport.handle_async_request(request)
        await response.aread()

    async def core_alone() -> None:
        await pool.request(
            "GET", full, headers=list(headers.items()), extensions={"timeout": TIMEOUT}
        )

    found: dict[str, Variant] = {
        "send()": lambda: send(client, base, REQUEST, 5.0),
        "send(), a JSON body": lambda: send(client, base, JSON_REQUEST, 5.0),
        "send(), a form body": lambda: send(client, base, FORM_REQUEST, 5.0),
        "aiohttp session alone": session_alone,
        "httpx client (the path before)": httpx_client,
        "httpx transport alone": transport_alone,
        "httpcore pool alone": core_alone,
    }
    return found, [client.aclose, before.aclose, transport.aclose, pool.aclose]


async def measure(base: str, rounds: int, count: int) -> dict[str, list[float]]:
    found, closers = variants(base)
    times: dict[str, list[float]] = {name: [] for name in found}
    try:
        for call in found.values():  # warm up: connections, imports
            for _ in range(100):
                await call()
        for _ in range(rounds):
            for name, call in found.items():
                started = time.process_time()
                for _ in range(count):
                    await call()
                times[name].append((time.process_time() - started) * 1000 / count)
    finally:
        for close in closers:
            await close()
    return times


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.client", description=__doc__)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--requests", type=int, default=2000, help="per variant and round")
    ns = parser.parse_args(argv)
    server = subprocess.Popen([sys.executable, "-c", SERVER], stdout=subprocess.PIPE, text=True)
    try:
        assert server.stdout is not None
        port = int(server.stdout.readline())
        run = asyncio.run if find_spec("uvloop") is None else importlib.import_module("uvloop").run
        times = run(measure(f"http://127.0.0.1:{port}", ns.rounds, ns.requests))
    finally:
        server.terminate()
        server.wait()
    print("| client path | CPU ms per request, median round (min - max) |")
    print("|---|---|")
    for name, values in times.items():
        print(
            f"| {name} | {statistics.median(values):.3f} ({min(values):.3f} - {max(values):.3f}) |"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
