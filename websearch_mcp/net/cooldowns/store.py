"""Cooldown state shared by key pools and circuit breakers, behind a small async interface.

Both only need "until when is this name cooled down, and why", plus two atomic steps for the
breakers: counting a failure and claiming the one probe after a cooldown. The in-memory store
below serves one process; a shared backend (Redis, for replicas) implements the same methods.
Names are `key:<provider>:<fingerprint>` and `breaker:<engine>`; a key itself is never a name
or a value. Times are wall-clock seconds since the epoch (`time.time()`), so that replicas agree
on them.
"""

from __future__ import annotations

import hashlib
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Protocol

#: Wall-clock seconds since the epoch; tests pass a clock they move by hand.
Clock = Callable[[], float]


@dataclass(frozen=True, slots=True)
class Cooldown:
    """A name is unusable until `until`; `reason` says why, `failures` counts failures in a row."""

    until: float
    reason: str = ""
    failures: int = 0


class CooldownStore(Protocol):
    """Where cooldowns live. Implementations must be safe for concurrent use by coroutines.

    `get` returns the last `Cooldown` set for `name` (expired or not) or None (`fresh`: read
    from the shared store itself, not a read reused from a moment ago); `set` replaces it
    (a shared backend should let entries expire a while after `until`, failures are only kept
    to grow the next cooldown); `delete` forgets it.

    `record_failure` atomically counts one more failure in a row (n = previous failures + 1, 1
    when absent), stores `Cooldown(until_for(n), reason, n)` and returns it. `claim_probe`
    atomically takes the probe lease of `name` (until `now + lease_seconds`) when its cooldown
    exists, has ended (`until <= now`) and no unexpired lease is held, and says whether it did.
    `set`, `delete` and `record_failure` end any lease on `name`.
    """

    async def get(self, name: str, *, fresh: bool = False) -> Cooldown | None: ...

    async def set(self, name: str, cooldown: Cooldown) -> None: ...

    async def delete(self, name: str) -> None: ...

    async def record_failure(
        self, name: str, reason: str, until_for: Callable[[int], float]
    ) -> Cooldown: ...

    async def claim_probe(self, name: str, lease_seconds: float, now: float) -> bool: ...


class MemoryCooldownStore:
    """A `CooldownStore` in a dict: one process. Bounded by the number of engines and keys."""

    def __init__(self) -> None:
        self._entries: dict[str, Cooldown] = {}
        self._leases: dict[str, float] = {}  # name -> when its probe lease expires

    # No await inside a method: each one is atomic for the coroutines of this process.
    async def get(self, name: str, *, fresh: bool = False) -> Cooldown | None:
        return self._entries.get(name)

    async def set(self, name: str, cooldown: Cooldown) -> None:
        self._entries[name] = cooldown
        self._leases.pop(name, None)

    async def delete(self, name: str) -> None:
        self._entries.pop(name, None)
        self._leases.pop(name, None)

    async def record_failure(
        self, name: str, reason: str, until_for: Callable[[int], float]
    ) -> Cooldown:
        previous = self._entries.get(name)
        failures = (previous.failures if previous else 0) + 1
        cooldown = Cooldown(until_for(failures), reason, failures)
        await self.set(name, cooldown)
        return cooldown

    async def claim_probe(self, name: str, lease_seconds: float, now: float) -> bool:
        entry = self._entries.get(name)
        if entry is None or entry.until > now or self._leases.get(name, now) > now:
            return False
        self._leases[name] = now + lease_seconds
        return True


def fingerprint(provider: str, key: str) -> str:
    """A short, stable, non-reversible name for a key (for store names only, never shown)."""
    return hashlib.sha256(f"{provider}\0{key}".encode()).hexdigest()[:16]


def system_clock() -> float:
    """The real wall clock."""
    return time.time()


def format_seconds(seconds: float) -> str:
    """A duration for people: `0.3 s`, `45 s`, `3 min`, `2 min 30 s`, `1 h 5 min`. Below an
    hour it is exact to the second: a wait it names ("next try in ...") is waited as said."""
    if seconds < 9.5:
        return f"{max(0.0, seconds):.2g} s"
    seconds = round(seconds)
    if seconds < 60:
        return f"{seconds} s"
    if seconds < 3600:
        minutes, rest = divmod(seconds, 60)
        return f"{minutes} min {rest} s" if rest else f"{minutes} min"
    hours, rest = divmod(round(seconds / 60), 60)
    return f"{hours} h {rest} min" if rest else f"{hours} h"
