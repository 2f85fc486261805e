"""`read_results` on its own: the time budget, every failure as a status, results left as given.
(End to end, over MCP against a fake site: tests/fetch/test_read_pages.py.)"""

from __future__ import annotations

import asyncio
import copy
import time

from websearch_mcp.fetch import Document, FetchBlocked, FetchRefused
from websearch_mcp.search.answer import ResultOut
from websearch_mcp.search.read_pages import read_results

TEXT = "The glacier survey measured the meltwater flow of the northern rivers every June."
# Results cut down to what `read_results` reads, the url (the snippet tells them apart).
RESULTS: list[ResultOut] = [
    {"url": f"https://example.org/{name}", "snippet": name}  # type: ignore[typeddict-item]
    for name in "abcde"
]


async def load(url: str) -> Document:
    name = url.rsplit("/", 1)[1]
    if name == "a":
        return Document(url=url, final_url=url, content_type="text/html", content=TEXT)
    if name == "b":
        raise FetchRefused("refused: the host points to a private address")
    if name == "c":
        raise FetchBlocked("the server answered HTTP 403")
    if name == "d":
        await asyncio.sleep(30)
    raise RuntimeError("a bug in an extractor")


def test_each_page_gets_a_status_within_the_budget_and_the_rest_stay_as_they_were() -> None:
    given = copy.deepcopy(RESULTS)
    started = time.monotonic()
    read = asyncio.run(read_results(given, "glacier meltwater", 4, 0.5, load))
    assert time.monotonic() - started < 2
    assert [r.get("page_status") for r in read] == ["ok", "refused", "blocked", "timeout", None]
    assert read[0]["passages"] == [TEXT]
    assert all(r["passages"] == [] and r["page_error"] for r in read[1:4])
    assert read[4] == RESULTS[4] and given == RESULTS  # the caller's results are not changed
    statuses = {"ok", "timeout", "refused", "blocked", "error", "unsupported"}  # docs/tools.md
    assert {r["page_status"] for r in read[:4]} <= statuses


def test_an_unexpected_failure_is_an_error_status_not_a_crash() -> None:
    read = asyncio.run(read_results(RESULTS[4:], "glacier", 1, 1.0, load))
    assert read[0]["page_status"] == "error"
    error = read[0]["page_error"]
    assert error is not None and "extractor" not in error  # internals stay out of the answer


def test_no_time_left_reads_nothing() -> None:
    read = asyncio.run(read_results(RESULTS[:1], "glacier", 1, -0.2, load))
    assert read[0]["page_status"] == "timeout"
    # The figure is the time that was left for reading, not the search's deadline.
    assert read[0]["page_error"] == "not read within the search's deadline (0.0 s were left)"


def test_a_search_called_off_stops_reading_its_pages() -> None:
    # The caller gone (an MCP client that gave up), no page is read for it any longer.
    stopped: list[str] = []

    async def slow(url: str) -> Document:
        try:
            await asyncio.sleep(30)
        except asyncio.CancelledError:
            stopped.append(url)
            raise
        raise AssertionError("not reached")

    async def search() -> None:
        reading = asyncio.ensure_future(read_results(RESULTS[:3], "glacier", 3, 20.0, slow))
        await asyncio.sleep(0.1)
        reading.cancel()
        await asyncio.sleep(0.1)  # the page tasks' turn to hear it
        # Checked here: leaving `asyncio.run` cancels whatever is still running.
        assert sorted(stopped) == [r["url"] for r in RESULTS[:3]]

    asyncio.run(search())
