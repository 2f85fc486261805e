"""The status report as one self-contained HTML page: pure functions of the report.

No script, no external style, font or image: the styles are inline, the sparklines are inline
SVG, and the page asks the browser to load it again every `REFRESH_SECONDS`. Narrow screens get
one card per engine instead of a table row; disabled engines are named in one line below the
table. Every text is escaped.
"""

from __future__ import annotations

import math
from html import escape
from typing import Any

from websearch_mcp.net.cooldowns.store import format_seconds

REFRESH_SECONDS = 30
#: The page allows nothing from outside itself (sent as the response's CSP).
CONTENT_SECURITY_POLICY = "default-src 'none'; style-src 'unsafe-inline'; img-src data:"

#: Each state's label and colour class.
STATES = {
    "ok": ("ok", "good"),
    "rate_limited": ("rate limited", "warn"),
    "blocked": ("blocked", "bad"),
    "breaker_open": ("breaker open", "bad"),
    "half_open": ("half-open", "warn"),
    "keys_refused": ("keys refused", "bad"),
    "no_key": ("no key", "off"),
    "no_proxy": ("no proxy", "off"),
    "disabled": ("disabled", "off"),
}

_STYLE = """
body{font:15px/1.4 system-ui,sans-serif;margin:0;padding:1rem;color:#1d2230;background:#f6f7f9}
h1{font-size:1.3rem;margin:0 0 .2rem}h2{font-size:1.05rem;margin:1.2rem 0 .4rem}
.sub{color:#5b6275;margin:0 0 1rem}table{border-collapse:collapse;width:100%;background:#fff}
th,td{padding:.4rem .5rem;border-bottom:1px solid #e3e6ec;text-align:left;vertical-align:top}
th{font-size:.8rem;color:#5b6275;font-weight:600}td.n{text-align:right;white-space:nowrap}
.state{display:inline-block;padding:.1rem .5rem;border-radius:1rem;font-weight:600;
white-space:nowrap}.good{background:#d9f2e1;color:#14532d}.warn{background:#fdecc8;color:#7a4a00}
.bad{background:#fbd5d5;color:#7f1d1d}.off{background:#e5e7eb;color:#374151}
.err{font-size:.85rem;color:#5b6275;max-width:22rem;overflow-wrap:anywhere}
dl{display:grid;grid-template-columns:max-content 1fr;gap:.2rem 1rem;background:#fff;
padding:.6rem;margin:0}dt{color:#5b6275}dd{margin:0}svg{display:block}
@media (max-width:700px){thead{display:none}table,tbody,tr,td{display:block;width:auto}
tr{margin:0 0 .8rem;border:1px solid #e3e6ec;background:#fff}td{border:0;padding:.2rem .6rem}
td.n{display:inline-block;text-align:left}
td[data-label]::before{content:attr(data-label) ": ";color:#5b6275}}
"""


def _number(value: Any, unit: str = "") -> str:
    if value is None:
        return "–"
    return f"{value:g}{unit}" if isinstance(value, float) else f"{value}{unit}"


def _workers(workers: dict[str, int]) -> str:
    text = f"{workers['reporting']} reporting of {workers['configured']}"
    ended = workers["ended"]
    return f"{text} ({ended} ended within the hour)" if ended else text


def percent(part: int, whole: int, none: str = "–") -> str:
    """`part` of `whole` as a whole percent; to a tenth where the whole one would read as all
    or none while it is not (1 failure in 400 calls is 99.7%, never 100%)."""
    if not whole:
        return none
    share = part / whole * 100
    if 0 < part < whole and round(share) in (0, 100):
        tenths = math.floor(share * 10) if part * 2 > whole else math.ceil(share * 10)
        return f"{tenths / 10:.1f}%"
    return f"{share:.0f}%"


def state_text(row: dict[str, Any]) -> str:
    """A row's state for people: `rate limited, 42 s left`."""
    label = STATES.get(row["state"], (row["state"], "off"))[0]
    left = row.get("seconds_left")
    if left and row["state"] in ("rate_limited", "blocked", "breaker_open", "keys_refused"):
        return f"{label}, {format_seconds(left)} left"
    return label


def _y(value: float, top: float, height: int) -> float:
    return height - 1 - (value / top) * (height - 2)


def sparkline(minutes: dict[str, list[Any]], width: int = 120, height: int = 28) -> str:
    """The hour as an SVG: per minute with calls, a bar (green: the share that answered, red:
    the rest) and a blue dot at its median latency (0 to the hour's highest, joined by a line)."""
    success = minutes["success_share"]
    latency = minutes["latency_p50_ms"]
    step = width / len(success)
    parts = []
    for i, share in enumerate(success):
        if share is None:
            continue
        x, good = i * step, share * height
        parts.append(
            f'<rect x="{x:.1f}" y="0" width="{step:.1f}" height="{height - good:.1f}"'
            f' fill="#f8b4b4"/><rect x="{x:.1f}" y="{height - good:.1f}" width="{step:.1f}"'
            f' height="{good:.1f}" fill="#86d69f"/>'
        )
    top = max((v for v in latency if v is not None), default=0) or 1
    dots = [((i + 0.5) * step, _y(v, top, height)) for i, v in enumerate(latency) if v is not None]
    if len(dots) > 1:
        points = " ".join(f"{x:.1f},{y:.1f}" for x, y in dots)
        parts.append(f'<polyline fill="none" stroke="#2563eb" points="{points}"/>')
    parts += [f'<circle cx="{x:.1f}" cy="{y:.1f}" r="1.5" fill="#2563eb"/>' for x, y in dots]
    label = "per minute over the last hour: share of calls answered, and median latency"
    return (
        f'<svg width="{width}" height="{height}" viewBox="0 0 {width} {height}" role="img"'
        f' aria-label="{label}"><rect width="{width}" height="{height}" fill="#f1f3f6"/>'
        f"{''.join(parts)}</svg>"
    )


