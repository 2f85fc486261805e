"""The cache tests' clock: entries expire by it, and it only moves when a test says so."""

from __future__ import annotations

import pytest

from testing.cache_helpers import FakeClock


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock()
