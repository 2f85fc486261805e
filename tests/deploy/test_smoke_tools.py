"""deploy/smoke.sh's own parts, without Docker: the fake SearXNG it runs as the only engine,
and the MCP client it calls the service with, against a real server on 127.0.0.1."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from testing.redis_server import free_port
from testing.serving import serve_app, wait_until_answering
from testing.shared import REPO
from websearch_mcp.search.configuration import parse_config
from websearch_mcp.server.app import create_app

DEPLOY = REPO / "deploy"


def _start_fake_searxng() -> tuple[subprocess.Popen[bytes], str]:
    """deploy/fake_searxng.py on a free port, once it answers."""
    port = free_port()
    process = subprocess.Popen(
        [sys.executable, str(DEPLOY / "fake_searxng.py"), str(port), "127.0.0.1"]
    )
    url = f"http://127.0.0.1:{port}"
    wait_until_answering(f"{url}/count")
    return process, url


@pytest.fixture
def fake_searxng() -> Iterator[str]:
    process, url = _start_fake_searxng()
    try:
        yield url
    finally:
        process.terminate()
        process.wait(timeout=10)


def test_the_fake_searxng_stops_on_sigterm() -> None:
    """It is PID 1 of its container, where a signal with no handler is ignored: without its
    own, `docker stop` waits 10 s and kills it."""
    process, _ = _start_fake_searxng()
    try:
        process.terminate()
        assert process.wait(timeout=10) == 0
    finally:
        process.kill()


def _call(base: str, token: str, query: str) -> str:
    run = subprocess.run(
        [sys.executable, str(DEPLOY / "smoke_call.py"), base, token, query],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert run.returncode == 0, run.stderr
    return run.stdout.strip()


def test_the_smoke_client_searches_the_fake_engine_then_hits_the_cache(
    fake_searxng: str, tmp_path: Path
) -> None:
    token = "smoke-test-token-0123456789"
    raw = {
        "engines": {"searxng": {"enabled": True, "base_url": fake_searxng}},
        "cache": {"backend": "sqlite", "path": str(tmp_path / "cache.sqlite3")},
        "server": {"auth_tokens": [token]},
    }
    settings = parse_config(raw, "smoke", environ={})
    with serve_app(create_app(settings)) as url:
        first = _call(url, token, "smoke across replicas")
        again = _call(url, token, "smoke across replicas")
    assert first == "cached=false results=3 engines=searxng:ok"
    assert again == "cached=true results=3 engines=searxng:ok"
    assert httpx.get(f"{fake_searxng}/count").json() == {"searches": 1}


def _failover(
    base: str, token: str, limit: str, command: list[str], seconds: str = "3"
) -> tuple[int, str]:
    run = subprocess.run(
        [
            sys.executable,
            str(DEPLOY / "smoke_failover.py"),
            base,
            token,
            seconds,
            limit,
            "--",
            *command,
        ],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    return run.returncode, run.stdout.strip()


def test_the_failover_check_searches_while_its_command_runs_and_judges_by_the_limit(
    fake_searxng: str, tmp_path: Path
) -> None:
    token = "smoke-test-token-0123456789"
    marker = tmp_path / "ran"
    raw = {
        "engines": {"searxng": {"enabled": True, "base_url": fake_searxng}},
        "cache": {"backend": "none"},
        "server": {"auth_tokens": [token], "rate_limit_per_minute": 0},
    }
    settings = parse_config(raw, "smoke", environ={})
    with serve_app(create_app(settings)) as url:
        code, report = _failover(url, token, "1.5", ["touch", str(marker)])
        assert code == 0 and marker.exists(), report
        calls = int(report.split()[0].removeprefix("calls="))
        assert report.split()[1] == "failed=0" and calls > 3
        # Fresh queries only: each call reached the engine.
        assert httpx.get(f"{fake_searxng}/count").json() == {"searches": calls}
        # A limit no call can meet, a command that fails, a wrong token: each fails the check
        # (calls for a moment are enough; the command still runs once they are under way).
        assert _failover(url, token, "0.000001", ["true"], seconds="0.5")[0] == 1
        assert _failover(url, token, "1.5", ["false"], seconds="0.5")[0] == 1
        code, report = _failover(url, "wrong-token-0123456789", "1.5", ["true"], seconds="0.5")
        assert code == 1 and "failed=0" not in report
