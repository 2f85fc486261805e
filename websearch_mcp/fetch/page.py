"""`fetch_page`: one URL as clean text, read in windows.

HTML becomes Markdown of the main content (trafilatura), PDF becomes text per page with
`--- page N ---` markers (pypdf, the `pdf` extra), plain text, JSON and XML pass through as they
are. Bounds: `max_chars` 1..200000 (default 20000), `start` >= 0; the URL must be http(s) and at
most 8192 characters. The whole text is extracted once; `start`/`max_chars` select the window.
"""

from __future__ import annotations

import asyncio
from typing import Any

import httpx

from websearch_mcp.config import FetchSettings
from websearch_mcp.errors import ToolInputError
from websearch_mcp.fetch.client import FETCHED_TYPES, RawPage, Resolver, guarded_get
from websearch_mcp.fetch.document import Document, Extracted
from websearch_mcp.fetch.errors import FetchError, FetchUnsupported
from websearch_mcp.fetch.htmltext import extract_html
from websearch_mcp.fetch.pdf import extract_pdf, is_pdf
from websearch_mcp.fetch.reader import read_via_reader

MAX_CHARS_LIMIT = 200_000
DEFAULT_MAX_CHARS = 20_000
MAX_URL_LENGTH = 8192

_HTML_TYPES = ("text/html", "application/xhtml+xml")
_PDF_TYPES = ("application/pdf", "application/x-pdf")


def validate_fetch_args(url: Any, max_chars: Any, start: Any) -> None:
    """Raise ToolInputError unless the arguments are within the documented bounds."""
    if not isinstance(url, str) or not url.strip():
        raise ToolInputError("url: give the http or https URL of a page")
    if len(url) > MAX_URL_LENGTH:
        raise ToolInputError(f"url: at most {MAX_URL_LENGTH} characters")
    try:
        parsed = httpx.URL(url.strip())
    except httpx.InvalidURL as err:
        raise ToolInputError(f"url: not a valid URL ({err})") from None
    if parsed.scheme not in ("http", "https"):
        raise ToolInputError("url: only http and https URLs can be fetched")
    if not parsed.host:
        raise ToolInputError("url: the URL has no host")
    if not _is_int(max_chars) or not 1 <= max_chars <= MAX_CHARS_LIMIT:
        raise ToolInputError(f"max_chars: a whole number from 1 to {MAX_CHARS_LIMIT}")
    if not _is_int(start) or start < 0:
        raise ToolInputError("start: a whole number, 0 or more (next_start of the previous read)")


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def document_from(raw: RawPage) -> Document:
    """Extract the text of a fetched body according to its type (sniffed when undeclared)."""
    media = raw.media_type
    if media in _PDF_TYPES or is_pdf(raw.body):
        return _document(raw, "application/pdf", extract_pdf(raw.body))
    if media in ("", "application/octet-stream", "binary/octet-stream"):
        media = _sniff(raw.body, media)
    if media in _HTML_TYPES:
        html: str | bytes = _decode(raw.body, raw.charset) if raw.charset else raw.body
        return _document(raw, media, extract_html(html, raw.final_url))
    text = _decode(raw.body, raw.charset or "utf-8").replace("\r\n", "\n")
    return _document(raw, media, Extracted(content=text.strip()))


def _document(raw: RawPage, content_type: str, found: Extracted) -> Document:
    return Document(
        url=raw.url,
        final_url=raw.final_url,
        content_type=content_type,
        content=found.content,
        title=found.title,
        published=found.published,
    )


def _sniff(body: bytes, declared: str) -> str:
    """A readable type for a body sent without one, or FetchError for binary data."""
    head = body[:4096]
    if b"\x00" in head:
        shown = declared or "no content type"
        raise FetchUnsupported(
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


async def fetch_document(
    url: str, *, settings: FetchSettings, resolver: Resolver | None = None
) -> Document:
    """The whole extracted text of a page (fetched under the address policy and limits).

    When direct fetching fails for a reason the reader API can get around and
    `settings.reader_fallback` is on, the reader is asked instead; refused URLs never reach it.
    """
    try:
        raw = await guarded_get(url, settings, resolver)
        return await asyncio.to_thread(document_from, raw)
    except FetchError as err:
        if not (settings.reader_fallback and err.reader_may_help):
            raise
        direct = err
    try:
        return await read_via_reader(url, settings)
    except FetchError as err:
        # The direct failure's kind stands: it is why the page could not be read.
        raise type(direct)(f"{direct}; the reader fallback failed too: {err}") from None


async def fetch_page(
    url: str,
    *,
    max_chars: int = DEFAULT_MAX_CHARS,
    start: int = 0,
    settings: FetchSettings,
    resolver: Resolver | None = None,
) -> dict[str, Any]:
    """Fetch a page and return the window [start, start + max_chars) of its text.

    Returns {url, final_url, title, content, content_type, published (when known), total_chars,
    start, next_start (while more remains), truncated}, plus `via: "reader"` when the reader API
    supplied the text. Raises ToolInputError for bad arguments, FetchRefused for URLs the policy
    refuses and FetchError for pages that could not be fetched or read.
    """
    validate_fetch_args(url, max_chars, start)
    document = await fetch_document(url.strip(), settings=settings, resolver=resolver)
    return document.window(max_chars=max_chars, start=start)
