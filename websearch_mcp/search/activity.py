"""The last hour of each engine's calls, in per-minute buckets, for the status page.

`Activity` is fed one report per engine call (by the orchestrator) and one mark per search (by
the service). It keeps at most `MINUTES` + 1 minutes, each a few counters per engine and a
latency histogram on fixed bounds, so that it stays small however busy the server is, and so
that the buckets of several processes add up (`merge`). Minutes are wall-clock minutes since
the epoch, which every worker and replica agrees on. What it keeps of an error is the report's
text (secrets already removed by the engine call) with the query's text taken out.
"""

from __future__ import annotations

import bisect
import json
import time
from collections.abc import Callable, Iterable, Mapping
from typing import Any

from websearch_mcp.engines.text import clean_text
from websearch_mcp.models import EngineReport
from websearch_mcp.redaction import without_query

#: Minutes of history kept and shown.
MINUTES = 60
#: Upper bounds of the latency histogram (milliseconds): each a quarter above the one before,
#: so that a percentile read from it is within a quarter of the true one, up to 147 s: past the
#: longest call, one cut off at the longest deadline (`search.deadline_seconds`, 120 s).
LATENCY_BOUNDS_MS: tuple[int, ...] = tuple(round(10 * 1.25**i) for i in range(44))
#: Statuses of an engine that answered (what the success share counts).
ANSWERED = frozenset({"ok", "empty", "irrelevant"})
#: Longest error text kept.
MAX_ERROR_CHARS = 200
#: What the query's text is replaced with in a kept error.
QUERY_MASK = "<query>"

#: A minute of one engine: `statuses` (status -> calls), `results`, `latency` (bucket -> count).
EngineMinute = dict[str, Any]
#: A JSON-able copy of an `Activity` (see `Activity.snapshot`).
Snapshot = dict[str, Any]


def latency_bucket(ms: int) -> int:
    """The histogram bucket of a latency: the first bound at or above it (the last: beyond)."""
    return bisect.bisect_left(LATENCY_BOUNDS_MS, ms)


def without_quoted_query(text: str, query: str, mask: str) -> str:
    """`without_query`, the query also as the engines' reading of an error's text leaves it
    (`clean_text`: tags stripped, spaces collapsed), of the query as typed or quoted in JSON (an
    error object written out)."""
    quoted = json.dumps(query, ensure_ascii=False)[1:-1]
    cleaned = clean_text(query, len(query) + 1)
    also = (
        cleaned,
        clean_text(quoted, len(quoted) + 1),
        json.dumps(cleaned, ensure_ascii=False)[1:-1],
    )
    return without_query(text, query, mask, also=also)


def clean_error(text: str, query: str) -> str:
    """An error text to keep: without the query's text (`without_quoted_query`), and not too
    long."""
    text = without_quoted_query(text, query, QUERY_MASK)
    return text if len(text) <= MAX_ERROR_CHARS else text[: MAX_ERROR_CHARS - 1] + "…"


