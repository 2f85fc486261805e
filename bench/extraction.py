"""What hostile documents cost `fetch_page`'s extraction step, in one run.

    python -m bench.extraction

The extraction step (`websearch_mcp.fetch.extract`) on the default limits with a 6 s budget:
each hostile document alone (time, outcome), then a small HTML page read ten times while four
hostile documents are being extracted (its latency), and the resident memory of this process and
its workers (baseline, peak over the series, after it).
"""

from __future__ import annotations

import asyncio
import os
import statistics
import time

from testing import hostile_docs
from testing.memory import PeakMemory, resident_bytes
from websearch_mcp.config import FetchSettings
from websearch_mcp.fetch.client import RawPage
from websearch_mcp.fetch.extract import ExtractLimits, close_pools, extract

PDF = "application/pdf"
DOCUMENTS = {
    "deflate bomb PDF (8 MiB stream)": (hostile_docs.deflate_bomb_pdf(), PDF),
    "8 pages sharing a 1 MiB stream": (hostile_docs.shared_stream_pdf(8), PDF),
    "2000 pages sharing a 1 MiB stream": (hostile_docs.shared_stream_pdf(2000), PDF),
    "2.2 MB of <p><a><b> HTML": (hostile_docs.flat_html(), "text/html"),
    "100,000 nested elements": (hostile_docs.nested_html(), "text/html"),
}
SMALL = b"<html><title>Small</title><body><article><p>A small page.</p></article></body></html>"


async def timed(body: bytes, media: str, limits: ExtractLimits) -> tuple[float, str]:
    started = time.monotonic()
    try:
        document = await extract(RawPage("http://x/", "http://x/", media, None, body), limits)
        outcome = f"{len(document.content)} chars" + (
            f", {document.capped}" if document.capped else ""
        )
    except Exception as err:  # every failure is an outcome to report
        outcome = str(err)
    return time.monotonic() - started, outcome


async def main() -> None:
    limits = ExtractLimits.from_settings(FetchSettings(timeout_seconds=6))
    await timed(SMALL, "text/html", limits)  # starts the fork server
    with PeakMemory() as memory:
        print("document | seconds | outcome")
        for name, (body, media) in DOCUMENTS.items():
            took, outcome = await timed(body, media, limits)
            print(f"{name} | {took:.2f} | {outcome[:90]}")
        hostile = [DOCUMENTS[n] for n in list(DOCUMENTS)[1:4]] + [DOCUMENTS[list(DOCUMENTS)[1]]]
        load = [asyncio.create_task(timed(body, media, limits)) for body, media in hostile]
        await asyncio.sleep(0.5)
        small = []
        for _ in range(10):
            small.append((await timed(SMALL, "text/html", limits))[0])
            await asyncio.sleep(0.1)
        await asyncio.gather(*load)
    await asyncio.sleep(0.5)
    mib = 1024 * 1024
    baseline, peak = memory.baseline / mib, memory.peak / mib
    after = resident_bytes(os.getpid()) / mib
    print(
        f"small page while 4 hostile are read: median {statistics.median(small):.2f} s,"
        f" max {max(small):.2f} s"
    )
    print(
        f"memory: baseline {baseline:.0f} MiB, peak +{peak - baseline:.0f} MiB,"
        f" after +{after - baseline:.0f} MiB"
    )
    close_pools()


if __name__ == "__main__":
    asyncio.run(main())
