"""`web_search` with `read` end to end: the real app under uvicorn asked over /mcp, fake engines on
127.0.0.1 whose results point at a fake site on 127.0.0.1 (opened for the test by
`fetch.allow_networks` and `fetch.allowed_ports`), a SQLite page cache in a temporary directory.
"""

from __future__ import annotations

import asyncio
import contextlib
import re
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
import yaml
from mcp import Client

from testing.cache_service import call, config, make_settings, serve
from testing.fake_engines import FakeEngines, Fault, ResultsFn
from testing.fake_llm import FakeLLM
from testing.fetch_helpers import LocalServer, make_pdf, page, redirect, send
from testing.server_helpers import MCP_HEADERS, TOOLS_LIST, text_of
from testing.serving import serve_app
from websearch_mcp.cli import main
from websearch_mcp.search.service import SearchService

QUERY = "ammonite fossils northern cliffs"
HANG_QUERY = "ammonite fossils northern cliffs hanging"
DEADLINE = 4.0
#: How long the engines take to answer in the test of the time left for reading.
ENGINES_DELAY = 1.5
#: A sentence far down a long page: passages must find it, not the page's opening.
DEEP_SENTENCE = (
    "The ammonite fossils of the northern cliffs were first catalogued by the lighthouse keeper "
    "in 1887, who sent forty specimens to the museum."
)
#: A private address, outside `fetch.allow_networks`; its port is the site's (allowed).
REFUSED_HOST = "10.255.0.1"


def deep_page() -> str:
    filler = "".join(
        f"<p>Section {i} covers the harbour, its boats, the weather of week {i} and the tides, "
        f"in enough words to count as real content for the extractor number {i}.</p>"
        for i in range(80)
    )
    return (
        "<!doctype html><html><head><title>Coastal notes</title></head><body>"
        "<nav><a href='/'>Home</a> <a href='/fossils'>Ammonite fossils</a></nav>"
        f"<article><h1>Coastal notes</h1>{filler}<p>{DEEP_SENTENCE}</p>"
        "<p>The harbour closes for the winter in November.</p></article></body></html>"
    )


SECOND_PAGE = (
    "<html><head><title>Cliff walks</title></head><body><article><h1>Cliff walks</h1>"
    "<p>Walkers on the northern cliffs often find small ammonite fossils after the spring "
    "storms have washed the clay away from the rock.</p>"
    "<p>Parking is available near the church.</p></article></body></html>"
)


#: A PDF whose font maps each half of 𝐀 (U+1D400) to a glyph of its own: the text extracted
#: holds surrogates, which neither UTF-8 nor JSON can carry as they are.
MATH_PDF = make_pdf(
    [["Ammonite fossils of the northern cliffs, measured in units of AB by the survey."]],
    to_unicode={"A": "D835", "B": "DC00"},
)


class Site:
    """The fake site: two readable pages and one that never answers (until released)."""

    def __init__(self) -> None:
        self.release = threading.Event()
        self.server = LocalServer(
            routes={
                "/deep": page(deep_page()),
                "/second": page(SECOND_PAGE),
                "/hang": self._hang,
                "/forbidden": lambda h: send(h, 403, b"go away", "text/plain"),
                "/image": page(b"\x89PNG\r\n\x1a\n" + bytes(64), "image/png"),
                "/broken": lambda h: send(h, 500, b"oops", "text/plain"),
                "/math.pdf": page(MATH_PDF, "application/pdf"),
                "/loop": redirect("/loop"),
                "/blank": page("<html><body><div id='app'></div><script>go()</script></body>"),
            }
        )

    def _hang(self, handler: Any) -> None:
        self.release.wait(30)
        with contextlib.suppress(OSError):  # the reader has long given up
            send(handler, 200, b"<html><body><p>Too late.</p></body></html>", "text/html")

    def result(self, path: str, title: str) -> dict[str, Any]:
        return {
            "title": title,
            "url": self.server.url(path),
            "snippet": f"{title}: ammonite fossils on the northern cliffs.",
        }


