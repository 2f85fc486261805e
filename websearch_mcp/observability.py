"""Prometheus metrics, a request id per request, and logs (text or JSON) that never hold a secret.

`Metrics` keeps its own registry (one per app), fed by `Observer` (every HTTP request), by
`Metrics.track` (every tool call and `/search`, with the per-engine reports of its answer) and,
at scrape time, by the cache's counters and the circuit breakers' states when those exist.
`configure_logging` installs one root handler whose formatter stamps the request id on every
record and replaces every configured secret (tokens, API keys, passwords) with `***`.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import re
import sys
import time
import uuid
from collections.abc import Awaitable, Callable, Iterable, Iterator, Mapping
from contextvars import ContextVar
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any, TextIO
from urllib.parse import quote, quote_plus, unquote, urlsplit

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram, generate_latest
from prometheus_client.multiprocess import MultiProcessCollector, mark_process_dead
from starlette.datastructures import Headers
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from websearch_mcp.errors import ToolInputError
from websearch_mcp.fetch.errors import FetchError, FetchRefused
from websearch_mcp.security import CLIENT_KEY
from websearch_mcp.service import SearchFailed
from websearch_mcp.workers import PROMETHEUS_ENV

if TYPE_CHECKING:
    from websearch_mcp.config import Settings

ACCESS_LOG = logging.getLogger("websearch_mcp.access")
TOOL_LOG = logging.getLogger("websearch_mcp.tool")

#: The current request's id ("-" outside a request); asyncio tasks started by it inherit it.
REQUEST_ID: ContextVar[str] = ContextVar("websearch_request_id", default="-")
_REQUEST_ID_RE = re.compile(r"^[A-Za-z0-9._:-]{1,64}$")
#: Routes with their own metric label; anything else is "other" (bounded label values).
ROUTES = ("/mcp", "/search", "/metrics", "/readyz", "/healthz")
#: Routes whose requests are not counted as in flight (probes and scrapes).
QUIET_ROUTES = frozenset({"/healthz", "/metrics"})
LATENCY_BUCKETS = (0.05, 0.1, 0.25, 0.5, 1.0, 2.0, 4.0, 8.0, 16.0, 32.0)
#: The HTTP client's loggers: quiet unless the level is debug (see `configure_logging`).
CLIENT_LOGGERS = ("httpx", "httpcore")


#: An async function giving each engine's breaker state: engine -> True while open.
BreakerSource = Callable[[], Awaitable[Mapping[str, bool]]]


def request_id_from(header: str | None) -> str:
    """The caller's `X-Request-Id` when it is a sane token, else a new random one."""
    if header and _REQUEST_ID_RE.match(header):
        return header
    return uuid.uuid4().hex


# --- metrics --------------------------------------------------------------------------------


@dataclass(slots=True)
class ToolRecord:
    """Filled in by the caller inside `Metrics.track`: the answer, or an explicit outcome."""

    answer: dict[str, Any] | None = None
    outcome: str | None = None


class _CacheCounters:
    """The cache object's own counters as Prometheus counters, brought up to date by `sync`.

    Counted by the cache in this process and added here as differences, so that in a
    multi-process server each worker's counts add up like every other counter's.
    """

    _TEXTS = (
        ("hits", "cache lookups that found an entry"),
        ("misses", "cache lookups that found nothing (or failed)"),
        ("sets", "entries stored"),
        ("bypassed", "calls skipped while a cache failure is waited out"),
    )

    def __init__(self, cache: Any, registry: CollectorRegistry) -> None:
        self.cache = cache
        self.counters = {
            name: Counter(f"websearch_cache_{name}", text, registry=registry)
            for name, text in self._TEXTS
        }
        self.errors = Counter(
            "websearch_cache_errors",
            "failed cache operations by cause",
            ["cause"],
            registry=registry,
        )
        self._seen: dict[str, int] = {}

    def sync(self) -> None:
        stats = self.cache.stats
        for name, counter in self.counters.items():
            self._add(name, getattr(stats, name), counter)
        for cause, count in list(stats.errors.items()):
            self._add(f"errors:{cause}", count, self.errors.labels(cause))

    def _add(self, key: str, value: int, counter: Any) -> None:
        delta = value - self._seen.get(key, 0)
        if delta > 0:
            counter.inc(delta)
            self._seen[key] = value


def _report_dict(report: Any) -> dict[str, Any]:
    return report.to_dict() if hasattr(report, "to_dict") else dict(report)


