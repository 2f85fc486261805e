"""Turning a fetched body into text, bounded in time and memory: `await extract(raw, limits)`.

HTML and PDF are extracted in a small pool of worker processes (`fetch.extract_workers`, started
when first needed). Each worker limits its own address space (`fetch.extract_memory_mib`), and a
job that is not done by its deadline has its worker killed and replaced, so no document can hold
the service's CPU or memory. Plain text, JSON and XML need no parser and are decoded here.
Any number of callers may await `extract` at once; jobs share the workers shortest-first (see
`pool`), each within its deadline.
"""

from __future__ import annotations

import asyncio
import codecs
import multiprocessing
import re
import time
from dataclasses import dataclass

import charset_normalizer

from websearch_mcp.config import FetchSettings
from websearch_mcp.errors import FetchError, FetchUnsupported
from websearch_mcp.fetch.client import FETCHED_TYPES, RawPage
from websearch_mcp.fetch.document import Document, Extracted
from websearch_mcp.fetch.job import Job
from websearch_mcp.fetch.pdf import is_pdf, require_pypdf
from websearch_mcp.fetch.pool import ExtractorPool
from websearch_mcp.text_encoding import decode_text, web_codec

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


def _refuse_binary(raw: RawPage) -> None:
    """FetchUnsupported for a body of binary data (a NUL byte near its start), whatever type it
    was sent as: servers label files they do not know as text, and browsers sniff those too.
    UTF-16 and UTF-32 text, whose NUL bytes are its own, is read."""
    if b"\x00" not in raw.body[:4096]:
        return
    if (web_codec(_charset(raw)) or "").startswith(("utf-16", "utf-32")):
        return
    shown = raw.media_type or "no content type"
    raise FetchUnsupported(
        f"unsupported content ({shown}, binary data): only {FETCHED_TYPES} pages are read",
        reader_may_help=False,
    )


#: How an HTML document may begin, as the WHATWG MIME Sniffing Standard reads a body sent
#: without a type: a comment, or one of these tags (followed by a space or `>`).
_HTML_START = re.compile(
    r"<!--|<(?:!doctype html|html|head|script|iframe|h1|div|font|table|a|style|title|b|body|br|p)"
    r"[ \t\n\f\r>]"
)


def _sniff(raw: RawPage) -> str:
    """A readable type for a body sent without one."""
    lowered = decode_text(raw.body[:4096], _charset(raw)).lstrip().lower()
    if _HTML_START.match(lowered) or "<body" in lowered:
        return "text/html"
    return "text/plain"


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
        _refuse_binary(raw)
        if media in _UNDECLARED:
            media = _sniff(raw)
        kind = "html" if media in _HTML_TYPES else "text"
    if kind == "text":
        # Linear in the body, which fetch.max_bytes caps: a thread, no worker needed.
        found = await asyncio.to_thread(_plain_text, raw, limits)
    else:
        body: str | bytes = raw.body
        if kind == "html" and (charset := _declared_charset(raw)):
            # Else trafilatura reads <meta charset> itself. Off the loop: up to fetch.max_bytes.
            body = await asyncio.to_thread(decode_text, raw.body, charset)
        job = Job(
            kind=kind,
            body=body,
            url=raw.final_url,
            max_text_chars=limits.max_text_chars,
            max_html_nodes=limits.max_html_nodes,
            max_pdf_pages=limits.max_pdf_pages,
            max_pdf_decoded_bytes=limits.max_pdf_decoded_bytes,
        )
        if deadline is None:
            deadline = time.monotonic() + limits.timeout_seconds
        found = await _run(job, limits, deadline)
    return Document(
        url=raw.url,
        final_url=raw.final_url,
        content_type=media,
        content=found.content,
        title=found.title,
        published=found.published,
        capped=found.capped,
    )


