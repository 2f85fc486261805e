"""What the cache saves and costs: hit and miss latency, and hits per second, in one run.

    python -m bench.cache            # about a minute on 2 cores
    python -m bench.cache --quick    # a quarter of the requests

Two views, each for the SQLite and the Redis backend:

- Through the service: the real `websearch-mcp serve` process asked `web_search` over HTTP/MCP
  (`bench.loadgen`, keep-alive HTTP/1.1), with three fake engines (`bench.latency_server
  engines`, real wire formats, 20 results each) that all answer after `ENGINE_DELAY`. A miss is
  a new query (fan-out, fusion, store); a hit repeats one (lookup, no engine asked).
- The cache object alone, in this process: `get` of a stored answer (hit), of an absent key
  (miss), `set`, and gets per second with 16 concurrent callers, on one real answer.

Redis runs on a `redis-server` started here on a free port (its rows are left out, saying so,
where the binary is absent). Nothing is shared between runs: every cache starts empty.
"""

from __future__ import annotations

import argparse
import asyncio
import dataclasses
import json
import os
import platform
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import yaml

from bench.loadgen import Run, percentile, post, run_load, tool_call
from bench.synthetic import query_text
from testing.fake_engines import base_urls
from testing.redis_server import RedisServer, free_port
from websearch_mcp.cache import Cache, cache_key, open_cache
from websearch_mcp.config import CacheSettings
from websearch_mcp.engines.registry import ENGINES

HOST = "127.0.0.1"
#: Every fake engine answers after this many seconds: a miss costs at least this.
ENGINE_DELAY = 0.1
BENCH_ENGINES = ("tavily", "brave", "searxng")
CONCURRENCY = 16


@dataclass(frozen=True, slots=True)
class Plan:
    """How many requests or calls each measurement makes."""

    misses: int  # service: new queries, one at a time
    hits: int  # service: repeated queries, one at a time
    throughput: int  # service: repeated queries at CONCURRENCY
    entries: int  # cache object: answers stored, then read back
    object_gets: int  # cache object: gets at CONCURRENCY


FULL = Plan(misses=60, hits=1000, throughput=6000, entries=2000, object_gets=20_000)
QUICK = Plan(misses=15, hits=250, throughput=1500, entries=500, object_gets=5000)


@dataclass(slots=True)
class Row:
    """One line of a table: latency percentiles (ms) and, for throughput, operations per second."""

    view: str
    backend: str
    what: str
    count: int
    p50_ms: float
    p95_ms: float
    p99_ms: float
    per_second: float | None = None
    note: str = ""

    @classmethod
    def of(cls, view: str, backend: str, what: str, seconds: Sequence[float], **extra: Any) -> Row:
        ms = [s * 1000 for s in seconds]
        return cls(
            view,
            backend,
            what,
            len(ms),
            round(percentile(ms, 0.5), 3),
            round(percentile(ms, 0.95), 3),
            round(percentile(ms, 0.99), 3),
            **extra,
        )


# --- processes ------------------------------------------------------------------------------


class Process:
    """A child process whose output goes to a log file (stdout to a pipe with `pipe`, for a
    first line to read); stopped with SIGTERM, then SIGKILL."""

    def __init__(self, args: Sequence[str], log: Path, *, pipe: bool = False) -> None:
        self.log = log
        with log.open("wb") as out:
            self.proc = subprocess.Popen(
                list(args),
                stdout=subprocess.PIPE if pipe else out,
                stderr=out,
                text=pipe,
            )

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()

    def failed(self, what: str) -> RuntimeError:
        self.stop()
        return RuntimeError(f"{what}; see {self.log}:\n{self.log.read_text()[-2000:]}")


def start_engines(workdir: Path) -> tuple[Process, str]:
    """The fake engines, each answering after ENGINE_DELAY; their base URL."""
    delays = json.dumps(dict.fromkeys(BENCH_ENGINES, ENGINE_DELAY))
    engines = Process(
        [sys.executable, "-m", "bench.latency_server", "engines", "--delays", delays],
        workdir / "engines.log",
        pipe=True,
    )
    assert engines.proc.stdout is not None
    line = engines.proc.stdout.readline().split()
    if len(line) < 2 or line[0] != "port":
        raise engines.failed("the fake engines did not start")
    return engines, f"http://{HOST}:{line[1]}"


def service_config(engines_url: str, cache: dict[str, Any], port: int) -> dict[str, Any]:
    urls = base_urls(engines_url)
    engines: dict[str, Any] = {name: {"enabled": False} for name in ENGINES}
    for name in BENCH_ENGINES:
        engines[name] = {"enabled": True, "base_url": urls[name]}
        if ENGINES[name].needs_key:
            engines[name]["api_keys"] = [f"bench-{name}-key"]
    return {
        "server": {
            "host": HOST,
            "port": port,
            "rate_limit_per_minute": 0,
            "max_concurrent_requests": 256,
            "max_concurrent_per_client": 256,
            "log_level": "warning",
        },
        "search": {"deadline_seconds": 5},
        "cache": cache,
        "engines": engines,
    }


