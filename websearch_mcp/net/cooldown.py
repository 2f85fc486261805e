"""Cooldown state shared by key pools and circuit breakers, behind a small async interface.

Both only need "until when is this name cooled down, and why". The in-memory store below serves
one process; a shared backend (Redis, for replicas) implements the same three methods. Names are
`key:<provider>:<fingerprint>` and `breaker:<engine>`; a key itself is never a name or a value.
Times are wall-clock seconds since the epoch (`time.time()`), so that replicas agree on them.
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

    `get` returns the last `Cooldown` set for `name` (expired or not) or None; `set` replaces it
    (a shared backend should let entries expire a while after `until`, failures are only kept
    to grow the next cooldown); `delete` forgets it.
    """

    async def get(self, name: str) -> Cooldown | None: ...

    async def set(self, name: str, cooldown: Cooldown) -> None: ...

    async def delete(self, name: str) -> None: ...


class MemoryCooldownStore:
    """A `CooldownStore` in a dict: one process. Bounded by the number of engines and keys."""

    def __init__(self) -> None:
        self._entries: dict[str, Cooldown] = {}

    async def get(self, name: str) -> Cooldown | None:
        return self._entries.get(name)

    async def set(self, name: str, cooldown: Cooldown) -> None:
        self._entries[name] = cooldown

    async def delete(self, name: str) -> None:
        self._entries.pop(name, None)


def fingerprint(provider: str, key: str) -> str:
    """A short, stable, non-reversible name for a key (for store names only, never shown)."""
    return hashlib.sha256(f"{provider}\0{key}".encode()).hexdigest()[:16]


def system_clock() -> float:
    """The real wall clock."""
    return time.time()


def format_seconds(seconds: float) -> str:
    """A duration for people: `0.3 s`, `45 s`, `3 min`, `1 h 5 min`."""
    if seconds < 9.5:
        return f"{max(0.0, seconds):.2g} s"
    seconds = round(seconds)
    if seconds < 60:
        return f"{seconds} s"
    minutes = round(seconds / 60)
    if minutes < 60:
        return f"{minutes} min"
    hours, rest = divmod(minutes, 60)
    return f"{hours} h {rest} min" if rest else f"{hours} h"
