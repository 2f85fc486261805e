"""Slow clients: a request whose headers or body have not arrived in time gets 408 and is closed,
and one whose headers never end gets 431 and is closed.

uvicorn has no deadline for a request's headers (its keep-alive timeout covers only idle
connections, and stops once a byte arrives), so `header_deadline_protocol` wraps uvicorn's HTTP
protocol: from a connection's first byte, or the first byte of its next request, the headers
must be complete within `server.read_timeout_seconds`, and within `MAX_HEADER_BYTES` (httptools
keeps every byte of a header line however long, so the deadline alone would let a fast client
fill the memory; h11 stops at 16 KiB by itself). The body's deadline is kept by `Guard`
(`body_limit.read_body_within`), which reads it before the request takes a concurrency slot.

uvicorn has no public way to do this: the wrapper subclasses its protocol class and uses the
protocol's own hooks and attributes. `tests/server/test_hostile_requests.py` fails when uvicorn
changes under it.
"""

from __future__ import annotations

import asyncio
from typing import Any

from uvicorn.protocols.http.auto import AutoHTTPProtocol

#: The request line and headers of one request, at most.
MAX_HEADER_BYTES = 64 * 1024


def _response(status: bytes, message: bytes) -> bytes:
    body = b'{"error": "%s"}' % message
    return (
        b"HTTP/1.1 %s\r\ncontent-type: application/json\r\nconnection: close\r\n"
        b"content-length: %d\r\n\r\n%s" % (status, len(body), body)
    )


TIMEOUT_RESPONSE = _response(b"408 Request Timeout", b"request not received in time")
TOO_LARGE_RESPONSE = _response(
    b"431 Request Header Fields Too Large", b"request headers over %d bytes" % MAX_HEADER_BYTES
)


def header_deadline_protocol(
    seconds: float, base: type[asyncio.Protocol] = AutoHTTPProtocol
) -> type[Any]:
    """uvicorn's HTTP protocol (`base`, httptools or h11) with a deadline for request headers
    (its class attribute `read_timeout`); pass it as `uvicorn.run(..., http=...)`."""

    class HeaderDeadline(base):  # type: ignore[valid-type,misc]
        read_timeout = seconds

        def connection_made(self, transport: Any) -> None:
            super().connection_made(transport)
            self._header_timer: asyncio.TimerHandle | None = None
            self._in_head = False
            self._head_bytes = 0
            self._arm()

        def data_received(self, data: bytes) -> None:
            # Counted only while a head begun in an earlier part goes on (what arrives after a
            # head may be body): a head keeps at most its first part and MAX_HEADER_BYTES.
            in_head = self._in_head
            super().data_received(data)
            if in_head and self._in_head:
                self._head_bytes += len(data)
                if self._head_bytes > MAX_HEADER_BYTES:
                    self._refuse(TOO_LARGE_RESPONSE)
                    return
            if self._waiting_for_headers():
                if self._header_timer is None:
                    self._arm()
            elif self._header_timer is not None:
                self._header_timer.cancel()
                self._header_timer = None

        # httptools' callbacks around a request's head (h11 limits heads by itself).
        def on_message_begin(self) -> None:
            super().on_message_begin()
            self._in_head = True
            self._head_bytes = 0

        def on_headers_complete(self) -> None:
            self._in_head = False
            super().on_headers_complete()

        def connection_lost(self, exc: Exception | None) -> None:
            if self._header_timer is not None:
                self._header_timer.cancel()
                self._header_timer = None
            super().connection_lost(exc)

        def _waiting_for_headers(self) -> bool:
            cycle = getattr(self, "cycle", None)
            return cycle is None or cycle.response_complete

        def _arm(self) -> None:
            self._header_timer = self.loop.call_later(self.read_timeout, self._stalled)

        def _stalled(self) -> None:
            self._header_timer = None
            if not self._waiting_for_headers():
                return
            self._refuse(TIMEOUT_RESPONSE)

        def _refuse(self, response: bytes) -> None:
            if self.transport.is_closing():
                return
            if self._header_timer is not None:
                self._header_timer.cancel()
                self._header_timer = None
            self.transport.write(response)
            self.transport.close()

    HeaderDeadline.__name__ = f"HeaderDeadline{base.__name__}"
    return HeaderDeadline


#: `serve --workers` names the protocol by import string, since a class made at run time cannot
#: be sent to worker processes; each worker sets its deadline from its configuration
#: (`set_worker_read_timeout`) while building its app, before any connection is served.
WorkerHeaderDeadline = header_deadline_protocol(10.0)
WORKER_PROTOCOL = "websearch_mcp.server.middleware.slow_clients:WorkerHeaderDeadline"


def set_worker_read_timeout(seconds: float) -> None:
    """The header deadline of `WorkerHeaderDeadline` in this process."""
    WorkerHeaderDeadline.read_timeout = seconds
