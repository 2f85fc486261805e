"""`web_search` with `read`: the top results' pages read at once, passages for each.

Pages come through the service's page loader (the `fetch_page` path: address policy, ports,
redirects, byte caps, extraction, page cache). Every page shares one time budget; a page still
loading when it ends is reported as `timeout`. A page that cannot be read keeps its result and
snippet, with `page_status` saying why and `page_error` how.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from typing import cast

from websearch_mcp.errors import FetchError, ToolInputError
from websearch_mcp.fetch import Document
from websearch_mcp.ranking.passages import best_passages
from websearch_mcp.search.answer import PageReading, ResultOut

logger = logging.getLogger(__name__)

#: The content types whose extracted text is Markdown: HTML's (trafilatura writes it) and the
#: reader API's; a text file, JSON, XML and a PDF's text are read as written.
MARKDOWN_TYPES = frozenset({"text/html", "application/xhtml+xml", "text/markdown"})

LoadPage = Callable[[str], Awaitable[Document]]


async def read_results(
    results: list[ResultOut],
    query: str,
    count: int,
    budget_seconds: float,
    load: LoadPage,
) -> list[ResultOut]:
    """`results` with the first `count` of them read: each gains `page_status` and `passages`
    (empty unless the page was read). Takes at most `budget_seconds`."""
    chosen = results[:count]
    if not chosen:
        return results
    tasks = [asyncio.ensure_future(_read_one(r["url"], query, load)) for r in chosen]
    budget_seconds = max(budget_seconds, 0.0)
    try:
        _, pending = await asyncio.wait(tasks, timeout=budget_seconds)
    finally:  # on time, and when the search is called off: nobody waits for these any longer
        for task in tasks:
            task.cancel()
    read: list[ResultOut] = []
    for result, task in zip(chosen, tasks, strict=True):
        if task in pending:
            outcome: PageReading = {
                "page_status": "timeout",
                "passages": [],
                "page_error": (
                    f"not read within the search's deadline ({budget_seconds:.1f} s were left)"
                ),
            }
        else:
            outcome = task.result()
        read.append(cast(ResultOut, {**result, **outcome}))
    return read + results[count:]


async def _read_one(url: str, query: str, load: LoadPage) -> PageReading:
    """The page's status and passages; never raises (a failure is a status)."""
    try:
        document = await load(url)
        # Off the event loop: scoring a long page is CPU work (bounded by the scorer's scan cap).
        # Only HTML (through the extractor) and the reader's answers are Markdown.
        markdown = document.content_type in MARKDOWN_TYPES
        passages = await asyncio.to_thread(
            best_passages, document.content, query, markdown=markdown
        )
    except (FetchError, ToolInputError) as err:  # a URL not fit to fetch is refused
        status = getattr(err, "kind", "refused")
        return {"page_status": status, "passages": [], "page_error": str(err)}
    except Exception as err:  # an unexpected failure reading one page must not fail the search
        logger.warning("reading a result page failed: %s", type(err).__name__)
        return {"page_status": "error", "passages": [], "page_error": "the page could not be read"}
    return {"page_status": "ok", "passages": passages}
