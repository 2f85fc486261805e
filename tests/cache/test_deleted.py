"""A SQLite cache file deleted while serving is noticed; readiness says when it cannot be."""

from __future__ import annotations

import shutil
import sqlite3
from pathlib import Path

import httpx

from testing.server_helpers import MCP_HEADERS, settings_for, tool_call
from testing.serving import serve_app
from websearch_mcp.server.app import create_app


def rows(path: Path) -> int:
    with sqlite3.connect(path) as db:
        return db.execute("SELECT COUNT(*) FROM cache_entries").fetchone()[0]


def search(http: httpx.Client, url: str, query: str) -> dict:
    body = tool_call({"query": query})
    return http.post(f"{url}/mcp", headers=MCP_HEADERS, json=body).json()["result"]


def remove(path: Path) -> None:
    for suffix in ("", "-wal", "-shm"):
        Path(f"{path}{suffix}").unlink(missing_ok=True)


def test_deleted_file_is_recreated_and_used(engines_url: str, tmp_path: Path) -> None:
    path = tmp_path / "cache" / "cache.sqlite3"
    settings = settings_for(engines_url)
    settings = settings.model_copy(
        update={"cache": settings.cache.model_copy(update={"backend": "sqlite", "path": path})}
    )
    with serve_app(create_app(settings)) as url, httpx.Client(timeout=10) as http:
        assert search(http, url, "python asyncio")["structuredContent"]["cached"] is False
        assert rows(path) == 1
        remove(path)
        ready = http.get(f"{url}/readyz")
        assert ready.status_code == 200, ready.text
        assert path.exists()  # recreated at once, not written to a file no one sees
        assert search(http, url, "python tasks")["structuredContent"]["cached"] is False
        assert rows(path) == 1
        # The directory itself gone and a plain file in its place: nothing can be opened.
        remove(path)
        shutil.rmtree(path.parent)
        path.parent.write_text("not a directory", encoding="utf-8")
        assert http.get(f"{url}/readyz").status_code == 503
        assert search(http, url, "python loops")["isError"] is False  # the cache fails open
