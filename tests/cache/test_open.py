"""Choosing a cache from the settings, the no-op cache, the cleanup loop, cache settings."""

from __future__ import annotations

import asyncio
import logging
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from websearch_mcp.cache import NullCache, open_cache, run_cleanup_loop
from websearch_mcp.cache.sqlite import SqliteCache
from websearch_mcp.cli import main as cli_main
from websearch_mcp.config import CacheSettings
from websearch_mcp.errors import ConfigError
from websearch_mcp.search.configuration import parse_config


async def test_backend_none_keeps_nothing() -> None:
    cache = open_cache(CacheSettings(backend="none"))
    assert isinstance(cache, NullCache)
    await cache.set("web", "k", {"v": 1})
    assert await cache.get("web", "k") is None
    assert await cache.cleanup() == 0
    assert cache.stats.as_dict() == {
        "hits": 0,
        "misses": 0,  # no cache, nothing to miss: the status page shows no hit share
        "sets": 0,
        "bypassed": 0,
        "errors": {},
    }
    await cache.close()


async def test_sqlite_is_the_default_backend(tmp_path: Path) -> None:
    cache = open_cache(CacheSettings(path=tmp_path / "c.sqlite3"))
    assert isinstance(cache, SqliteCache)
    assert cache.path == tmp_path / "c.sqlite3"
    await cache.close()


def test_redis_backend_without_the_package_says_what_to_install(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setitem(sys.modules, "redis", None)  # makes `import redis` fail
    monkeypatch.delitem(sys.modules, "websearch_mcp.cache.redis", raising=False)
    monkeypatch.delitem(sys.modules, "websearch_mcp.net.redis_link", raising=False)
    settings = CacheSettings(backend="redis", redis_url="redis://127.0.0.1:1/0")
    with pytest.raises(ConfigError, match=r"websearch-mcp\[redis\]"):
        open_cache(settings)


def test_check_config_refuses_a_redis_backend_without_the_package(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # It says what `serve` would stop with, not "configuration OK".
    monkeypatch.setitem(sys.modules, "redis", None)
    monkeypatch.delitem(sys.modules, "websearch_mcp.cache.redis", raising=False)
    monkeypatch.delitem(sys.modules, "websearch_mcp.net.redis_link", raising=False)
    path = tmp_path / "conf.yaml"
    path.write_text("cache:\n  backend: redis\n  redis_url: redis://127.0.0.1:6379/0\n")
    assert cli_main(["check-config", str(path)]) == 2
    captured = capsys.readouterr()
    assert "redis package is not installed" in captured.err and "OK" not in captured.out


def test_cache_settings_are_checked_without_showing_the_url() -> None:
    with pytest.raises(ConfigError, match="needs redis_url"):
        parse_config({"cache": {"backend": "redis"}}, "test.yaml", {})
    with pytest.raises(ConfigError, match=r"cache\.redis_url: .*redis://") as err:
        parse_config({"cache": {"redis_url": "http://user:hunter2@host"}}, "test.yaml", {})
    assert "hunter2" not in str(err.value)
    settings = parse_config(
        {"cache": {"backend": "redis", "redis_url": "redis://:hunter2@127.0.0.1:6379/0"}},
        "test.yaml",
        {},
    )
    assert "hunter2" not in repr(settings)


class CountingCache(NullCache):
    def __init__(self) -> None:
        super().__init__()
        self.cleanups = 0

    async def cleanup(self) -> int:
        self.cleanups += 1
        return 3


async def test_cleanup_loop_runs_every_interval_until_cancelled() -> None:
    cache = CountingCache()
    waits: list[float] = []

    async def sleep(seconds: float) -> None:
        waits.append(seconds)
        if len(waits) == 4:
            raise asyncio.CancelledError

    with pytest.raises(asyncio.CancelledError):
        await run_cleanup_loop(cache, 1800, sleep=sleep)
    assert waits == [1800, 1800, 1800, 1800]
    assert cache.cleanups == 3  # each wait is followed by one cleanup; cancelled in the 4th


async def test_a_failed_cleanup_round_is_logged_and_the_loop_goes_on(
    caplog: pytest.LogCaptureFixture,
) -> None:
    # The workers' lock file gone with its directory: that round fails, the next ones clean.
    cache = CountingCache()
    rounds: Iterator[OSError | bool] = iter([OSError("gone"), True, True])
    waits: list[float] = []

    class Leader:
        def acquire(self) -> bool:
            outcome = next(rounds)
            if isinstance(outcome, Exception):
                raise outcome
            return outcome

    async def sleep(seconds: float) -> None:
        waits.append(seconds)
        if len(waits) == 4:
            raise asyncio.CancelledError

    with caplog.at_level(logging.WARNING), pytest.raises(asyncio.CancelledError):
        await run_cleanup_loop(cache, 60, sleep=sleep, leader=Leader())
    assert cache.cleanups == 2
    assert any("cleanup failed (OSError)" in r.getMessage() for r in caplog.records)