@pytest.fixture
def site() -> Iterator[Site]:
    fake_site = Site()
    with fake_site.server:
        try:
            yield fake_site
        finally:
            fake_site.release.set()


@pytest.fixture
def engine_results(site: Site) -> ResultsFn:
    def results(engine: str, query: str) -> list[dict[str, Any]]:
        found = [
            site.result("/deep", "Ammonite fossils of the northern cliffs"),
            site.result("/second", "Northern cliffs walks and ammonite fossils"),
            {
                "title": "Ammonite fossils archive",
                "url": site.server.url("/secret", host=REFUSED_HOST),
                "snippet": "The archive of ammonite fossils from the northern cliffs.",
            },
        ]
        if "hanging" in query:
            found.insert(1, site.result("/hang", "Hanging page on ammonite fossils cliffs"))
        if "math" in query:
            found = [site.result("/math.pdf", "Ammonite fossils northern cliffs survey")]
        if "blank" in query:
            found = [site.result("/blank", "Ammonite fossils northern cliffs blank")]
        if "looping" in query:
            found = [site.result("/loop", "Ammonite fossils northern cliffs looping")]
        if "failing" in query:
            found = [
                site.result(path, f"Ammonite fossils northern cliffs {path[1:]}")
                for path in ("/forbidden", "/image", "/broken")
            ]
        return found

    return results


@pytest.fixture
def server(engines_url: str, site: Site, tmp_path: Path) -> Iterator[str]:
    settings = make_settings(
        engines_url,
        tmp_path / "cache.sqlite3",
        search={"deadline_seconds": DEADLINE},
        fetch={"allow_networks": ["127.0.0.0/8"], "allowed_ports": [site.server.port]},
    )
    with serve(settings) as url:
        yield url


def search(url: str, **arguments: Any) -> tuple[dict[str, Any], str]:
    result = call(url, {"query": QUERY, **arguments})
    assert not result.get("isError"), result
    return result["structuredContent"], result["content"][0]["text"]


def by_url(answer: dict[str, Any], url: str) -> dict[str, Any]:
    return next(r for r in answer["results"] if r["url"] == url)


def test_read_gives_passages_from_deep_in_the_page_and_a_status_for_each_page(
    server: str, site: Site, connections: list[tuple[str, int]]
) -> None:
    dialled = connections
    started = time.monotonic()
    answer, text = search(server, query=HANG_QUERY, read=4)
    took = time.monotonic() - started

    deep = by_url(answer, site.server.url("/deep"))
    assert deep["page_status"] == "ok"
    assert any(DEEP_SENTENCE in passage for passage in deep["passages"])
    assert sum(map(len, deep["passages"])) <= 2000
    assert by_url(answer, site.server.url("/second"))["page_status"] == "ok"
    # The hanging page costs no more than what was left of the deadline.
    hanging = by_url(answer, site.server.url("/hang"))
    assert hanging["page_status"] == "timeout" and hanging["passages"] == []
    assert took < DEADLINE + 1.5
    # The refused address is listed with its snippet, but never dialled.
    refused = by_url(answer, site.server.url("/secret", host=REFUSED_HOST))
    assert refused["page_status"] == "refused"
    assert "private address" in refused["page_error"]
    assert refused["snippet"].startswith("The archive")
    assert all(host == "127.0.0.1" for host, _ in dialled)
    assert sorted(site.server.paths()) == ["/deep", "/hang", "/second"]
    # The text rendering quotes the passages under their result, and says why a page is missing.
    quoted = [line for line in text.splitlines() if line.startswith("   > ")]
    assert any(DEEP_SENTENCE in line for line in quoted)
    assert "(page not read: timeout: not read within the search's deadline" in text
    assert "(page not read: refused: " in text


