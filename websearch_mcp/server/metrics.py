"""Prometheus metrics of one app, and one log line per tool call.

`Metrics` keeps its own registry (one per app), fed by `Observer` (every HTTP request), by
`Metrics.track` (every tool call and `/search`, with the per-engine reports of its answer) and,
at scrape time, by the cache's counters and the circuit breakers' states when those exist.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import logging
import os
import re
import time
from collections.abc import Awaitable, Callable, Collection, Iterable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram, generate_latest
from prometheus_client.metrics import MetricWrapperBase
from prometheus_client.multiprocess import MultiProcessCollector, mark_process_dead

from websearch_mcp.errors import FetchError, FetchRefused, SearchFailed, ToolInputError
from websearch_mcp.runtime import PROMETHEUS_ENV, running

TOOL_LOG = logging.getLogger("websearch_mcp.tool")

LATENCY_BUCKETS = (0.05, 0.1, 0.25, 0.5, 1.0, 2.0, 4.0, 8.0, 16.0, 32.0)

#: An async function giving each engine's breaker state: engine -> True while open.
BreakerSource = Callable[[], Awaitable[Mapping[str, bool]]]

#: Why the guard refuses a request: the `reason` label of `websearch_http_rejections_total`.
REJECTION_REASONS = (
    "unauthorized",
    "auth_throttled",
    "origin",
    "host",
    "too_large",
    "read_timeout",
    "rate_limited",
    "client_busy",
    "overloaded",
)


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


#: Label sets whose child each metric keeps at hand: more than the tools, engines, statuses
#: and routes make.
LABEL_SETS = 1024


def _children(metric: MetricWrapperBase) -> Callable[..., Any]:
    """`metric.labels`, each child made once: `labels()` checks and converts the values and
    takes a lock on every call, and a cache hit makes several. No child is ever removed from these
    metrics, so a kept one stays the one `labels()` gives."""
    return functools.lru_cache(maxsize=LABEL_SETS)(metric.labels)


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
            "requests refused before any work (" + ", ".join(REJECTION_REASONS) + ")",
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
        # Each labelled child made once (see `_children`), for the metrics of every request.
        self._tool_request = _children(self.tool_requests)
        self._engine_call = _children(self.engine_calls)
        self._engine_latency = _children(self.engine_latency)
        self._http_request = _children(self.http_requests)
        self._http_latency = _children(self.http_latency)
        self._retry_source: Mapping[str, int] = {}
        self._retries_seen: dict[str, int] = {}
        self._cache: _CacheCounters | None = None
        self._breaker_source: BreakerSource | None = None

    def count_http(self, route: str, status: int, seconds: float) -> None:
        """Count one HTTP request to `route` answered with `status` after `seconds`."""
        self._http_request(route, str(status)).inc()
        self._http_latency(route).observe(seconds)

    def reject(self, reason: str) -> None:
        """Count a request refused by the guard."""
        self.rejections.labels(reason).inc()

    def watch_cache(self, cache: Any) -> None:
        """Export `cache.stats` (hits, misses, sets, bypassed, errors by cause) at every scrape."""
        self._cache = _CacheCounters(cache, self.registry)

    def watch_breakers(self, source: BreakerSource) -> None:
        """Export breaker states at every scrape: `await source()` maps engine -> is it open."""
        self._breaker_source = source

    def watch_engines(self, service: Any) -> None:
        """Count engine calls as `service` reports them: once per fresh search, however many
        requests shared it (single-flight), and never for an answer from the cache."""
        service.on_engine_reports = self.record_engines

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

    def totals(self, *names: str) -> dict[str, float]:
        """The totals of unlabelled counters `names` (every worker's, when shared), after
        bringing this process's counts up to date."""
        self._sync()
        registry = self.registry
        if self.shared_dir is not None:
            registry = CollectorRegistry()
            MultiProcessCollector(registry, self.shared_dir)
        return {name: registry.get_sample_value(f"{name}_total") or 0.0 for name in names}

    def record_engines(self, reports: Iterable[Any], unasked: Collection[str] = ()) -> None:
        """Count each engine's call by status and observe its latency. An engine sent nothing
        (`unasked`: every key resting, no slot of its rate limit, its breaker open) counts as
        `skipped`, whatever its report says, as the status page counts it."""
        for report in map(_report_dict, reports):
            status = "skipped" if report["name"] in unasked else report["status"]
            self._engine_call(report["name"], status).inc()
            latency = report.get("latency_ms")
            if latency is not None and status != "skipped":
                self._engine_latency(report["name"]).observe(latency / 1000)

    @contextlib.contextmanager
    def track(self, tool: str, interface: str) -> Iterator[ToolRecord]:
        """Measure one tool call: set `record.answer` (or `record.outcome`) inside the block.

        Outcomes: ok, partial, cached, failed (no engine answered, or the page could not be
        read), refused (a page refused by policy), invalid (bad input), cancelled (the client
        cancelled the call or went away, or the service is stopping), error (anything
        unexpected) or what the block set. The log line names the engines of the answer (unless
        it came from the cache); their calls are counted where they are made (`watch_engines`).
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
        except asyncio.CancelledError:
            outcome = "cancelled"
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
            self._tool_request(tool, interface, outcome).inc()
            self._sync()
            _log_call(tool, interface, outcome, record.answer, reports, started)

    def render(self) -> bytes:
        """The registry in Prometheus' text format (every worker's, summed, when shared)."""
        if self.shared_dir is None:
            return generate_latest(self.registry)
        forget_dead_workers(self.shared_dir)
        registry = CollectorRegistry()
        MultiProcessCollector(registry, self.shared_dir)
        return generate_latest(registry)

    def close(self) -> None:
        """This process ends: its live gauges (requests in flight) stop counting."""
        if self.shared_dir is not None:
            mark_process_dead(os.getpid(), self.shared_dir)


_LIVE_GAUGE_FILE = re.compile(r"gauge_live\w*?_(\d+)\.db")


def forget_dead_workers(shared_dir: str) -> None:
    """Drop the live gauges (requests in flight) of workers that died without saying so (killed,
    crashed): the supervisor starts another, and the dead one's count would stay forever."""
    for path in Path(shared_dir).glob("gauge_live*.db"):
        match = _LIVE_GAUGE_FILE.fullmatch(path.name)
        if match is None:
            continue
        pid = int(match.group(1))
        if not running(pid):
            mark_process_dead(pid, shared_dir)


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
