"""What `read` costs: `web_search` with `read: 5` next to the same search without it, in one run.

    python -m bench.read             # 20 searches of each kind: about half a minute
    python -m bench.read --runs 5    # quicker

The real app under uvicorn (in this process, on 127.0.0.1) with a SQLite cache in a fresh
directory, three fake engines (real wire formats, 10 results each) answering after 100, 150 and
200 ms, and a fake site whose every page (a 60-paragraph article, about 7,800 characters of
text) answers after `PAGE_DELAY`. Every search is a new query whose results point at new pages,
so neither the answer nor a page is ever cached, except in the last row, which repeats the
`read: 5` searches (answer and pages all from the cache). Calls go over MCP `tools/call`, one at
a time. Sizes are the text rendering's and the structured answer's (JSON) in characters.
"""

from __future__ import annotations

import argparse
import json
import logging
import statistics
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import httpx

from bench.latency import machine
from bench.loadgen import percentile
from testing.fake_engines import FakeEngines, Fault, base_urls, serve_fake_engines
from testing.fetch_helpers import LocalServer, send
from testing.serving import serve_app
from websearch_mcp.config import Settings
from websearch_mcp.engines.registry import ENGINES
from websearch_mcp.search.configuration import parse_config
from websearch_mcp.server.app import create_app

PAGE_DELAY = 0.2
READ = 5
ENGINE_DELAYS = {"searxng": 0.10, "brave": 0.15, "tavily": 0.20}
MCP_HEADERS = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}
WORDS = ["harbour", "tides", "salmon", "glacier", "survey", "station", "winter", "flow"]


def article(path: str) -> bytes:
    """A long article on the benchmark's words, different for every path."""
    paragraphs = "".join(
        f"<p>Paragraph {i} of {path} notes the {WORDS[i % 8]} and the {WORDS[(i + 3) % 8]} "
        f"near station {i}, as the regional survey recorded them over the last decade.</p>"
        for i in range(60)
    )
    return (
        f"<!doctype html><html><head><title>Notes {path}</title></head><body>"
        f"<nav><a href='/'>Home</a></nav><article><h1>Notes</h1>{paragraphs}</article>"
        "</body></html>"
    ).encode()


def slow_page(handler: Any) -> None:
    time.sleep(PAGE_DELAY)
    send(handler, 200, article(handler.path), "text/html; charset=utf-8")


def results_for(site: LocalServer):
    def results(engine: str, query: str) -> list[dict[str, str]]:
        tag = query.split()[-1]  # every query ends in its own tag: its pages are new
        return [
            {
                "title": f"{query} notes {i}",
                "url": site.url(f"/{tag}/{i}"),
                "snippet": f"Notes on the {query}, part {i}.",
            }
            for i in range(10)
        ]

    return results


def settings_for(engines_url: str, site: LocalServer, cache_dir: Path) -> Settings:
    urls = base_urls(engines_url)
    engines: dict[str, Any] = {name: {"enabled": False} for name in ENGINES}
    engines["tavily"] = {"api_keys": ["tvly-bench"], "base_url": urls["tavily"]}
    engines["brave"] = {"api_keys": ["brave-bench"], "base_url": urls["brave"]}
    engines["searxng"] = {"enabled": True, "base_url": urls["searxng"]}
    raw = {
        "engines": engines,
        "search": {"retry": {"retries": 0}, "breaker": {"enabled": False}},
        "cache": {"backend": "sqlite", "path": str(cache_dir / "cache.sqlite3")},
        "fetch": {"allow_networks": ["127.0.0.0/8"], "allowed_ports": [site.port]},
        "server": {"rate_limit_per_minute": 0},
    }
    return parse_config(raw, "bench", environ={})


def search(client: httpx.Client, url: str, query: str, read: int) -> tuple[float, int, int]:
    """One call: seconds, characters of the text rendering, characters of the JSON answer."""
    body = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "tools/call",
        "params": {"name": "web_search", "arguments": {"query": query, "read": read}},
    }
    started = time.perf_counter()
    response = client.post(f"{url}/mcp", headers=MCP_HEADERS, json=body)
    took = time.perf_counter() - started
    result = response.json()["result"]
    if result.get("isError"):
        raise RuntimeError(result["content"][0]["text"])
    structured = result["structuredContent"]
    if read and not all(r.get("page_status") == "ok" for r in structured["results"][:read]):
        raise RuntimeError("a page was not read: the figures would not be comparable")
    return took, len(result["content"][0]["text"]), len(json.dumps(structured, ensure_ascii=False))


def row(name: str, calls: list[tuple[float, int, int]]) -> str:
    ms = [c[0] * 1000 for c in calls]
    text = statistics.median(c[1] for c in calls)
    data = statistics.median(c[2] for c in calls)
    return (
        f"| {name} | {len(calls)} | {statistics.median(ms):.0f} | {percentile(ms, 0.95):.0f} "
        f"| {text:,.0f} | {data:,.0f} |"
    )


def run(runs: int) -> str:
    with (
        LocalServer(routes={"/*": slow_page}) as site,
        tempfile.TemporaryDirectory() as workdir,
    ):
        fake = FakeEngines(
            results_for(site), faults={n: Fault(delay=d) for n, d in ENGINE_DELAYS.items()}
        )
        with serve_fake_engines(fake) as engines_url:
            settings = settings_for(engines_url, site, Path(workdir))
            with serve_app(create_app(settings)) as url, httpx.Client(timeout=30) as client:
                search(client, url, "warm up w0", READ)  # imports, first extraction
                plain = [search(client, url, f"harbour tides p{i}", 0) for i in range(runs)]
                read = [search(client, url, f"harbour tides r{i}", READ) for i in range(runs)]
                fetched = len(site.seen)
                again = [search(client, url, f"harbour tides r{i}", READ) for i in range(runs)]
                refetched = len(site.seen) - fetched
    lines = [
        "| search | calls | median ms | p95 ms | text chars | JSON chars |",
        "|---|---|---|---|---|---|",
        row("plain (no read)", plain),
        row(f"read: {READ}, pages answering in {PAGE_DELAY * 1000:.0f} ms", read),
        row(f"read: {READ} repeated (answer and pages cached)", again),
    ]
    info = machine()
    lines += [
        "",
        f"Pages fetched by the repeats: {refetched}. Machine: {info['nproc']} cores, "
        f"{info['cpu']}, Python {info['python']}.",
    ]
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.read", description=__doc__)
    parser.add_argument("--runs", type=int, default=20, help="searches of each kind")
    args = parser.parse_args(argv)
    logging.disable(logging.INFO)  # the service's request logs would bury the table
    print(run(args.runs))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
