"""Pages for `fetch_page` and for `web_search` with `read`: each page's whole text fetched once,
kept in the page cache (namespace "page"), every window cut from it."""

from __future__ import annotations

import dataclasses
import functools

from websearch_mcp import __version__
from websearch_mcp.cache import Cache, cache_key, config_fingerprint
from websearch_mcp.config import Settings
from websearch_mcp.fetch import Document, fetch_document
from websearch_mcp.net.http import choose_proxy
from websearch_mcp.search.answer import PageOut
from websearch_mcp.search.single_flight import SingleFlight

#: The form of a page's stored text: part of the page cache's key, so that a page read by an
#: earlier extraction is never served. Raise it when extraction or its clean-up changes what a
#: page's text is. 2: hidden elements left out, links and images read as their words.
PAGE_FORM = 2


class Pages:
    """The pages one service reads; `fetch_page` and `read` share them, so a page read by one
    is not fetched again for the other."""

    def __init__(self, settings: Settings, cache: Cache) -> None:
        self.settings = settings
        self.cache = cache
        # Anything that changes a page's text: a new version or form, or the fetch settings.
        self.fingerprint = config_fingerprint(__version__, PAGE_FORM, settings.fetch)
        # The reader API is reached as the engines are; a page never goes through a proxy.
        self._reader_proxy = choose_proxy(
            settings.fetch.reader_base_url, None, settings.proxy.url, settings.proxy.no_proxy
        )
        self._flights = SingleFlight()

    async def window(self, url: str, *, max_chars: int, start: int) -> PageOut:
        """One page as clean text, the window [start, start + max_chars) of it.

        Raises `FetchError` (a `ToolInputError`) for refused or unreadable pages.
        """
        document, cached = await self._page(url, finish_alone=False)
        window: PageOut = document.window(max_chars=max_chars, start=start)  # type: ignore[assignment]
        return {**window, "cached": True} if cached else window

    async def document(self, url: str) -> Document:
        """A page's whole text, for `read`: a fetch it stops waiting for (the search's deadline)
        goes on, bounded by the fetch's own timeouts, to fill the page cache, so that a slow
        page is not fetched from scratch at every repeat of the search."""
        return (await self._page(url, finish_alone=True))[0]

    async def _page(self, url: str, *, finish_alone: bool) -> tuple[Document, bool]:
        """A page's whole text from the page cache (True), else fetched and stored (False).

        Identical concurrent loads share one fetch; one that every caller left is called off
        (a fetch_page whose client went away), unless `finish_alone`."""
        key = self._key(url)
        load = functools.partial(self._load, url, key)
        return await self._flights.run(key, load, finish_alone=finish_alone)

    async def close(self) -> None:
        """Stop the loads in flight."""
        await self._flights.cancel()

    def _key(self, url: str) -> str:
        # The URL goes in exactly (as an argument): paths and queries are case-sensitive.
        return cache_key("fetch_page", url, {"url": url}, self.fingerprint)

    async def _cached(self, key: str) -> Document | None:
        hit = await self.cache.get("page", key)
        if hit is None:
            return None
        try:
            return Document(**hit.value)
        except TypeError:  # stored by a version whose Document had other fields
            return None

    async def _load(self, url: str, key: str) -> tuple[Document, bool]:
        cached = await self._cached(key)
        if cached is not None:
            return cached, True
        document = await fetch_document(
            url, settings=self.settings.fetch, reader_proxy=self._reader_proxy
        )
        # Whole: `fetch.max_text_chars` bounds it, and every window is cut from it.
        await self.cache.set(
            "page",
            key,
            dataclasses.asdict(document),
            ttl_seconds=self.settings.cache.page_ttl_seconds,
        )
        return document, False
