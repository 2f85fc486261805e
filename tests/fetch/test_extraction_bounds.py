"""`fetch_page` on hostile documents, served by a real site on 127.0.0.1 and read through the real
service under uvicorn: deflate-bomb PDFs, PDFs whose pages share one huge stream, huge flat and
deeply nested HTML. Each call ends within `fetch.timeout_seconds` + 1 s, a small page stays fast
meanwhile, and memory comes back."""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any
from unittest.mock import ANY

import httpx
import pytest

from testing import hostile_docs
from testing.fake_engines import FakeEngines, serve_fake_engines
from testing.fetch_helpers import LocalServer, make_pdf, page
from testing.fetch_helpers import settings_for as fetch_settings
from testing.memory import PeakMemory, resident_bytes
from testing.server_helpers import MCP_HEADERS, results_for, settings_for, tool_call
from testing.serving import serve_app
from websearch_mcp.fetch import FetchError, fetch_page
from websearch_mcp.fetch import pool as pool_module
from websearch_mcp.fetch.job import Job
from websearch_mcp.fetch.pool import ExtractorPool
from websearch_mcp.server.app import create_app

TIMEOUT = 3.0
SMALL = "<html><head><title>Small</title></head><body><article><p>A small page.</p></article>"
PDF = "application/pdf"
HOSTILE = {
    "/bomb.pdf": (hostile_docs.deflate_bomb_pdf(8 * 1024 * 1024), PDF),
    "/shared8.pdf": (hostile_docs.shared_stream_pdf(8), PDF),
    "/shared2000.pdf": (hostile_docs.shared_stream_pdf(2000), PDF),
    "/flat.html": (hostile_docs.flat_html(2_200_000), "text/html"),
    "/nested.html": (hostile_docs.nested_html(100_000), "text/html"),
}


@pytest.fixture(scope="module")
def site() -> Iterator[LocalServer]:
    routes = {path: page(body, media) for path, (body, media) in HOSTILE.items()}
    routes["/small.html"] = page(SMALL)
    routes["/small.pdf"] = page(hostile_docs.small_pdf(), PDF)
    routes["/five.pdf"] = page(make_pdf([[f"Page {n} text."] for n in range(5)]), PDF)
    routes["/long.txt"] = page("word " * 5000, "text/plain")
    with LocalServer(routes=routes) as server:
        yield server


@pytest.fixture(scope="module")
def service(site: LocalServer) -> Iterator[str]:
    """The real app, fetching from `site`, with a 3 s fetch budget."""
    with serve_fake_engines(FakeEngines(results_for)) as engines:
        settings = settings_for(engines)
        settings.fetch = settings.fetch.model_copy(
            update={
                "allow_networks": ["127.0.0.0/8"],
                "allowed_ports": [site.port],
                "timeout_seconds": TIMEOUT,
            }
        )
        with serve_app(create_app(settings)) as url:
            fetch(url, site.url("/small.html"))  # the workers' fork server starts once
            yield url


def fetch(url: str, page_url: str, **arguments: Any) -> tuple[dict[str, Any], float]:
    """A fetch_page call over MCP: its result and how long it took."""
    body = tool_call({"url": page_url, **arguments}, name="fetch_page")
    started = time.monotonic()
    response = httpx.post(f"{url}/mcp", headers=MCP_HEADERS, json=body, timeout=30)
    return response.json()["result"], time.monotonic() - started


def text_of(result: dict[str, Any]) -> str:
    return result["content"][0]["text"]


def assert_clear_answers_in_time(outcomes: dict[str, tuple[dict[str, Any], float]]) -> None:
    for path, (_, took) in outcomes.items():
        assert took < TIMEOUT + 1, f"{path} took {took:.1f} s"
    bomb = outcomes["/bomb.pdf"][0]
    assert bomb["isError"] and "fetch.max_pdf_decoded_bytes" in text_of(bomb)
    for path in ("/shared8.pdf", "/shared2000.pdf"):
        result = outcomes[path][0]
        assert result["isError"], path
        assert "page too complex to extract within" in text_of(result), text_of(result)
    flat = outcomes["/flat.html"][0]
    assert not flat["isError"] and "word" in flat["structuredContent"]["content"]
    assert "fetch.max_html_nodes" in flat["structuredContent"]["capped"]
    nested = outcomes["/nested.html"][0]
    assert not nested["isError"] and "deep" in nested["structuredContent"]["content"]


