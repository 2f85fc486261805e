"""One engine, configured and asked resiliently, as named steps; never raises.

`EngineRun` is one configured engine (the pure engine object, its settings and its resilience
state), built once per process by `configure`; the fan-out keeps one per known engine.

The steps of a call: admission (the keys that may be used, then the circuit breaker), a slot of
the engine's rate limit, the request under the engine's own timeout and the search's deadline,
the classification of a failure, and then one of: the next key, a retry after a backoff, or the
breaker's record of the failure. Every way a call ends is an `Outcome` with the engine's report.
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import dataclasses
import functools
import logging
import random
import time
from collections.abc import Callable, Mapping
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import TypeVar

from websearch_mcp.config import EngineSettings, Settings
from websearch_mcp.engines.base import Engine
from websearch_mcp.errors import EngineError, KeyRefused
from websearch_mcp.models import EngineReport, Hit, HttpRequest, HttpResponse, Query
from websearch_mcp.net.backoff import Backoff
from websearch_mcp.net.breaker import RETRYABLE_STATUSES, BreakerPolicy, CircuitBreaker, classify
from websearch_mcp.net.cooldowns.store import Clock, CooldownStore, format_seconds
from websearch_mcp.net.engine_http import EngineClient, send
from websearch_mcp.net.http import choose_proxy
from websearch_mcp.net.keypool import KeyPool, PlannedKey
from websearch_mcp.net.ratelimit import RateLimit, TokenBucket
from websearch_mcp.net.shared_rate import SharedRateLimit
from websearch_mcp.net.useragents import UserAgentRotation
from websearch_mcp.redaction import MASK, redact
from websearch_mcp.runtime import RUNTIME_ENV
from websearch_mcp.search.activity import without_quoted_query

log = logging.getLogger(__name__)

#: Below this much time left, a request is not started (it could not finish).
MIN_REQUEST_SECONDS = 0.05
#: A request sent within the first tenth of its search was in flight for the whole search.
WHOLE_SEARCH = 0.9
#: Waited beyond a key's rest before it is used again.
REST_MARGIN_SECONDS = 0.02
#: Threads of their own for parsing engine answers. A parse goes on after its search has
#: stopped waiting for it (a thread cannot be stopped): an answer whose parse takes far longer
#: than any deadline holds one of these, never a thread that name lookups need.
_PARSES = ThreadPoolExecutor(8, thread_name_prefix="websearch-engine-parse")
#: The most of those threads one engine's answers hold at once, so that many searches getting
#: one engine's slow answer leave the other engines theirs.
PARSES_PER_ENGINE = 2
_Parsed = TypeVar("_Parsed")


#: The pooled client for (proxy or None, engine name).
ClientFor = Callable[[str | None, str], EngineClient]


@dataclass(slots=True)
class EngineRun:
    """One configured engine: the pure engine object, its settings and its resilience state."""

    engine: Engine
    settings: EngineSettings
    base_url: str
    timeout: float
    enabled: bool
    proxy: str | None = None
    client: EngineClient | None = None
    breaker: CircuitBreaker | None = None
    bucket: RateLimit | None = None
    pool: KeyPool | None = None
    parses: asyncio.Semaphore = dataclasses.field(
        default_factory=lambda: asyncio.Semaphore(PARSES_PER_ENGINE)
    )

    @property
    def name(self) -> str:
        return self.engine.name

    @property
    def keys(self) -> list[str]:
        return self.settings.api_keys

    def __repr__(self) -> str:
        return f"EngineRun({self.name})"


async def _parsed(
    run: EngineRun, parse: Callable[[HttpResponse], _Parsed], response: HttpResponse
) -> _Parsed:
    """`parse(response)` in a parse thread, once one of `run`'s shares is free. The share is
    given back when the parse ends, not when its caller stops waiting: the thread is held
    until then."""
    await run.parses.acquire()
    loop = asyncio.get_running_loop()

    def give_back(_: object) -> None:
        with contextlib.suppress(RuntimeError):  # the loop closed meanwhile: nobody waits
            loop.call_soon_threadsafe(run.parses.release)

    try:
        job = _PARSES.submit(parse, response)
    except BaseException:
        run.parses.release()
        raise
    job.add_done_callback(give_back)
    return await asyncio.wrap_future(job)


def configure(
    engine_cls: type[Engine],
    settings: Settings,
    environ: Mapping[str, str],
    store: CooldownStore,
    clock: Clock,
    client_for: ClientFor,
) -> EngineRun:
    """The run of `engine_cls` as `settings` configure it; cooldowns (keys, breaker) in `store`.

    Only an enabled engine gets its client now; `environ` is where `HTTP(S)_PROXY` are read.
    """
    name = engine_cls.name
    conf = settings.engine(name)
    base_url = (conf.base_url or engine_cls.base_url).rstrip("/")
    proxy = choose_proxy(base_url, conf.proxy, settings.proxy.url, settings.proxy.no_proxy, environ)
    enabled = engine_cls.default_enabled if conf.enabled is None else conf.enabled
    return EngineRun(
        engine=engine_cls(),
        settings=conf,
        base_url=base_url,
        timeout=conf.timeout_seconds or engine_cls.default_timeout,
        enabled=enabled,
        proxy=proxy,
        client=client_for(proxy, name) if enabled else None,
        breaker=_breaker(name, settings, store, clock),
        bucket=_rate_limit(engine_cls, conf, settings, environ),
        pool=_key_pool(name, conf, settings, store, clock),
    )


def _rate_limit(
    engine_cls: type[Engine], conf: EngineSettings, settings: Settings, environ: Mapping[str, str]
) -> RateLimit | None:
    """The engine's rate limit, None without one. The workers of one server keep it together,
    in a file of their runtime directory."""
    rate = engine_cls.rate_limit if conf.rate_limit is None else conf.rate_limit
    if not rate:
        return None
    workers, shared = settings.server.workers, environ.get(RUNTIME_ENV)
    if shared and isinstance(workers, int) and workers > 1:
        return SharedRateLimit(Path(shared) / "rates.sqlite3", engine_cls.name, rate, workers)
    return TokenBucket(rate)


def _breaker(
    name: str, settings: Settings, store: CooldownStore, clock: Clock
) -> CircuitBreaker | None:
    conf = settings.search.breaker
    if not conf.enabled:
        return None
    policy = BreakerPolicy(
        conf.captcha_seconds, conf.denied_seconds, conf.error_step_seconds, conf.error_max_seconds
    )
    return CircuitBreaker(name, store, policy, clock=clock)


def _key_pool(
    name: str, conf: EngineSettings, settings: Settings, store: CooldownStore, clock: Clock
) -> KeyPool | None:
    if not conf.api_keys:
        return None
    keys = settings.search.keys
    return KeyPool(
        name,
        conf.api_keys,
        store,
        clock=clock,
        cooldown_seconds=keys.cooldown_seconds,
        refused_seconds=keys.refused_cooldown_seconds,
    )


@dataclass(slots=True)
class Outcome:
    """One engine's report, and its hits when they go into the fusion (None otherwise).

    `demoted`: the list seems to answer another query; it is fused with a much lower weight.
    `asked`: False when no request was sent (breaker open, every key resting, no slot of its
    rate limit).
    """

    report: EngineReport
    hits: list[Hit] | None
    demoted: bool = False
    asked: bool = True


@dataclass(frozen=True, slots=True)
class CallKit:
    """What every engine call shares: the retry policy and its randomness, the secrets to
    redact, the User-Agent rotation, the client of a run, and the count of requests sent again
    after a kept-alive connection turned out closed (per engine)."""

    backoff: Backoff
    rng: random.Random
    secrets: tuple[str, ...]
    agents: UserAgentRotation
    client_for: Callable[[EngineRun], EngineClient]
    stale_retries: collections.Counter[str]


@dataclass(frozen=True, slots=True)
class _Failure:
    error: EngineError | None  # None: timed out, or no slot (`no_slot`)
    http_status: int | None
    no_slot: bool = False  # the rate limit had no slot for a follow-up request in time


def apply_limits(hits: list[Hit], run: EngineRun) -> list[Hit]:
    """Per-engine `min_score` (only for engines that return scores) and `max_size`."""
    if run.engine.returns_score and run.settings.min_score > 0:
        hits = [h for h in hits if h.score is None or h.score >= run.settings.min_score]
    return hits if run.settings.max_size is None else hits[: run.settings.max_size]


def with_user_agent(run: EngineRun, request: HttpRequest, agents: UserAgentRotation) -> HttpRequest:
    """Scraped pages go out with a browser's User-Agent (a different one each time)."""
    if not run.engine.scraped or any(k.lower() == "user-agent" for k in request.headers):
        return request
    return dataclasses.replace(request, headers={**request.headers, "User-Agent": agents.next()})


