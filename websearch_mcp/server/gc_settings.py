"""The garbage collector's settings for a long-running server process.

A search allocates many short-lived objects (parsed results, terms, scores), almost all freed
by reference counting. With CPython's defaults the cyclic collector still ran often during
searches, each full collection walking every object that imports and startup made (modules,
schemas, clients): a noticeable share of a server's CPU, and full collections that stalled every
request in flight (docs/benchmarks.md has the figures).
"""

from __future__ import annotations

import gc

#: Net container allocations between two young collections (CPython's default: 700). Most of a
#: search's objects are freed before the count reaches it, so collections run far less often, each
#: over about the same number of survivors, and their pauses stay short. The older generations keep
#: their defaults (a middle collection every 10 young ones, a full one every 10 middle ones).
YOUNG_THRESHOLD = 20_000


def settle() -> None:
    """Call once startup is done: collect what startup left behind, freeze what remains (no
    later collection walks it again) and collect the young generation less often."""
    gc.collect()
    gc.freeze()
    gc.set_threshold(YOUNG_THRESHOLD)
