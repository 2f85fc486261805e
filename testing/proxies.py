"""HTTP and SOCKS5 proxies on 127.0.0.1 that count what passes through them.

`CountingProxy` forwards absolute-form HTTP requests and tunnels CONNECT (HTTPS);
`CountingSocks` speaks SOCKS5 (no authentication, CONNECT only). Each runs in a thread.
"""

from __future__ import annotations

import asyncio
import threading
from collections import Counter
from contextlib import suppress
from urllib.parse import urlsplit


class CountingProxy:
    """An HTTP proxy in a background thread. `forwarded[host:port]` counts plain requests,
    `tunnels[host:port]` CONNECT tunnels."""

    def __init__(self) -> None:
        self.forwarded: Counter[str] = Counter()
        self.tunnels: Counter[str] = Counter()
        self.credentials: list[str] = []  # the Proxy-Authorization headers received
        self.url = ""
        self._ready = threading.Event()
        self._thread = threading.Thread(target=asyncio.run, args=(self._main(),), daemon=True)

    def __enter__(self) -> CountingProxy:
        self._thread.start()
        assert self._ready.wait(5), "the proxy did not start"
        return self

    def __exit__(self, *exc: object) -> None:
        self._loop.call_soon_threadsafe(self._stop.set)
        self._thread.join(5)

    async def _main(self) -> None:
        self._loop = asyncio.get_running_loop()
        self._stop = asyncio.Event()
        server = await asyncio.start_server(self._handle, "127.0.0.1", 0)
        self.url = f"http://127.0.0.1:{server.sockets[0].getsockname()[1]}"
        self._ready.set()
        await self._stop.wait()
        server.close()

    async def _handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            head = (await reader.readuntil(b"\r\n\r\n")).decode("latin-1")
        except (asyncio.IncompleteReadError, asyncio.LimitOverrunError):
            writer.close()
            return
        line, *headers = [h for h in head.split("\r\n") if h]
        self.credentials += [
            h.split(":", 1)[1].strip()
            for h in headers
            if h.lower().startswith("proxy-authorization:")
        ]
        method, target, version = line.split(" ", 2)
        if method == "CONNECT":
            host, _, port = target.rpartition(":")
            up_reader, up_writer = await asyncio.open_connection(host, int(port))
            self.tunnels[target] += 1
            writer.write(b"HTTP/1.1 200 Connection established\r\n\r\n")
        else:
            url = urlsplit(target)
            up_reader, up_writer = await asyncio.open_connection(url.hostname, url.port or 80)
            self.forwarded[url.netloc] += 1
            kept = [
                h
                for h in headers
                if not h.lower().startswith(("proxy-connection:", "connection:", "keep-alive:"))
            ]
            path = url.path + (f"?{url.query}" if url.query else "")
            # One request per connection, so that every request is counted.
            up_writer.write(
                "\r\n".join([f"{method} {path} {version}", *kept, "Connection: close", "", ""])
                .encode("latin-1")
            )  # fmt: skip
        await asyncio.gather(_pipe(reader, up_writer), _pipe(up_reader, writer))


class CountingSocks(CountingProxy):
    """A SOCKS5 proxy (CONNECT only) in a background thread; `tunnels[host:port]` counts the
    connections it made, by the address the client asked for. A client offering a login
    (username and password, RFC 1929) is asked for it and it is kept in `credentials` as
    `user:password`; otherwise no authentication."""

    async def _handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            _, count = await reader.readexactly(2)
            methods = await reader.readexactly(count)
            if 2 in methods:
                writer.write(b"\x05\x02")
                _, size = await reader.readexactly(2)
                user = await reader.readexactly(size)
                password = await reader.readexactly((await reader.readexactly(1))[0])
                self.credentials.append(f"{user.decode()}:{password.decode()}")
                writer.write(b"\x01\x00")
            else:
                writer.write(b"\x05\x00")
            _, command, _, kind = await reader.readexactly(4)
            if kind == 3:  # a name, for the proxy to resolve (socks5h)
                host = (await reader.readexactly((await reader.readexactly(1))[0])).decode()
            else:
                host = ".".join(map(str, await reader.readexactly(4)))
            port = int.from_bytes(await reader.readexactly(2), "big")
        except asyncio.IncompleteReadError:
            writer.close()
            return
        assert command == 1 and kind in (1, 3)
        up_reader, up_writer = await asyncio.open_connection(host, port)
        self.tunnels[f"{host}:{port}"] += 1
        writer.write(b"\x05\x00\x00\x01" + bytes(6))
        await asyncio.gather(_pipe(reader, up_writer), _pipe(up_reader, writer))


async def _pipe(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    try:
        while data := await reader.read(65536):
            writer.write(data)
            await writer.drain()
    except OSError:
        pass
    finally:
        with suppress(OSError):
            writer.close()


class NotSocks(CountingProxy):
    """An HTTP proxy's port as a `socks5://` URL names it by mistake: the SOCKS greeting is no
    HTTP request, so it answers 400 and hangs up. `url` is the mistaken `socks5://` one."""

    async def _handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        with suppress(OSError, asyncio.IncompleteReadError):
            await reader.read(64)
            writer.write(
                b"HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"
            )
            await writer.drain()
        writer.close()

    def __enter__(self) -> NotSocks:
        super().__enter__()
        self.url = self.url.replace("http://", "socks5://")
        return self


class RefusingProxy(CountingProxy):
    """An HTTP proxy that answers every request, CONNECT included, with `status` (407: a login
    it wants; 502: the origin it could not reach)."""

    def __init__(self, status: int) -> None:
        super().__init__()
        self.status = status

    async def _handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        with suppress(OSError, asyncio.IncompleteReadError, asyncio.LimitOverrunError):
            await reader.readuntil(b"\r\n\r\n")
            head = f"HTTP/1.1 {self.status} Refused\r\nContent-Length: 0\r\n\r\n"
            writer.write(head.encode())
            await writer.drain()
        writer.close()
