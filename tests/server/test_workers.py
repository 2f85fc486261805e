"""`serve --workers 2`: two processes on one port share breakers and add up their metrics, and
connections opened together are spread over both.

Which worker accepts a connection is the kernel's choice (each worker listens on a socket of its
own, `SO_REUSEPORT`), so the tests find out: the server's side of a connection is a socket that
one worker holds (`/proc/net/tcp` and `/proc/<pid>/fd`). A request meant for one worker goes on a
connection that worker holds.
"""

from __future__ import annotations

import contextlib
import errno
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any, cast

import httpx
import pytest
import uvicorn.config
import yaml
from prometheus_client import CollectorRegistry
from prometheus_client.multiprocess import MultiProcessCollector

from testing.fake_engines import FakeEngines, Fault, base_urls
from testing.fetch_helpers import LocalServer, page
from testing.server_helpers import MCP_HEADERS, TAVILY_KEY, tool_call
from websearch_mcp.cache.base import run_cleanup_loop
from websearch_mcp.cli import _parser, main
from websearch_mcp.engines.registry import ENGINES
from websearch_mcp.errors import ConfigError
from websearch_mcp.runtime import LeaderLock, shared_runtime, temporary_files_in_runtime_dir
from websearch_mcp.search.configuration import parse_config
from websearch_mcp.server.app import worker_app
from websearch_mcp.server.metrics import forget_dead_workers
from websearch_mcp.server.status.shared import PUBLISH_SECONDS
from websearch_mcp.server.workers import STARTUP_FAILURE, listening_sockets, worker_count

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
        _stop(process)


def _stop(process: subprocess.Popen[bytes]) -> int:
    if process.poll() is None:
        process.send_signal(signal.SIGINT)
    return process.wait(timeout=30)


def _holder(workers: list[int], server_port: int, client_port: int) -> int | None:
    """The worker holding the server's side of the connection from `client_port`."""
    inode = None
    for line in Path("/proc/net/tcp").read_text().splitlines()[1:]:
        fields = line.split()
        local, remote = fields[1].rsplit(":", 1)[1], fields[2].rsplit(":", 1)[1]
        if int(local, 16) == server_port and int(remote, 16) == client_port:
            inode = fields[9]
    if inode is None:
        return None
    for pid in workers:
        with contextlib.suppress(OSError):
            for fd in Path(f"/proc/{pid}/fd").iterdir():
                with contextlib.suppress(OSError):
                    if os.readlink(fd) == f"socket:[{inode}]":
                        return pid
    return None


@contextlib.contextmanager
def on_worker(info: dict[str, Any], pid: int, counted: list[int]) -> Iterator[httpx.Client]:
    """A client whose one connection `pid` holds; each `/healthz` it took to find one goes into
    `counted`."""
    port = int(info["url"].rsplit(":", 1)[1])
    for _ in range(100):
        client = httpx.Client(timeout=20, limits=httpx.Limits(max_connections=1))
        response = client.get(f"{info['url']}/healthz")
        counted.append(response.status_code)
        client_port = response.extensions["network_stream"].get_extra_info("client_addr")[1]
        if _holder(info["workers"], port, client_port) == pid:
            try:
                yield client
            finally:
                client.close()
            return
        client.close()
    raise AssertionError(f"no connection reached worker {pid}")


def _healthz(url: str, counted: list[int]) -> None:
    """`/healthz` on a fresh connection (it waits in the listening socket's queue until a
    worker has started and takes it)."""
    counted.append(httpx.get(f"{url}/healthz", timeout=30).status_code)


def _search(client: httpx.Client, url: str, query: str) -> dict[str, Any]:
    response = client.post(f"{url}/mcp", json=tool_call({"query": query}), headers=MCP_HEADERS)
    response.raise_for_status()
    result = response.json()["result"]
    return {e["name"]: e for e in result["structuredContent"]["engines"]}


def _metric(text: str, name: str, labels: str) -> float:
    """The sum of `name`'s samples whose labels contain `labels`."""
    found = re.findall(rf"^{name}\{{([^}}]*)\}} (\S+)$", text, re.M)
    values = [float(value) for have, value in found if labels in have]
    assert values, f"{name}{{{labels}}} missing"
    return sum(values)


