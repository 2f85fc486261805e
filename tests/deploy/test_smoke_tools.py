"""deploy/smoke.sh's own parts, without Docker: the fake SearXNG it runs as the only engine,
and the MCP client it calls the service with, against a real server on 127.0.0.1."""

from __future__ import annotations

import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from testing.redis_server import free_port
from testing.serving import serve_app
from testing.shared import REPO
from websearch_mcp.search.configuration import parse_config
from websearch_mcp.server.app import create_app

DEPLOY = REPO / "deploy"


@pytest.fixture
def fake_searxng() -> Iterator[str]:
    port = free_port()
    process = subprocess.Popen(
        [sys.executable, str(DEPLOY / "fake_searxng.py"), str(port), "127.0.0.1"]
    )
    url = f"http://127.0.0.1:{port}"
    try:
        for _ in range(200):
            try:
                httpx.get(f"{url}/count", timeout=1)
                break
            except httpx.TransportError:
                time.sleep(0.02)
        yield url
    finally:
        process.terminate()
        process.wait(timeout=10)


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
