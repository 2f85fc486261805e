"""The optional reader-API fallback (Jina Reader: `GET {base}/{url}`), used only when fetching a
page directly failed for a reason the reader can get around (blocked, timed out, HTTP error); never
for URLs the address policy refused. The base URL is the operator's, so it is not policy-checked.
The API key goes in the Authorization header only and never into an error text."""

from __future__ import annotations

import asyncio
import dataclasses
import json
from typing import Any
from urllib.parse import unquote, urlsplit

import httpx
import socksio

from websearch_mcp.config import FetchSettings
from websearch_mcp.dates import iso_date
from websearch_mcp.errors import FetchError, FetchTimeout
from websearch_mcp.fetch.client import USER_AGENT
from websearch_mcp.fetch.decoding import capped_chunks
from websearch_mcp.fetch.document import Document
from websearch_mcp.net.http import ssl_context
from websearch_mcp.text_encoding import one_line, well_formed


async def read_via_reader(url: str, settings: FetchSettings, proxy: str | None = None) -> Document:
    """The page as the reader API renders it (Markdown), under the fetch size and time limits,
    through `proxy` (None: directly); the environment's proxy variables are read by whoever
    chose it (`choose_proxy`), not a second time here."""
    headers = {"Accept": "application/json", "User-Agent": USER_AGENT}
    if settings.reader_api_key:
        headers["Authorization"] = f"Bearer {settings.reader_api_key}"
    timeout = httpx.Timeout(settings.timeout_seconds, connect=settings.connect_timeout_seconds)
    # The URL as the address policy read it: dot segments sent as written would be resolved
    # against the reader's path, and "/http://a.example/../../http://10.0.0.1/" names 10.0.0.1.
    checked = httpx.URL(url)
    if _resolvable(checked.raw_path.decode("ascii", "replace")):
        raise FetchError(
            "not sent to the reader: its path has dot segments (`%2e%2e`, `\\..`) that a"
            " reader would resolve into another URL than the one checked",
            reader_may_help=False,
        )
    reader_url = f"{settings.reader_base_url}/{checked}"
    try:
        async with (
            asyncio.timeout(settings.timeout_seconds),
            httpx.AsyncClient(
                timeout=timeout,
                follow_redirects=True,
                proxy=proxy,
                trust_env=False,
                verify=ssl_context(),
            ) as client,
            client.stream("GET", reader_url, headers=headers) as response,
        ):
            if response.status_code >= 400:
                raise FetchError(f"the reader answered HTTP {response.status_code}")
            body = await _read(response, settings.max_bytes)
            encoding = response.encoding or "utf-8"
    except (TimeoutError, httpx.TimeoutException):
        raise FetchTimeout("the reader timed out") from None
    # A SOCKS proxy that answers what SOCKS is not raises socksio's error, not httpx's.
    except (httpx.HTTPError, socksio.SOCKSError) as err:
        words = _failure_words(err, proxied=proxy is not None)
        raise FetchError(f"could not reach the reader ({words})") from None
    # Up to `fetch.max_bytes` of JSON: read in a thread, not on the event loop.
    document = await asyncio.to_thread(_document, url, body.decode(encoding, "replace"))
    cap = settings.max_text_chars
    if len(document.content) <= cap:
        return document
    cut = f"text cut at {cap} characters (fetch.max_text_chars)"
    return dataclasses.replace(document, content=document.content[:cap], capped=cut)


def _failure_words(err: Exception, proxied: bool = False) -> str:
    """What went wrong on the way to the reader, in words (not the exception's class). Through
    a proxy, the connection that could not be made is the one to the proxy."""
    if isinstance(err, httpx.ConnectError) and proxied:
        return "the proxy failed"
    if isinstance(err, httpx.ConnectError):
        return "could not connect: refused or unreachable"
    if isinstance(err, httpx.ProxyError | socksio.SOCKSError):
        return "the proxy failed"
    if isinstance(err, httpx.TooManyRedirects):
        return "too many redirects"
    return "the connection broke"


def _resolvable(path: str) -> bool:
    """Whether a path holds a segment that a reader reading its request path as browsers read
    URLs would resolve, where the address policy read a name: `.` or `..` percent-encoded
    (`%2e`, `.%2E`), or split by a backslash, which browsers read as a slash."""
    segments = path.split("?", 1)[0].replace("\\", "/").split("/")
    return any(unquote(segment) in (".", "..") for segment in segments)


async def _read(response: httpx.Response, cap: int) -> bytes:
    return b"".join([chunk async for chunk in capped_chunks(response.aiter_bytes(), cap)])


def _page_url(value: object) -> str | None:
    """The address the reader says it read, when it is an http(s) URL with a host."""
    if not isinstance(value, str) or not value.isprintable():
        return None
    try:
        parts = urlsplit(value.strip())
    except ValueError:
        return None
    return parts.geturl() if parts.scheme in ("http", "https") and parts.hostname else None


def _document(url: str, text: str) -> Document:
    """A Document from the reader's JSON answer (`data.content` ...) or, failing that, its text."""
    try:
        payload: Any = json.loads(text)  # its escapes may spell surrogate halves
    except (ValueError, RecursionError):  # not JSON, or nested deeper than Python reads
        payload = None
    data = payload.get("data") if isinstance(payload, dict) else None
    if not isinstance(data, dict):
        return Document(
            url=url, final_url=url, content_type="text/markdown", content=text.strip(), via="reader"
        )
    return Document(
        url=url,
        final_url=_page_url(data.get("url")) or url,
        content_type="text/markdown",
        content=well_formed(str(data.get("content") or "")).strip(),
        title=one_line(str(data.get("title") or "")),
        published=iso_date(data.get("publishedTime")),
        via="reader",
    )