class Activity:
    """The last hour of engine calls and searches in this process (see the module's top)."""

    def __init__(self, clock: Callable[[], float] = time.time) -> None:
        self._clock = clock
        self.engines: dict[int, dict[str, EngineMinute]] = {}  # minute -> engine -> counters
        self.searches: dict[int, int] = {}  # minute -> searches
        #: engine -> [when, status, text] of its latest failure.
        self.last_errors: dict[str, list[Any]] = {}

    def _minute(self) -> int:
        minute = int(self._clock() // 60)
        oldest = minute - MINUTES
        if self.engines and min(self.engines) <= oldest:
            self.engines = {m: e for m, e in self.engines.items() if m > oldest}
        if self.searches and min(self.searches) <= oldest:
            self.searches = {m: n for m, n in self.searches.items() if m > oldest}
        return minute

    def searched(self) -> None:
        """Count one search (cached or not)."""
        minute = self._minute()
        self.searches[minute] = self.searches.get(minute, 0) + 1

    def record(self, report: EngineReport, query: str, *, asked: bool = True) -> None:
        """Count one engine call as its report tells it; one where no request was sent (breaker
        open, every key resting, no slot of its rate limit) counts as `skipped`."""
        minute = self._minute()
        counters = self.engines.setdefault(minute, {}).setdefault(
            report.name, {"statuses": {}, "results": 0, "latency": {}}
        )
        status = report.status if asked else "skipped"
        statuses = counters["statuses"]
        statuses[status] = statuses.get(status, 0) + 1
        if status == "skipped":
            return
        counters["results"] += report.results
        if report.latency_ms is not None:
            bucket = str(latency_bucket(report.latency_ms))
            counters["latency"][bucket] = counters["latency"].get(bucket, 0) + 1
        if report.status not in ANSWERED:
            text = clean_error(report.error or report.status, query)
            self.last_errors[report.name] = [self._clock(), report.status, text]

    def snapshot(self) -> Snapshot:
        """Everything kept, as plain JSON-able data (minutes as text keys)."""
        self._minute()
        return {
            "engines": {str(m): e for m, e in self.engines.items()},
            "searches": {str(m): n for m, n in self.searches.items()},
            "last_errors": dict(self.last_errors),
        }


def merge(snapshots: Iterable[Snapshot]) -> Snapshot:
    """Several processes' snapshots as one: counts added, the latest error of each engine."""
    engines: dict[str, dict[str, EngineMinute]] = {}
    searches: dict[str, int] = {}
    errors: dict[str, list[Any]] = {}
    for snap in snapshots:
        for minute, by_engine in snap.get("engines", {}).items():
            for name, counters in by_engine.items():
                into = engines.setdefault(minute, {}).setdefault(
                    name, {"statuses": {}, "results": 0, "latency": {}}
                )
                _add(into["statuses"], counters["statuses"])
                _add(into["latency"], counters["latency"])
                into["results"] += counters["results"]
        _add(searches, snap.get("searches", {}))
        for name, error in snap.get("last_errors", {}).items():
            if name not in errors or error[0] > errors[name][0]:
                errors[name] = error
    return {"engines": engines, "searches": searches, "last_errors": errors}


def _add(into: dict[str, int], counts: Mapping[str, int]) -> None:
    for key, count in counts.items():
        into[key] = into.get(key, 0) + count


def percentile(histogram: Mapping[int, int], share: float) -> int | None:
    """The latency (ms) under which `share` of the calls of `histogram` (bucket -> count) fell,
    read as the bound of its bucket; None without calls."""
    total = sum(histogram.values())
    if not total:
        return None
    seen = 0
    for bucket in sorted(histogram):
        seen += histogram[bucket]
        if seen >= share * total:
            break
    return LATENCY_BOUNDS_MS[min(bucket, len(LATENCY_BOUNDS_MS) - 1)]


def _answered(statuses: Mapping[str, int]) -> int:
    return sum(n for status, n in statuses.items() if status in ANSWERED)


def _calls(statuses: Mapping[str, int]) -> int:
    return sum(n for status, n in statuses.items() if status != "skipped")


def hour_figures(merged: Snapshot, engine: str, now: float) -> dict[str, Any]:
    """One engine's last hour from a (merged) snapshot: totals, percentiles and, per minute
    from the oldest to the current one, the success share and the median latency (None in a
    minute without calls)."""
    current = int(now // 60)
    statuses: dict[str, int] = {}
    latency: dict[str, int] = {}
    results = 0
    success: list[float | None] = []
    median: list[int | None] = []
    for minute in range(current - MINUTES + 1, current + 1):
        counters = merged["engines"].get(str(minute), {}).get(engine)
        if counters is None:
            success.append(None)
            median.append(None)
            continue
        _add(statuses, counters["statuses"])
        _add(latency, counters["latency"])
        results += counters["results"]
        calls = _calls(counters["statuses"])
        success.append(_answered(counters["statuses"]) / calls if calls else None)
        median.append(percentile(_buckets(counters["latency"]), 0.5))
    calls = _calls(statuses)
    buckets = _buckets(latency)
    return {
        "calls": calls,
        "answered": _answered(statuses),
        "skipped": statuses.get("skipped", 0),
        "statuses": dict(sorted(statuses.items())),
        # Not rounded: 1,999 of 2,000 is no 1.0.
        "success_share": _answered(statuses) / calls if calls else None,
        "results_per_call": round(results / calls, 2) if calls else None,
        "latency_p50_ms": percentile(buckets, 0.5),
        "latency_p95_ms": percentile(buckets, 0.95),
        "minutes": {"success_share": success, "latency_p50_ms": median},
    }


def last_error(merged: Snapshot, engine: str, now: float) -> list[Any] | None:
    """An engine's latest failure (`[when, status, text]`) from a (merged) snapshot when it fell
    in the hour's minutes, else None: the latest one is kept however old it is."""
    error: list[Any] | None = merged["last_errors"].get(engine)
    return error if error and int(error[0] // 60) > int(now // 60) - MINUTES else None


def _buckets(latency: Mapping[str, int]) -> dict[int, int]:
    return {int(bucket): count for bucket, count in latency.items()}


def searches_per_minute(merged: Snapshot, now: float, span_minutes: float = MINUTES) -> float:
    """Searches in the last `MINUTES` minutes, per minute of `span_minutes` (less than an hour
    when the server started since)."""
    oldest = int(now // 60) - MINUTES
    total = sum(n for minute, n in merged["searches"].items() if int(minute) > oldest)
    return round(total / max(1.0, min(span_minutes, MINUTES)), 2)
