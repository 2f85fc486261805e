"""A circuit breaker per engine with cause-specific cooldowns.

A failure opens the breaker for a while that depends on its cause: a CAPTCHA or bot wall for an
hour (asking again soon only prolongs the block), access denied or rate limiting for three
minutes or what `Retry-After` says, anything else for 5 s per failure in a row, up to two
minutes. While open, the engine is not asked and is reported as `skipped` with the reason and the
time left.

When the cooldown ends the breaker is half-open: one request claims the probe (atomically in the
store, so that concurrent searches and other replicas do not all rush in) and goes through;
every other request keeps skipping the engine until the probe answers. A success closes the
breaker and forgets the failures; a failure opens it again with the next, longer cooldown. A
probe that never answers (its search gave up) lets another through once its lease ends.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from websearch_mcp.errors import (
    EngineAuthError,
    EngineBlocked,
    EngineCaptcha,
    EngineError,
    EngineRateLimited,
)
from websearch_mcp.net.cooldowns.store import (
    Clock,
    Cooldown,
    CooldownStore,
    format_seconds,
    system_clock,
)

#: Why an engine failed, as far as retries, keys and the breaker are concerned.
Cause = Literal["captcha", "denied", "throttled", "key", "transient", "request", "error"]

#: HTTP statuses worth a retry after a pause.
RETRYABLE_STATUSES = frozenset({429, 502, 503})

#: HTTP statuses refusing the request itself (malformed, too long, an operator the API lacks):
#: the engine is up, and the next search may well be answered.
REQUEST_STATUSES = frozenset({400, 413, 414, 422})


def classify(err: EngineError, http_status: int | None, keyed: bool) -> Cause:
    """The cause of an engine failure, from its typed error and the last HTTP status.

    For a keyed provider, refusals and rate limits belong to the key (`key`): the key pool cools
    that key and the next one is tried. For a keyless engine they belong to the engine. A
    request refused as such (`request`: 400, 422...) belongs to its query, not to the engine.
    """
    if isinstance(err, EngineAuthError | EngineRateLimited) and keyed:
        return "key"
    if isinstance(err, EngineRateLimited):
        return "throttled"
    if isinstance(err, EngineAuthError):
        return "denied"
    if isinstance(err, EngineCaptcha):
        return "captcha"
    if isinstance(err, EngineBlocked):
        if http_status in (401, 403):
            return "denied"
        if http_status in (202, 429):
            return "throttled"  # DuckDuckGo's empty 202 page is throttling, not a challenge
        return "captcha"
    if http_status in RETRYABLE_STATUSES:
        return "transient"
    if http_status in REQUEST_STATUSES:
        return "request"
    return "error"


@dataclass(frozen=True, slots=True)
class BreakerPolicy:
    """Cooldowns in seconds for each kind of failure (docs/engines.md, circuit breakers)."""

    captcha_seconds: float = 3600.0
    denied_seconds: float = 180.0
    error_step_seconds: float = 5.0
    error_max_seconds: float = 120.0

    def cooldown(self, cause: Cause, failures: int, retry_after: float | None) -> float:
        """How long to stay open after the `failures`-th failure in a row with `cause`."""
        if cause == "captcha":
            return self.captcha_seconds
        if cause in ("denied", "throttled"):
            return retry_after if retry_after else self.denied_seconds
        growing = min(self.error_max_seconds, self.error_step_seconds * failures)
        return max(growing, retry_after or 0.0)


@dataclass(frozen=True, slots=True)
class Open:
    """The breaker is open: why, and for how many more seconds."""

    reason: str
    seconds_left: float
    #: Half-open: the cooldown is over and another request is probing the engine.
    probing: bool = False

    def describe(self) -> str:
        if self.probing:
            return f"circuit half-open after {self.reason}; another request is probing the engine"
        return f"circuit open after {self.reason}; next try in {format_seconds(self.seconds_left)}"


class CircuitBreaker:
    """The breaker of one engine; its state lives in a `CooldownStore` under `breaker:<name>`."""

    def __init__(
        self,
        engine: str,
        store: CooldownStore,
        policy: BreakerPolicy | None = None,
        *,
        clock: Clock = system_clock,
    ) -> None:
        self.engine = engine
        self.name = f"breaker:{engine}"
        self._store = store
        self.policy = policy or BreakerPolicy()
        self._clock = clock

    async def check(self, probe_seconds: float = 30.0) -> Open | None:
        """`Open` while the engine must not be asked, else None (closed, or this request is the
        probe). A probe's claim lasts `probe_seconds`: as long as its request may take."""
        entry = await self._store.get(self.name)
        if entry is None:
            return None
        now = self._clock()
        if entry.until > now:
            return Open(entry.reason, entry.until - now)
        if await self._store.claim_probe(self.name, probe_seconds, now):
            return None
        return Open(entry.reason, 0.0, probing=True)

    async def failure(self, cause: Cause, reason: str, retry_after: float | None = None) -> float:
        """Record a failure; returns how long the breaker is now open (seconds)."""
        now = self._clock()

        def until_for(failures: int) -> float:
            return now + self.policy.cooldown(cause, failures, retry_after)

        entry = await self._store.get(self.name, fresh=True)
        if entry is not None and entry.until > now:
            # A request sent before the breaker opened (none is sent while it is open): the
            # searches in flight then see one outage, not failures in a row. The rest is
            # counted from the latest, and as long as the longest cause asks (a CAPTCHA).
            until = until_for(entry.failures)
            if until <= entry.until:
                return entry.until - now
            await self._store.set(self.name, Cooldown(until, reason, entry.failures))
            return until - now
        cooldown = await self._store.record_failure(self.name, reason, until_for)
        return cooldown.until - now

    async def state(self) -> Open | None:
        """The failure on record, if any: open with the time left, or half-open (`probing`
        once the cooldown is over). Claims nothing (for the status page)."""
        entry = await self._store.get(self.name)
        if entry is None:
            return None
        left = entry.until - self._clock()
        return Open(entry.reason, max(0.0, left), probing=left <= 0)

    async def is_open(self) -> bool:
        """Whether the cooldown is still running (for metrics); claims nothing."""
        entry = await self._store.get(self.name)
        return entry is not None and entry.until > self._clock()

    async def closed(self) -> bool:
        """Whether no failure is on record (neither open nor half-open); claims nothing."""
        return await self._store.get(self.name) is None

    async def success(self) -> None:
        """The engine answered: close the breaker and forget past failures, unless it opened
        while the request was under way (another request's CAPTCHA, here or on another
        replica): an answer to a request sent before does not cut that rest short."""
        entry = await self._store.get(self.name)
        if entry is not None and entry.until <= self._clock():
            await self._store.delete(self.name)
