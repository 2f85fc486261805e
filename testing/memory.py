"""Resident memory of a process tree, and its peak while a block runs (tests and benchmarks)."""

from __future__ import annotations

import os
import threading
import time
from pathlib import Path
from types import TracebackType


def resident_bytes(pid: int) -> int:
    """The proportional resident memory (pages forked workers share counted once in all) of
    `pid` and every process below it (the extraction workers' fork server and the workers are
    children of children)."""
    total = 0
    try:
        rollup = Path(f"/proc/{pid}/smaps_rollup").read_text()
        total += int(rollup.split("\nPss:")[1].split()[0]) * 1024
        for task in Path(f"/proc/{pid}/task").iterdir():
            for child in (task / "children").read_text().split():
                total += resident_bytes(int(child))
    except (OSError, IndexError):
        pass
    return total


class PeakMemory:
    """`with PeakMemory() as memory:` samples this process tree every 20 ms in a thread;
    `memory.baseline` is the figure at the start, `memory.peak` the highest seen."""

    def __init__(self, pid: int | None = None) -> None:
        self.pid = os.getpid() if pid is None else pid
        self.baseline = self.peak = resident_bytes(self.pid)
        self._done = threading.Event()
        self._thread = threading.Thread(target=self._sample, daemon=True)

    def _sample(self) -> None:
        while not self._done.is_set():
            self.peak = max(self.peak, resident_bytes(self.pid))
            time.sleep(0.02)

    def __enter__(self) -> PeakMemory:
        self._thread.start()
        return self

    def __exit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self._done.set()
        self._thread.join()