def test_hostile_documents_end_in_time_with_clear_answers_and_memory_comes_back(
    site: LocalServer, service: str
) -> None:
    with PeakMemory() as memory:
        for _ in range(2):  # the second round finds what the first one left behind
            assert_clear_answers_in_time({path: fetch(service, site.url(path)) for path in HOSTILE})
    baseline, peak = memory.baseline, memory.peak
    # A worker killed at its deadline was replaced: ordinary pages still read.
    small = fetch(service, site.url("/small.pdf"))[0]
    assert not small["isError"] and "small honest document" in small["structuredContent"]["content"]
    time.sleep(0.5)
    after = resident_bytes(os.getpid())
    mib = 1024 * 1024
    assert peak - baseline <= 300 * mib, f"peak {(peak - baseline) / mib:.0f} MiB over baseline"
    assert after - baseline <= 100 * mib, f"{(after - baseline) / mib:.0f} MiB left over"


def test_small_page_is_fast_while_four_hostile_pages_are_read(
    site: LocalServer, service: str
) -> None:
    hostile = ["/shared8.pdf", "/shared2000.pdf", "/flat.html", "/shared8.pdf"]
    with ThreadPoolExecutor(4) as pool:
        running = [pool.submit(fetch, service, site.url(path)) for path in hostile]
        time.sleep(0.5)  # all four are being extracted by now
        small, took = fetch(service, site.url("/small.html"))
        assert not small["isError"] and "A small page." in small["structuredContent"]["content"]
        assert took < 1.5, f"the small page took {took:.2f} s"
        for future in running:
            assert future.result()[1] < TIMEOUT + 1


def test_caps_cut_text_pages_and_say_so(site: LocalServer, engines_url: str) -> None:
    settings = settings_for(engines_url)
    settings.fetch = settings.fetch.model_copy(
        update={
            "allow_networks": ["127.0.0.0/8"],
            "allowed_ports": [site.port],
            "max_text_chars": 1000,
            "max_pdf_pages": 2,
        }
    )
    with serve_app(create_app(settings)) as url:
        text = fetch(url, site.url("/long.txt"))[0]["structuredContent"]
        pdf = fetch(url, site.url("/five.pdf"))[0]["structuredContent"]
    assert text["total_chars"] == 1000 and "fetch.max_text_chars" in text["capped"]
    assert "Page 1 text." in pdf["content"] and "Page 2 text." not in pdf["content"]
    assert "read 2 of 5 pages (fetch.max_pdf_pages)" in pdf["capped"]


async def test_a_document_inflating_past_the_workers_memory_is_a_clear_error(
    site: LocalServer,
) -> None:
    # Allowed to decode far more than `extract_memory_mib`: the memory bound stops it first.
    site.routes["/inflating.pdf"] = page(hostile_docs.deflate_bomb_pdf(300 * 1024 * 1024), PDF)
    limits = fetch_settings(site, extract_memory_mib=256, max_pdf_decoded_bytes=1 << 30)
    too_large = r"page too large to extract within 256 MiB of memory \(fetch.extract_memory_mib\)"
    with pytest.raises(FetchError, match=too_large):
        await fetch_page(site.url("/inflating.pdf"), settings=limits)
    small = await fetch_page(site.url("/small.pdf"), settings=limits)
    assert "small honest document" in small["content"]


async def test_a_job_cancelled_while_it_waits_gives_back_its_turn() -> None:
    def job(body: bytes) -> Job:
        return Job("html", body, "http://127.0.0.1/", 2_000_000, 50_000, 1, 65536)

    pool = ExtractorPool(1, 768 * 1024 * 1024)
    try:
        assert (await pool.run(job(SMALL.encode()), time.monotonic() + 20))[0] == "ok"  # warmed up
        slow = asyncio.ensure_future(pool.run(job(hostile_docs.flat_html(150_000)), deadline(8)))
        await asyncio.sleep(0.1)
        waiting = asyncio.ensure_future(pool.run(job(SMALL.encode()), deadline(8)))
        await asyncio.sleep(0.1)
        waiting.cancel()  # its caller went away while it waited for the one worker
        await asyncio.gather(waiting, return_exceptions=True)
        # The slow job, paused for the waiting one, gets the worker back, and so does the next.
        assert (await slow)[0] == "ok"
        assert (await pool.run(job(SMALL.encode()), deadline(3)))[0] == "ok"
    finally:
        pool.close()


