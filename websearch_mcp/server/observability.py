"""A request id per request, the access log and HTTP metrics (`Observer`), and logs (text or
JSON) that never hold a secret.

`Observer` feeds the app's `metrics.Metrics` with every HTTP request. `configure_logging`
installs one root handler whose formatter stamps the request id on every record and replaces
every configured secret (`Settings.secrets()`) with `***`.
"""

from __future__ import annotations

import json
import logging
import re
import sys
import time
import uuid
from collections.abc import Iterable
from contextvars import ContextVar
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any, TextIO

from starlette.datastructures import Headers
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from websearch_mcp.redaction import Redactor
from websearch_mcp.server.middleware.guard import ADDRESS_KEY, CLIENT_KEY

if TYPE_CHECKING:
    from websearch_mcp.server.metrics import Metrics

ACCESS_LOG = logging.getLogger("websearch_mcp.access")

#: The current request's id ("-" outside a request); asyncio tasks started by it inherit it.
REQUEST_ID: ContextVar[str] = ContextVar("websearch_request_id", default="-")
_REQUEST_ID_RE = re.compile(r"^[A-Za-z0-9._:-]{1,64}$")
#: Routes with their own metric label; anything else is "other" (bounded label values).
ROUTES = ("/mcp", "/search", "/metrics", "/readyz", "/healthz", "/status", "/status.json")
#: Routes whose requests are not counted as in flight and are logged at debug when they succeed
#: (probes, a balancer's readiness checks, scrapes, the status page's refreshes).
QUIET_ROUTES = frozenset({"/healthz", "/readyz", "/metrics", "/status", "/status.json"})
#: The status logged and counted for a request whose client went away before it was answered
#: (nginx's "client closed request"): nothing was sent, and the server did not fail.
CLIENT_GONE = 499
#: The HTTP client's loggers: quiet unless the level is debug (see `configure_logging`).
CLIENT_LOGGERS = ("httpx", "httpcore")


def request_id_from(header: str | None) -> str:
    """The caller's `X-Request-Id` when it is a sane token, else a new random one."""
    if header and _REQUEST_ID_RE.match(header):
        return header
    return uuid.uuid4().hex


def route_of(path: str) -> str:
    """The metric label of a path."""
    return path if path in ROUTES else "other"


class Observer:
    """ASGI middleware: request id (`X-Request-Id` in and out), access log, HTTP metrics."""

    def __init__(self, app: ASGIApp, metrics: Metrics) -> None:
        self.app = app
        self.metrics = metrics

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        rid = request_id_from(Headers(scope=scope).get("x-request-id"))
        token = REQUEST_ID.set(rid)
        route = route_of(scope["path"])
        quiet = route in QUIET_ROUTES
        status = 500  # what the server answers when the app raises before starting a response
        answered = gone = False  # a response started; the client disconnected
        started = time.perf_counter()

        async def receive_noting_disconnect() -> Message:
            nonlocal gone
            message = await receive()
            gone = gone or message["type"] == "http.disconnect"
            return message

        async def send_with_id(message: Message) -> None:
            nonlocal status, answered
            if message["type"] == "http.response.start":
                status, answered = message["status"], True
                headers = [*message.get("headers", []), (b"x-request-id", rid.encode())]
                message = {**message, "headers": headers}
            await send(message)

        if not quiet:
            self.metrics.in_flight.inc()
        try:
            await self.app(scope, receive_noting_disconnect, send_with_id)
        finally:
            took = time.perf_counter() - started
            if gone and not answered:
                status = CLIENT_GONE
            if not quiet:
                self.metrics.in_flight.dec()
            self.metrics.count_http(route, status, took)
            peer = (scope.get("client") or ("-",))[0]
            client = scope.get(CLIENT_KEY) or peer
            ACCESS_LOG.log(
                logging.DEBUG if quiet and status < 400 else logging.INFO,
                "%s %s %d %d ms",
                scope["method"],
                scope["path"],
                status,
                int(took * 1000),
                extra={
                    "method": scope["method"],
                    "path": scope["path"],
                    "status": status,
                    "duration_ms": int(took * 1000),
                    "client": client,
                    "address": scope.get(ADDRESS_KEY) or peer,
                },
            )
            REQUEST_ID.reset(token)


