"""What runs in an extraction worker process: limits set on itself, then jobs until told to stop.

A worker caps its own address space (`RLIMIT_AS`) before it reads anything, so a document that
inflates beyond the limit fails with MemoryError in the worker and never in the service. After a
job that left it much bigger than it started, the worker answers, saying that it retires, and
then exits, so that the memory goes back to the system; the pool starts a fresh one when it is
needed.

SIGINT and SIGTERM sent to the server's whole process group (Ctrl-C in a terminal, systemd's
default stop) reach the workers too, while the server finishes the requests in flight: a worker
reading a page answers first and then exits; an idle one exits at once.
"""

from __future__ import annotations

import contextlib
import resource
import signal
import sys
from multiprocessing.connection import Connection
from typing import Any

from websearch_mcp.errors import FetchError
from websearch_mcp.fetch.document import Extracted
from websearch_mcp.fetch.htmltext import extract_html
from websearch_mcp.fetch.job import Job
from websearch_mcp.fetch.pdf import extract_pdf

#: A worker that grew by more than this while extracting exits after answering.
RECYCLE_GROWTH_BYTES = 64 * 1024 * 1024


def run_job(job: Job) -> Extracted:
    """Extract one document under the job's caps (also usable without a worker)."""
    if job.kind == "pdf":
        assert isinstance(job.body, bytes)
        return extract_pdf(
            job.body,
            max_pages=job.max_pdf_pages,
            max_decoded_bytes=job.max_pdf_decoded_bytes,
            max_chars=job.max_text_chars,
        )
    return extract_html(
        job.body, job.url, max_nodes=job.max_html_nodes, max_chars=job.max_text_chars
    )


def _resident_bytes() -> int:
    """The worker's resident memory (Linux); without `/proc` (macOS), its peak so far."""
    try:
        with open("/proc/self/statm", encoding="ascii") as statm:
            return int(statm.read().split()[1]) * resource.getpagesize()
    except (OSError, ValueError, IndexError):
        peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        return peak if sys.platform == "darwin" else peak * 1024  # bytes there, KiB here


def _cap_memory(memory_bytes: int) -> None:
    """Cap the worker's address space, within the hard limit it was given. macOS refuses the
    cap: the worker then reads uncapped, bounded by its deadline and its document's caps."""
    _, hard = resource.getrlimit(resource.RLIMIT_AS)
    cap = memory_bytes if hard == resource.RLIM_INFINITY else min(memory_bytes, hard)
    with contextlib.suppress(ValueError, OSError):
        resource.setrlimit(resource.RLIMIT_AS, (cap, hard))


class _StopSignals:
    """Whether SIGINT or SIGTERM came; while the worker is idle they end it at once."""

    def __init__(self) -> None:
        self.idle = True
        self.asked = False
        for signum in (signal.SIGINT, signal.SIGTERM):
            signal.signal(signum, self._received)

    def _received(self, signum: int, frame: object) -> None:
        self.asked = True
        if self.idle:
            raise SystemExit(0)


def serve(conn: Connection, memory_bytes: int) -> None:
    """The worker's main loop: receive a `Job`, send back ("ok", Extracted), ("error", FetchError
    or text) or ("memory", None), each with whether the worker exits after it."""
    if memory_bytes > 0:
        _cap_memory(memory_bytes)
    baseline = _resident_bytes()
    stop = _StopSignals()
    while True:
        stop.idle = True  # before looking: a signal from here on ends the worker at once
        if stop.asked:
            return
        try:
            conn.poll(None)  # waiting here, not in `recv`: a job half received is never lost
            stop.idle = False
            job = conn.recv()
        except (EOFError, OSError):
            return
        if job is None:
            return
        answer: tuple[str, Any]
        try:
            answer = ("ok", run_job(job))
        except FetchError as err:
            answer = ("error", err)
        except MemoryError:
            answer = ("memory", None)
        except Exception:  # the extractors raise many kinds on hostile input
            answer = ("error", "the page could not be read (damaged or unsupported)")
        del job
        # Said with the answer: the pool must not send the next job to a worker on its way out.
        retiring = (
            stop.asked
            or answer[0] == "memory"
            or _resident_bytes() - baseline > RECYCLE_GROWTH_BYTES
        )
        try:
            conn.send((*answer, retiring))
        except (OSError, ValueError):
            return
        if retiring:
            return
