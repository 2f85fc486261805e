"""Fixtures shared by the whole suite: the fake engines on 127.0.0.1 and a redis-server.

The chain most end-to-end tests stand on: `engine_results` (what every fake engine answers) ->
`fake` (the `FakeEngines` app, with its counters and faults) -> `engines_url` (its base URL
while it is served by uvicorn). A module overrides the link it needs to change: its own
`engine_results`, or a `fake` with faults set before the server starts.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator

import pytest
from hypothesis import settings

from testing.fake_engines import FakeEngines, ResultsFn, serve_fake_engines
from testing.redis_server import RedisServer, redis_binary
from testing.server_helpers import results_for

# Property tests assert behaviour, not speed: an example that ran slowly once on a busy machine
# (hypothesis's default deadline is 200 ms) is no failure.
settings.register_profile("suite", deadline=None)
settings.load_profile("suite")


@pytest.fixture(autouse=True)
def _logging_restored() -> Iterator[None]:
    """Take back the log handlers a test installed (`serve` and `stdio` configure logging on
    the stream pytest captures, which is closed after the test) and the root level."""
    root = logging.getLogger()
    handlers, level = list(root.handlers), root.level
    yield
    for handler in [h for h in root.handlers if h not in handlers]:
        root.removeHandler(handler)
    root.setLevel(level)


@pytest.fixture
def engine_results() -> ResultsFn:
    """What every fake engine answers: the fixed lists of `testing.server_helpers`."""
    return results_for


@pytest.fixture
def fake(engine_results: ResultsFn) -> FakeEngines:
    return FakeEngines(engine_results)


@pytest.fixture
def engines_url(fake: FakeEngines) -> Iterator[str]:
    """The fake engines' base URL (`base_urls` gives each engine's) while they are served."""
    with serve_fake_engines(fake) as base:
        yield base


@pytest.fixture(scope="module")
def redis_server() -> Iterator[RedisServer]:
    """A redis-server on a free port shared by one module's tests (each empties what it uses)."""
    pytest.importorskip("redis", reason="the Redis backend needs the redis extra")
    server = RedisServer(redis_binary())
    server.start()
    yield server
    server.close()