#: Byte-order marks, which name the encoding whatever the headers say (UTF-32 before UTF-16:
#: its little-endian mark starts with UTF-16's).
_BOMS = (
    (codecs.BOM_UTF8, "utf-8-sig"),
    (codecs.BOM_UTF32_LE, "utf-32"),
    (codecs.BOM_UTF32_BE, "utf-32"),
    (codecs.BOM_UTF16_LE, "utf-16"),
    (codecs.BOM_UTF16_BE, "utf-16"),
)
_XML_ENCODING = re.compile(rb"""<\?xml\s[^>]*?encoding\s*=\s*["']([A-Za-z][\w.:-]*)["']""")


def _declared_charset(raw: RawPage) -> str | None:
    """A body's declared encoding: its byte-order mark (before the header, as browsers read
    it), else the header's charset when it names an encoding (browsers pass over a label they
    do not know, `charset=none`), else an XML declaration's `encoding`; None without one."""
    for bom, codec in _BOMS:
        if raw.body.startswith(bom):
            return codec
    if raw.charset and web_codec(raw.charset):
        return raw.charset
    declared = _XML_ENCODING.match(raw.body[:1024].lstrip())
    label = declared.group(1).decode("ascii") if declared else None
    return label if label and web_codec(label) else None


def _guessed_charset(body: bytes) -> str:
    """An undeclared text body's encoding: UTF-8 when it reads as UTF-8 (a character cut at
    `fetch.max_bytes` included), else charset_normalizer's best guess."""
    try:
        codecs.getincrementaldecoder("utf-8")().decode(body, final=False)
        return "utf-8"
    except UnicodeDecodeError:
        pass
    best = charset_normalizer.from_bytes(body).best()
    return best.encoding if best is not None else "utf-8"


def _charset(raw: RawPage) -> str:
    """`_declared_charset`, else UTF-8."""
    return _declared_charset(raw) or "utf-8"


def _plain_text(raw: RawPage, limits: ExtractLimits) -> Extracted:
    # A label that names no encoding leaves UTF-8; no label at all, a guess.
    charset = _declared_charset(raw) or ("utf-8" if raw.charset else _guessed_charset(raw.body))
    text = decode_text(raw.body, charset).replace("\r\n", "\n").strip()
    if len(text) <= limits.max_text_chars:
        return Extracted(content=text)
    cut = f"text cut at {limits.max_text_chars} characters (fetch.max_text_chars)"
    return Extracted(content=text[: limits.max_text_chars], capped=cut)


async def _run(job: Job, limits: ExtractLimits, deadline: float) -> Extracted:
    """The job's result from the pool, or FetchError saying which bound it broke."""
    deadline = max(deadline, time.monotonic() + MIN_EXTRACT_SECONDS)
    seconds = deadline - time.monotonic()
    status, value = await _pool(limits).run(job, deadline)
    if status == "ok":
        assert isinstance(value, Extracted)
        return value
    if status == "error":  # the extractor's own FetchError (its kind kept), or a text
        raise value if isinstance(value, FetchError) else FetchError(str(value))
    if status == "memory":
        mib = limits.memory_bytes // (1024 * 1024)
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


_POOLS: dict[tuple[int, int], ExtractorPool] = {}


def _pool(limits: ExtractLimits) -> ExtractorPool:
    """The process-wide pool for these limits, created on first use."""
    key = (limits.workers, limits.memory_bytes)
    pool = _POOLS.get(key)
    if pool is None:
        if "forkserver" not in multiprocessing.get_all_start_methods():
            raise FetchError(
                "reading HTML and PDF pages needs Linux or macOS, where the extraction workers"
                " run; on Windows, run the service in WSL or Docker",
                reader_may_help=False,
            )
        pool = _POOLS[key] = ExtractorPool(limits.workers, limits.memory_bytes)
    return pool


def close_pools() -> None:
    """Stop every extraction worker (at shutdown); pools start again on the next `extract`."""
    while _POOLS:
        _, pool = _POOLS.popitem()
        pool.close()