def test_reading_takes_only_what_the_engines_left_of_the_deadline(
    server: str, site: Site, fake: FakeEngines
) -> None:
    """docs/tools.md: pages are read "within what is left of the search's deadline, counted
    from the start of the call": slow engines leave the reading less time, not a deadline more."""
    for name in ("tavily", "brave", "searxng"):
        fake.faults[name] = Fault(delay=ENGINES_DELAY)
    started = time.monotonic()
    answer, _ = search(server, query=HANG_QUERY, read=2)
    took = time.monotonic() - started
    hanging = by_url(answer, site.server.url("/hang"))
    assert hanging["page_status"] == "timeout"
    left = re.search(r"\(([\d.]+) s were left\)", hanging["page_error"])
    assert left is not None and float(left[1]) <= DEADLINE - ENGINES_DELAY
    assert took < DEADLINE + 1.0


def test_the_longest_search_is_its_deadline_then_the_summarys_time(
    engines_url: str, site: Site, fake: FakeEngines, tmp_path: Path
) -> None:
    """docs/clients.md: a `web_search` with `read` and a summary ends within
    `search.deadline_seconds` plus `llm.timeout_seconds` (never more than the deadline), with
    what it has: here two engines and the model hang, and one page never answers."""
    fake.faults["tavily"] = fake.faults["brave"] = Fault(hang=True)
    model = FakeLLM(stream_mode="hang", plain_mode="hang")
    deadline = 1.5
    with serve_app(model.app) as model_url:
        settings = make_settings(
            engines_url,
            tmp_path / "cache.sqlite3",
            search={"deadline_seconds": deadline},
            fetch={"allow_networks": ["127.0.0.0/8"], "allowed_ports": [site.server.port]},
            llm={"base_url": f"{model_url}/v1", "model": "fake-model", "timeout_seconds": 30},
        )
        try:
            with serve(settings) as url:
                started = time.monotonic()
                answer, _ = search(url, query=HANG_QUERY, read=4, intent="research")
                took = time.monotonic() - started
        finally:
            model.release()
    assert took < 2 * deadline + 1.0
    statuses = {e["name"]: e["status"] for e in answer["engines"]}
    assert statuses == {"tavily": "timeout", "brave": "timeout", "searxng": "ok"}
    assert by_url(answer, site.server.url("/hang"))["page_status"] == "timeout"
    assert f"no answer within {deadline:g} s" in answer["summary_error"]


def test_each_way_a_page_can_fail_has_its_status(server: str, site: Site) -> None:
    answer, text = search(server, query=f"{QUERY} failing", read=3)
    statuses = {r["url"].rsplit("/", 1)[1]: r["page_status"] for r in answer["results"]}
    assert statuses == {"forbidden": "blocked", "image": "unsupported", "broken": "error"}
    assert all(r["snippet"] and r["passages"] == [] for r in answer["results"])
    assert "HTTP 403" in by_url(answer, site.server.url("/forbidden"))["page_error"]
    assert "(page not read: unsupported content type image/png" in text


def test_a_redirect_loop_is_not_reported_as_refused_by_the_address_policy(
    server: str, site: Site
) -> None:
    """docs/tools.md: `refused` is "the address policy does not allow the URL: it is listed,
    never fetched". A page that redirects to itself was fetched (six times): an agent told
    `refused` takes the URL for one this service will never read, not for a looping site."""
    answer, _ = search(server, query=f"{QUERY} looping", read=1)
    looping = by_url(answer, site.server.url("/loop"))
    assert "redirect" in looping["page_error"]
    assert looping["page_status"] == "error", looping
    assert site.server.paths().count("/loop") > 1  # it was fetched


def test_a_page_without_any_text_is_not_said_to_hold_nothing_matching(
    server: str, site: Site
) -> None:
    """A page whose HTML holds no text (a script-rendered app shell) is not a page read whose
    text does not match the query: the agent should be told it got no text at all, by
    `read` and by `fetch_page` (whose text is otherwise the URL and nothing else)."""
    _, text = search(server, query=f"{QUERY} blank", read=1)
    assert "nothing in it matches the query" not in text, text
    assert "no text" in text, text
    fetched = call(server, {"url": site.server.url("/blank")}, name="fetch_page")
    assert "no text" in fetched["content"][0]["text"], fetched["content"][0]["text"]


