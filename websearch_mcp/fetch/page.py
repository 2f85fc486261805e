"""`fetch_page`: one URL as clean text, read in windows.

HTML becomes Markdown of the main content (trafilatura), PDF becomes text per page with
`--- page N ---` markers (pypdf, the `pdf` extra), plain text, JSON and XML pass through as they
are. Bounds: `max_chars` 1..200000 (default 20000), `start` >= 0; the URL must be http(s) and at
most 8192 characters. The whole text is extracted once; `start`/`max_chars` select the window.
"""

from __future__ import annotations

import json
import re
import time
from typing import Any

import httpx

from websearch_mcp.config import FetchSettings
from websearch_mcp.errors import FetchError, ToolInputError
from websearch_mcp.fetch.client import Resolver, guarded_get
from websearch_mcp.fetch.document import Document
from websearch_mcp.fetch.extract import ExtractLimits, extract
from websearch_mcp.fetch.reader import read_via_reader
from websearch_mcp.fetch.ssrf import readable_host

MAX_CHARS_LIMIT = 200_000
DEFAULT_MAX_CHARS = 20_000
MAX_URL_LENGTH = 8192


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
        raise ToolInputError(
            f"url: only http and https URLs can be fetched (got {_cut(url)}){_instead(url)}"
        )
    if not parsed.raw_host:
        raise ToolInputError("url: the URL has no host")
    if not readable_host(parsed):
        raise ToolInputError("url: the host is not a valid international name (xn--...)")
    if not _is_int(max_chars) or not 1 <= max_chars <= MAX_CHARS_LIMIT:
        raise ToolInputError(f"max_chars: a whole number from 1 to {MAX_CHARS_LIMIT}")
    if not _is_int(start) or start < 0:
        raise ToolInputError("start: a whole number, 0 or more (next_start of the previous read)")


#: An http(s) address inside other text: a Markdown link's target, one in angle brackets.
_INNER_URL = re.compile(r"https?://[^\s<>()\[\]\"']+")
#: A text in angle brackets, or a Markdown link's target.
_WRAPPED = re.compile(
    r"<([^<>]*)>|\[[^\]]*\]\(([^()]*)\)|`([^`]*)`|\"([^\"]*)\"|'([^']*)'|\(([^()]*)\)"
)
#: A host an address may have: labels of letters, digits and hyphens (in any script).
_HOST = re.compile(r"(?:[^\W_](?:[\w-]*[^\W_])?\.)+[^\W_](?:[\w-]*[^\W_])?\.?")
#: A scheme (`mailto:`, `ftp://`), not a host and its port (`example.com:8080`).
_SCHEME = re.compile(r"[a-zA-Z][a-zA-Z0-9+.-]*:(?!\d)")


def _cut(text: str) -> str:
    """`text` quoted as JSON (the caller's spelling), cut when long."""
    quoted = json.dumps(text if len(text) <= 60 else text[:50], ensure_ascii=False)
    return quoted if len(text) <= 60 else f"{quoted}... ({len(text)} characters)"


def _instead(url: str) -> str:
    """What to send in place of a URL that is not http(s), when it is clear: the address a
    Markdown link or angle brackets hold, or an address given without its scheme (one whose
    host has a dot: "example.com/docs", not "python docs")."""
    inner = _INNER_URL.search(url)
    if inner:
        return f"; send {_cut(inner.group(0))}"
    text = url.strip()
    if wrapped := _WRAPPED.fullmatch(text):
        text = next((part for part in wrapped.groups() if part is not None), "").strip()
    try:
        host = httpx.URL("https://" + text).host
    except httpx.InvalidURL:
        return ""
    if _SCHEME.match(text) or not _HOST.fullmatch(host) or any(c.isspace() for c in text):
        return ""
    return f"; send {_cut('https://' + text)}"


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


async def fetch_document(
    url: str,
    *,
    settings: FetchSettings,
    resolver: Resolver | None = None,
    reader_proxy: str | None = None,
) -> Document:
    """The whole extracted text of a page (fetched under the address policy and limits).

    `settings.timeout_seconds` bounds fetching and extracting together. When direct fetching
    fails for a reason the reader API can get around and
    `settings.reader_fallback` is on, the reader is asked instead (through `reader_proxy`, the
    page itself never is); refused URLs never reach it.
    """
    deadline = time.monotonic() + settings.timeout_seconds
    try:
        raw = await guarded_get(url, settings, resolver)
        document = await extract(raw, ExtractLimits.from_settings(settings), deadline=deadline)
        if not document.content.strip():
            # Most often a page its scripts draw, which the reader renders.
            raise FetchError("the page has no text (it may be drawn by scripts)")
        return document
    except FetchError as err:
        if not (settings.reader_fallback and err.reader_may_help):
            raise
        direct = err
    try:
        return await read_via_reader(url, settings, reader_proxy)
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
