"""Shared test helpers: where the recorded fixtures live, and skipping cleanly without them."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
SHARED = Path(os.environ.get("WEBSEARCH_SHARED", REPO.parent / "shared"))
FIXTURES = SHARED / "fixtures"
EVAL = SHARED / "eval"


def fixture_bytes(relative: str) -> bytes:
    """The bytes of a recorded engine response, or a skip saying where it was looked for."""
    path = FIXTURES / relative
    if not path.is_file():
        pytest.skip(
            f"recorded fixture {path} is absent (set WEBSEARCH_SHARED to the shared/ folder)"
        )
    return path.read_bytes()
