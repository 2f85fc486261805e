"""`serve --workers 2`: two processes on one port share breakers and add up their metrics.

Which worker accepts a connection is the kernel's choice, so the test stops one worker
(SIGSTOP) while the other must answer, then swaps them; stops stay well under uvicorn's
five-second health check.
"""

from __future__ import annotations

import contextlib
import os
import re
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
import yaml
from prometheus_client import CollectorRegistry
from prometheus_client.multiprocess import MultiProcessCollector

from testing.fake_engines import FakeEngines, Fault, base_urls
from testing.server_helpers import MCP_HEADERS, TAVILY_KEY, tool_call
from websearch_mcp.cache.base import run_cleanup_loop
from websearch_mcp.cli import main
from websearch_mcp.config import parse_config
from websearch_mcp.engines.registry import ENGINES
from websearch_mcp.errors import ConfigError
from websearch_mcp.metrics import forget_dead_workers
from websearch_mcp.workers import LeaderLock, worker_count

pytestmark = pytest.mark.skipif(sys.platform != "linux", reason="reads worker pids from /proc")


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _workers(parent: int) -> list[int]:
    """The server's worker processes (multiprocessing's spawned children of `parent`)."""
    found = []
    for pid in Path(f"/proc/{parent}/task/{parent}/children").read_text().split():
        cmdline = Path(f"/proc/{pid}/cmdline").read_bytes()
        if b"multiprocessing.spawn" in cmdline and b"resource_tracker" not in cmdline:
            found.append(int(pid))
    return found


@pytest.fixture
def server(tmp_path: Path, engines_url: str) -> Iterator[dict[str, Any]]:
    urls = base_urls(engines_url)
    engines: dict[str, Any] = {name: {"enabled": False} for name in ENGINES}
    engines["tavily"] = {"api_keys": [TAVILY_KEY], "base_url": urls["tavily"]}
    engines["searxng"] = {"enabled": True, "base_url": urls["searxng"]}
    config = {
        "engines": engines,
        "search": {"deadline_seconds": 5, "retry": {"retries": 0}},
        "cache": {"backend": "sqlite", "path": str(tmp_path / "cache.sqlite3")},
        "server": {"rate_limit_per_minute": 0, "log_level": "warning", "read_timeout_seconds": 1},
    }
    path = tmp_path / "config.yaml"
    path.write_text(yaml.safe_dump(config))
    port = _free_port()
    runtime_parent = tmp_path / "tmp"
    runtime_parent.mkdir()
    env = {**os.environ, "TMPDIR": str(runtime_parent)}
    process = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "websearch_mcp.cli",
            "serve",
            "--config",
            str(path),
            "--port",
            str(port),
            "--workers",
            "2",
        ],
        env=env,
    )
    info = {"url": f"http://127.0.0.1:{port}", "pid": process.pid, "runtime": runtime_parent}
    try:
        deadline = time.monotonic() + 60
        while len(_workers(process.pid)) < 2:
            assert process.poll() is None, "the server stopped"
            assert time.monotonic() < deadline, "the workers did not start"
            time.sleep(0.1)
        while True:  # the parent's listening socket
            with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", port), 1):
                break
            assert time.monotonic() < deadline, "the server does not listen"
            time.sleep(0.1)
        info["workers"] = _workers(process.pid)
        info["stop"] = lambda: _stop(process)
        yield info
    finally:
        for pid in info.get("workers", []):
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGCONT)
        _stop(process)


def _stop(process: subprocess.Popen[bytes]) -> int:
    if process.poll() is None:
        process.send_signal(signal.SIGINT)
    return process.wait(timeout=30)


class Alone:
    """Only one worker accepts connections inside the block: the others are stopped."""

    def __init__(self, info: dict[str, Any], keep: int) -> None:
        self.others = [pid for pid in info["workers"] if pid != keep]

    def __enter__(self) -> None:
        for pid in self.others:
            os.kill(pid, signal.SIGSTOP)

    def __exit__(self, *_: object) -> None:
        for pid in self.others:
            os.kill(pid, signal.SIGCONT)


def _healthz(url: str, counted: list[int]) -> None:
    """`/healthz` on a fresh connection (it waits in the listening socket's queue until a
    worker has started and takes it)."""
    counted.append(httpx.get(f"{url}/healthz", timeout=30).status_code)


def _search(url: str, query: str) -> dict[str, Any]:
    response = httpx.post(
        f"{url}/mcp", json=tool_call({"query": query}), headers=MCP_HEADERS, timeout=20
    )
    response.raise_for_status()
    result = response.json()["result"]
    return {e["name"]: e for e in result["structuredContent"]["engines"]}


def _metric(text: str, name: str, labels: str) -> float:
    """The sum of `name`'s samples whose labels contain `labels`."""
    found = re.findall(rf"^{name}\{{([^}}]*)\}} (\S+)$", text, re.M)
    values = [float(value) for have, value in found if labels in have]
    assert values, f"{name}{{{labels}}} missing"
    return sum(values)