def _cell(label: str, html: str, cls: str) -> str:
    attr = f' class="{cls}"' if cls else ""
    return f'<td data-label="{label}"{attr}>{html}</td>'


def engine_row(row: dict[str, Any]) -> str:
    hour = row["hour"]
    css = STATES.get(row["state"], ("", "off"))[1]
    error = row.get("last_error")
    error_html = (
        f'{escape(error["text"])} <span class="sub">({escape(error["at"])})</span>' if error else ""
    )
    keys = row["keys"]
    key_text = f"{keys['configured']} ({keys['resting']} resting)" if keys["configured"] else "–"
    cells = [
        ("Engine", f"<strong>{escape(row['name'])}</strong>", ""),
        ("State", f'<span class="state {css}">{escape(state_text(row))}</span>', ""),
        ("Calls", _number(hour["calls"]), "n"),
        ("Success", percent(hour["answered"], hour["calls"]), "n"),
        ("Results/call", _number(hour["results_per_call"]), "n"),
        ("p50", _number(hour["latency_p50_ms"], " ms"), "n"),
        ("p95", _number(hour["latency_p95_ms"], " ms"), "n"),
        ("Keys", key_text, "n"),
        ("Hour", sparkline(hour["minutes"]), ""),
        ("Last error", error_html, "err"),
    ]
    tds = "".join(_cell(label, html, cls) for label, html, cls in cells)
    return f'<tr data-engine="{escape(row["name"])}" data-state="{escape(row["state"])}">{tds}</tr>'


def service_section(service: dict[str, Any]) -> str:
    cache = service["cache"]
    exposed = service["exposure"]
    tokens = f"required ({exposed['tokens']} configured)" if exposed["tokens_required"] else "none"
    size = cache["size_bytes"]
    items = [
        ("Version", service["version"]),
        ("Replica", f"{service['replica']} (pid {service['pid']})"),
        ("Up since", f"{service['started_at']} ({format_seconds(service['uptime_seconds'])})"),
        (
            "Workers",
            _workers(service["workers"]),
        ),
        ("Figures", f"this {service['figures']}; breakers and keys: {service['shared_state']}"),
        ("Searches per minute", _number(service["searches_per_minute"])),
        (
            "Cache",
            f"{cache['backend']}; hit share"
            f" {percent(cache['hits'], cache['hits'] + cache['misses'])}"
            f" ({cache['hits']} hits, {cache['misses']} misses)"
            + (f"; {size / 1_048_576:.1f} MiB" if size is not None else ""),
        ),
        ("Single-flight joins", _number(service["single_flight_joins"])),
        ("Page-extraction workers", _number(service["extract_workers"])),
        ("Address", exposed["address"]),
        ("Tokens", tokens),
    ]
    rows = "".join(f"<dt>{escape(k)}</dt><dd>{escape(str(v))}</dd>" for k, v in items)
    return f'<h2>Service</h2><dl id="service">{rows}</dl>'


def render_page(report: dict[str, Any]) -> str:
    """The whole page for `report` (as `status_report` makes it)."""
    rows = "".join(engine_row(row) for row in report["engines"] if row["state"] != "disabled")
    off = [escape(row["name"]) for row in report["engines"] if row["state"] == "disabled"]
    disabled = ", ".join(f'<span data-engine="{n}" data-state="disabled">{n}</span>' for n in off)
    heads = (
        "Engine", "State", "Calls", "Success", "Results/call", "p50", "p95", "Keys", "Hour",
        "Last error",
    )  # fmt: skip
    head = "".join(f"<th>{h}</th>" for h in heads)
    service = report["service"]
    return (
        '<!DOCTYPE html><html lang="en"><head><meta charset="utf-8">'
        f'<meta http-equiv="refresh" content="{REFRESH_SECONDS}">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        f"<title>websearch-mcp status: {escape(service['replica'])}</title>"
        f"<style>{_STYLE}</style></head><body>"
        f"<h1>websearch-mcp on {escape(service['replica'])}</h1>"
        f'<p class="sub">As of {escape(report["generated_at"])}; the last hour per engine;'
        f" refreshed every {REFRESH_SECONDS} s.</p>"
        f'<table id="engines"><thead><tr>{head}</tr></thead><tbody>{rows}</tbody></table>'
        + (f'<p class="sub" id="disabled">Disabled: {disabled}</p>' if disabled else "")
        + f"{service_section(service)}</body></html>"
    )
