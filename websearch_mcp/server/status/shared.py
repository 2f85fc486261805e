"""The workers of one server share their hour through files in the runtime directory.

Each worker writes its `Activity` snapshot (and its own counters) to `status/<pid>.json` about
once a second when something changed, replacing the file whole; whichever worker serves
`/status` reads every file and adds them up. A worker that ended leaves its file: its calls of
the last hour still happened. The directory goes with the server (`runtime.shared_runtime`).
"""

from __future__ import annotations

import asyncio
import json
import os
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from websearch_mcp.runtime import running, runtime_dir
from websearch_mcp.search.activity import MINUTES, Activity, Snapshot

#: Seconds between two writes of a worker's snapshot (at most: only when it changed).
PUBLISH_SECONDS = 1.0


def status_dir() -> Path | None:
    """Where the workers of this server leave their snapshots; None outside a multi-process
    server."""
    shared = runtime_dir()
    return shared / "status" if shared is not None else None


def write_snapshot(directory: Path, snapshot: Snapshot, pid: int | None = None) -> None:
    """Replace this process's file with `snapshot` (readers never see half a file)."""
    directory.mkdir(parents=True, exist_ok=True)
    pid = os.getpid() if pid is None else pid
    temporary = directory / f".{pid}.tmp"
    temporary.write_text(json.dumps(snapshot), encoding="utf-8")
    os.replace(temporary, directory / f"{pid}.json")


def read_snapshots(directory: Path, now: float | None = None) -> list[Snapshot]:
    """Every running worker's snapshot, and those of the workers that ended written within the
    last hour (a file that cannot be read is skipped: its worker is replacing it, or it is
    gone). A running worker rewrites its file only when its hour changed: however old, it is
    current."""
    now = time.time() if now is None else now
    found = []
    for path in sorted(directory.glob("*.json")):
        try:
            if now - path.stat().st_mtime > MINUTES * 60 and not running(int(path.stem)):
                continue
            found.append(json.loads(path.read_text(encoding="utf-8")))
        except (OSError, ValueError):
            continue
    return found


async def publish(directory: Path, activity: Activity, extra: Callable[[], dict[str, Any]]) -> None:
    """Write this worker's snapshot (with `extra()`: its own counters) whenever it changed, at
    most every `PUBLISH_SECONDS`, until cancelled."""
    written: str | None = None
    while True:
        snapshot = {**activity.snapshot(), "process": extra()}
        text = json.dumps(snapshot, sort_keys=True)
        if text != written:
            await asyncio.to_thread(write_snapshot, directory, snapshot)
            written = text
        await asyncio.sleep(PUBLISH_SECONDS)