class Metrics:
    """Every metric of one app, in its own registry (`render()` is the `/metrics` body)."""

    def __init__(self) -> None:
        # Set by the parent of a multi-process server before the workers start: every worker
        # then writes its values there and `/metrics` from any worker adds them all up.
        self.shared_dir = os.environ.get(PROMETHEUS_ENV) or None
        self.registry = CollectorRegistry()
        r = self.registry
        self.tool_requests = Counter(
            "websearch_tool_requests",
            "tool calls by tool, interface (mcp or searxng) and outcome",
            ["tool", "interface", "outcome"],
            registry=r,
        )
        self.engine_calls = Counter(
            "websearch_engine_calls",
            "engine calls by engine and status (ok, empty, error, timeout, blocked, ...)",
            ["engine", "status"],
            registry=r,
        )
        self.engine_latency = Histogram(
            "websearch_engine_latency_seconds",
            "time an engine took to answer (or to fail)",
            ["engine"],
            buckets=LATENCY_BUCKETS,
            registry=r,
        )
        self.http_requests = Counter(
            "websearch_http_requests",
            "HTTP requests by route and status",
            ["route", "status"],
            registry=r,
        )
        self.http_latency = Histogram(
            "websearch_http_request_duration_seconds",
            "HTTP request duration by route",
            ["route"],
            buckets=LATENCY_BUCKETS,
            registry=r,
        )
        self.rejections = Counter(
            "websearch_http_rejections",
            "requests refused before any work (unauthorized, origin, host, too_large,"
            " rate_limited, client_busy, overloaded)",
            ["reason"],
            registry=r,
        )
        self.in_flight = Gauge(
            "websearch_in_flight_requests",
            "HTTP requests being served now",
            registry=r,
            multiprocess_mode="livesum",
        )
        self.breaker_open = Gauge(
            "websearch_breaker_open",
            "1 while an engine's circuit breaker is open (the engine is skipped), else 0",
            ["engine"],
            registry=r,
            # Breakers are shared by the workers: the latest worker to look is right.
            multiprocess_mode="mostrecent",
        )
        self.stale_retries = Counter(
            "websearch_engine_stale_retries",
            "engine requests sent again because a kept-alive connection had been closed",
            ["engine"],
            registry=r,
        )
        self._retry_source: Mapping[str, int] = {}
        self._retries_seen: dict[str, int] = {}
        self._cache: _CacheCounters | None = None
        self._breaker_source: BreakerSource | None = None

    def reject(self, reason: str) -> None:
        """Count a request refused by the guard."""
        self.rejections.labels(reason).inc()

    def watch_cache(self, cache: Any) -> None:
        """Export `cache.stats` (hits, misses, sets, bypassed, errors by cause) at every scrape."""
        self._cache = _CacheCounters(cache, self.registry)

    def watch_breakers(self, source: BreakerSource) -> None:
        """Export breaker states at every scrape: `await source()` maps engine -> is it open."""
        self._breaker_source = source

    def watch_retries(self, counts: Mapping[str, int]) -> None:
        """Export `counts` (engine -> stale-connection retries, kept by the orchestrator)."""
        self._retry_source = counts

    def _sync(self) -> None:
        """Bring the counters kept elsewhere in this process up to date (as differences, so that
        the workers of a multi-process server add up)."""
        if self._cache is not None:
            self._cache.sync()
        for engine, count in list(self._retry_source.items()):
            delta = count - self._retries_seen.get(engine, 0)
            if delta > 0:
                self.stale_retries.labels(engine).inc(delta)
                self._retries_seen[engine] = count

    async def refresh(self) -> None:
        """Read the states that live outside this process's memory (call before `render`)."""
        self._sync()
        if self._breaker_source is not None:
            for engine, is_open in (await self._breaker_source()).items():
                self.breaker_open.labels(engine).set(1 if is_open else 0)

    def record_engines(self, reports: Iterable[Any]) -> None:
        """Count each engine's call by status and observe its latency (skipped engines: count)."""
        for report in map(_report_dict, reports):
            self.engine_calls.labels(report["name"], report["status"]).inc()
            latency = report.get("latency_ms")
            if latency is not None and report["status"] != "skipped":
                self.engine_latency.labels(report["name"]).observe(latency / 1000)

    @contextlib.contextmanager
    def track(self, tool: str, interface: str) -> Iterator[ToolRecord]:
        """Measure one tool call: set `record.answer` (or `record.outcome`) inside the block.

        Outcomes: ok, partial, cached, failed (no engine answered, or the page could not be
        read), refused (a page refused by policy), invalid (bad input), error (anything
        unexpected) or what the block set. Engines are counted from the answer's reports unless
        it came from the cache.
        """
        record = ToolRecord()
        started = time.perf_counter()
        outcome = "error"
        reports: list[Any] = []
        try:
            yield record
        except FetchError as err:
            outcome = "refused" if isinstance(err, FetchRefused) else "failed"
            raise
        except ToolInputError:
            outcome = "invalid"
            raise
        except SearchFailed as err:
            outcome, reports = "failed", list(err.reports)
            raise
        else:
            answer = record.answer
            if record.outcome is not None:
                outcome = record.outcome
            elif answer is not None:
                cached = bool(answer.get("cached"))
                outcome = "cached" if cached else "partial" if answer.get("partial") else "ok"
                reports = [] if cached else list(answer.get("engines", []))
        finally:
            self.tool_requests.labels(tool, interface, outcome).inc()
            self._sync()
            self.record_engines(reports)
            _log_call(tool, interface, outcome, record.answer, reports, started)

    def render(self) -> bytes:
        """The registry in Prometheus' text format (every worker's, summed, when shared)."""
        if self.shared_dir is None:
            return generate_latest(self.registry)
        registry = CollectorRegistry()
        MultiProcessCollector(registry, self.shared_dir)
        return generate_latest(registry)

    def close(self) -> None:
        """This process ends: its live gauges (requests in flight) stop counting."""
        if self.shared_dir is not None:
            mark_process_dead(os.getpid(), self.shared_dir)


