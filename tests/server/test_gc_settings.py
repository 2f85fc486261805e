"""A server settles the garbage collector once started (`gc_settings.settle`); an app built for a
test leaves the test process's collector as it is."""

from __future__ import annotations

import gc
import weakref
from collections.abc import Iterator

import httpx
import pytest

from testing.server_helpers import settings_for
from testing.serving import serve_app
from websearch_mcp.server import gc_settings
from websearch_mcp.server.app import create_app


@pytest.fixture
def collector() -> Iterator[tuple[int, int, int]]:
    """The collector as the test found it, restored afterwards."""
    gc.unfreeze()
    before = gc.get_threshold()
    yield before
    gc.unfreeze()
    gc.set_threshold(*before)


def test_a_server_freezes_what_startup_made(
    engines_url: str, collector: tuple[int, int, int]
) -> None:
    assert gc.get_freeze_count() == 0
    with serve_app(create_app(settings_for(engines_url), settle_gc=True)) as url:
        assert httpx.get(f"{url}/healthz", timeout=10).status_code == 200
        # Imported modules, schemas and clients: no later collection walks them again.
        assert gc.get_freeze_count() > 10_000
        assert gc.get_threshold() == (gc_settings.YOUNG_THRESHOLD, *collector[1:])
        assert collector[0] < gc_settings.YOUNG_THRESHOLD
        reply = httpx.get(f"{url}/search", params={"q": "python", "format": "json"}, timeout=10)
        assert reply.status_code == 200 and reply.json()["results"]


def test_an_app_for_a_test_leaves_the_collector_alone(
    engines_url: str, collector: tuple[int, int, int]
) -> None:
    with serve_app(create_app(settings_for(engines_url))) as url:
        assert httpx.get(f"{url}/healthz", timeout=10).status_code == 200
        assert gc.get_freeze_count() == 0
        assert gc.get_threshold() == collector


def test_what_startup_left_unreachable_is_collected_not_frozen(
    collector: tuple[int, int, int],
) -> None:
    class Node:
        other: Node

    cycle = Node()
    cycle.other = cycle
    left = weakref.ref(cycle)
    del cycle
    gc.disable()  # only `settle` collects: the cycle is startup's garbage when it runs
    try:
        gc_settings.settle()
    finally:
        gc.enable()
    assert left() is None  # frozen, it would have stayed for the process's life
