"""Headless Chromium for the tests that load the server's answers in a real browser."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
#: Marks a test module that needs Chromium.
needs_chromium = pytest.mark.skipif(
    CHROMIUM is None, reason="needs Debian's chromium (`.ci/run` installs it)"
)

#: Headless, and nothing of its own on the network: only the page asked for is loaded.
FLAGS = (
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
)


def chromium(tmp_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    profile = tmp_path / "profile"
    command = [str(CHROMIUM), *FLAGS, f"--user-data-dir={profile}", *args]
    return subprocess.run(command, capture_output=True, text=True, timeout=90, check=True)