# --- logging --------------------------------------------------------------------------------


# Attributes every LogRecord has (and uvicorn's ANSI-coloured copy of the message); anything
# else on a record came through `extra=`.
_STANDARD = frozenset(logging.LogRecord("", 0, "", 0, "", None, None).__dict__) | {
    "message",
    "asctime",
    "request_id",
    "taskName",
    "color_message",
}


def _extras(record: logging.LogRecord) -> dict[str, Any]:
    return {k: v for k, v in record.__dict__.items() if k not in _STANDARD}


class RequestIdFilter(logging.Filter):
    """Stamps the current request id on every record as `request_id`."""

    def filter(self, record: logging.LogRecord) -> bool:
        record.request_id = REQUEST_ID.get()
        return True


class JsonFormatter(logging.Formatter):
    """One JSON object per line: ts, level, logger, message, request_id, extras, exc."""

    def __init__(self, redact: Redactor) -> None:
        super().__init__()
        self.redact = redact

    def format(self, record: logging.LogRecord) -> str:
        data: dict[str, Any] = {
            "ts": datetime.fromtimestamp(record.created, UTC).isoformat(timespec="milliseconds"),
            "level": record.levelname.lower(),
            "logger": record.name,
            "message": self.redact(record.getMessage()),
            "request_id": getattr(record, "request_id", REQUEST_ID.get()),
        }
        for key, value in _extras(record).items():
            data[key] = self._clean(value)
        if record.exc_info:
            data["exc"] = self.redact(self.formatException(record.exc_info))
        return json.dumps(data, ensure_ascii=False, default=str)

    def _clean(self, value: Any) -> Any:
        if isinstance(value, str):
            return self.redact(value)
        if isinstance(value, bool | int | float) or value is None:
            return value
        return json.loads(self.redact(json.dumps(value, ensure_ascii=False, default=str)))


#: Line breaks, terminal escapes and other control characters, which a request's path or an
#: engine's error text may hold: written as escapes, they can neither start a forged line nor
#: recolour or clear the operator's terminal.
_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f\u2028\u2029]")


def _escaped(match: re.Match[str]) -> str:
    return match.group().encode("unicode_escape").decode("ascii")


class TextFormatter(logging.Formatter):
    """`time level logger [request id] message key=value ...` on one line, secrets replaced;
    a traceback follows on lines of its own."""

    def __init__(self, redact: Redactor) -> None:
        super().__init__("%(asctime)s %(levelname)s %(name)s [%(request_id)s] %(message)s")
        self.redact = redact

    def format(self, record: logging.LogRecord) -> str:
        if not hasattr(record, "request_id"):
            record.request_id = REQUEST_ID.get()
        return self.redact(super().format(record))

    def formatMessage(self, record: logging.LogRecord) -> str:
        line = super().formatMessage(record)
        extras = " ".join(f"{k}={v}" for k, v in _extras(record).items())
        # Secrets go before escaping: a secret holding a control character is still found.
        return _CONTROL.sub(_escaped, self.redact(f"{line} {extras}" if extras else line))


def configure_logging(
    log_format: str = "text",
    level: str = "info",
    secrets: Iterable[str] = (),
    stream: TextIO | None = None,
) -> logging.Handler:
    """Send every log record to `stream` (stderr) in `log_format`, with request ids and secrets
    redacted. Replaces the handler a previous call installed; returns the new one."""
    redact = Redactor(secrets)
    handler = logging.StreamHandler(stream or sys.stderr)
    handler.addFilter(RequestIdFilter())
    handler.setFormatter(JsonFormatter(redact) if log_format == "json" else TextFormatter(redact))
    handler.websearch_mcp = True  # type: ignore[attr-defined]
    root = logging.getLogger()
    for old in [h for h in root.handlers if getattr(h, "websearch_mcp", False)]:
        root.removeHandler(old)
    root.addHandler(handler)
    root.setLevel(level.upper())
    # httpx logs every engine request's URL at INFO: the query text, eight lines per search.
    # Engine outcomes are in the tool log and the metrics; the URLs only when debugging.
    quiet = logging.NOTSET if level.lower() == "debug" else logging.WARNING
    for name in CLIENT_LOGGERS:
        logging.getLogger(name).setLevel(quiet)
    return handler