async def test_the_text_says_why_each_page_was_not_read(server: str, site: Site) -> None:
    # A text-only client (Kimi Code, the Agents SDK) reads why as well as that a page failed.
    async with Client(f"{server}/mcp", mode="legacy", cache=None) as client:
        result = await client.call_tool("web_search", {"query": f"{QUERY} failing", "read": 3})
    text = text_of(result)
    assert "   (page not read: blocked: the server answered HTTP 403)" in text, text
    assert "   (page not read: unsupported content type image/png: only" in text, text
    assert "   (page not read: error: the server answered HTTP 500)" in text, text


def test_a_pdf_whose_text_holds_surrogate_halves_is_read_and_fetched(
    server: str, site: Site
) -> None:
    answer, _ = search(server, query=f"{QUERY} math", read=1)
    read = by_url(answer, site.server.url("/math.pdf"))
    assert read["page_status"] == "ok"
    assert any("units of \U0001d400 by" in passage for passage in read["passages"])
    fetched = call(server, {"url": site.server.url("/math.pdf")}, "fetch_page")
    assert not fetched.get("isError"), fetched
    assert "units of \U0001d400 by" in fetched["structuredContent"]["content"]


def test_only_the_top_results_are_read_and_score_details_stay(server: str, site: Site) -> None:
    plain, _ = search(server, explain=True)
    answer, _ = search(server, read=1, explain=True)
    first, *rest = answer["results"]
    assert first["url"] == site.server.url("/deep") and first["page_status"] == "ok"
    assert all("page_status" not in r and "passages" not in r for r in rest)
    stripped = [
        {k: v for k, v in r.items() if k not in ("passages", "page_status", "page_error")}
        for r in answer["results"]
    ]
    assert stripped == plain["results"]  # reading does not re-rank or re-score
    assert site.server.paths() == ["/deep"]


def test_a_repeated_search_reads_nothing_again(server: str, site: Site) -> None:
    first, _ = search(server, read=3)
    seen = list(site.server.paths())
    second, _ = search(server, read=3)
    assert sorted(seen) == ["/deep", "/second"]
    assert site.server.paths() == seen
    assert second["cached"] is True
    assert second["results"] == first["results"]


def test_a_page_read_past_the_deadline_goes_on_to_the_page_cache(
    engines_url: str, site: Site, tmp_path: Path
) -> None:
    """docs/tools.md: a page still loading at the deadline is `timeout`, and its fetch goes on
    to land in the page cache; it was called off, and fetched again at every repeat."""
    settings = make_settings(
        engines_url,
        tmp_path / "cache.sqlite3",
        search={"deadline_seconds": 1},
        fetch={"allow_networks": ["127.0.0.0/8"], "allowed_ports": [site.server.port]},
    )
    with serve(settings) as server:
        answer, _ = search(server, query=HANG_QUERY, read=2)
        assert by_url(answer, site.server.url("/hang"))["page_status"] == "timeout"
        site.release.set()  # the page answers now, and the fetch still under way stores it
        deadline = time.monotonic() + 10
        while True:  # a call while it is still under way joins it: a later one finds it stored
            fetched = call(server, {"url": site.server.url("/hang")}, "fetch_page")
            if fetched["structuredContent"].get("cached") or time.monotonic() > deadline:
                break
            time.sleep(0.1)
    assert fetched["structuredContent"]["cached"] is True, fetched
    assert site.server.paths().count("/hang") == 1