async def test_a_page_after_one_that_left_its_worker_large_is_read() -> None:
    # The table leaves the worker past RECYCLE_GROWTH_BYTES, so it exits after answering; the
    # next page must go to a fresh worker, not to the one on its way out.
    pool = ExtractorPool(1, 768 * 1024 * 1024)
    table = Job("html", hostile_docs.long_table(), "http://127.0.0.1/", 2_000_000, 50_000, 1, 65536)
    small = Job("html", SMALL, "http://127.0.0.1/", 2_000_000, 50_000, 1, 65536)
    try:
        assert (await pool.run(small, deadline(20)))[0] == "ok"  # the worker started
        baseline = resident_bytes(os.getpid())
        for _ in range(2):
            assert (await pool.run(table, deadline(30)))[0] == "ok"
            assert await pool.run(small, deadline(10)) == ("ok", ANY)
        # The memory went back with the worker that exited: a worker kept after the table holds
        # it on.
        assert resident_bytes(os.getpid()) - baseline < 64 * 1024 * 1024
    finally:
        pool.close()


async def test_the_time_a_worker_takes_to_start_is_not_the_pages(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # The first page a process reads also starts the fork server, slowly on a busy machine.
    start = pool_module._Worker.__init__

    def slow_start(worker: Any, *args: Any) -> None:
        time.sleep(1.0)
        start(worker, *args)

    monkeypatch.setattr(pool_module._Worker, "__init__", slow_start)
    pool = ExtractorPool(1, 768 * 1024 * 1024)
    small = Job("html", SMALL, "http://127.0.0.1/", 2_000_000, 50_000, 1, 65536)
    try:
        assert await pool.run(small, deadline(0.5)) == ("ok", ANY)
    finally:
        pool.close()


@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM])
async def test_a_stop_signal_to_the_process_group_lets_the_page_in_flight_be_read(
    signum: int,
) -> None:
    # Ctrl-C in a terminal and systemd's stop reach the workers too while the server finishes
    # its requests: the page being read is answered, not lost as "too large or complex".
    pool = ExtractorPool(1, 768 * 1024 * 1024)
    table = Job("html", hostile_docs.long_table(), "http://127.0.0.1/", 2_000_000, 50_000, 1, 65536)
    small = Job("html", SMALL, "http://127.0.0.1/", 2_000_000, 50_000, 1, 65536)
    try:
        assert (await pool.run(small, deadline(20)))[0] == "ok"  # the worker started
        (busy,) = pool._idle
        reading = asyncio.ensure_future(pool.run(table, deadline(30)))
        await asyncio.sleep(0.5)
        assert not reading.done()
        busy.signal(signum)
        assert await reading == ("ok", ANY)
        busy.process.join(5)
        assert busy not in pool._idle and not busy.process.is_alive()  # it answered, then went
        # An idle worker goes at once, and the next page has a fresh one.
        assert await pool.run(small, deadline(20)) == ("ok", ANY)
        (idle,) = pool._idle
        idle.signal(signum)
        idle.process.join(5)
        assert idle.process.exitcode == 0
        assert await pool.run(small, deadline(20)) == ("ok", ANY)
        # The signal and the next page reach an idle worker together (held still until the
        # page is sent): it leaves without reading it, and a fresh worker does.
        (idle,) = pool._idle
        idle.signal(signal.SIGSTOP)
        idle.signal(signum)
        reading = asyncio.ensure_future(pool.run(small, deadline(20)))
        await asyncio.sleep(0.3)
        idle.signal(signal.SIGCONT)
        assert await reading == ("ok", ANY)
        assert idle.process.exitcode == 0
    finally:
        pool.close()


def test_a_process_that_read_no_page_makes_no_fork_server_directory_on_its_way_out(
    tmp_path: Path,
) -> None:
    # multiprocessing's helper makes the directory it is asked for when there is none, and
    # raised where it could not (TMPDIR gone): `stdio` on a stop signal then never ended.
    ending = "from websearch_mcp.fetch.pool import remove_fork_server_dir; remove_fork_server_dir()"
    for temp in (tmp_path, tmp_path / "gone"):
        env = {**os.environ, "TMPDIR": str(temp)}
        done = subprocess.run(
            [sys.executable, "-c", ending], env=env, capture_output=True, text=True, timeout=60
        )
        assert (done.returncode, done.stderr) == (0, "")
    assert list(tmp_path.iterdir()) == []


def deadline(seconds: float) -> float:
    return time.monotonic() + seconds
