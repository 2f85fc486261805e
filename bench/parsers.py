"""HTML parser speed on the scraped engines' pages: selectolax's Lexbor backend against lxml.

    python -m bench.parsers            # 300 rounds per page

Pages: the recorded Bing and DuckDuckGo pages under `$WEBSEARCH_SHARED/fixtures` (skipped when
absent) and the fake engines' 20-result DuckDuckGo and Bing pages (`testing.wire_formats`). For
each page, in this process: the engine's own `parse()` (Lexbor), and the common core of every
HTML parser here built with each library: the tree, every link, its `href` and its text.
Selectolax's older Modest backend is left out: it is deprecated since selectolax 1.0.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from collections.abc import Callable
from functools import partial
from pathlib import Path

import lxml.html
from selectolax.lexbor import LexborHTMLParser

from bench.synthetic import query_text, results_for
from testing.wire_formats import render
from websearch_mcp.engines.registry import ENGINES
from websearch_mcp.models import HttpResponse, Query

ROOT = Path(__file__).resolve().parent.parent
FIXTURES = Path(os.environ.get("WEBSEARCH_SHARED", ROOT.parent / "shared")) / "fixtures"
RECORDED = {
    "bing": "bing_html/search_fake_cache_bypass_2020.html",
    "duckduckgo": "duckduckgo_html/html_fake_cache_bypass_2020.html",
}


def pages() -> list[tuple[str, str, bytes]]:
    """(label, engine, HTML) for every page measured."""
    found = []
    for engine, name in RECORDED.items():
        path = FIXTURES / name
        if path.exists():
            found.append(
                (f"{engine} recorded ({path.stat().st_size // 1024} KB)", engine, path.read_bytes())
            )
    text = query_text(0, "parsers")
    for engine in ("duckduckgo", "bing"):
        body, _ = render(engine, results_for(engine, text), text)
        found.append((f"{engine} fake, 20 results ({len(body) // 1024} KB)", engine, body))
    return found


def links_lexbor(html: bytes) -> int:
    tree = LexborHTMLParser(html)
    return sum(len((a.attributes.get("href") or "") + a.text()) for a in tree.css("a"))


def links_lxml(html: bytes) -> int:
    tree = lxml.html.document_fromstring(html)
    # The parser makes HtmlElements; the stubs type `iter` as yielding plain elements.
    links = (a for a in tree.iter("a") if isinstance(a, lxml.html.HtmlElement))
    return sum(len((a.get("href") or "") + a.text_content()) for a in links)


def median_ms(call: Callable[[], object], rounds: int) -> float:
    for _ in range(10):
        call()
    times = []
    for _ in range(rounds):
        started = time.perf_counter()
        call()
        times.append((time.perf_counter() - started) * 1000)
    return statistics.median(times)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.parsers", description=__doc__)
    parser.add_argument("--rounds", type=int, default=300)
    ns = parser.parse_args(argv)
    print("| page | engine parse() (Lexbor) | links: Lexbor | links: lxml |")
    print("|---|---|---|---|")
    for label, engine, html in pages():
        parser_ = ENGINES[engine]()
        response = HttpResponse(200, {"content-type": "text/html"}, html, "")
        query = Query(text="python asyncio")

        def parse(parser_=parser_, response=response, query=query) -> object:
            try:
                return parser_.parse(response, query)
            except Exception as err:  # a recorded block page raises: that is its parse
                return err

        row = [median_ms(parse, ns.rounds)]
        row += [median_ms(partial(f, html), ns.rounds) for f in (links_lexbor, links_lxml)]
        print(f"| {label} | " + " | ".join(f"{ms:.3f} ms" for ms in row) + " |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
