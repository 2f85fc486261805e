"""Everything `/status` and `/status.json` show, gathered from the running service.

Each engine's state now comes from where the engine calls read it (its breaker and key pool, in
the cooldown store the workers or replicas share); its last hour from the `Activity` of this
process, or of every worker of this server (`shared`). The service's figures come from the
service, the cache and the metrics (every worker's, when they are shared). Every text of the
report passes `redact` with every configured secret before it leaves; keys and tokens are only
ever counted.
"""

from __future__ import annotations

import os
import socket
import time
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from websearch_mcp import __version__
from websearch_mcp.config import Settings
from websearch_mcp.redaction import redact
from websearch_mcp.runtime import running
from websearch_mcp.search.activity import (
    Snapshot,
    hour_figures,
    last_error,
    merge,
    searches_per_minute,
)
from websearch_mcp.search.engine_call import EngineRun
from websearch_mcp.search.service import SearchService
from websearch_mcp.server.metrics import Metrics
from websearch_mcp.server.middleware.exposure import is_loopback
from websearch_mcp.server.status.shared import read_snapshots
from websearch_mcp.server.workers import worker_count

#: Failure statuses that say why an open breaker is open.
BREAKER_STATES = {"rate_limited": "rate_limited", "blocked": "blocked"}


@dataclass(slots=True)
class StatusSource:
    """What the report is made of: the app's service, settings and metrics, when the process
    started, and the directory where the workers leave their hour (None: one process)."""

    service: SearchService
    settings: Settings
    metrics: Metrics
    started: float
    shared: Path | None = None

    def process(self) -> dict[str, Any]:
        """This process's own counters, as its snapshot carries them to the other workers."""
        return {
            "pid": os.getpid(),
            "started": self.started,
            "single_flight_joins": self.service.single_flight_joins,
        }


def iso(when: float) -> str:
    return datetime.fromtimestamp(when, UTC).isoformat(timespec="seconds").replace("+00:00", "Z")


async def engine_state(source: StatusSource, run: EngineRun, last: list[Any] | None) -> dict:
    """Whether `run` would be asked now, else why not and for how long (seconds)."""
    orchestrator = source.service.orchestrator
    if not run.enabled:
        return {"state": "disabled", "seconds_left": None}
    if orchestrator.left_out(run.name) is not None:
        keyless = run.engine.needs_key and not run.keys
        return {"state": "no_key" if keyless else "no_proxy", "seconds_left": None}
    if run.pool is not None and not await run.pool.usable():
        status, _ = await run.pool.resting()
        state = "rate_limited" if status == "rate_limited" else "keys_refused"
        return {"state": state, "seconds_left": round(await run.pool.recovers_in(), 1)}
    opened = await run.breaker.state() if run.breaker is not None else None
    if opened is None:
        return {"state": "ok", "seconds_left": None}
    if opened.probing:
        return {"state": "half_open", "seconds_left": 0.0}
    # The latest failure seen is the one that opened it (unless another replica saw it).
    state = BREAKER_STATES.get(last[1], "breaker_open") if last else "breaker_open"
    return {"state": state, "seconds_left": round(opened.seconds_left, 1)}


def shown_engines(source: StatusSource) -> list[EngineRun]:
    """The engines with a row: every enabled one, then every disabled one the configuration
    names."""
    runs = source.service.orchestrator.runs.values()
    named = [run for run in runs if run.enabled or run.name in source.settings.engines]
    return sorted(named, key=lambda run: not run.enabled)


async def engine_rows(source: StatusSource, merged: Snapshot, now: float) -> list[dict]:
    rows = []
    for run in shown_engines(source):
        last = last_error(merged, run.name, now)
        pool = run.pool
        configured = len(pool) if pool is not None else 0
        resting = configured - await pool.usable() if pool is not None else 0
        rows.append(
            {
                "name": run.name,
                "kind": run.engine.kind,
                **await engine_state(source, run, last),
                "keys": {"configured": configured, "resting": resting},
                "last_error": (
                    {"at": iso(last[0]), "status": last[1], "text": last[2]} if last else None
                ),
                "hour": hour_figures(merged, run.name, now),
            }
        )
    return rows


def cache_figures(source: StatusSource) -> dict[str, Any]:
    cache = source.service.cache
    counts = source.metrics.totals("websearch_cache_hits", "websearch_cache_misses")
    hits, misses = int(counts["websearch_cache_hits"]), int(counts["websearch_cache_misses"])
    path = getattr(cache, "path", None)
    size = None
    if isinstance(path, Path):
        files = (path, path.with_name(path.name + "-wal"))
        size = sum(f.stat().st_size for f in files if f.exists())
    return {
        "backend": cache.backend,
        "hits": hits,
        "misses": misses,
        # Not rounded: 9,999 hits of 10,000 lookups is no 1.0.
        "hit_share": hits / (hits + misses) if hits + misses else None,
        "size_bytes": size,
    }


def exposure(settings: Settings, address: Sequence[Any] | None) -> dict[str, Any]:
    server = settings.server
    host, port = (address[0], address[1]) if address else (server.host, server.port)
    return {
        "address": f"[{host}]:{port}" if ":" in str(host) else f"{host}:{port}",
        "loopback": is_loopback(server.host),
        "tokens_required": bool(server.auth_tokens),
        "tokens": len(server.auth_tokens),
        "anonymous_allowed": server.allow_anonymous,
    }


def shared_state(settings: Settings, source: StatusSource) -> str:
    """Where breakers and key rests live: shared by replicas, by workers, or this process's."""
    if settings.cache.backend == "redis" and settings.cache.redis_url:
        return "redis"
    return "sqlite" if source.shared is not None else "memory"


async def status_report(source: StatusSource, address: Sequence[Any] | None = None) -> dict:
    """The whole report, as `/status.json` answers it (docs/status.md, field by field)."""
    now = time.time()
    own = {**source.service.orchestrator.activity.snapshot(), "process": source.process()}
    snapshots = [own]
    if source.shared is not None:
        others = read_snapshots(source.shared, now)
        snapshots += [s for s in others if s.get("process", {}).get("pid") != os.getpid()]
    merged = merge(snapshots)
    started = min(s["process"]["started"] for s in snapshots)
    settings = source.settings
    service = {
        "version": __version__,
        "replica": socket.gethostname(),
        "pid": os.getpid(),
        "started_at": iso(started),
        "uptime_seconds": int(now - started),
        "workers": {
            "configured": worker_count(settings.server.workers),
            "reporting": len(snapshots),
            # Replaced (killed, crashed), their hour still counted.
            "ended": sum(not running(s["process"]["pid"]) for s in snapshots),
        },
        "figures": "machine" if source.shared is not None else "process",
        "shared_state": shared_state(settings, source),
        "searches_per_minute": searches_per_minute(merged, now, (now - started) / 60),
        "cache": cache_figures(source),
        "single_flight_joins": sum(s["process"]["single_flight_joins"] for s in snapshots),
        "extract_workers": settings.fetch.extract_workers,
        "exposure": exposure(settings, address),
    }
    report = {
        "generated_at": iso(now),
        "service": service,
        "engines": await engine_rows(source, merged, now),
    }
    scrubbed: dict = scrub(report, settings.secrets())
    return scrubbed


def scrub(value: Any, secrets: Sequence[str]) -> Any:
    """`value` with every secret removed from each of its texts (keys of mappings too)."""
    if isinstance(value, str):
        return redact(value, secrets)
    if isinstance(value, dict):
        return {scrub(k, secrets): scrub(v, secrets) for k, v in value.items()}
    if isinstance(value, list):
        return [scrub(item, secrets) for item in value]
    return value