def test_two_workers_share_breakers_and_add_up_metrics(
    server: dict[str, Any], fake: FakeEngines
) -> None:
    url = server["url"]
    first, second = server["workers"]
    health: list[int] = []
    with Alone(server, keep=first):
        _healthz(url, health)
        fake.faults["searxng"] = Fault(status=403)
        reports = _search(url, "python asyncio event loop")
    assert reports["searxng"]["status"] in ("blocked", "error")
    assert reports["tavily"]["status"] == "ok"
    fake.faults.clear()
    asked = fake.counts["searxng"]
    with Alone(server, keep=second):
        _healthz(url, health)
        reports = _search(url, "python asyncio coroutines")
    # The breaker the first worker opened keeps the second from asking searxng.
    assert reports["searxng"]["status"] == "skipped"
    assert "circuit open" in reports["searxng"]["error"]
    assert fake.counts["searxng"] == asked
    with Alone(server, keep=first):
        text = httpx.get(f"{url}/metrics", timeout=10).text
    # One search was served by each worker; /metrics from one of them counts both.
    assert _metric(text, "websearch_tool_requests_total", 'tool="web_search"') == 2
    assert (
        _metric(text, "websearch_http_requests_total", 'route="/healthz",status="200"')
        == len(health)
        == 2
    )
    assert _metric(text, "websearch_breaker_open", 'engine="searxng"') == 1


def test_workers_cut_half_sent_headers_at_the_configured_deadline(server: dict[str, Any]) -> None:
    port = int(server["url"].rsplit(":", 1)[1])
    for _ in range(6):  # the workers are up and serving, not still starting
        _healthz(server["url"], [])
    conns = [socket.create_connection(("127.0.0.1", port)) for _ in range(4)]
    started = time.monotonic()
    for conn in conns:
        conn.sendall(b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Le")
    for conn in conns:
        conn.settimeout(10)
        data = b""
        while chunk := conn.recv(4096):
            data += chunk
        assert data.startswith(b"HTTP/1.1 408"), data
        # The configured 1 s, not the built-in 10 s (with room for a busy machine).
        assert time.monotonic() - started < 8
        conn.close()


def test_the_runtime_directory_is_removed_at_exit(server: dict[str, Any]) -> None:
    runtime = server["runtime"]
    _healthz(server["url"], [])
    made = list(runtime.iterdir())
    assert len(made) == 1 and (made[0] / "metrics").is_dir()
    assert list((made[0] / "metrics").iterdir())  # the workers' metric files
    assert server["stop"]() == 0
    assert list(runtime.iterdir()) == []


def test_worker_count(tmp_path: Path) -> None:
    cores = len(os.sched_getaffinity(0))
    assert worker_count(3) == 3
    cpu_max = tmp_path / "cpu.max"
    assert worker_count("auto", cpu_max) == cores  # no cgroup file: every usable core
    cpu_max.write_text("max 100000\n")
    assert worker_count("auto", cpu_max) == cores  # no quota
    cpu_max.write_text("50000 100000\n")
    assert worker_count("auto", cpu_max) == 1  # half a core: one worker
    cpu_max.write_text(f"{150000 * cores} 100000\n")
    assert worker_count("auto", cpu_max) == cores  # a quota above the cores changes nothing
    cpu_max.write_text("garbage\n")
    assert worker_count("auto", cpu_max) == cores


async def test_only_the_lock_holder_cleans_the_cache(tmp_path: Path) -> None:
    holder, other = LeaderLock(tmp_path / "lock"), LeaderLock(tmp_path / "lock")
    assert holder.acquire()
    assert not other.acquire()

    class Cache:
        backend = "test"
        cleaned = 0

        async def cleanup(self) -> int:
            self.cleaned += 1
            return 0

    for lock, expected in ((other, 0), (holder, 2)):
        cache, ticks = Cache(), []

        async def sleep(_: float, ticks: list[int] = ticks) -> None:
            ticks.append(1)
            if len(ticks) > 2:
                raise TimeoutError

        with pytest.raises(TimeoutError):
            await run_cleanup_loop(cache, 1, sleep=sleep, leader=lock)  # type: ignore[arg-type]
        assert cache.cleaned == expected
    holder.release()
    assert other.acquire()  # the next worker takes over


def test_a_bad_worker_count_is_refused_naming_it(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        main(["serve", "--workers", "0"])
    assert "--workers: must be a number from 1 to 64 or auto (got '0')" in capsys.readouterr().err
    assert (
        parse_config({"server": {"workers": "auto"}}, "test", environ={}).server.workers == "auto"
    )
    with pytest.raises(ConfigError, match=r"server\.workers"):
        parse_config({"server": {"workers": 0}}, "test", environ={})


_IN_FLIGHT_WORKER = """
import sys
from websearch_mcp.metrics import Metrics
Metrics().in_flight.inc()  # written to the shared files at once
print("counted", flush=True)
sys.stdin.read()  # killed here, mid-request
"""


def _in_flight(shared: Path) -> float:
    registry = CollectorRegistry()
    MultiProcessCollector(registry, str(shared))
    return registry.get_sample_value("websearch_in_flight_requests") or 0.0


def test_a_killed_workers_requests_in_flight_stop_counting(tmp_path: Path) -> None:
    env = {**os.environ, "PROMETHEUS_MULTIPROC_DIR": str(tmp_path)}
    child = subprocess.Popen(
        [sys.executable, "-c", _IN_FLIGHT_WORKER],
        env=env,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    assert child.stdout is not None and child.stdout.readline().strip() == "counted"
    forget_dead_workers(str(tmp_path))
    assert _in_flight(tmp_path) == 1.0  # alive: it counts
    child.kill()
    child.wait()
    forget_dead_workers(str(tmp_path))
    assert _in_flight(tmp_path) == 0.0