class EngineCall:
    """One call of `run` for `query`, to be over by `until` (on the `time.monotonic()` clock).
    `whole_search`: the search's deadline (seconds) when the call was made at its start (every
    call of `hybrid`, the first of `sequential` and `pool`), else None.

    State of the call: the keys planned (`plan`, in the pool's order; `[None]` without keys),
    the one in use, those refused since the plan was made, the retries so far and what each
    try did (`attempts`, reported when there was more than one).
    """

    def __init__(
        self,
        run: EngineRun,
        query: Query,
        until: float,
        kit: CallKit,
        whole_search: float | None = None,
    ) -> None:
        self.run = run
        self.query = query
        self.until = until
        self.whole_search = whole_search
        self.kit = kit
        self.started = time.monotonic()
        self.attempts: list[str] = []
        self.plan: list[PlannedKey | None] = []
        self.planned: PlannedKey | None = None
        self.tried: set[int] = set()
        self.retry = 0

    async def outcome(self) -> Outcome:
        """Run the call to its end: admitted, then one try after another until one decides."""
        outcome = await self._admit()
        while outcome is None:
            outcome = await self._attempt()
        return outcome

    # --- the steps --------------------------------------------------------------------------

    async def _admit(self) -> Outcome | None:
        """Plan the keys, or say why the engine is not asked at all: every key resting, or its
        breaker open (or half-open with another request probing it)."""
        run = self.run
        # Keys first: a provider whose every key rests is not asked, and takes no breaker probe.
        self.plan = list(await run.pool.plan()) if run.pool else [None]
        if not self.plan and run.pool is not None:
            status, text = await run.pool.resting()
            resting = EngineReport(run.name, status, error=text)  # type: ignore[arg-type]
            return Outcome(resting, None, asked=False)
        self.planned = self.plan[0]
        # A probe may take until the deadline; its claim lapses a little after it.
        probe_seconds = max(0.0, self.until - time.monotonic()) + 1.0
        if run.breaker is not None and (state := await run.breaker.check(probe_seconds)):
            skipped = EngineReport(run.name, "skipped", error=state.describe())
            return Outcome(skipped, None, asked=False)
        return None

    async def _attempt(self) -> Outcome | None:
        """One try with the key in use: how the call ended, or None to try again."""
        left = self.until - time.monotonic()
        if left < MIN_REQUEST_SECONDS:
            outcome = self._report("timeout", "no answer before the deadline")
            outcome.asked = bool(self.attempts)  # a first try with no time for it sent nothing
            return outcome
        if not await self._slot(left):
            return self._no_slot(sent=bool(self.attempts))
        budget = min(self.run.timeout, self.until - time.monotonic())
        hits, failure = await self._request(budget)
        if failure is None:
            return await self._answered(hits)
        if failure.no_slot:
            return self._no_slot(sent=True)
        if failure.error is None:
            return await self._timed_out(budget)
        return await self._failed(failure.error, failure.http_status)

    async def _request(self, budget: float) -> tuple[list[Hit] | None, _Failure | None]:
        """One request (and its follow-ups) and the parse: hits, or what went wrong."""
        run, query, kit = self.run, self.query, self.kit
        key = self.planned.key if self.planned else None
        client = kit.client_for(run)
        retried = functools.partial(kit.stale_retries.update, (run.name,))
        status: int | None = None
        ends = time.monotonic() + budget
        try:
            async with asyncio.timeout(budget):
                request = with_user_agent(run, run.engine.request(query, key), kit.agents)
                response = await send(client, run.base_url, request, budget, retried)
                status = response.status
                # Answers are read in a thread, this one for its follow-up as the last for hits
                # (below), so that an answer slow to parse (a parser's time can grow with the
                # square of a page's nesting) holds up neither the event loop nor any other
                # search; waiting for it is bounded by `budget`, as the request is.
                follow_up = functools.partial(run.engine.follow_up, query=query, key=key)
                while (nxt := await _parsed(run, follow_up, response)) is not None:
                    # A follow-up is a request too: it waits for its own slot of the rate limit.
                    if not await self._slot(ends - time.monotonic()):
                        return None, _Failure(None, status, no_slot=True)
                    request = with_user_agent(run, nxt, kit.agents)
                    response = await send(client, run.base_url, request, budget, retried)
                    status = response.status
                hits = await _parsed(run, functools.partial(run.engine.hits, query=query), response)
                return apply_limits(hits, run), None
        except TimeoutError:
            return None, _Failure(None, status)
        except asyncio.CancelledError:
            # Given up at the search's deadline (`hybrid`), not before it (the service closing).
            if time.monotonic() >= self.until - MIN_REQUEST_SECONDS:
                await self._rest_if_hung(budget)
            raise
        except EngineError as err:
            return None, _Failure(err, status)
        except Exception as err:  # a parser bug must not fail the whole search
            log.warning("engine %s raised %s", run.name, type(err).__name__)
            failure = EngineError("its answer could not be read (an unexpected error, logged)")
            return None, _Failure(failure, status)

    async def _answered(self, hits: list[Hit] | None) -> Outcome:
        if self.run.breaker is not None:
            await self.run.breaker.success()
        self.attempts.append(f"{self._label}{len(hits or ())} results")
        return self._report("ok" if hits else "empty", hits=hits)

    async def _timed_out(self, budget: float) -> Outcome:
        run = self.run
        self.attempts.append(f"{self._label}timeout")
        if budget < run.timeout:
            await self._rest_if_hung(budget)
            return self._report(
                "timeout", f"no answer within the search's deadline ({budget:.3g} s)"
            )
        if run.breaker is not None:
            # Its own timeout, not the request's deadline: the engine is slow.
            await run.breaker.failure("error", f"a timeout after {run.timeout:g} s")
        return self._report("timeout", f"no answer within its {run.timeout:g} s timeout")

    async def _rest_if_hung(self, budget: float) -> None:
        """A request cut off by the search's deadline says nothing about a late engine given
        little time, but one in flight for the whole search (sent at its start) counts."""
        breaker, whole = self.run.breaker, self.whole_search
        if breaker is not None and whole and budget >= WHOLE_SEARCH * whole:
            await breaker.failure("error", f"no answer during the whole search ({whole:g} s)")

    async def _failed(self, err: EngineError, http_status: int | None) -> Outcome | None:
        """Classify a failure: the next key, a retry (None), or the end recorded by the breaker."""
        text = redact(str(err), self.kit.secrets)
        # An API may quote the query in its error: neither the log nor the breaker's record,
        # which later searches of any client show, holds it, even inside a word.
        masked = without_quoted_query(text, self.query.text, MASK)
        log.info("engine %s failed: %s", self.run.name, masked)
        cause = classify(err, http_status, keyed=self.planned is not None)
        if cause == "key" and self.planned is not None and self.run.pool is not None:
            return await self._key_refused(self.run.pool, self.planned, err)
        if http_status in RETRYABLE_STATUSES and cause != "captcha":
            wait = self._backoff(err.retry_after)
            if wait is not None:
                self.attempts.append(f"{self._label}{text} (retried after {wait:.2g} s)")
                await self._pause(wait)
                return await self._key_for_retry()
        self.attempts.append(f"{self._label}{text}")
        if self.run.breaker is not None and cause == "request":
            # The engine answered: one query it refuses must not rest it for every other search.
            await self.run.breaker.success()
        elif self.run.breaker is not None:
            await self.run.breaker.failure(cause, masked, err.retry_after)
        # Refused without a key sent, an answer explaining why is access denied like a bare 403.
        return self._report("blocked" if cause == "denied" else err.status, text)

    async def _key_refused(
        self, pool: KeyPool, planned: PlannedKey, err: EngineError
    ) -> Outcome | None:
        """The key in use was refused: cool it, then the next planned key; after the last one,
        wait for a key to recover (None: try again) or end the call."""
        refused = KeyRefused(self.run.name, planned.index, planned.total, planned.key, err)
        seconds = await pool.cool(refused)
        text = redact(str(refused), self.kit.secrets)
        self.attempts.append(f"{text} (key cooled for {format_seconds(seconds)})")
        self.tried.add(planned.index)
        untried = [p for p in self.plan if p is not None and p.index not in self.tried]
        untried = await pool.still_usable(untried)  # others may have rested one meanwhile
        if untried:
            self.planned = untried[0]
            return None
        wait = await self._key_recovery(pool)
        if wait is None:
            return self._report(refused.status, text)
        await self._pause(wait)
        self.plan = list(await pool.plan())
        if not self.plan:
            return self._report(*await pool.resting(sent=True))
        self.planned, self.tried = self.plan[0], set()
        return None

    async def _key_for_retry(self) -> Outcome | None:
        """Before a retry: the key in use, unless another search rested it meanwhile; then the
        next key not resting, or the end (None: retry)."""
        pool, planned = self.run.pool, self.planned
        if pool is None or planned is None or await pool.still_usable([planned]):
            return None
        self.tried.add(planned.index)
        untried = [p for p in self.plan if p is not None and p.index not in self.tried]
        untried = await pool.still_usable(untried)
        if untried:
            self.planned = untried[0]
            return None
        return self._report(*await pool.resting(sent=True))

    async def _key_recovery(self, pool: KeyPool) -> float | None:
        """After every key failed: how long to wait for one to recover, or None to give up.

        Only rate limits are waited out (a refused key will not recover in seconds), whichever
        key failed last.
        """
        left = await pool.rate_limit_ends_in()
        if left is None:
            return None
        # A hair past the rest: the loop's timers may fire a little early by the wall clock.
        return self._backoff(left + REST_MARGIN_SECONDS)

    # --- helpers ----------------------------------------------------------------------------

    async def _slot(self, left: float) -> bool:
        """Wait for a slot of the engine's rate limit, if it has one, that leaves time for a
        request within `left` seconds; False (no slot taken) when none comes in time."""
        bucket = self.run.bucket
        return bucket is None or await bucket.acquire(left - MIN_REQUEST_SECONDS)

    def _no_slot(self, *, sent: bool) -> Outcome:
        """The end of a call that `_slot` refused (so the engine has a rate limit); `sent`:
        whether the call sent a request before (a try before a retry, a first step)."""
        bucket = self.run.bucket
        assert bucket is not None
        outcome = self._report(
            "rate_limited", f"{bucket.describe()}: no free slot before the deadline"
        )
        outcome.asked = sent
        return outcome

    def _backoff(self, hint: float | None) -> float | None:
        """The wait before the next retry (at least `hint`), or None when none fits in time."""
        left = self.until - time.monotonic()
        return self.kit.backoff.next_delay(self.retry, hint, left, self.kit.rng)

    async def _pause(self, seconds: float) -> None:
        self.retry += 1
        await asyncio.sleep(seconds)

    @property
    def _label(self) -> str:
        """Which key a try used, when there is more than one."""
        planned = self.planned
        return f"{planned.label}: " if planned and planned.total > 1 else ""

    def _report(
        self, status: str, error: str | None = None, hits: list[Hit] | None = None
    ) -> Outcome:
        return Outcome(
            EngineReport(
                self.run.name,
                status,  # type: ignore[arg-type]
                results=len(hits or ()),
                latency_ms=int((time.monotonic() - self.started) * 1000),
                error=error,
                attempts=self.attempts if len(self.attempts) > 1 else [],
            ),
            hits,
        )
