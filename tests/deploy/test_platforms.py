"""What differs by platform, shown on Linux by taking away what Linux has: `sched_getaffinity`
and `/proc` (macOS), an address-space cap the system refuses (macOS) or a lower hard limit, a
user without a home (an unnamed uid in a container), a configuration saved as UTF-16 (Windows
PowerShell), a working directory that is gone."""

from __future__ import annotations

import builtins
import multiprocessing
import os
import resource
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

import pytest

from testing.config_files import write_config
from testing.fetch_helpers import LocalServer, page
from testing.redis_server import free_port
from websearch_mcp.cli import main
from websearch_mcp.config import FetchSettings
from websearch_mcp.config.loader import read_config_file
from websearch_mcp.config.types import default_data_dir
from websearch_mcp.errors import FetchError
from websearch_mcp.fetch import pool, worker
from websearch_mcp.fetch.client import RawPage
from websearch_mcp.fetch.extract import ExtractLimits, close_pools, extract
from websearch_mcp.server.workers import worker_count


def test_auto_workers_count_the_machines_cores_without_sched_getaffinity(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.delattr(os, "sched_getaffinity", raising=False)
    monkeypatch.setattr(os, "cpu_count", lambda: 6)
    assert worker_count("auto", cpu_max=tmp_path / "no-cgroup") == 6


def test_a_workers_memory_is_measured_without_proc(monkeypatch: pytest.MonkeyPatch) -> None:
    real_open = builtins.open

    def no_proc(file: Any, *args: Any, **kwargs: Any) -> Any:
        if str(file).startswith("/proc/"):
            raise FileNotFoundError(file)
        return real_open(file, *args, **kwargs)

    monkeypatch.setattr(builtins, "open", no_proc)
    assert worker._resident_bytes() > 10 * 1024 * 1024  # this process's peak, in bytes


def test_a_refused_memory_cap_leaves_the_worker_reading(monkeypatch: pytest.MonkeyPatch) -> None:
    def refused(*_: Any) -> None:
        raise ValueError("current limit exceeds maximum limit")  # as macOS answers

    monkeypatch.setattr(resource, "setrlimit", refused)
    worker._cap_memory(768 * 1024 * 1024)  # no error


def test_the_memory_cap_keeps_under_a_lower_hard_limit() -> None:
    # `ulimit -Hv` below the cap: raising the limit is refused, so the cap is the hard limit.
    code = (
        "import resource; from websearch_mcp.fetch import worker; "
        "resource.setrlimit(resource.RLIMIT_AS, (700 << 20, 700 << 20)); "
        "worker._cap_memory(768 << 20); print(resource.getrlimit(resource.RLIMIT_AS)[0] >> 20)"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "700"


def test_a_user_without_a_home_gets_a_data_directory(monkeypatch: pytest.MonkeyPatch) -> None:
    def homeless() -> Path:
        raise RuntimeError("Could not determine home directory")

    monkeypatch.delenv("XDG_DATA_HOME", raising=False)
    monkeypatch.setattr(Path, "home", homeless)
    found = default_data_dir()
    assert found.parent.parent == Path(tempfile.gettempdir()) and found.name == "websearch-mcp"


def test_a_configuration_saved_as_utf16_is_named_as_such(tmp_path: Path) -> None:
    config = tmp_path / "config.yaml"
    config.write_text("search:\n  max_results: 5\n", encoding="utf-16")
    with pytest.raises(ValueError, match=r"config\.yaml is not UTF-8 text \(saved as UTF-16\?\)"):
        read_config_file(config)


def test_a_page_is_read_from_a_working_directory_since_deleted(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    # A desktop client may start the server in a folder that is later removed: the extraction
    # workers start from a working directory that exists.
    config = write_config(tmp_path / "c.yaml", "http://127.0.0.1:9")
    gone = tmp_path / "gone"
    gone.mkdir()
    monkeypatch.chdir(gone)
    gone.rmdir()
    monkeypatch.setattr(sys.modules[close_pools.__module__], "_POOLS", {})
    html = (
        b"<html><body><article><p>"
        + b"Hello there, reader. " * 40
        + b"</p></article></body></html>"
    )
    with LocalServer(routes={"/a.html": page(html)}) as site:
        monkeypatch.setenv("WEBSEARCH_MCP_FETCH__ALLOW_NETWORKS", "['127.0.0.0/8']")
        monkeypatch.setenv("WEBSEARCH_MCP_FETCH__ALLOWED_PORTS", f"[{site.port}]")
        try:
            assert main(["fetch", site.url("/a.html"), "--config", str(config)]) == 0
        finally:
            close_pools()
    assert "Hello there, reader." in capsys.readouterr().out


async def test_pages_are_refused_clearly_where_no_fork_server_exists(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # Windows starts processes by spawning only: the extraction workers cannot run there.
    monkeypatch.setattr(multiprocessing, "get_all_start_methods", lambda: ["spawn"])
    monkeypatch.setattr(sys.modules[close_pools.__module__], "_POOLS", {})
    raw = RawPage("https://example.org/", "https://example.org/", "text/html", None, b"<p>Hi</p>")
    with pytest.raises(FetchError, match=r"needs Linux or macOS.*WSL or Docker"):
        await extract(raw, ExtractLimits.from_settings(FetchSettings()))


def test_serve_with_workers_is_refused_clearly_on_windows(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr(sys, "platform", "win32")
    assert main(["serve", "--port", str(free_port()), "--workers", "2"]) == 1
    assert "--workers needs Linux or macOS" in capsys.readouterr().err


def test_a_standard_stream_closed_at_start_is_taken_by_no_file(tmp_path: Path) -> None:
    # Started with stderr closed, the next file opened would get its number, and stray output
    # sent to stderr would land in it.
    config = write_config(tmp_path / "c.yaml", "http://127.0.0.1:9")
    code = (
        "import os, sys; from websearch_mcp.cli import main; os.close(2); "
        f"main(['check-config', {str(config)!r}]); "
        "print(os.path.realpath(f'/proc/self/fd/2'), file=sys.stdout)"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip().endswith("/dev/null")


async def test_a_worker_that_cannot_start_is_a_clear_page_error(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # A TMPDIR longer than a Unix socket's path allows stops the fork server from starting.
    def refused(*_: Any) -> None:
        raise OSError("AF_UNIX path too long")

    monkeypatch.setattr(pool, "_Worker", refused)
    monkeypatch.setattr(sys.modules[close_pools.__module__], "_POOLS", {})
    raw = RawPage("https://example.org/", "https://example.org/", "text/html", None, b"<p>Hi</p>")
    try:
        with pytest.raises(FetchError, match="worker could not start: AF_UNIX path too long"):
            await extract(raw, ExtractLimits.from_settings(FetchSettings()))
    finally:
        close_pools()
