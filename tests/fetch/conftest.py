"""Every fetch test: the fetcher's connections are recorded, and any that would leave loopback
fails the test (`connections` lists them for the tests that check what was dialled)."""

from __future__ import annotations

import pytest

from testing.fetch_helpers import install_connection_guard


@pytest.fixture(autouse=True)
def connections(monkeypatch: pytest.MonkeyPatch) -> list[tuple[str, int]]:
    return install_connection_guard(monkeypatch)
