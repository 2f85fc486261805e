"""The C modules' tests run only where they are built: with the compiled modules (`setup.py`,
WEBSEARCH_MCP_COMPILE=1), as `tests/ranking/test_compiled.py` builds them and runs the ranking
and engine tests on that build. In a plain tree those test files skip, saying why."""

from __future__ import annotations

import importlib
from types import ModuleType

import pytest


def native_module(name: str) -> ModuleType:
    """The C module `name`; where it is not built, the calling test module is skipped."""
    try:
        return importlib.import_module(name)
    except ImportError:
        pytest.skip(
            f"{name} is built only with the compiled modules (WEBSEARCH_MCP_COMPILE=1); "
            "tests/ranking/test_compiled.py runs these on that build",
            allow_module_level=True,
        )