def start_service(config: dict[str, Any], workdir: Path, name: str) -> Process:
    """`websearch-mcp serve` with `config`, once it answers /readyz."""
    path = workdir / f"{name}.yaml"
    path.write_text(yaml.safe_dump(config), encoding="utf-8")
    script = Path(sys.executable).with_name("websearch-mcp")
    command = [str(script)] if script.is_file() else [sys.executable, "-m", "websearch_mcp.cli"]
    service = Process([*command, "serve", "--config", str(path)], workdir / f"{name}.log")
    url = f"http://{HOST}:{config['server']['port']}/readyz"
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline and service.proc.poll() is None:
        try:
            if httpx.get(url, timeout=1).status_code == 200:
                return service
        except httpx.HTTPError:
            pass
        time.sleep(0.05)
    raise service.failed(f"the {name} service did not start")


# --- through the service --------------------------------------------------------------------


def _check(expect_cached: bool) -> Callable[[int, bytes], str | None]:
    def check(status: int, body: bytes) -> str | None:
        if status != 200 or b'"isError":true' in body:
            return "failed"
        if (b'"cached":true' in body) != expect_cached:
            return "failed"  # a miss answered from the cache, or a hit that was not
        return "partial" if b'"partial":true' in body else None

    return check


async def service_rows(port: int, backend: str, plan: Plan) -> tuple[list[Row], dict[str, Any]]:
    """Miss and hit latency at concurrency 1, then hits per second; and one answer."""
    host = f"{HOST}:{port}"
    run_name = f"bench-cache-{backend}-{time.time_ns()}"  # new queries, even on a reused cache

    def request(i: int) -> bytes:
        return post(host, "/mcp", tool_call("web_search", {"query": query_text(i, run_name)}))

    async def load(count: int, concurrency: int, make: Callable[[int], bytes], hit: bool) -> Run:
        run = await run_load(
            HOST, port, make, count=count, concurrency=concurrency, check=_check(hit)
        )
        if run.failures:
            raise RuntimeError(f"{backend}: {run.failures} failed requests ({run.checks})")
        return run

    # Warm-up: connections to the engines and the cache, the first fusion.
    await run_load(
        HOST, port, lambda i: post(host, "/mcp", tool_call("web_search", {"query": f"warm {i}"})),
        count=3, concurrency=1,
    )  # fmt: skip
    misses = await load(plan.misses, 1, request, hit=False)
    hits = await load(plan.hits, 1, lambda i: request(i % plan.misses), hit=True)
    burst = await load(plan.throughput, CONCURRENCY, lambda i: request(i % plan.misses), hit=True)
    view = "service (HTTP + MCP)"
    rows = [
        Row.of(view, backend, "miss, c=1", misses.latencies, note=_partial(misses)),
        Row.of(view, backend, "hit, c=1", hits.latencies, per_second=hits.throughput),
        Row.of(
            view, backend, f"hit, c={CONCURRENCY}", burst.latencies, per_second=burst.throughput
        ),
    ]
    answer = httpx.post(
        f"http://{host}/mcp",
        content=tool_call("web_search", {"query": query_text(0, run_name)}),
        headers={
            "Accept": "application/json, text/event-stream",
            "Content-Type": "application/json",
        },
        timeout=10,
    ).json()["result"]["structuredContent"]
    return rows, answer


def _partial(run: Run) -> str:
    partial = run.checks.get("partial", 0)
    return f"{partial} partial" if partial else ""


# --- the cache object alone -----------------------------------------------------------------


async def _timed(calls: int, call: Callable[[int], Awaitable[Any]]) -> list[float]:
    out = []
    for i in range(calls):
        started = time.perf_counter()
        await call(i)
        out.append(time.perf_counter() - started)
    return out


async def object_rows(cache: Cache, backend: str, answer: dict[str, Any], plan: Plan) -> list[Row]:
    """set, get (hit), get (miss) one at a time; then gets per second at CONCURRENCY."""
    keys = [cache_key("web_search", f"query {i}", {}, "bench") for i in range(plan.entries)]
    absent = [cache_key("web_search", f"absent {i}", {}, "bench") for i in range(plan.entries)]
    sets = await _timed(plan.entries, lambda i: cache.set("web", keys[i], answer))
    gets = await _timed(plan.entries, lambda i: cache.get("web", keys[i]))
    misses = await _timed(plan.entries, lambda i: cache.get("web", absent[i]))
    if cache.stats.hits != plan.entries or any(cache.stats.errors.values()):
        raise RuntimeError(f"{backend} cache did not work: {cache.stats.as_dict()}")

    counter = iter(range(plan.object_gets))
    latencies: list[float] = []

    async def worker() -> None:
        for i in counter:
            started = time.perf_counter()
            await cache.get("web", keys[i % plan.entries])
            latencies.append(time.perf_counter() - started)

    started = time.perf_counter()
    await asyncio.gather(*(worker() for _ in range(CONCURRENCY)))
    elapsed = time.perf_counter() - started
    view = "cache object"
    return [
        Row.of(view, backend, "get, hit", gets, per_second=len(gets) / sum(gets)),
        Row.of(view, backend, "get, miss", misses, per_second=len(misses) / sum(misses)),
        Row.of(view, backend, "set", sets, per_second=len(sets) / sum(sets)),
        Row.of(
            view,
            backend,
            f"get, hit, c={CONCURRENCY}",
            latencies,
            per_second=len(latencies) / elapsed,
        ),
    ]


