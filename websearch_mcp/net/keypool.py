"""A pool of API keys per keyed provider: round robin, refused keys cooled down.

Each request gets a plan: the usable keys in round-robin order (an atomic cursor, so concurrent
requests start at different keys). A key refused with 401/403 is cooled for `refused_seconds`;
one that hit a rate limit or quota for what `Retry-After` says, else `cooldown_seconds`. A
resting key is never used before its rest ends, whatever the cause: when every key rests the
plan is empty and `resting()` says why and for how long, so that no request is sent (asking
again with a throttled key prolongs the throttling and risks the key). Keys are shown as
"key 2 of 3", never as themselves.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from dataclasses import dataclass

from websearch_mcp.errors import KeyRefused
from websearch_mcp.net.cooldowns.store import (
    Clock,
    Cooldown,
    CooldownStore,
    fingerprint,
    format_seconds,
    system_clock,
)

DEFAULT_COOLDOWN_SECONDS = 1800.0
DEFAULT_REFUSED_COOLDOWN_SECONDS = 21_600.0


@dataclass(frozen=True, slots=True)
class PlannedKey:
    """One key to try, and its 1-based label."""

    index: int
    key: str
    total: int

    @property
    def label(self) -> str:
        return f"key {self.index + 1} of {self.total}"

    def __repr__(self) -> str:
        return f"PlannedKey({self.label})"


class KeyPool:
    """The keys of one provider and their cooldowns (kept in a `CooldownStore`)."""

    def __init__(
        self,
        provider: str,
        keys: Sequence[str],
        store: CooldownStore,
        *,
        clock: Clock = system_clock,
        cooldown_seconds: float = DEFAULT_COOLDOWN_SECONDS,
        refused_seconds: float = DEFAULT_REFUSED_COOLDOWN_SECONDS,
    ) -> None:
        self.provider = provider
        self._keys = tuple(dict.fromkeys(k for k in keys if k))  # unique, in order
        self._names = tuple(f"key:{provider}:{fingerprint(provider, k)}" for k in self._keys)
        self._store = store
        self._clock = clock
        self._cursor = itertools.count()  # next() is atomic: safe across coroutines and threads
        self.cooldown_seconds = cooldown_seconds
        self.refused_seconds = refused_seconds

    def __len__(self) -> int:
        return len(self._keys)

    def __repr__(self) -> str:
        return f"KeyPool({self.provider}, {len(self._keys)} keys)"

    @property
    def secrets(self) -> tuple[str, ...]:
        return self._keys

    async def _entries(self) -> list[Cooldown | None]:
        return [await self._store.get(name) for name in self._names]

    async def _until(self) -> list[float]:
        return [entry.until if entry else 0.0 for entry in await self._entries()]

    async def usable(self) -> int:
        """How many keys are not cooling down now."""
        now = self._clock()
        return sum(1 for until in await self._until() if until <= now)

    async def plan(self) -> list[PlannedKey]:
        """The keys to try for one request, in order; empty while every key rests."""
        total = len(self._keys)
        if not total:
            return []
        start = next(self._cursor) % total
        order = [(start + i) % total for i in range(total)]
        until = await self._until()
        now = self._clock()
        return [PlannedKey(i, self._keys[i], total) for i in order if until[i] <= now]

    async def still_usable(self, planned: Sequence[PlannedKey]) -> list[PlannedKey]:
        """Those of `planned` not resting now: another request may have rested one since its
        plan was made."""
        until = await self._until()
        now = self._clock()
        return [p for p in planned if until[p.index] <= now]

    async def resting(self, *, sent: bool = False) -> tuple[str, str]:
        """While every key rests: the status to report and why, with the time left; `sent`
        when this search sent requests before finding them all resting.

        `rate_limited` when some key rests after a rate limit or quota answer (the time left is
        until the first of those recovers), else `error` (every key was refused).
        """
        now = self._clock()
        entries = [e for e in await self._entries() if e is not None and e.until > now]
        limited = [e.until for e in entries if e.reason == "rate_limited"]
        unsent = "" if sent else " no request sent;"
        if limited:
            left = min(limited) - now
            return "rate_limited", (
                f"every key is resting after a rate limit or quota answer;{unsent}"
                f" the first is usable again in {format_seconds(left)}"
            )
        left = min((e.until for e in entries), default=now) - now
        return "error", (
            f"every key was refused;{unsent} the first is tried again in {format_seconds(left)}"
        )

    async def recovers_in(self) -> float:
        """Seconds until the first key is usable again (0 when one is usable now)."""
        until = await self._until()
        return max(0.0, min(until, default=0.0) - self._clock()) if until else 0.0

    async def rate_limit_ends_in(self) -> float | None:
        """Seconds until the first key resting after a rate limit or quota answer is usable
        again (0 once its rest is over), or None when no key rested after one: a refused key
        will not recover in seconds, so it is never waited for."""
        entries = await self._entries()
        limited = [e.until for e in entries if e is not None and e.reason == "rate_limited"]
        return max(0.0, min(limited) - self._clock()) if limited else None

    async def cool(self, failure: KeyRefused) -> float:
        """Cool the refused key, never cutting a longer rest short; returns how long it rests."""
        if failure.refused:
            seconds = self.refused_seconds
        else:
            seconds = failure.retry_after if failure.retry_after else self.cooldown_seconds
        name = self._names[self._keys.index(failure.key)]
        now = self._clock()
        current = await self._store.get(name, fresh=True)
        if current is not None and current.until > now + seconds:
            # A longer rest set meanwhile (a refusal another search or replica saw) stands.
            return current.until - now
        await self._store.set(name, Cooldown(now + seconds, reason=failure.status, failures=1))
        return seconds
