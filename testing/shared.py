"""Where the shared recorded data lives (`$WEBSEARCH_SHARED`, else `shared/` next to the
repository): engine fixtures and the evaluation collection; never copied into the repository."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

SHARED_ENV = "WEBSEARCH_SHARED"
REPO = Path(__file__).resolve().parent.parent


def shared_dir() -> Path:
    """`$WEBSEARCH_SHARED`, else `shared/` next to the repository (read when called)."""
    return Path(os.environ.get(SHARED_ENV) or REPO.parent / "shared")


SHARED = shared_dir()
FIXTURES = SHARED / "fixtures"
EVAL = SHARED / "eval"


def fixture_bytes(relative: str) -> bytes:
    """The bytes of a recorded engine response, or a skip saying where it was looked for."""
    path = FIXTURES / relative
    if not path.is_file():
        pytest.skip(f"recorded fixture {path} is absent (set {SHARED_ENV} to the shared/ folder)")
    return path.read_bytes()