def _fault_then_search(
    server: dict[str, Any], fake: FakeEngines, fault: Fault, health: list[int]
) -> tuple[dict[str, Any], dict[str, Any], int]:
    """A search on the first worker while searxng answers with `fault`, then one on the second
    with searxng well again: both searches' engine reports, and how many requests searxng had
    taken before the second."""
    url = server["url"]
    first, second = server["workers"]
    with on_worker(server, first, health) as client:
        fake.faults["searxng"] = fault
        failed = _search(client, url, "python asyncio event loop")
    fake.faults.clear()
    asked = fake.counts["searxng"]
    with on_worker(server, second, health) as client:
        after = _search(client, url, "python asyncio coroutines")
    return failed, after, asked


def test_two_workers_share_breakers_and_add_up_metrics(
    server: dict[str, Any], fake: FakeEngines
) -> None:
    url = server["url"]
    health: list[int] = []
    failed, reports, asked = _fault_then_search(server, fake, Fault(status=403), health)
    assert failed["searxng"]["status"] in ("blocked", "error")
    assert failed["tavily"]["status"] == "ok"
    # The breaker the first worker opened keeps the second from asking searxng.
    assert reports["searxng"]["status"] == "skipped"
    assert "circuit open" in reports["searxng"]["error"]
    assert fake.counts["searxng"] == asked
    with on_worker(server, server["workers"][0], health) as client:
        text = client.get(f"{url}/metrics").text
    # One search was served by each worker; /metrics from one of them counts both.
    assert _metric(text, "websearch_tool_requests_total", 'tool="web_search"') == 2
    assert _metric(text, "websearch_http_requests_total", 'route="/healthz",status="200"') == len(
        health
    )
    assert set(health) == {200}
    assert _metric(text, "websearch_breaker_open", 'engine="searxng"') == 1


def _burst(server: dict[str, Any], count: int, timeout: float) -> list[int | None]:
    """`count` connections opened together, each asked `/healthz` and answered 200; the worker
    that held each one."""
    port = int(server["url"].rsplit(":", 1)[1])
    conns = [socket.create_connection(("127.0.0.1", port)) for _ in range(count)]
    try:
        for conn in conns:
            conn.sendall(b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
        for conn in conns:
            conn.settimeout(timeout)
            assert conn.recv(4096).startswith(b"HTTP/1.1 200")
        return [_holder(_workers(server["pid"]), port, c.getsockname()[1]) for c in conns]
    finally:
        for conn in conns:
            conn.close()


def test_connections_opened_together_are_spread_over_the_workers(server: dict[str, Any]) -> None:
    """A client or proxy opening its pool at once: on one shared socket the worker that woke
    first took all 16 connections."""
    holders = _burst(server, 16, timeout=20)
    # Spread by a hash of the addresses: all 16 on one of two workers has odds of 1 in 32,768.
    assert None not in holders, holders  # every connection's worker was found
    assert sorted(set(cast(list[int], holders))) == sorted(server["workers"]), holders


def test_a_worker_that_died_leaves_no_socket_without_one(server: dict[str, Any]) -> None:
    """Its replacement listens on every socket, its own included: connections the kernel hands
    to that socket are answered, the ones waiting since the death too."""
    dead = server["workers"][0]
    os.kill(dead, signal.SIGKILL)
    holders = _burst(server, 16, timeout=60)
    assert dead not in _workers(server["pid"]) and dead not in holders


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


def test_each_worker_has_a_socket_of_its_own_on_one_port() -> None:
    sockets = listening_sockets("127.0.0.1", 0, 3)
    try:
        ports = {sock.getsockname()[1] for sock in sockets}
        assert len(sockets) == 3 and len(ports) == 1
        assert all(sock.getsockopt(socket.SOL_SOCKET, socket.SO_REUSEPORT) for sock in sockets)
        assert all(sock.getsockopt(socket.SOL_SOCKET, socket.SO_ACCEPTCONN) for sock in sockets)
        # A restart binds again while the last run's connections are in TIME_WAIT.
        assert all(sock.getsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR) for sock in sockets)
        # A second server on the port is refused, as on a port a single socket holds.
        with pytest.raises(OSError) as refused:
            listening_sockets("127.0.0.1", ports.pop(), 2)
        assert refused.value.errno == errno.EADDRINUSE
    finally:
        for sock in sockets:
            sock.close()
    (single,) = listening_sockets("127.0.0.1", 0, 1)
    with single:
        assert not single.getsockopt(socket.SOL_SOCKET, socket.SO_REUSEPORT)
        # Every accepted connection sends an answer written in parts at once (no Nagle wait
        # for the client's delayed ACK), whatever the event loop does.
        with socket.create_connection(single.getsockname()), single.accept()[0] as accepted:
            assert accepted.getsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY)
        with pytest.raises(OSError):
            listening_sockets("127.0.0.1", single.getsockname()[1], 2)