async def test_a_fetch_page_whose_caller_left_is_called_off(
    engines_url: str, site: Site, tmp_path: Path
) -> None:
    """Only `read` leaves a fetch to finish alone: a fetch_page whose client went away is called
    off, as its request is, and holds no fetch past the limits on requests."""
    fetch = {"allow_networks": ["127.0.0.0/8"], "allowed_ports": [site.server.port]}
    service = SearchService(make_settings(engines_url, tmp_path / "c.sqlite3", fetch=fetch))
    try:
        left = asyncio.create_task(
            service.fetch_page(site.server.url("/hang"), max_chars=1000, start=0)
        )
        await asyncio.sleep(0.2)
        left.cancel()
        await asyncio.gather(left, return_exceptions=True)
        site.release.set()
        await asyncio.sleep(0.3)
        again = await service.fetch_page(site.server.url("/hang"), max_chars=1000, start=0)
    finally:
        await service.close()
    assert "cached" not in again and site.server.paths().count("/hang") == 2


def test_without_read_no_page_is_fetched(server: str, site: Site) -> None:
    answer, text = search(server)
    assert answer["results"]
    assert all("page_status" not in r for r in answer["results"])
    assert "> " not in text
    assert site.server.paths() == []


def test_a_page_read_by_fetch_page_is_not_fetched_again_by_read(server: str, site: Site) -> None:
    fetched = call(server, {"url": site.server.url("/deep")}, "fetch_page")
    assert not fetched.get("isError"), fetched
    answer, _ = search(server, read=3)
    assert by_url(answer, site.server.url("/deep"))["page_status"] == "ok"
    assert sorted(site.server.paths()) == ["/deep", "/second"]


def test_a_page_read_by_read_is_not_fetched_again_by_fetch_page(server: str, site: Site) -> None:
    search(server, read=3)
    fetched = call(server, {"url": site.server.url("/second"), "max_chars": 200}, "fetch_page")
    assert fetched["structuredContent"]["cached"] is True
    assert sorted(site.server.paths()) == ["/deep", "/second"]


@pytest.mark.parametrize("value", [11, -1, "many", 2.5])
def test_read_out_of_range_is_a_tool_error_naming_it(server: str, site: Site, value: Any) -> None:
    result = call(server, {"query": QUERY, "read": value})
    assert result["isError"] is True
    assert "read must be an integer from 0 to 10" in result["content"][0]["text"]
    assert site.server.paths() == []


def test_read_is_advertised_with_its_range(server: str) -> None:
    response = httpx.post(f"{server}/mcp", headers=MCP_HEADERS, json=TOOLS_LIST, timeout=10)
    tools = {t["name"]: t for t in response.json()["result"]["tools"]}
    schema = tools["web_search"]["inputSchema"]["properties"]["read"]
    assert (schema["type"], schema["minimum"], schema["maximum"], schema["default"]) == (
        "integer",
        0,
        10,
        0,
    )
    assert "passages" in tools["web_search"]["description"]


def test_the_searxng_endpoint_ignores_read(server: str, site: Site) -> None:
    response = httpx.get(
        f"{server}/search", params={"q": QUERY, "format": "json", "read": "5"}, timeout=10
    )
    assert response.status_code == 200
    assert response.json()["results"]
    assert site.server.paths() == []


def test_the_cli_reads_pages_with_read(
    engines_url: str, site: Site, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    raw = config(
        engines_url,
        {"backend": "none"},
        fetch={"allow_networks": ["127.0.0.0/8"], "allowed_ports": [site.server.port]},
    )
    path = tmp_path / "config.yaml"
    path.write_text(yaml.safe_dump(raw))
    code = main(["search", QUERY, "--config", str(path), "--read", "2"])
    out = capsys.readouterr().out
    assert code == 0
    assert DEEP_SENTENCE in out
    assert "Walkers on the northern cliffs" in out  # the second result's page, read too
    assert "page not read" not in out  # the third result (refused) was not among the two
    assert main(["search", QUERY, "--config", str(path), "--read", "11"]) == 1
    assert "read must be an integer from 0 to 10" in capsys.readouterr().err
