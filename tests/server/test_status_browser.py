"""`/status` in a real browser: headless Chromium loads the page of a server over fake engines in
every state, the rendered DOM shows each engine's state, and a screenshot is taken.

Set `STATUS_SCREENSHOT=docs/status.png` to keep the screenshot (the one the README shows).
"""

from __future__ import annotations

import os
import re
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from testing.browser import chromium, needs_chromium
from testing.fake_engines import FakeEngines
from testing.serving import serve_app
from testing.status_mix import EXPECTED, faulted, mix_settings, serving_mix
from websearch_mcp.server.app import create_app

pytestmark = needs_chromium
PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"


@pytest.fixture
def fake(engine_results: Any) -> FakeEngines:
    return faulted(FakeEngines(engine_results))


@pytest.fixture
def status_url(engines_url: str) -> Iterator[str]:
    queries = ("python asyncio event loop", "asyncio coroutines", "asyncio tasks")
    with serving_mix(engines_url, queries) as url:
        yield f"{url}/status"


def _badge(dom: str, name: str) -> str:
    """The state badge's text in the row of engine `name`."""
    found = re.search(rf'data-engine="{name}".*?class="state \w+">([^<]+)<', dom, re.S)
    assert found, name
    return found.group(1)


def test_chromium_shows_each_engines_state(status_url: str, tmp_path: Path) -> None:
    dom = chromium(tmp_path, "--dump-dom", status_url).stdout
    rows = dict(re.findall(r'<(?:tr|span) data-engine="(\w+)" data-state="(\w+)">', dom))
    assert {name: rows[name] for name in EXPECTED} == EXPECTED
    # The text people read in each row, as the browser rendered it.
    texts = {name: _badge(dom, name) for name in EXPECTED if name != "duckduckgo"}
    assert texts["searxng"] == "ok" and texts["tavily"] == "no key"
    assert re.search(r'id="disabled">Disabled: .*>duckduckgo</span>', dom)
    assert re.fullmatch(r"rate limited, (\d+ s|\d+ min( \d+ s)?) left", texts["brave"])
    assert re.fullmatch(r"blocked, (1 h|\d+ min( \d+ s)?) left", texts["bing"])
    assert re.fullmatch(r"breaker open, \d+ min( \d+ s)? left", texts["wikipedia"])
    assert '<meta http-equiv="refresh" content="30">' in dom
    assert '<dl id="service">' in dom

    shot = tmp_path / "status.png"
    chromium(
        tmp_path, "--hide-scrollbars", "--window-size=1280,760", f"--screenshot={shot}", status_url
    )
    png = shot.read_bytes() if shot.exists() else b""
    assert png.startswith(PNG_SIGNATURE)
    assert int.from_bytes(png[16:20], "big") == 1280  # the width the window was given
    keep = os.environ.get("STATUS_SCREENSHOT")
    if keep:
        shutil.copyfile(shot, keep)


def test_chromium_opens_it_with_the_token_as_the_basic_password(
    engines_url: str, tmp_path: Path
) -> None:
    token = "tok-browser-0123456789abcdef"
    with serve_app(create_app(mix_settings(engines_url, {"auth_tokens": [token]}))) as url:
        with_token = url.replace("http://", f"http://anyone:{token}@") + "/status"
        opened = chromium(tmp_path, "--dump-dom", with_token).stdout
        refused = chromium(tmp_path, "--dump-dom", f"{url}/status").stdout
    assert '<tr data-engine="searxng" data-state="ok">' in opened
    assert "data-engine" not in refused