def test_worker_count(tmp_path: Path) -> None:
    cores = len(os.sched_getaffinity(0))
    assert worker_count(3) == 3
    cpu_max = tmp_path / "cpu.max"
    assert worker_count("auto", cpu_max) == cores  # no cgroup file: every usable core
    cpu_max.write_text("max 100000\n")
    assert worker_count("auto", cpu_max) == cores  # no quota
    cpu_max.write_text("50000 100000\n")
    assert worker_count("auto", cpu_max) == 1  # half a core: one worker
    cpu_max.write_text("150000 100000\n")
    assert worker_count("auto", cpu_max) == min(cores, 2)  # `--cpus 1.5`: two workers
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
        cache = Cache()
        ticks: list[int] = []

        async def sleep(_: float, ticks: list[int] = ticks) -> None:
            ticks.append(1)
            if len(ticks) > 2:
                raise TimeoutError

        with pytest.raises(TimeoutError):
            await run_cleanup_loop(cache, 1, sleep=sleep, leader=lock)  # type: ignore[arg-type]
        assert cache.cleaned == expected
    holder.release()
    assert other.acquire()  # the next worker takes over
    assert not holder.acquire()  # and the one that let go holds it no more


def test_a_bad_worker_count_is_refused_naming_it(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        main(["serve", "--workers", "0"])
    assert "--workers: must be a number from 1 to 64 or auto (got '0')" in capsys.readouterr().err
    # Parsed only: a count let through would start that many workers.
    with pytest.raises(SystemExit):
        _parser().parse_args(["serve", "--workers", "65"])
    assert "(got '65')" in capsys.readouterr().err
    assert _parser().parse_args(["serve", "--workers", "auto"]).workers == "auto"
    assert _parser().parse_args(["serve", "--workers", "64"]).workers == 64
    assert (
        parse_config({"server": {"workers": "auto"}}, "test", environ={}).server.workers == "auto"
    )
    with pytest.raises(ConfigError, match=r"server\.workers"):
        parse_config({"server": {"workers": 0}}, "test", environ={})


@pytest.mark.parametrize("host", ["127.0.0.1", "192.0.2.1"])  # in use; not this machine's
def test_workers_that_cannot_listen_say_so_in_one_line(tmp_path: Path, host: str) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        env = {**os.environ, "WEBSEARCH_MCP_TOKENS": "a-token-long-enough-1234"}
        serve = [sys.executable, "-m", "websearch_mcp.cli", "serve", "--host", host]
        done = subprocess.run(
            [*serve, "--port", str(port), "--workers", "2"],
            env=env,
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
        )
    assert done.returncode == 1
    assert done.stderr.startswith(f"error: cannot listen on {host}:{port}: "), done.stderr
    assert len(done.stderr.splitlines()) == 1, done.stderr


_IN_FLIGHT_WORKER = """
import sys
from websearch_mcp.server.metrics import Metrics
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


def test_a_worker_without_a_call_for_over_an_hour_still_reports(
    server: dict[str, Any], fake: FakeEngines
) -> None:
    url = server["url"]
    first, second = server["workers"]
    for pid in (first, second):  # each worker has started, then left its hour for the other
        with on_worker(server, pid, []):
            pass
    time.sleep(PUBLISH_SECONDS + 0.5)
    (shared,) = server["runtime"].glob("websearch-mcp-*/status")
    # The second worker has had nothing new to write for two hours: its hour did not change.
    then = time.time() - 2 * 3600
    os.utime(shared / f"{second}.json", (then, then))
    with on_worker(server, first, []) as client:
        report = client.get(f"{url}/status.json").json()
    assert report["service"]["workers"] == {"configured": 2, "reporting": 2, "ended": 0}


def test_either_workers_status_page_shows_the_whole_machine(
    server: dict[str, Any], fake: FakeEngines
) -> None:
    url = server["url"]
    health: list[int] = []
    _fault_then_search(server, fake, Fault(status=429, retry_after="120"), health)
    time.sleep(PUBLISH_SECONDS + 0.5)  # each worker has left its hour for the other
    for pid in server["workers"]:
        with on_worker(server, pid, health) as client:
            report = client.get(f"{url}/status.json").json()
        service = report["service"]
        assert service["workers"] == {"configured": 2, "reporting": 2, "ended": 0}
        assert (service["figures"], service["shared_state"]) == ("machine", "sqlite")
        rows = {row["name"]: row for row in report["engines"]}
        # The first worker's failure opened the shared breaker: the second skipped searxng.
        assert rows["searxng"]["state"] == "rate_limited"
        assert rows["searxng"]["hour"]["calls"] == fake.counts["searxng"] == 1
        assert rows["searxng"]["hour"]["skipped"] == 1
        assert rows["tavily"]["hour"]["calls"] == fake.counts["tavily"] == 2


def test_a_stopping_server_refuses_new_connections_while_its_searches_finish(
    server: dict[str, Any], fake: FakeEngines
) -> None:
    """SIGTERM (`docker stop`) with a search in flight: the search is answered, and a client
    connecting meanwhile is refused at once, as by a server of one worker, rather than left
    waiting in a socket no worker accepts from any more until the search is done."""
    fake.faults["tavily"] = fake.faults["searxng"] = Fault(delay=4)
    with ThreadPoolExecutor(1) as pool, httpx.Client(timeout=30) as client:
        search = pool.submit(_search, client, server["url"], "python asyncio")
        deadline = time.monotonic() + 30
        while fake.counts["tavily"] + fake.counts["searxng"] < 2:  # the search is in flight
            assert time.monotonic() < deadline, "the engines were not asked"
            time.sleep(0.02)
        os.kill(server["pid"], signal.SIGTERM)
        time.sleep(1.5)  # the parent has seen the signal (it looks every 0.5 s), told the workers
        assert not search.done()
        started = time.monotonic()
        with pytest.raises(httpx.ConnectError):
            httpx.get(f"{server['url']}/healthz", timeout=10)
        assert time.monotonic() - started < 1
        assert search.result()["tavily"]["status"] == "ok"
    assert server["stop"]() == 0


def _replacement(info: dict[str, Any], dead: int, seconds: float = 60) -> list[int]:
    """The workers once `dead` has been replaced."""
    deadline = time.monotonic() + seconds
    while True:
        now = _workers(info["pid"])
        if dead not in now and len(now) == 2:
            return now
        assert time.monotonic() < deadline, "no replacement worker"
        time.sleep(0.1)


def _engine_states(info: dict[str, Any], pid: int) -> dict[str, str]:
    deadline = time.monotonic() + 60
    while True:  # a worker just started may not take its connections yet
        try:
            with on_worker(info, pid, []) as client:
                report = client.get(f"{info['url']}/status.json").json()
            return {row["name"]: row["state"] for row in report["engines"]}
        except (httpx.HTTPError, AssertionError):
            assert time.monotonic() < deadline
            time.sleep(0.5)


def test_a_replaced_worker_runs_the_configuration_the_server_started_with(
    server: dict[str, Any], tmp_path: Path
) -> None:
    """The file is being edited while the server runs (half written, here), and a worker dies:
    its replacement runs what the others run, rather than another configuration or none."""
    dead, alive = server["workers"]
    before = _engine_states(server, alive)
    _engine_states(server, dead)  # it has started, and shared its hour
    (tmp_path / "config.yaml").write_text("engines: [\n")
    os.kill(dead, signal.SIGKILL)
    server["workers"] = _replacement(server, dead)
    (new,) = [pid for pid in server["workers"] if pid != alive]
    assert _engine_states(server, new) == before == _engine_states(server, alive)
    with on_worker(server, new, []) as client:  # the dead worker's hour still counts
        workers = client.get(f"{server['url']}/status.json").json()["service"]["workers"]
        page = client.get(f"{server['url']}/status").text
    assert workers == {"configured": 2, "reporting": 3, "ended": 1}
    assert "3 reporting of 2 (1 ended within the hour)" in page


def test_workers_stop_when_their_parent_is_killed(
    server: dict[str, Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Killed, the parent stops no worker: left serving the port, they would keep the server
    from starting again. It cannot remove its runtime directory either: the next server started
    does, and leaves those in use."""
    monkeypatch.setattr(tempfile, "tempdir", str(server["runtime"]))
    (before,) = server["runtime"].glob("websearch-mcp-*")
    with shared_runtime() as other:  # a server started meanwhile
        assert before.exists()
    assert not other.exists()
    workers = server["workers"]
    deadline = time.monotonic() + 60
    while not all(_holds(pid, before / "in-use.lock") for pid in workers):  # once started
        assert time.monotonic() < deadline, "the workers do not hold their directory"
        time.sleep(0.1)
    for pid in workers:  # held while they run without their parent
        os.kill(pid, signal.SIGSTOP)
    os.kill(server["pid"], signal.SIGKILL)
    while _running(server["pid"]):
        time.sleep(0.05)
    with shared_runtime():
        assert before.exists()
    for pid in workers:
        os.kill(pid, signal.SIGCONT)
    deadline = time.monotonic() + 20
    alive = workers
    while alive and time.monotonic() < deadline:
        time.sleep(0.2)
        alive = [pid for pid in workers if _running(pid)]
    for pid in alive:
        os.kill(pid, signal.SIGKILL)
    assert alive == []
    assert before.exists()
    # A process of the killed server may still be on its way out: the next server removes the
    # directory once none holds it.
    lock = before / "in-use.lock"
    while any(_holds(int(p.name), lock) for p in Path("/proc").iterdir() if p.name.isdigit()):
        assert time.monotonic() < deadline, "a process of the killed server holds its directory"
        time.sleep(0.1)
    with shared_runtime() as after:
        assert list(server["runtime"].glob("websearch-mcp-*")) == [after]


def _holds(pid: int, path: Path) -> bool:
    with contextlib.suppress(OSError):
        return any(os.readlink(fd) == str(path) for fd in Path(f"/proc/{pid}/fd").iterdir())
    return False


def _running(pid: int) -> bool:
    try:
        return Path(f"/proc/{pid}/stat").read_text().split()[2] != "Z"
    except OSError:
        return False


def test_workers_that_read_pages_leave_nothing_in_tmpdir_when_stopped(
    tmp_path: Path, engines_url: str
) -> None:
    """Each worker's extraction fork server keeps its socket in a directory of TMPDIR that
    multiprocessing removes at exit, which a worker ended by the signal uvicorn raises again
    never reaches: in the runtime directory, it goes with the server."""
    # Short: the socket's path must fit under it (pytest's own directories are long).
    temp = Path(tempfile.mkdtemp(prefix="wsm-"))
    with LocalServer() as site, _removed(temp):
        site.routes["/doc"] = page("<html><body><article><p>Some words.</p></article></body>")
        engines: dict[str, Any] = {name: {"enabled": False} for name in ENGINES}
        engines["searxng"] = {"enabled": True, "base_url": base_urls(engines_url)["searxng"]}
        config = {
            "engines": engines,
            "fetch": {"allow_networks": ["127.0.0.0/8"], "allowed_ports": [site.port]},
            "cache": {"backend": "none"},
            "server": {"log_level": "warning"},
        }
        (tmp_path / "config.yaml").write_text(yaml.safe_dump(config))
        port = _free_port()
        process = subprocess.Popen(
            [sys.executable, "-m", "websearch_mcp.cli", "serve", "--config",
             str(tmp_path / "config.yaml"), "--port", str(port), "--workers", "2"],
            env={**os.environ, "TMPDIR": str(temp)},
        )  # fmt: skip
        try:
            call = tool_call({"url": site.url("/doc")}, "fetch_page")
            deadline = time.monotonic() + 60
            read = 0
            while read < 6:  # on either worker, most likely both
                assert time.monotonic() < deadline, "the pages were not read"
                with contextlib.suppress(httpx.HTTPError):
                    answer = httpx.post(
                        f"http://127.0.0.1:{port}/mcp", json=call, headers=MCP_HEADERS, timeout=30
                    ).json()["result"]["structuredContent"]
                    read += "Some words." in answer["content"]
            assert [p.name for p in temp.iterdir() if p.name.startswith("pymp-")] == []
            process.send_signal(signal.SIGTERM)
            assert process.wait(timeout=30) == 0
        finally:
            _stop(process)
        assert list(temp.iterdir()) == []


@pytest.mark.parametrize(("letter", "moved"), [("e", True), ("é", False)])
def test_temporary_files_stay_where_the_socket_path_would_be_too_long(
    letter: str, moved: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A socket's path is bounded in bytes: "é" takes two.
    runtime = f"/tmp/{letter * 30}/websearch-mcp-12345678"
    monkeypatch.setenv("WEBSEARCH_WORKER_DIR", runtime)
    monkeypatch.setattr(tempfile, "tempdir", "/tmp")
    temporary_files_in_runtime_dir()
    assert tempfile.gettempdir() == (runtime if moved else "/tmp")


@contextlib.contextmanager
def _removed(path: Path) -> Iterator[None]:
    try:
        yield
    finally:
        shutil.rmtree(path, ignore_errors=True)


def test_a_setting_variable_in_any_case_leaves_the_workers_serving(tmp_path: Path) -> None:
    """The parent names its command line's settings to its workers in variables of its own:
    the user's `WEBSEARCH_MCP_server__workers` then made two variables for one key in each
    worker, which refused to start."""
    port = _free_port()
    env = {**os.environ, "TMPDIR": str(tmp_path), "WEBSEARCH_MCP_server__workers": "2"}
    env.pop("WEBSEARCH_MCP_CONFIG", None)
    process = subprocess.Popen(
        [sys.executable, "-m", "websearch_mcp.cli", "serve", "--port", str(port)], env=env
    )
    try:
        deadline = time.monotonic() + 60
        status = None
        while status is None and process.poll() is None and time.monotonic() < deadline:
            with contextlib.suppress(httpx.HTTPError):
                status = httpx.get(f"http://127.0.0.1:{port}/healthz", timeout=2).status_code
            time.sleep(0.2)
        assert status == 200 and len(_workers(process.pid)) == 2
    finally:
        _stop(process)


_FAILING_APP = """
def app():
    async def asgi(scope, receive, send):
        await receive()
        await send({"type": "lifespan.startup.failed", "message": "cannot start"})
    return asgi
"""

_RUN_WORKERS = """
import sys
from websearch_mcp.server.workers import run_workers
sys.exit(run_workers("failing_app:app", 2, host="127.0.0.1", port=0, log_level="critical"))
"""


def test_workers_that_cannot_start_stop_the_server_with_a_failure_status(tmp_path: Path) -> None:
    """uvicorn's supervisor stops when a worker fails before serving; the server then exited
    0, as if told to stop, where one process exits 3."""
    (tmp_path / "failing_app.py").write_text(_FAILING_APP)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(tmp_path), *sys.path])}
    done = subprocess.run(
        [sys.executable, "-c", _RUN_WORKERS], env=env, capture_output=True, timeout=60, check=False
    )
    assert done.returncode == STARTUP_FAILURE == uvicorn.config.STARTUP_FAILURE, done.stderr


def test_a_worker_whose_configuration_does_not_load_stops_the_server(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """A worker started later reads a file over the variable's size again; the supervisor
    restarted a worker that raised, without end."""
    path = tmp_path / "config.yaml"
    path.write_text("search: {deadline_seconds: -1}\n")
    monkeypatch.setenv("WEBSEARCH_MCP_CONFIG", str(path))
    with pytest.raises(SystemExit) as stopped:
        worker_app()
    assert stopped.value.code == STARTUP_FAILURE
    err = capsys.readouterr().err
    assert err.startswith("error: ") and "search.deadline_seconds" in err, err