# --- the run --------------------------------------------------------------------------------


async def bench_backend(
    backend: str,
    cache: dict[str, Any],
    engines_url: str,
    workdir: Path,
    plan: Plan,
    reset: Callable[[], object],
) -> list[Row]:
    print(f"{backend}: service ...", flush=True)
    port = free_port()
    service = start_service(service_config(engines_url, cache, port), workdir, backend)
    try:
        rows, answer = await service_rows(port, backend, plan)
    finally:
        service.stop()
    reset()
    print(f"{backend}: cache object ...", flush=True)
    settings = CacheSettings(**cache, max_entries=10 * plan.entries)
    store = open_cache(settings)
    try:
        rows += await object_rows(store, backend, answer, plan)
    finally:
        await store.close()
    size = len(json.dumps(answer, ensure_ascii=False).encode())
    for row in rows:
        if row.view == "cache object":
            row.note = f"answer of {size / 1024:.1f} KiB"
    return rows


async def run(plan: Plan, workdir: Path) -> list[Row]:
    engines, engines_url = start_engines(workdir)
    rows: list[Row] = []
    try:
        path = workdir / "sqlite" / "cache.sqlite3"

        def remove_sqlite_files() -> None:
            for file in path.parent.glob("cache.sqlite3*"):
                file.unlink()

        rows += await bench_backend(
            "sqlite",
            {"backend": "sqlite", "path": str(path)},
            engines_url,
            workdir,
            plan,
            remove_sqlite_files,
        )
        binary = shutil.which("redis-server")
        if binary is None:
            print("redis: skipped (redis-server is not installed)", flush=True)
            return rows
        redis = RedisServer(binary)
        redis.start()
        try:
            rows += await bench_backend(
                "redis",
                {"backend": "redis", "redis_url": redis.url},
                engines_url,
                workdir,
                plan,
                lambda: redis.command("FLUSHALL"),
            )
        finally:
            redis.close()
    finally:
        engines.stop()
    return rows


def machine() -> str:
    model = "unknown CPU"
    with open("/proc/cpuinfo") as cpuinfo:
        for line in cpuinfo:
            if line.startswith("model name"):
                model = line.split(":", 1)[1].strip()
                break
    redis = shutil.which("redis-server")
    version = ""
    if redis:
        out = subprocess.run([redis, "--version"], capture_output=True, text=True, check=False)
        version = next((p[2:] for p in out.stdout.split() if p.startswith("v=")), "")
    return (
        f"{os.cpu_count()} cores ({model}), Python {platform.python_version()}, "
        f"{platform.platform()}" + (f", Redis {version}" if version else "")
    )


def markdown(rows: list[Row], command: str) -> str:
    """The figures as one Markdown table (for docs/benchmarks.md)."""
    lines = [
        f"Machine: {machine()}. Command: `{command}`. Engines: {len(BENCH_ENGINES)} fake engines"
        f" ({', '.join(BENCH_ENGINES)}), each answering after {ENGINE_DELAY * 1000:.0f} ms.",
        "",
        "| view | backend | operation | n | p50 ms | p95 ms | p99 ms | per second | note |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        rate = f"{r.per_second:,.0f}" if r.per_second is not None else ""
        lines.append(
            f"| {r.view} | {r.backend} | {r.what} | {r.count} | {r.p50_ms:.2f} | {r.p95_ms:.2f}"
            f" | {r.p99_ms:.2f} | {rate} | {r.note} |"
        )
    return "\n".join(lines) + "\n"


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.cache", description=__doc__)
    parser.add_argument("--quick", action="store_true", help="a quarter of the requests")
    parser.add_argument("--json", type=Path, help="write every figure as JSON here")
    parser.add_argument("--markdown", type=Path, help="write the Markdown table here")
    ns = parser.parse_args(argv)
    plan = QUICK if ns.quick else FULL
    with tempfile.TemporaryDirectory(prefix="websearch-bench-cache-") as tmp:
        rows = asyncio.run(run(plan, Path(tmp)))
    command = " ".join(["python -m bench.cache", *(sys.argv[1:] if argv is None else argv)])
    text = markdown(rows, command)
    print()
    print(text)
    if ns.json:
        ns.json.write_text(json.dumps([dataclasses.asdict(r) for r in rows], indent=2))
    if ns.markdown:
        ns.markdown.write_text(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