def _log_call(
    tool: str,
    interface: str,
    outcome: str,
    answer: dict[str, Any] | None,
    reports: list[Any],
    started: float,
) -> None:
    """One line per tool call: outcome, result count, engine statuses; never the query."""
    extra: dict[str, Any] = {
        "tool": tool,
        "interface": interface,
        "outcome": outcome,
        "duration_ms": int((time.perf_counter() - started) * 1000),
    }
    if answer is not None and "results" in answer:
        extra["results"] = len(answer["results"])
    if reports:
        extra["engines"] = {r["name"]: r["status"] for r in map(_report_dict, reports)}
    TOOL_LOG.info("%s via %s: %s", tool, interface, outcome, extra=extra)


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
        started = time.perf_counter()

        async def send_with_id(message: Message) -> None:
            nonlocal status
            if message["type"] == "http.response.start":
                status = message["status"]
                headers = [*message.get("headers", []), (b"x-request-id", rid.encode())]
                message = {**message, "headers": headers}
            await send(message)

        if not quiet:
            self.metrics.in_flight.inc()
        try:
            await self.app(scope, receive, send_with_id)
        finally:
            took = time.perf_counter() - started
            if not quiet:
                self.metrics.in_flight.dec()
            self.metrics.http_requests.labels(route, str(status)).inc()
            self.metrics.http_latency.labels(route).observe(took)
            client = scope.get(CLIENT_KEY) or (scope.get("client") or ("-",))[0]
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
                },
            )
            REQUEST_ID.reset(token)


# --- logging --------------------------------------------------------------------------------


#: Parts of a combined credential shorter than this are not redacted on their own (they would
#: match ordinary words); the whole entry still is.
MIN_SECRET_PART = 8


def secrets_of(settings: Settings) -> tuple[str, ...]:
    """Every secret in `settings` in every form it is sent in: bearer tokens, API keys (and each
    half of a combined `<cx>:<key>` entry), passwords inside URLs, each also percent-encoded as
    it appears in a request URL."""
    found: list[str] = [*settings.server.auth_tokens]
    for engine in settings.engines.values():
        for key in engine.api_keys:
            found.append(key)
            parts = [*key.split(":"), *key.rpartition(":")[::2]]
            found.extend(part for part in parts if len(part) >= MIN_SECRET_PART)
    for value in (settings.llm.api_key, settings.fetch.reader_api_key):
        if value:
            found.append(value)
    proxies = [e.proxy for e in settings.engines.values() if isinstance(e.proxy, str)]
    for url in (settings.cache.redis_url, settings.proxy.url, *proxies):
        password = urlsplit(url).password if url else None
        if password:
            found.extend((password, unquote(password)))
    forms = {form for secret in found if secret for form in _encodings(secret)}
    return tuple(sorted(forms, key=len, reverse=True))


def _encodings(secret: str) -> set[str]:
    """`secret` as written and as URL encoders write it (query strings, form bodies)."""
    return {secret, quote(secret, safe=""), quote(secret), quote_plus(secret), quote(secret, "~")}


class Redactor:
    """Replaces each known secret with `***` (longest first, so none is left half-shown)."""

    def __init__(self, secrets: Iterable[str]) -> None:
        self.secrets = tuple(sorted({s for s in secrets if s}, key=len, reverse=True))

    def __call__(self, text: str) -> str:
        for secret in self.secrets:
            if secret in text:
                text = text.replace(secret, "***")
        return text


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


class TextFormatter(logging.Formatter):
    """`time level logger [request id] message key=value ...`, secrets replaced."""

    def __init__(self, redact: Redactor) -> None:
        super().__init__("%(asctime)s %(levelname)s %(name)s [%(request_id)s] %(message)s")
        self.redact = redact

    def format(self, record: logging.LogRecord) -> str:
        if not hasattr(record, "request_id"):
            record.request_id = REQUEST_ID.get()
        text = super().format(record)
        extras = " ".join(f"{k}={v}" for k, v in _extras(record).items())
        return self.redact(f"{text} {extras}" if extras else text)


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
