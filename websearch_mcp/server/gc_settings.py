"""The garbage collector's settings for a long-running server process.

A search allocates hundreds of thousands of short-lived objects (parsed results, terms, scores),
almost all freed by reference counting. With CPython's defaults the cyclic collector still ran
its youngest collection about twice per search and a full one about every hundred searches,
walking the 150,000 objects that imports and startup made (modules, schemas, clients) each time:
about a tenth of a server's CPU, and full collections of about 100 ms that stalled every request
in flight.
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
