"""Fusion alone: the CPU time of `rank()` on 8 engines x 20 results, in this process.

    python -m bench.rank [--queries N] [--profile]
    python -m bench.rank --digest [--queries N]

The eight engines of `bench.latency` answer every query with 20 results each
(`bench.synthetic`: overlapping lists, URL variants to canonicalise, dates), in their own wire
formats, read by the engines' own parsers. Each query is new, as for a fresh search, and its lists
are fused once with the default settings. Three runs, each on queries of its own (a query fused
before would find its URLs, dates and words in the caches): with the index families the engines
declare (DuckDuckGo's results are Bing's, Serper's Google's), as the service fuses them, first under
CPython's default collector settings, then under the server's (`gc_settings.settle`, which every
server process applies at start); then, still under the server's, with every engine an index of its
own. Time is the process's CPU time (`time.process_time`), not wall time: on a shared machine the
other jobs' load then inflates the figures less. The first `WARM_UP` queries of each run fill the
first-use caches and are not counted. `--profile` prints where the time of
the last run goes (cProfile, by own time).

`--digest` times nothing: it prints one SHA-256 of `rank()`'s whole output (every result's fields
and score details) for N queries (150 unless given) under three settings (the defaults; a
recency query with the neighbours, the coverage credit and MMR off; uneven engine weights, a
month's time range and 20 results with alignment, position and engine scores off), half of them
with lists read ahead and two in three with the index families. Two commits that print the same
digest fuse these lists identically, to the last bit.
"""

from __future__ import annotations

import argparse
import cProfile
import dataclasses
import hashlib
import pstats
import statistics
import time
from collections.abc import Sequence
from datetime import UTC, date, datetime
from typing import Any

from bench.latency import DELAYS
from bench.loadgen import percentile
from bench.synthetic import query_text, results_for
from testing.wire_formats import render
from websearch_mcp.config import SearchSettings
from websearch_mcp.engines.registry import ENGINES
from websearch_mcp.models import Hit, HttpResponse, Query
from websearch_mcp.ranking.pipeline import rank
from websearch_mcp.ranking.prepared import Preparation
from websearch_mcp.server import gc_settings

WARM_UP = 20
RUN = "rank"


def engine_lists(
    index: int, run: str = RUN, today: date | None = None
) -> tuple[Query, dict[str, list[Hit]]]:
    """The `index`-th query of `run` and the eight engines' parsed lists for it, read on
    `today` (the real day when None: a date past tomorrow is no publication date)."""
    text = query_text(index, run)
    query = Query(text=text)
    lists = {}
    for name in DELAYS:
        body, content_type = render(name, results_for(name, text), text)
        response = HttpResponse(200, {"content-type": content_type}, body, url="")
        engine = ENGINES[name]() if today is None else ENGINES[name](today=lambda: today)
        lists[name] = engine.hits(response, query)
    return query, lists


#: Each engine's declared index family, as the service passes them to `rank()`.
FAMILIES = {name: family for name in DELAYS if (family := ENGINES[name].index)}


def cpu_times(
    count: int,
    profile: cProfile.Profile | None = None,
    families: dict[str, str] | None = None,
    run: str = RUN,
) -> list[float]:
    """CPU milliseconds of one `rank()` call per new query, for `count` queries of `run`."""
    search = SearchSettings()
    weights = dict.fromkeys(DELAYS, 1.0)
    now = datetime.now(UTC)
    out = []
    for i in range(count + WARM_UP):
        query, lists = engine_lists(i, run)
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


def _digest_settings() -> list[tuple[SearchSettings, str, dict[str, Any]]]:
    """(settings, words added to the query, other query fields) of each `digest` variant."""
    return [
        (SearchSettings(), "", {}),
        (
            SearchSettings.model_validate(
                {
                    "ranking": {"neighbour_weight": 0, "coverage_weight": 0},
                    "mmr": {"enabled": False},
                }
            ),
            " latest 2026",
            {},
        ),
        (
            SearchSettings.model_validate(
                {
                    "ranking": {
                        "alignment_weight": 0,
                        "position_weight": 0,
                        "engine_score_weight": 0,
                    }
                }
            ),
            "",
            {"max_results": 20, "time_range": "month"},
        ),
    ]


def digest(count: int) -> str:
    """The SHA-256 of `rank()`'s output for `count` queries (see the module's text)."""
    out = hashlib.sha256()
    now = datetime(2026, 11, 1, tzinfo=UTC)  # the day the engines read the lists on, too
    variants = _digest_settings()
    for i in range(count):
        query, lists = engine_lists(i, today=now.date())
        for variant, (search, words, fields) in enumerate(variants):
            weights = dict.fromkeys(DELAYS, 1.0)
            if variant == 2:
                weights |= {"bing": 0.5, "exa": 0.0}
            prepared = None
            if i % 2:
                prepared = Preparation()
                for name in sorted(lists)[:5]:
                    prepared.add(lists[name])
            results = rank(
                lists,
                Query(text=query.text + words, **fields),
                search,
                weights=weights,
                families=FAMILIES if i % 3 else None,
                now=now,
                prepared=prepared,
            )
            for r in results:
                fields_of = dataclasses.asdict(r)
                fields_of["details"] = sorted(r.details.items())
                out.update(repr(sorted(fields_of.items())).encode())
    return out.hexdigest()


def _report(label: str, ms: list[float]) -> None:
    print(
        f"  {label}: p50 {percentile(ms, 0.5):.3f} ms, p95 {percentile(ms, 0.95):.3f} ms, "
        f"mean {statistics.fmean(ms):.3f} ms"
    )


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.rank", description=__doc__)
    parser.add_argument(
        "--queries", type=int, help="queries timed (default 500), or digested (default 150)"
    )
    parser.add_argument("--profile", action="store_true", help="print a cProfile of rank()")
    parser.add_argument("--digest", action="store_true", help="print a digest of the output")
    args = parser.parse_args(argv)
    if args.digest:
        count = max(1, args.queries or 150)
        print(f"rank() output digest over {count} queries x 3 settings: {digest(count)}")
        return 0
    queries = max(1, args.queries or 500)
    named = ", ".join(f"{e}: {f}" for e, f in sorted(FAMILIES.items()) if e != f)
    print(
        f"rank() on {len(DELAYS)} engines x 20 results, CPU time per call over {queries} new "
        f"queries in each run:"
    )
    default = cpu_times(queries, families=FAMILIES, run="default-gc")
    _report(f"index families ({named}), CPython's default collector", default)
    gc_settings.settle()
    _report(
        "the same, the server's collector (gc_settings.settle)",
        cpu_times(queries, families=FAMILIES, run="families"),
    )
    profile = cProfile.Profile() if args.profile else None
    _report("every engine an index of its own, the server's collector", cpu_times(queries, profile))
    if profile is not None:
        pstats.Stats(profile).sort_stats("tottime").print_stats(30)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
