"""The status report as a table for a terminal (`websearch-mcp status`): a pure function."""

from __future__ import annotations

from typing import Any

from websearch_mcp.server.rendering import printable
from websearch_mcp.server.status.page import percent, state_text


def _cell(value: Any, unit: str = "") -> str:
    return "-" if value is None else f"{value}{unit}"


def render_table(report: dict[str, Any]) -> str:
    """One line per engine (state now and the last hour), then the service's figures."""
    heads = ("engine", "state", "calls", "success", "res/call", "p50", "p95", "keys", "last error")
    lines = [heads]
    for row in report["engines"]:
        hour, keys, error = row["hour"], row["keys"], row.get("last_error")
        lines.append(
            (
                row["name"],
                state_text(row),
                str(hour["calls"]),
                percent(hour["answered"], hour["calls"], "-"),
                _cell(hour["results_per_call"]),
                _cell(hour["latency_p50_ms"], " ms"),
                _cell(hour["latency_p95_ms"], " ms"),
                f"{keys['configured']} ({keys['resting']} resting)" if keys["configured"] else "-",
                f"{error['text'][:60]} ({error['at']})" if error else "",
            )
        )
    widths = [max(len(line[i]) for line in lines) for i in range(len(heads))]
    text = [
        "  ".join(cell.ljust(w) for cell, w in zip(line, widths, strict=True)).rstrip()
        for line in lines
    ]
    service = report["service"]
    cache = service["cache"]
    # .get: a server of an earlier release does not say.
    ended = f" ({service['workers']['ended']} ended)" if service["workers"].get("ended") else ""
    text += [
        "",
        f"websearch-mcp {service['version']} on {service['replica']}, up"
        f" {service['uptime_seconds']} s, {service['workers']['reporting']} worker(s){ended};"
        f" {service['searches_per_minute']} searches/min",
        f"cache {cache['backend']}: hit share"
        f" {percent(cache['hits'], cache['hits'] + cache['misses'], '-')};"
        f" single-flight joins {service['single_flight_joins']};"
        f" served on {service['exposure']['address']}"
        f" ({'tokens required' if service['exposure']['tokens_required'] else 'no tokens'})",
    ]
    # A line break in an error text is shown as `?` too: each engine keeps its one line.
    return "\n".join(printable(line) for line in text)
