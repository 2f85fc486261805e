"""The extraction workers' fork server leaves nothing behind once the pools close, in a process
that then ends without Python's exit handlers (stdio's `os._exit`, a signal) as in one that
ends normally; and multiprocessing still works the way `fork_server` takes it to."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from websearch_mcp.fetch import fork_server

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="no fork server on Windows")

CHILD = textwrap.dedent(
    """
    import asyncio, os, sys
    from multiprocessing import util
    from pathlib import Path
    from websearch_mcp.config import FetchSettings
    from websearch_mcp.fetch.client import RawPage
    from websearch_mcp.fetch.extract import ExtractLimits, close_pools, extract

    html = b"<html><body><article><p>" + b"Words of a page here. " * 40 + b"</p></article>"
    raw = RawPage("https://example.org/", "https://example.org/", "text/html", None, html)
    asyncio.run(extract(raw, ExtractLimits.from_settings(FetchSettings())))
    print(Path(util.get_temp_dir()).name[:4], sorted(os.listdir(os.environ["TMPDIR"])) != [])
    close_pools()
    print(sorted(os.listdir(os.environ["TMPDIR"])))
    if sys.argv[1] == "abrupt":
        os._exit(0)
    """
)


@pytest.mark.parametrize("ending", ["abrupt", "normal"])
def test_closing_the_pools_stops_the_fork_server_and_removes_its_files(
    tmp_path: Path, ending: str
) -> None:
    tmp = tmp_path / "tmp"
    tmp.mkdir()
    run = subprocess.run(
        [sys.executable, "-c", CHILD, ending],
        env={**os.environ, "TMPDIR": str(tmp)},
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert run.returncode == 0, run.stderr
    # The directory multiprocessing used was the one `fork_server` made, and it was there.
    assert run.stdout.splitlines() == [f"{fork_server.PREFIX} True", "[]"]
    assert "Traceback" not in run.stderr  # no exit handler trips over the removed directory
    assert list(tmp.iterdir()) == []
