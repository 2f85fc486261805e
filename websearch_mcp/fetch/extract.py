"""Turning a fetched body into text, bounded in time and memory: `await extract(raw, limits)`.

HTML and PDF are extracted in a small pool of worker processes (`fetch.extract_workers`, started
when first needed). Each worker limits its own address space (`fetch.extract_memory_mib`), and a
job that is not done by its deadline has its worker killed and replaced, so no document can hold
the service's CPU or memory. Plain text, JSON and XML need no parser and are decoded here.
Any number of callers may await `extract` at once; jobs wait for a free worker within their
deadline.
"""

from __future__ import annotations

import asyncio
import contextlib
import multiprocessing
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from multiprocessing.process import BaseProcess
from typing import Any

from websearch_mcp.config import FetchSettings
from websearch_mcp.fetch.client import FETCHED_TYPES, RawPage
from websearch_mcp.fetch.document import Document, Extracted
from websearch_mcp.fetch.errors import FetchError
from websearch_mcp.fetch.pdf import is_pdf, require_pypdf
from websearch_mcp.fetch.worker import Job, serve

_HTML_TYPES = ("text/html", "application/xhtml+xml")
_PDF_TYPES = ("application/pdf", "application/x-pdf")
_UNDECLARED = ("", "application/octet-stream", "binary/octet-stream")
#: Time a job gets at least, even when fetching used up nearly all of `fetch.timeout_seconds`.
MIN_EXTRACT_SECONDS = 0.5


@dataclass(frozen=True)
class ExtractLimits:
    """How much work one document may cost (from `fetch.*`; see FetchSettings)."""

    timeout_seconds: float
    max_text_chars: int
    max_html_nodes: int
    max_pdf_pages: int
    max_pdf_decoded_bytes: int
    workers: int
    memory_bytes: int

    @classmethod
    def from_settings(cls, fetch: FetchSettings) -> ExtractLimits:
        return cls(
            timeout_seconds=fetch.timeout_seconds,
            max_text_chars=fetch.max_text_chars,
            max_html_nodes=fetch.max_html_nodes,
            max_pdf_pages=fetch.max_pdf_pages,
            max_pdf_decoded_bytes=fetch.max_pdf_decoded_bytes,
            workers=fetch.extract_workers,
            memory_bytes=fetch.extract_memory_mib * 1024 * 1024,
        )


def _sniff(body: bytes, declared: str) -> str:
    """A readable type for a body sent without one, or FetchError for binary data."""
    head = body[:4096]
    if b"\x00" in head:
        shown = declared or "no content type"
        raise FetchError(
            f"unsupported content ({shown}, binary data): only {FETCHED_TYPES} pages are read",
            reader_may_help=False,
        )
    lowered = head.lstrip().lower()
    if lowered.startswith((b"<!doctype html", b"<html")) or b"<body" in lowered:
        return "text/html"
    return "text/plain"


def _decode(body: bytes, charset: str) -> str:
    # utf-8-sig drops a byte-order mark that would otherwise lead the text.
    codec = "utf-8-sig" if charset.lower() in ("utf-8", "utf8") else charset
    try:
        return body.decode(codec, "replace")
    except LookupError:
        return body.decode("utf-8", "replace")


async def extract(
    raw: RawPage, limits: ExtractLimits, *, deadline: float | None = None
) -> Document:
    """The text of a fetched body according to its type (sniffed when undeclared).

    `deadline` (a `time.monotonic()` value) is when the caller's time is up; by default
    `limits.timeout_seconds` from now. Raises FetchError when the page cannot be read, and
    "page too complex to extract within N s" when extraction overruns.
    """
    media = raw.media_type
    if media in _PDF_TYPES or is_pdf(raw.body):
        media, kind = "application/pdf", "pdf"
        require_pypdf()  # said here: the worker's answer would be less clear
    else:
        if media in _UNDECLARED:
            media = _sniff(raw.body, media)
        kind = "html" if media in _HTML_TYPES else "text"
    if kind == "text":
        text = _decode(raw.body, raw.charset or "utf-8").replace("\r\n", "\n").strip()
        found = Extracted(content=text[: limits.max_text_chars])
        if len(text) > limits.max_text_chars:
            found = Extracted(content=found.content, capped=_text_capped(limits))
    else:
        body: str | bytes = raw.body
        if kind == "html" and raw.charset:
            body = _decode(raw.body, raw.charset)
        job = Job(
            kind=kind,
            body=body,
            url=raw.final_url,
            max_text_chars=limits.max_text_chars,
            max_html_nodes=limits.max_html_nodes,
            max_pdf_pages=limits.max_pdf_pages,
            max_pdf_decoded_bytes=limits.max_pdf_decoded_bytes,
        )
        del body
        if deadline is None:
            deadline = time.monotonic() + limits.timeout_seconds
        found = await _pool(limits).run(job, deadline)
    return Document(
        url=raw.url,
        final_url=raw.final_url,
        content_type=media,
        content=found.content,
        title=found.title,
        published=found.published,
        capped=found.capped,
    )


