"""Failing open: a broken store is bypassed, logged once per cause, counted, and retried later.

Used by the cache backends and the Redis cooldown store (which answers from memory meanwhile).
A store reports each failed operation with a cause (`corrupt`, `locked`, `read_only`,
`disk_full`, `unavailable`, ...). The guard then pauses either every operation (the store cannot be
read) or only writes (it can still be read: a read-only file, a full disk, a held write lock) for
`retry_seconds` of the cache's clock, after which the next call tries again. Nothing here raises.
"""

from __future__ import annotations

import logging
import math
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Literal, TypeVar

LOG = logging.getLogger("websearch_mcp.cache")

Scope = Literal["all", "write"]
T = TypeVar("T")


@dataclass(slots=True)
class CacheStats:
    """Counters of one cache object since it was opened.

    `hits + misses` is the number of `get` calls (a `get` that failed or was bypassed is a miss);
    `errors` counts failed operations by cause; `bypassed` counts calls skipped while a cause
    was being waited out. `cause` is the cause that stopped every operation, until one works
    again (None while the store can be read).
    """

    hits: int = 0
    misses: int = 0
    sets: int = 0
    bypassed: int = 0
    errors: Counter[str] = field(default_factory=Counter)
    cause: str | None = None

    def counted(self, hit: T) -> T:
        """`hit` after counting it: a hit when it is not None, a miss when it is."""
        if hit is None:
            self.misses += 1
        else:
            self.hits += 1
        return hit

    def uncount(self, hit: object) -> None:
        """Take back what `counted(hit)` counted: a lookup that was no search's."""
        if hit is None:
            self.misses -= 1
        else:
            self.hits -= 1

    def as_dict(self) -> dict[str, object]:
        """The counters as plain data (for metrics and health output)."""
        return {
            "hits": self.hits,
            "misses": self.misses,
            "sets": self.sets,
            "bypassed": self.bypassed,
            "errors": dict(self.errors),
        }


def describe(exc: BaseException) -> str:
    """A short text for a log line: the exception's type and its first 200 characters."""
    text = " ".join(str(exc).split())
    return f"{type(exc).__name__}: {text[:200]}" if text else type(exc).__name__


class StoreFailures:
    """The pause, log and count bookkeeping shared by the cache backends.

    `label` names the cache in log lines ("sqlite cache /path/cache.sqlite3"); it must not hold
    a secret such as a Redis password.
    """

    def __init__(
        self,
        label: str,
        stats: CacheStats,
        clock: Callable[[], float],
        retry_seconds: float,
    ) -> None:
        self._label = label
        self._stats = stats
        self._clock = clock
        self._retry = retry_seconds
        # When each pause began: one lasts `retry_seconds` from then, and a clock set back before
        # it ends it (rather than stretching it by the step).
        self._paused_since: dict[Scope, float] = {"all": -math.inf, "write": -math.inf}
        self._cause: dict[Scope, str | None] = {"all": None, "write": None}
        self._warned: set[str] = set()
        self._recovery_told: set[str] = set()

    def allows(self, scope: Scope) -> bool:
        """Whether an operation of `scope` may run now; counts it as bypassed when not."""
        now = self._clock()
        paused = self._paused("all", now) or (scope == "write" and self._paused("write", now))
        if paused:
            self._stats.bypassed += 1
        return not paused

    def _paused(self, scope: Scope, now: float) -> bool:
        since = self._paused_since[scope]
        return since <= now < since + self._retry

    def failed(
        self, cause: str, exc: BaseException, scope: Scope | None, *, since: float | None = None
    ) -> None:
        """Count a failure, log it the first time its cause is seen, and pause `scope` (from
        `since` when given: a wait that began earlier, and ends as it does).

        `scope=None` counts and logs without pausing (a value that does not serialise is the
        caller's problem, not the store's).
        """
        self._stats.errors[cause] += 1
        if scope is not None:
            self._paused_since[scope] = self._clock() if since is None else since
            self._cause[scope] = cause
        if scope == "all":
            self._stats.cause = cause
        if cause in self._warned:
            LOG.debug("%s bypassed (%s): %s", self._label, cause, describe(exc))
            return
        self._warned.add(cause)
        retry = f"; retrying after {self._retry:g} s" if scope is not None else ""
        LOG.warning("%s bypassed (%s): %s%s", self._label, cause, describe(exc), retry)

    def succeeded(self, scope: Scope) -> None:
        """Clear the pause that a success of `scope` proves over (a write proves both)."""
        self._stats.cause = None
        for paused in ("all", "write") if scope == "write" else ("all",):
            cause = self._cause[paused]
            if cause is None:
                continue
            self._cause[paused] = None
            self._paused_since[paused] = -math.inf
            if cause not in self._recovery_told:
                self._recovery_told.add(cause)
                LOG.info("%s works again after %s", self._label, cause)
