"""Fusion alone: the CPU time of `rank()` on 8 engines x 20 results, in this process.

    python -m bench.rank [--queries N] [--profile]

The eight engines of `bench.latency` answer every query with 20 results each
(`bench.synthetic`: overlapping lists, URL variants to canonicalise, dates), in their own wire
formats, read by the engines' own parsers. Each query is new, as for a fresh search, and its
lists are fused once with the default settings: first with every engine an index of its own,
then with the index families the engines declare (DuckDuckGo's results are Bing's, Serper's
Google's), as the service fuses them. Time is the process's CPU time
(`time.process_time`), not wall time: on a shared machine the other jobs' load then inflates
the figures less. The first `WARM_UP` queries fill the first-use caches and are not counted.
`--profile` prints where the time goes (cProfile, by own time).
"""

from __future__ import annotations

import argparse
import cProfile
import pstats
import statistics
import time
from collections.abc import Sequence
from datetime import UTC, datetime

from bench.latency import DELAYS
from bench.loadgen import percentile
from bench.synthetic import query_text, results_for
from testing.wire_formats import render
from websearch_mcp.config import SearchSettings
from websearch_mcp.engines.registry import ENGINES
from websearch_mcp.models import Hit, HttpResponse, Query
from websearch_mcp.ranking.pipeline import rank

WARM_UP = 20
RUN = "rank"


def engine_lists(index: int) -> tuple[Query, dict[str, list[Hit]]]:
    """The `index`-th query of the run and the eight engines' parsed lists for it."""
    text = query_text(index, RUN)
    query = Query(text=text)
    lists = {}
    for name in DELAYS:
        body, content_type = render(name, results_for(name, text), text)
        response = HttpResponse(200, {"content-type": content_type}, body, url="")
        lists[name] = ENGINES[name]().parse(response, query)
    return query, lists


#: Each engine's declared index family, as the service passes them to `rank()`.
FAMILIES = {name: family for name in DELAYS if (family := ENGINES[name].index)}


def cpu_times(
    count: int, profile: cProfile.Profile | None = None, families: dict[str, str] | None = None
) -> list[float]:
    """CPU milliseconds of one `rank()` call per new query, for `count` queries."""
    search = SearchSettings()
    weights = dict.fromkeys(DELAYS, 1.0)
    now = datetime.now(UTC)
    out = []
    for i in range(count + WARM_UP):
        query, lists = engine_lists(i)
        if profile is not None and i >= WARM_UP:
            profile.enable()
        started = time.process_time()
        rank(lists, query, search, weights=weights, families=families, now=now)
        spent = time.process_time() - started
        if profile is not None:
            profile.disable()
        if i >= WARM_UP:
            out.append(spent * 1000)
    return out


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.rank", description=__doc__)
    parser.add_argument("--queries", type=int, default=500, help="queries timed (default 500)")
    parser.add_argument("--profile", action="store_true", help="print a cProfile of rank()")
    args = parser.parse_args(argv)
    profile = cProfile.Profile() if args.profile else None
    ms = cpu_times(max(1, args.queries), profile)
    print(
        f"rank() on {len(DELAYS)} engines x 20 results, CPU time per call over {len(ms)} new "
        f"queries: p50 {percentile(ms, 0.5):.3f} ms, p95 {percentile(ms, 0.95):.3f} ms, "
        f"mean {statistics.fmean(ms):.3f} ms"
    )
    shared = cpu_times(max(1, args.queries), families=FAMILIES)
    named = ", ".join(f"{e}: {f}" for e, f in sorted(FAMILIES.items()) if e != f)
    print(
        f"the same with the engines' index families ({named}): p50 "
        f"{percentile(shared, 0.5):.3f} ms, p95 {percentile(shared, 0.95):.3f} ms, "
        f"mean {statistics.fmean(shared):.3f} ms"
    )
    if profile is not None:
        pstats.Stats(profile).sort_stats("tottime").print_stats(30)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
