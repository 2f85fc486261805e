"""Any ASGI app under a real uvicorn in a background thread, for tests and benchmarks."""

from __future__ import annotations

import asyncio
import contextlib
import socket
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager

import httpx
import uvicorn
from starlette.types import ASGIApp


class _Server(uvicorn.Server):
    """uvicorn's server, stopped without its idle waits (hundreds of tests start and stop one):
    `stop` wakes the main loop at once, where uvicorn looks at `should_exit` every 0.1 s; and
    with no connection or request left, shutdown closes the listening sockets and runs the
    lifespan's shutdown without the 0.1 s uvicorn gives connections to close. uvicorn has no
    public way to do either: its two methods are overridden here, and tests/deploy/test_serving.py
    fails when they change under this class."""

    _loop: asyncio.AbstractEventLoop | None = None
    _wake: asyncio.Event | None = None

    async def main_loop(self) -> None:
        self._wake = asyncio.Event()
        self._loop = asyncio.get_running_loop()
        counter = 0
        while not await self.on_tick(counter):
            counter = (counter + 1) % 864000
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._wake.wait(), 0.1)

    def stop(self) -> None:
        self.should_exit = True
        loop, wake = self._loop, self._wake
        if loop is not None and wake is not None:
            with contextlib.suppress(RuntimeError):  # the loop has already ended
                loop.call_soon_threadsafe(wake.set)

    async def shutdown(self, sockets: list[socket.socket] | None = None) -> None:
        if self.server_state.connections or self.server_state.tasks:
            await super().shutdown(sockets)
            return
        for server in self.servers:
            server.close()
        for sock in sockets or []:
            sock.close()
        for server in self.servers:
            await server.wait_closed()
        if not self.force_exit:
            await self.lifespan.shutdown()


@contextmanager
def serve_app(
    app: ASGIApp,
    *,
    host: str = "127.0.0.1",
    startup_timeout: float = 10.0,
    tls: tuple[str, str] | None = None,
) -> Iterator[str]:
    """Run `app` under uvicorn on a free port of `host` (IPv4 or IPv6) in a background thread;
    yield its URL.

    With `tls` (certificate and key files, for `localhost`) it serves HTTPS and the URL is
    `https://localhost:<port>`.
    """
    # IPPROTO_TCP explicitly: asyncio sets TCP_NODELAY only on sockets whose proto says TCP, and
    # without it every response waits ~40 ms for a delayed ACK (Nagle).
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind((host, 0))
    port = sock.getsockname()[1]
    named = f"[{host}]" if family == socket.AF_INET6 else host
    config = uvicorn.Config(
        app,
        log_level="warning",
        access_log=False,
        timeout_graceful_shutdown=1,
        ssl_certfile=tls[0] if tls else None,
        ssl_keyfile=tls[1] if tls else None,
    )
    server = _Server(config)
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    try:
        deadline = time.monotonic() + startup_timeout
        while not server.started:
            if not thread.is_alive() or time.monotonic() > deadline:
                raise RuntimeError(f"the test server on {named}:{port} did not start")
            time.sleep(0.01)
        yield f"https://localhost:{port}" if tls else f"http://{named}:{port}"
    finally:
        server.stop()
        thread.join(timeout=10)
        sock.close()


def wait_until_answering(url: str, timeout: float = 5.0) -> None:
    """Ask `url` until a server answers (whatever it says) or `timeout` seconds have passed: a
    process just started listens a moment later."""
    deadline = time.monotonic() + timeout
    while True:
        try:
            httpx.get(url, timeout=1)
            return
        except httpx.TransportError:
            if time.monotonic() > deadline:
                return
            time.sleep(0.02)