def _text_capped(limits: ExtractLimits) -> str:
    return f"text cut at {limits.max_text_chars} characters (fetch.max_text_chars)"


class _Worker:
    """One worker process and the parent's end of its pipe."""

    def __init__(self, context: Any, memory_bytes: int) -> None:
        self.conn, child = multiprocessing.Pipe()
        self.process: BaseProcess = context.Process(
            target=serve, args=(child, memory_bytes), daemon=True, name="websearch-extract"
        )
        self.process.start()
        child.close()

    def call(self, job: Job, seconds: float) -> tuple[str, Any] | None:
        """Send `job` and wait up to `seconds` for the answer; None when it did not come."""
        try:
            self.conn.send(job)
            if not self.conn.poll(max(seconds, 0.0)):
                return None
            answer: tuple[str, Any] = self.conn.recv()
            return answer
        except (EOFError, OSError):
            return ("died", None)

    def stop(self) -> None:
        if self.process.is_alive():
            self.process.kill()
        self.process.join(timeout=5)
        self.conn.close()


class ExtractorPool:
    """Up to `size` workers; a job waits for a free one, and a worker that overruns is killed."""

    def __init__(self, size: int, memory_bytes: int) -> None:
        self.size = size
        self.memory_bytes = memory_bytes
        self._context = multiprocessing.get_context("forkserver")
        self._context.set_forkserver_preload(["websearch_mcp.fetch.worker"])
        self._idle: list[_Worker] = []
        # One thread per worker waits on its pipe, so jobs never take the loop's default threads.
        self._threads = ThreadPoolExecutor(size, thread_name_prefix="websearch-extract")
        self._lock = threading.Lock()
        self.replaced = 0  # workers killed or lost, for tests and logs

    async def run(self, job: Job, deadline: float) -> Extracted:
        """Run `job` in a worker; FetchError when it fails or is not done by `deadline`."""
        deadline = max(deadline, time.monotonic() + MIN_EXTRACT_SECONDS)
        seconds = deadline - time.monotonic()
        loop = asyncio.get_running_loop()
        # Jobs queue for the pool's threads (one per worker); a job still queued at its
        # deadline is dropped from the queue by the cancellation.
        future = loop.run_in_executor(self._threads, self._call, job, deadline)
        try:
            async with asyncio.timeout(seconds + 0.25):
                status, value = await future
        except TimeoutError:
            status, value = "timeout", None
        if status == "ok":
            assert isinstance(value, Extracted)
            return value
        if status == "error":
            raise FetchError(str(value), reader_may_help=False)
        if status == "memory":
            mib = self.memory_bytes // (1024 * 1024)
            raise FetchError(
                f"page too large to extract within {mib} MiB of memory (fetch.extract_memory_mib)",
                reader_may_help=False,
            )
        if status == "died":
            raise FetchError(
                "page too large or complex to extract: the extraction worker stopped",
                reader_may_help=False,
            )
        raise FetchError(
            f"page too complex to extract within {seconds:.1f} s"
            " (fetch.timeout_seconds bounds fetching and extracting together)",
            reader_may_help=False,
        )

    def _call(self, job: Job, deadline: float) -> tuple[str, Any]:
        """In a pool thread: take an idle worker (or start one), run the job, keep or kill it."""
        if time.monotonic() >= deadline:
            return ("timeout", None)
        with self._lock:
            worker = self._idle.pop() if self._idle else None
        if worker is not None and not worker.process.is_alive():
            worker.stop()
            worker = None
        if worker is None:
            worker = _Worker(self._context, self.memory_bytes)
        answer = worker.call(job, deadline - time.monotonic())
        if answer is None or answer[0] in ("died", "memory") or not worker.process.is_alive():
            worker.stop()
            self.replaced += 1
            return answer or ("timeout", None)
        with self._lock:
            self._idle.append(worker)
        return answer

    def close(self) -> None:
        """Stop every worker (they hold no state worth keeping)."""
        with self._lock:
            idle, self._idle = self._idle, []
        for worker in idle:
            with contextlib.suppress(OSError, ValueError):
                worker.conn.send(None)
            worker.stop()
        self._threads.shutdown(wait=False, cancel_futures=True)


_POOLS: dict[tuple[int, int], ExtractorPool] = {}


def _pool(limits: ExtractLimits) -> ExtractorPool:
    """The process-wide pool for these limits, created on first use."""
    key = (limits.workers, limits.memory_bytes)
    pool = _POOLS.get(key)
    if pool is None:
        pool = _POOLS[key] = ExtractorPool(limits.workers, limits.memory_bytes)
    return pool


def close_pools() -> None:
    """Stop every extraction worker (at shutdown); pools start again on the next `extract`."""
    while _POOLS:
        _, pool = _POOLS.popitem()
        pool.close()
