"""Latency and throughput of the real service under load, from one run.

    python -m bench.latency            # the full run: about five minutes on 2 cores
    python -m bench.latency --quick    # under a minute, same phases with fewer requests
    python -m bench.latency --engines 7 --slowest 300   # another line-up of fake engines

Three processes: the fake engines (eight unless `--engines` says fewer, real wire formats, each
with a fixed delay, spread evenly from 50 ms to `--slowest`, 400 unless given;
`bench.latency_server engines`), the service exactly as `websearch-mcp serve` runs it
with a SQLite cache in a fresh directory (`bench.latency_server service`), and this one, which
sends MCP `tools/call` requests over raw keep-alive HTTP/1.1 connections (`bench.loadgen`).

Phases, in order: the engines asked at once straight from here (the baseline: the slowest
engine's own time), one query at a time and by 32 clients; `web_search` with a new query every
time (all cache misses) at concurrency 1, 16, 32 and 64, the clients of each phase started one
after another over the slowest engine's delay, as independent users would be; the same tool
again on queries answered before (cache hits); the benchmark's
`noop` tool (the MCP floor); both again on protocol revision 2026-07-28, whose requests stand
alone (what the official client speaks by default); `GET /healthz` (the HTTP floor); then cache
hits and `/healthz` again, in turns, for their ratio (`Bench.turns`). The
server's resident memory is sampled all along. Fusion alone (`rank()` on each engine's 20
results) is timed in this process. docs/benchmarks.md says how to read each figure.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import dataclasses
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any
from urllib.parse import urlencode

import yaml

from bench.loadgen import (
    MODERN,
    Check,
    Run,
    connect,
    get,
    modern_headers,
    percentile,
    post,
    run_load,
    tool_call,
)
from bench.synthetic import query_text, results_for
from testing.fake_engines import base_urls
from testing.wire_formats import render
from websearch_mcp.config import SearchSettings
from websearch_mcp.engines.registry import ENGINES
from websearch_mcp.models import HttpResponse, Query
from websearch_mcp.ranking.pipeline import rank

#: Each engine's fixed answer delay, in seconds: eight engines from 50 to 400 ms unless
#: `--engines` and `--slowest` say otherwise.
DELAYS: dict[str, float] = {
    "wikipedia": 0.05,
    "searxng": 0.10,
    "duckduckgo": 0.15,
    "bing": 0.20,
    "brave": 0.25,
    "exa": 0.30,
    "serper": 0.35,
    "tavily": 0.40,
}
FASTEST_MS = 50
KEYED = ("tavily", "brave", "exa", "serper")
HOST = "127.0.0.1"
#: Rounds of cache hits and `/healthz` taken in turns (`Bench.turns`).
TURNS = 5


def lineup(engines: int, slowest_ms: int) -> dict[str, float]:
    """The first `engines` of `DELAYS`' engines, their delays spread evenly from 50 ms to
    `slowest_ms` (8 and 400 give `DELAYS` itself)."""
    if not 1 <= engines <= len(DELAYS):
        raise ValueError(f"--engines must be 1 to {len(DELAYS)}, not {engines}")
    if slowest_ms < FASTEST_MS:
        raise ValueError(f"--slowest must be at least {FASTEST_MS} ms, not {slowest_ms}")
    step = (slowest_ms - FASTEST_MS) / max(1, engines - 1)
    names = list(DELAYS)[:engines]
    return {name: round(FASTEST_MS + step * i) / 1000 for i, name in enumerate(names)}


@dataclass(frozen=True, slots=True)
class Plan:
    """How many requests each phase sends, to which fake engines."""

    c1: int
    c16: int
    c32: int
    c64: int
    throughput: int  # per throughput phase (cache hits, noop, healthz)
    throughput_concurrency: int
    fusion: int  # rank() calls timed
    delays: dict[str, float] = field(default_factory=lambda: dict(DELAYS))  # engine -> seconds

    @property
    def slowest(self) -> float:
        return max(self.delays.values())


FULL = Plan(
    c1=100, c16=800, c32=1600, c64=3200, throughput=10_000, throughput_concurrency=16, fusion=300
)
QUICK = Plan(
    c1=15, c16=160, c32=160, c64=320, throughput=1500, throughput_concurrency=16, fusion=60
)


# --- processes ------------------------------------------------------------------------------


class Child:
    """A server process started with `python -m bench.latency_server ...`; its port, its /proc."""

    def __init__(self, args: Sequence[str], log: Path) -> None:
        self.log = log
        self._stderr = log.open("wb")
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "bench.latency_server", *args],
            stdout=subprocess.PIPE,
            stderr=self._stderr,
            text=True,
        )
        assert self.proc.stdout is not None
        line = self.proc.stdout.readline().split()
        if not line or line[0] != "port":
            self.stop()
            raise RuntimeError(f"server did not start; see {log}:\n{log.read_text()[-2000:]}")
        self.port = int(line[1])
        self.info = dict(zip(line[2::2], line[3::2], strict=True))

    @property
    def pid(self) -> int:
        return self.proc.pid

    def processes(self) -> list[int]:
        """This process and every process under it (the workers of a multi-process server)."""
        found, todo = [], [self.pid]
        while todo:
            pid = todo.pop()
            found.append(pid)
            with contextlib.suppress(OSError):
                todo += map(int, Path(f"/proc/{pid}/task/{pid}/children").read_text().split())
        return found

    def cpu_seconds(self) -> float:
        """User + system CPU time so far of the process and all under it (every worker)."""
        total = 0
        for pid in self.processes():
            with contextlib.suppress(OSError):
                fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
                total += int(fields[11]) + int(fields[12])
        return total / os.sysconf("SC_CLK_TCK")

    def memory(self) -> tuple[float, float]:
        """Resident set size now and its peak (VmHWM), in MiB, of the largest process (with
        several workers: per worker)."""
        rss = peak = 0.0
        for pid in self.processes():
            with contextlib.suppress(OSError):
                for line in Path(f"/proc/{pid}/status").read_text().splitlines():
                    name, _, rest = line.partition(":")
                    if name == "VmRSS":
                        rss = max(rss, int(rest.split()[0]) / 1024)
                    elif name == "VmHWM":
                        peak = max(peak, int(rest.split()[0]) / 1024)
        return rss, peak

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self._stderr.close()


def service_config(
    engines_url: str, cache_path: Path, log_level: str, delays: dict[str, float] = DELAYS
) -> dict[str, Any]:
    """The engines of `delays` on the fake server, a fresh SQLite cache, no per-client rate
    limit."""
    urls = base_urls(engines_url)
    engines: dict[str, Any] = {name: {"enabled": False} for name in ENGINES}
    for name in delays:
        engines[name] = {"enabled": True, "base_url": urls[name]}
        if name in KEYED:
            engines[name]["api_keys"] = [f"bench-{name}-key"]
    return {
        "server": {
            "host": HOST,
            "port": 8338,
            "rate_limit_per_minute": 0,
            "max_concurrent_requests": 256,
            "max_concurrent_per_client": 256,
            "log_level": log_level,
        },
        "search": {"deadline_seconds": 5},
        "cache": {"backend": "sqlite", "path": str(cache_path)},
        "engines": engines,
    }


# --- measuring ------------------------------------------------------------------------------


@dataclass(slots=True)
class Phase:
    """One load phase: the load generator's run, and the server's CPU time over it."""

    name: str
    concurrency: int
    run: Run
    server_cpu: float
    engines_cpu: float
    miss: MissCheck | None = None

    def row(self) -> dict[str, Any]:
        lat = [x * 1000 for x in self.run.latencies]
        n = max(1, self.run.completed)
        return {
            "phase": self.name,
            "concurrency": self.concurrency,
            "requests": self.run.completed,
            "failures": self.run.failures,
            "checks": dict(self.run.checks),
            "throughput_rps": round(self.run.throughput, 1),
            "p50_ms": round(percentile(lat, 0.50), 2),
            "p95_ms": round(percentile(lat, 0.95), 2),
            "p99_ms": round(percentile(lat, 0.99), 2),
            "server_cpu_ms_per_request": round(self.server_cpu * 1000 / n, 3),
            "server_cpu_share": round(self.server_cpu / self.run.elapsed, 2),
            "engines_cpu_share": round(self.engines_cpu / self.run.elapsed, 2),
            "client_cpu_share": round(self.run.client_cpu / self.run.elapsed, 2),
            **(self._service_timings() if self.miss and self.miss.took_ms else {}),
        }

    def _service_timings(self) -> dict[str, float]:
        assert self.miss is not None
        return {
            "slowest_engine_p50_ms": percentile(self.miss.slowest_ms, 0.5),
            "slowest_engine_p99_ms": percentile(self.miss.slowest_ms, 0.99),
            "took_p50_ms": percentile(self.miss.took_ms, 0.5),
        }


@dataclass(slots=True)
class Memory:
    """RSS samples of the server: (requests answered so far, MiB)."""

    samples: list[tuple[int, float]] = field(default_factory=list)
    peak: float = 0.0

    def slope_per_1000(self) -> float:
        """Least-squares RSS growth in MiB per 1,000 requests over the run's second half (by
        requests answered)."""
        total = self.samples[-1][0] if self.samples else 0
        half = [(n, mib) for n, mib in self.samples if n >= total / 2]
        if len(half) < 2 or half[-1][0] == half[0][0]:
            return 0.0
        xs = [n / 1000 for n, _ in half]
        ys = [mib for _, mib in half]
        mx, my = statistics.fmean(xs), statistics.fmean(ys)
        den = sum((x - mx) ** 2 for x in xs)
        return sum((x - mx) * (y - my) for x, y in zip(xs, ys, strict=True)) / den if den else 0.0


def search_check(status: int, body: bytes) -> str | None:
    """Label a `web_search` answer: failed, cached, partial (an engine missing), or None."""
    if status != 200 or b'"isError":true' in body:
        return "failed"
    if b'"cached":true' in body:
        return "cached"
    if b'"partial":true' in body:
        return "partial"
    return None


def tool_check(status: int, body: bytes) -> str | None:
    return "failed" if status != 200 or b'"isError":true' in body else None


class MissCheck:
    """`search_check`, keeping the service's own timings of each fresh answer: how long its
    slowest engine took as the service saw it, and `took_ms` (fan-out and fusion)."""

    def __init__(self) -> None:
        self.slowest_ms: list[float] = []
        self.took_ms: list[float] = []

    def __call__(self, status: int, body: bytes) -> str | None:
        label = search_check(status, body)
        if label != "failed":
            answer = json.loads(body)["result"]["structuredContent"]
            self.slowest_ms.append(max(e.get("latency_ms") or 0 for e in answer["engines"]))
            self.took_ms.append(answer.get("took_ms", 0))
        return label


def engine_request(name: str, text: str, host: str) -> bytes:
    """What the service sends fake engine `name` for `text` (its own request builder), as raw
    HTTP/1.1 to the fake server."""
    key = f"bench-{name}-key" if name in KEYED else None
    request = ENGINES[name]().request(Query(text=text), key)
    target = f"/{name}{request.path}"
    if request.params:
        target += "?" + urlencode(request.params, doseq=True)
    headers = "".join(f"{k}: {v}\r\n" for k, v in request.headers.items())
    if request.json is not None:
        body = json.dumps(request.json).encode()
        return post(host, target, body, headers + "Content-Type: application/json\r\n")
    if request.data is not None:
        form = urlencode(request.data).encode()
        return post(
            host, target, form, headers + "Content-Type: application/x-www-form-urlencoded\r\n"
        )
    return f"{request.method} {target} HTTP/1.1\r\nHost: {host}\r\n{headers}\r\n".encode()


async def direct_baseline(
    port: int, count: int, delays: dict[str, float], concurrency: int = 1, run: str = "direct"
) -> list[float]:
    """Seconds until the slowest fake engine has answered when all are asked at once
    straight from here, without the service, by `concurrency` clients (started over the
    slowest engine's delay, as the miss phases' are): what the service could do with no
    overhead at all, and how late the fake engines themselves answer at that load."""
    host = f"{HOST}:{port}"
    times: list[float] = []
    numbers = iter(range(count))

    async def client(start: float) -> None:
        connections = {name: await connect(HOST, port) for name in delays}
        try:
            await asyncio.sleep(start)
            for i in numbers:
                text = query_text(i, run)
                requests = {name: engine_request(name, text, host) for name in delays}
                started = time.perf_counter()
                answers = await asyncio.gather(
                    *(connections[name].request(requests[name]) for name in delays)
                )
                times.append(time.perf_counter() - started)
                if any(status != 200 for status, _ in answers):
                    raise RuntimeError(f"a fake engine refused a direct request: {answers}")
        finally:
            for connection in connections.values():
                connection.close()

    ramp = max(delays.values()) if concurrency > 1 else 0.0
    await asyncio.gather(*(client(ramp * k / concurrency) for k in range(concurrency)))
    return times


class Bench:
    """One benchmark run against started processes."""

    def __init__(self, service: Child, engines: Child, plan: Plan) -> None:
        self.service = service
        self.engines = engines
        self.plan = plan
        self.host = f"{HOST}:{service.port}"
        self.done = 0
        self.memory = Memory()
        self.phases: list[Phase] = []
        self.direct: list[float] = []
        self.direct_c32: list[float] = []
        #: Per round of `turns`: cache hits per second over `/healthz` requests per second.
        self.turn_ratios: list[float] = []

    def _count(self) -> None:
        self.done += 1

    def search_request(self, text: str, *, modern: bool = False) -> bytes:
        body = tool_call("web_search", {"query": text}, modern=modern)
        if modern:
            return post(self.host, "/mcp", body, modern_headers("web_search"))
        return post(self.host, "/mcp", body)

    async def phase(
        self,
        name: str,
        make: Callable[[int], bytes],
        count: int,
        concurrency: int,
        check: Check | None,
        ramp: float = 0.0,
    ) -> Phase:
        """Run one phase (its clients started over `ramp` seconds) and print its line."""
        server_cpu, engines_cpu = self.service.cpu_seconds(), self.engines.cpu_seconds()
        run = await run_load(
            HOST,
            self.service.port,
            make,
            count=count,
            concurrency=concurrency,
            check=check,
            on_done=self._count,
            ramp=ramp,
        )
        phase = Phase(
            name,
            concurrency,
            run,
            self.service.cpu_seconds() - server_cpu,
            self.engines.cpu_seconds() - engines_cpu,
            check if isinstance(check, MissCheck) else None,
        )
        self.phases.append(phase)
        row = phase.row()
        print(
            f"  {name:<22} c={concurrency:<3} n={row['requests']:<6} "
            f"{row['throughput_rps']:>8.1f} req/s  p50 {row['p50_ms']:>8.2f} ms  "
            f"p99 {row['p99_ms']:>8.2f} ms  server (all processes) "
            f"{row['server_cpu_ms_per_request']:.2f} CPU-ms/req  {row['checks'] or ''}"
            + (
                f" slowest engine {row['slowest_engine_p50_ms']:.0f} ms, took"
                f" {row['took_p50_ms']:.0f} ms (p50, as the service saw them); slowest engine"
                f" p99 {row['slowest_engine_p99_ms']:.0f} ms"
                if "took_p50_ms" in row
                else ""
            ),
            flush=True,
        )
        return phase

    async def _rate(self, make: Callable[[int], bytes], count: int, check: Check | None) -> float:
        started = time.perf_counter()
        run = await run_load(
            HOST,
            self.service.port,
            make,
            count=count,
            concurrency=self.plan.throughput_concurrency,
            check=check,
            on_done=self._count,
        )
        if run.failures:
            raise RuntimeError(f"{run.failures} of {count} requests failed in turns")
        return count / (time.perf_counter() - started)

    async def turns(self, hit: Callable[[int], bytes], healthz: bytes) -> None:
        """Cache hits and `/healthz` in `TURNS` rounds of a slice of each, back to back (the
        order alternating), for their ratio. The two phases above run minutes apart, and this
        machine's speed changes that fast with other jobs' load; within a round it has no time
        to. `/healthz` takes three times the requests, so its slice lasts about half as long."""
        size = max(100, self.plan.throughput // TURNS)
        for round_ in range(TURNS):
            rates = {}
            for name in ("hit", "healthz") if round_ % 2 == 0 else ("healthz", "hit"):
                if name == "hit":
                    rates[name] = await self._rate(hit, size, search_check)
                else:
                    rates[name] = await self._rate(lambda i: healthz, size * 3, None)
            self.turn_ratios.append(rates["hit"] / rates["healthz"])
        ratios = ", ".join(f"{r:.1%}" for r in self.turn_ratios)
        print(f"  cache hits / /healthz in turns ({TURNS} rounds): {ratios}", flush=True)

    async def sample_memory(self) -> None:
        while True:
            rss, peak = self.service.memory()
            self.memory.samples.append((self.done, rss))
            self.memory.peak = peak
            await asyncio.sleep(0.25)

    async def run(self) -> None:
        plan = self.plan
        sampler = asyncio.create_task(self.sample_memory())
        try:
            # Warm up: connections to every engine, the cache file, the tokeniser's caches.
            await self.phase(
                "warm-up",
                lambda i: self.search_request(query_text(i, "warm")),
                32,
                8,
                search_check,
            )
            self.phases.clear()
            port, delays = self.engines.port, plan.delays
            self.direct = await direct_baseline(port, max(10, plan.c1 // 2), delays)
            self.direct_c32 = await direct_baseline(port, plan.c32, delays, 32, "direct c=32")
            print(
                f"  engines alone ({len(delays)} at once)"
                f" p50 {percentile(self.direct, 0.5) * 1000:.2f} ms;"
                f" at c=32 p50 {percentile(self.direct_c32, 0.5) * 1000:.2f} ms,"
                f" p99 {percentile(self.direct_c32, 0.99) * 1000:.2f} ms",
                flush=True,
            )
            await self.miss_phases()
            await self.throughput_phases()
        finally:
            sampler.cancel()
        rss, peak = self.service.memory()
        self.memory.samples.append((self.done, rss))
        self.memory.peak = peak

    async def miss_phases(self) -> None:
        """Searches nothing has answered before, at concurrency 1, 16, 32 and 64."""
        plan = self.plan
        for label, count, concurrency in (
            ("miss c=1", plan.c1, 1),
            ("miss c=16", plan.c16, 16),
            ("miss c=32", plan.c32, 32),
            ("miss c=64", plan.c64, 64),
        ):
            # Clients start over one slowest-engine delay, as independent users would:
            # all at once, the phase's first searches would be one burst of every client's
            # engine requests.
            def request(i: int, run: str = label) -> bytes:
                return self.search_request(query_text(i, run))

            await self.phase(
                label,
                request,
                count,
                concurrency,
                MissCheck(),
                ramp=plan.slowest if concurrency > 1 else 0.0,
            )

    async def throughput_phases(self) -> None:
        """Cache hits, the no-op tool and /healthz at the throughput concurrency, then turns."""
        plan = self.plan
        # Cache hits: the queries the c=64 phase answered (and so stored), round and round.
        known = min(plan.c64, 500)
        await self.phase(
            "cache hit",
            lambda i: self.search_request(query_text(i % known, "miss c=64")),
            plan.throughput,
            plan.throughput_concurrency,
            search_check,
        )
        noop = post(self.host, "/mcp", tool_call("noop", {}))
        await self.phase(
            "noop tool (MCP floor)",
            lambda i: noop,
            plan.throughput,
            plan.throughput_concurrency,
            tool_check,
        )
        # The same two on the revision the official client speaks by default, whose
        # requests the SDK answers without a per-request session.
        await self.phase(
            f"cache hit ({MODERN})",
            lambda i: self.search_request(query_text(i % known, "miss c=64"), modern=True),
            plan.throughput,
            plan.throughput_concurrency,
            search_check,
        )
        modern_noop = tool_call("noop", {}, modern=True)
        noop_modern = post(self.host, "/mcp", modern_noop, modern_headers("noop"))
        await self.phase(
            f"noop tool ({MODERN})",
            lambda i: noop_modern,
            plan.throughput,
            plan.throughput_concurrency,
            tool_check,
        )
        healthz = get(self.host, "/healthz")
        await self.phase(
            "GET /healthz",
            lambda i: healthz,
            plan.throughput,
            plan.throughput_concurrency,
            None,
        )
        await self.turns(lambda i: self.search_request(query_text(i % known, "miss c=64")), healthz)


# --- fusion alone ---------------------------------------------------------------------------


def fusion_times(count: int, delays: dict[str, float]) -> tuple[list[float], list[float]]:
    """Milliseconds per `rank()` call on the engines' lists of 20 results (each query new),
    and per parse of their answers, both in this process."""
    search = SearchSettings()
    weights = dict.fromkeys(delays, 1.0)
    parsers = {name: ENGINES[name]() for name in delays}
    fuse_ms: list[float] = []
    parse_ms: list[float] = []
    warm = 20
    for i in range(count + warm):
        text = query_text(i, "fusion")
        query = Query(text=text)
        bodies = {name: render(name, results_for(name, text), text) for name in delays}
        started = time.perf_counter()
        lists = {
            name: parsers[name].hits(
                HttpResponse(status=200, headers={"content-type": ctype}, content=body, url=""),
                query,
            )
            for name, (body, ctype) in bodies.items()
        }
        parsed = time.perf_counter()
        rank(lists, query, search, weights=weights, now=datetime.now(UTC))
        fused = time.perf_counter()
        if i >= warm:
            parse_ms.append((parsed - started) * 1000)
            fuse_ms.append((fused - parsed) * 1000)
    return fuse_ms, parse_ms


# --- report ---------------------------------------------------------------------------------


def machine() -> dict[str, str]:
    model = "unknown"
    with open("/proc/cpuinfo") as cpuinfo:
        for line in cpuinfo:
            if line.startswith("model name"):
                model = line.split(":", 1)[1].strip()
                break
    return {
        "nproc": str(os.cpu_count()),
        "cpu": model,
        "python": platform.python_version(),
        "platform": platform.platform(),
    }


def report(bench: Bench, fuse_ms: list[float], parse_ms: list[float]) -> dict[str, Any]:
    rows = [p.row() for p in bench.phases]
    by_name = {r["phase"]: r for r in rows}
    for row in rows:
        if row["phase"].startswith("miss"):
            for q in ("p50", "p95", "p99"):
                row[f"{q}_overhead_ms"] = round(row[f"{q}_ms"] - bench.plan.slowest * 1000, 2)
    hit, noop = by_name["cache hit"], by_name["noop tool (MCP floor)"]
    modern_hit, modern_noop = by_name[f"cache hit ({MODERN})"], by_name[f"noop tool ({MODERN})"]
    healthz = by_name["GET /healthz"]["throughput_rps"]
    memory = bench.memory
    direct = [x * 1000 for x in bench.direct]
    direct_c32 = [x * 1000 for x in bench.direct_c32]
    return {
        "machine": machine(),
        "server": bench.service.info,
        "delays_ms": {k: round(v * 1000) for k, v in bench.plan.delays.items()},
        "phases": rows,
        "cache_hit_vs_noop": round(hit["throughput_rps"] / noop["throughput_rps"], 3),
        "modern_cache_hit_vs_noop": round(
            modern_hit["throughput_rps"] / modern_noop["throughput_rps"], 3
        ),
        "cache_hit_vs_healthz": round(hit["throughput_rps"] / healthz, 3),
        "modern_cache_hit_vs_healthz": round(modern_hit["throughput_rps"] / healthz, 3),
        "cache_hit_vs_healthz_in_turns": {
            "median": round(statistics.median(bench.turn_ratios), 3),
            "min": round(min(bench.turn_ratios), 3),
            "max": round(max(bench.turn_ratios), 3),
            "rounds": [round(r, 3) for r in bench.turn_ratios],
        },
        "engines_alone_ms": {
            "p50": round(percentile(direct, 0.5), 2),
            "p99": round(percentile(direct, 0.99), 2),
        },
        "engines_alone_c32_ms": {
            "p50": round(percentile(direct_c32, 0.5), 2),
            "p99": round(percentile(direct_c32, 0.99), 2),
        },
        "c1_overhead_over_engines_alone_p50_ms": round(
            by_name["miss c=1"]["p50_ms"] - percentile(direct, 0.5), 2
        ),
        "requests_total": bench.done,
        "rss_mib_final": round(memory.samples[-1][1], 1),
        "rss_mib_peak": round(memory.peak, 1),
        "rss_slope_mib_per_1000": round(memory.slope_per_1000(), 3),
        "rss_samples": [
            (n, round(mib, 1)) for n, mib in memory.samples[:: max(1, len(memory.samples) // 24)]
        ],
        "fusion_ms": {
            "p50": round(percentile(fuse_ms, 0.5), 3),
            "p95": round(percentile(fuse_ms, 0.95), 3),
        },
        "parse_ms": {
            "p50": round(percentile(parse_ms, 0.5), 3),
            "p95": round(percentile(parse_ms, 0.95), 3),
        },
    }


def markdown(data: dict[str, Any], command: str) -> str:
    """The figures as Markdown tables (for docs/benchmarks.md)."""
    m = data["machine"]
    lines = [
        f"Machine: {m['nproc']} cores ({m['cpu']}), Python {m['python']}, {m['platform']}; "
        f"uvicorn with {data['server'].get('loop', '?')} and {data['server'].get('http', '?')}, "
        f"{data['server'].get('workers', '1')} worker process(es). "
        f"Command: `{command}`.",
        "",
        "| phase | c | requests | req/s | p50 ms | p95 ms | p99 ms | overhead p50 / p95 / p99 ms"
        " | server CPU ms/req (all processes) | CPU: server / engines / load gen |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    for r in data["phases"]:
        overhead = (
            f"{r['p50_overhead_ms']:.1f} / {r['p95_overhead_ms']:.1f} / {r['p99_overhead_ms']:.1f}"
            if "p50_overhead_ms" in r
            else ""
        )
        failures = f" ({r['failures']} failed)" if r["failures"] else ""
        lines.append(
            f"| {r['phase']} | {r['concurrency']} | {r['requests']}{failures} | "
            f"{r['throughput_rps']:.0f} | {r['p50_ms']:.1f} | {r['p95_ms']:.1f} | "
            f"{r['p99_ms']:.1f} | {overhead} | {r['server_cpu_ms_per_request']:.2f} | "
            f"{r['server_cpu_share']:.0%} / {r['engines_cpu_share']:.0%} / "
            f"{r['client_cpu_share']:.0%} |"
        )
    samples = ", ".join(f"{n}: {mib:.0f}" for n, mib in data["rss_samples"])
    c32 = next(r for r in data["phases"] if r["phase"] == "miss c=32")
    turns = data["cache_hit_vs_healthz_in_turns"]
    engines = len(data["delays_ms"])
    lines += [
        "",
        "| figure | value |",
        "|---|---|",
        f"| the {engines} fake engines asked at once without the service: slowest answer"
        " p50 / p99 | "
        f"{data['engines_alone_ms']['p50']:.1f} / {data['engines_alone_ms']['p99']:.1f} ms |",
        f"| the same by 32 clients at once (started as the miss phases' are), p50 / p99 | "
        f"{data['engines_alone_c32_ms']['p50']:.1f} / {data['engines_alone_c32_ms']['p99']:.1f}"
        " ms |",
        f"| miss c=1 p50 minus the {engines} engines' p50 alone (the service's own overhead) | "
        f"{data['c1_overhead_over_engines_alone_p50_ms']:.1f} ms |",
        f"| miss c=32: the slowest engine's answer as the service saw it, p50 / p99 | "
        f"{c32['slowest_engine_p50_ms']:.0f} / {c32['slowest_engine_p99_ms']:.0f} ms |",
        f"| cache-hit throughput / noop-tool throughput | {data['cache_hit_vs_noop']:.0%}; "
        f"{data['modern_cache_hit_vs_noop']:.0%} on {MODERN} |",
        f"| cache-hit throughput / `/healthz` throughput | {data['cache_hit_vs_healthz']:.1%}; "
        f"{data['modern_cache_hit_vs_healthz']:.1%} on {MODERN} |",
        f"| the same, in turns: median of {len(turns['rounds'])} rounds (lowest, highest) | "
        f"{turns['median']:.1%} ({turns['min']:.1%}, {turns['max']:.1%}) |",
        f"| fusion, `rank()` on {engines} x 20 results, p50 / p95 | "
        f"{data['fusion_ms']['p50']:.2f} / {data['fusion_ms']['p95']:.2f} ms |",
        f"| parsing the {engines} answers, p50 / p95 | "
        f"{data['parse_ms']['p50']:.2f} / {data['parse_ms']['p95']:.2f} ms |",
        f"| server RSS after {data['requests_total']} requests / peak (VmHWM) | "
        f"{data['rss_mib_final']:.0f} / {data['rss_mib_peak']:.0f} MiB |",
        f"| RSS trend over the second half | {data['rss_slope_mib_per_1000']:+.2f} MiB per 1,000"
        " requests |",
        f"| RSS samples (requests: MiB) | {samples} |",
    ]
    return "\n".join(lines) + "\n"


async def _main(plan: Plan, log_level: str, workdir: Path, workers: int) -> dict[str, Any]:
    print(f"fusion: timing rank() on {len(plan.delays)} x 20 results ...", flush=True)
    fuse_ms, parse_ms = fusion_times(plan.fusion, plan.delays)
    engines = Child(["engines", "--delays", json.dumps(plan.delays)], workdir / "engines.log")
    service: Child | None = None
    try:
        config = service_config(
            f"http://{HOST}:{engines.port}", workdir / "cache.sqlite3", log_level, plan.delays
        )
        config_path = workdir / "websearch-mcp.yaml"
        config_path.write_text(yaml.safe_dump(config))
        service = Child(
            ["service", "--config", str(config_path), "--workers", str(workers)],
            workdir / "service.log",
        )
        service.info["workers"] = str(workers)
        print(f"service pid {service.pid} on port {service.port} {service.info}", flush=True)
        bench = Bench(service, engines, plan)
        await bench.run()
        return report(bench, fuse_ms, parse_ms)
    finally:
        if service is not None:
            service.stop()
        engines.stop()


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.latency", description=__doc__)
    parser.add_argument("--quick", action="store_true", help="fewer requests (under a minute)")
    parser.add_argument("--c1", type=int, help="cache-miss requests at concurrency 1")
    parser.add_argument("--c16", type=int, help="cache-miss requests at concurrency 16")
    parser.add_argument("--c32", type=int, help="cache-miss requests at concurrency 32")
    parser.add_argument("--c64", type=int, help="cache-miss requests at concurrency 64")
    parser.add_argument("--workers", type=int, default=1, help="server processes (serve --workers)")
    parser.add_argument("--throughput", type=int, help="requests per throughput phase")
    parser.add_argument(
        "--engines", type=int, default=len(DELAYS), help="fake engines (the first N of eight)"
    )
    parser.add_argument(
        "--slowest", type=int, default=400, help="the slowest engine's delay in ms (from 50)"
    )
    parser.add_argument("--log-level", default="warning", help="the service's log level")
    parser.add_argument("--json", type=Path, help="write every figure as JSON here")
    parser.add_argument("--markdown", type=Path, help="write the Markdown tables here")
    ns = parser.parse_args(argv)
    plan = QUICK if ns.quick else FULL
    overrides = {
        k: v
        for k, v in {
            "c1": ns.c1,
            "c16": ns.c16,
            "c32": ns.c32,
            "c64": ns.c64,
            "throughput": ns.throughput,
        }.items()
        if v is not None
    }
    try:
        delays = lineup(ns.engines, ns.slowest)
    except ValueError as error:
        parser.error(str(error))
    plan = dataclasses.replace(plan, **overrides, delays=delays)
    with tempfile.TemporaryDirectory(prefix="websearch-bench-") as tmp:
        data = asyncio.run(_main(plan, ns.log_level, Path(tmp), ns.workers))
    command = " ".join(["python -m bench.latency", *(sys.argv[1:] if argv is None else argv)])
    text = markdown(data, command)
    print()
    print(text)
    if ns.json:
        ns.json.write_text(json.dumps(data, indent=2))
    if ns.markdown:
        ns.markdown.write_text(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
