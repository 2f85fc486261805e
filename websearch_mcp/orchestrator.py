"""The engines at work: each under its own timeout, all under one deadline, kept answering.

Per engine: a circuit breaker (skip an engine that just failed), a token bucket (stay under its
rate limit), a key pool (rotate keys, cool refused ones and try the next), retries with backoff
for 429/502/503, a proxy chosen per engine, rotating browser User-Agents for scraped pages. The
strategy (`search.strategy`, see `strategies.py`) decides which engines are asked and in what
order; this module runs one engine call for it.
"""

from __future__ import annotations

import asyncio
import collections
import dataclasses
import functools
import logging
import os
import random
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import httpx

from websearch_mcp import strategies
from websearch_mcp.config import EngineSettings, Settings
from websearch_mcp.engines.base import Engine
from websearch_mcp.engines.registry import ENGINES
from websearch_mcp.errors import EngineError, ToolInputError
from websearch_mcp.models import EngineReport, Hit, HttpRequest, Query
from websearch_mcp.net.backoff import Backoff
from websearch_mcp.net.breaker import RETRYABLE_STATUSES, BreakerPolicy, CircuitBreaker, classify
from websearch_mcp.net.cooldown import (
    Clock,
    CooldownStore,
    MemoryCooldownStore,
    format_seconds,
    system_clock,
)
from websearch_mcp.net.http import URL_LOGGERS, build_client, choose_proxy, send
from websearch_mcp.net.keypool import KeyPool, KeyRefused, PlannedKey
from websearch_mcp.net.ratelimit import TokenBucket
from websearch_mcp.net.useragents import UserAgentRotation
from websearch_mcp.redaction import RedactingFilter, redact
from websearch_mcp.strategies import Outcome

log = logging.getLogger("websearch_mcp.orchestrator")

#: Below this much time left, a request is not started (it could not finish).
MIN_REQUEST_SECONDS = 0.05
#: Waited beyond a key's rest before it is used again.
REST_MARGIN_SECONDS = 0.02


@dataclass(slots=True)
class EngineRun:
    """One configured engine: the pure engine object, its settings and its resilience state."""

    engine: Engine
    settings: EngineSettings
    base_url: str
    timeout: float
    enabled: bool
    proxy: str | None = None
    client: httpx.AsyncClient | None = None
    breaker: CircuitBreaker | None = None
    bucket: TokenBucket | None = None
    pool: KeyPool | None = None

    @property
    def name(self) -> str:
        return self.engine.name

    @property
    def keys(self) -> list[str]:
        return self.settings.api_keys

    def __repr__(self) -> str:
        return f"EngineRun({self.name})"


@dataclass(slots=True)
class FanOut:
    """What a fan-out gathered: hits of the engines that answered, and a report for every engine."""

    lists: dict[str, list[Hit]]
    reports: list[EngineReport]
    #: Engines whose lists seem to answer another query (reported `irrelevant`).
    demoted: frozenset[str] = frozenset()


@dataclass(frozen=True, slots=True)
class _Failure:
    error: EngineError | None  # None: timed out
    http_status: int | None


def apply_limits(hits: list[Hit], run: EngineRun) -> list[Hit]:
    """Per-engine `min_score` (only for engines that return scores) and `max_size`."""
    if run.engine.returns_score and run.settings.min_score > 0:
        hits = [h for h in hits if h.score is None or h.score >= run.settings.min_score]
    return hits if run.settings.max_size is None else hits[: run.settings.max_size]


class Orchestrator:
    """The configured engines, their shared clients and state; runs the configured strategy.

    `store` holds key and breaker cooldowns (in memory by default; a shared one lets replicas
    agree), `clock` is the wall clock for cooldowns, `rng` drives jitter and weighted choice,
    `environ` is where `HTTP(S)_PROXY` and friends are read (the process environment by default).
    """

    def __init__(
        self,
        settings: Settings,
        client: httpx.AsyncClient | None = None,
        *,
        store: CooldownStore | None = None,
        clock: Clock = system_clock,
        rng: random.Random | None = None,
        environ: Mapping[str, str] | None = None,
    ) -> None:
        self.settings = settings
        self.store = store or MemoryCooldownStore()
        self.clock = clock
        self.rng = rng or random.Random()
        search = settings.search
        self.backoff = Backoff(
            search.retry.retries, search.retry.base_seconds, search.retry.max_seconds
        )
        self.agents = UserAgentRotation()
        self._turn = 0  # round-robin position of the pool strategy's providers
        #: Requests sent again after a kept-alive connection turned out closed, per engine.
        self.stale_retries: collections.Counter[str] = collections.Counter()
        self._injected = client  # serves every direct connection when given (tests)
        self._clients: dict[tuple[str | None, str | None], httpx.AsyncClient] = {}
        env = os.environ if environ is None else environ
        self.runs: dict[str, EngineRun] = {
            name: self._configure(engine_cls, env) for name, engine_cls in ENGINES.items()
        }
        self.secrets: tuple[str, ...] = tuple(
            key for run in self.runs.values() for key in run.settings.api_keys if key
        )
        # httpx logs every request URL at INFO level; some APIs take the key in the URL.
        self._log_filter = RedactingFilter(self.secrets)
        for name in URL_LOGGERS:
            logging.getLogger(name).addFilter(self._log_filter)

    def _configure(self, engine_cls: type[Engine], environ: Mapping[str, str]) -> EngineRun:
        conf = self.settings.engine(engine_cls.name)
        base_url = (conf.base_url or engine_cls.base_url).rstrip("/")
        proxy = choose_proxy(
            base_url, conf.proxy, self.settings.proxy.url, self.settings.proxy.no_proxy, environ
        )
        rate = engine_cls.rate_limit if conf.rate_limit is None else conf.rate_limit
        enabled = engine_cls.default_enabled if conf.enabled is None else conf.enabled
        breaker = self.settings.search.breaker
        keys = self.settings.search.keys
        return EngineRun(
            engine=engine_cls(),
            settings=conf,
            base_url=base_url,
            timeout=conf.timeout_seconds or engine_cls.default_timeout,
            enabled=enabled,
            proxy=proxy,
            client=self._client(proxy, engine_cls.name) if enabled else None,
            breaker=CircuitBreaker(
                engine_cls.name,
                self.store,
                BreakerPolicy(
                    breaker.captcha_seconds,
                    breaker.denied_seconds,
                    breaker.error_step_seconds,
                    breaker.error_max_seconds,
                ),
                clock=self.clock,
            )
            if breaker.enabled
            else None,
            bucket=TokenBucket(rate) if rate else None,
            pool=KeyPool(
                engine_cls.name,
                conf.api_keys,
                self.store,
                clock=self.clock,
                cooldown_seconds=keys.cooldown_seconds,
                refused_seconds=keys.refused_cooldown_seconds,
            )
            if conf.api_keys
            else None,
        )

    def _client(self, proxy: str | None, engine: str | None = None) -> httpx.AsyncClient:
        """A pooled keep-alive client per engine and proxy (None: direct), made on first use.

        Per engine because the pool is scanned, every idle connection probed, on each request
        and each answer: a pool holding one engine's connections stays short.
        """
        if proxy is None and self._injected is not None:
            return self._injected
        key = (engine, proxy)
        if key not in self._clients:
            self._clients[key] = build_client(proxy=proxy)
        return self._clients[key]

    @property
    def client(self) -> httpx.AsyncClient:
        """The shared client for direct connections of no particular engine."""
        return self._client(None)

    async def close(self) -> None:
        for name in URL_LOGGERS:
            logging.getLogger(name).removeFilter(self._log_filter)
        for client in self._clients.values():
            await client.aclose()
        if self._injected is not None:
            await self._injected.aclose()

    def names(self, kind: str) -> list[str]:
        """Every known engine of `kind` ("web" or "academic")."""
        return [n for n, r in self.runs.items() if r.engine.kind == kind]

    def choose(
        self, kind: str, asked: Sequence[str] | None
    ) -> tuple[list[EngineRun], list[EngineReport]]:
        """The engines to query, and reports for those that will not be (disabled, no key, no
        proxy on a restricted network)."""
        known = self.names(kind)
        if asked is not None:
            unknown = [n for n in asked if n not in known]
            if unknown:
                raise ToolInputError(
                    f"unknown engine {unknown[0]!r}; allowed: {', '.join(sorted(known))}"
                )
        chosen: list[EngineRun] = []
        skipped: list[EngineReport] = []
        for name in known:
            run = self.runs[name]
            if asked is not None and name not in asked:
                continue
            if not run.enabled:
                if asked is not None:
                    skipped.append(
                        EngineReport(name, "skipped", error="disabled in the configuration")
                    )
                continue
            if run.engine.needs_key and not run.keys:
                skipped.append(EngineReport(name, "skipped", error="no API key configured"))
                continue
            if self.settings.network == "restricted" and run.engine.needs_proxy and not run.proxy:
                skipped.append(
                    EngineReport(
                        name,
                        "skipped",
                        error="needs a proxy on this restricted network"
                        f" (set proxy.url or engines.{name}.proxy)",
                    )
                )
                continue
            chosen.append(run)
        return chosen, skipped

    async def fan_out(self, query: Query, runs: Sequence[EngineRun], deadline: float) -> FanOut:
        """Ask `runs` as the configured strategy says; what arrived by the deadline counts."""
        until = time.monotonic() + deadline

        async def call(run: EngineRun) -> Outcome:
            return await self.call(run, query, until)

        search = self.settings.search
        if search.strategy == "sequential":
            outcomes = await strategies.sequential(
                runs, query.text, until, call, search.sequential, search.ranking
            )
        elif search.strategy == "pool":
            keyed = [r for r in runs if r.engine.needs_key]
            usable = {r.name: await r.pool.usable() if r.pool else 0 for r in keyed}
            providers = strategies.order_providers(keyed, search.pool, usable, self._turn, self.rng)
            self._turn += 1
            keyless = [r for r in runs if not r.engine.needs_key]
            outcomes = await strategies.pool(providers + keyless, query.text, until, call)
        else:
            outcomes = await strategies.hybrid(runs, query.text, until, deadline, call)
        lists = {o.report.name: o.hits for o in outcomes if o.hits is not None}
        demoted = frozenset(o.report.name for o in outcomes if o.demoted and o.hits is not None)
        return FanOut(lists, [o.report for o in outcomes], demoted)

    async def call(self, run: EngineRun, query: Query, until: float) -> Outcome:
        """One engine, with its breaker, rate limit, keys and retries; never raises.

        `until` is the overall deadline on the `time.monotonic()` clock.
        """
        started = time.monotonic()
        attempts: list[str] = []

        def report(status: str, error: str | None = None, hits: list[Hit] | None = None) -> Outcome:
            return Outcome(
                EngineReport(
                    run.name,
                    status,  # type: ignore[arg-type]
                    results=len(hits or ()),
                    latency_ms=int((time.monotonic() - started) * 1000),
                    error=error,
                    attempts=attempts if len(attempts) > 1 else [],
                ),
                hits,
            )

        plan, refusal = await self._admit(run, until)
        if refusal is not None:
            return refusal
        planned = plan[0]
        tried: set[int] = set()
        retry = 0
        while True:
            left = until - time.monotonic()
            if left < MIN_REQUEST_SECONDS:
                return report("timeout", "no answer before the deadline")
            if run.bucket is not None and not await run.bucket.acquire(left - MIN_REQUEST_SECONDS):
                return report(
                    "rate_limited", f"{run.bucket.describe()}: no free slot before the deadline"
                )
            budget = min(run.timeout, until - time.monotonic())
            label = f"{planned.label}: " if planned and planned.total > 1 else ""
            hits, failure = await self._exchange(run, query, planned, budget)
            if failure is None:
                if run.breaker is not None:
                    await run.breaker.success()
                attempts.append(f"{label}{len(hits or ())} results")
                return report("ok" if hits else "empty", hits=hits)
            err = failure.error
            if err is None:
                attempts.append(f"{label}timeout")
                if budget >= run.timeout and run.breaker is not None:
                    # Its own timeout, not the request's deadline: the engine is slow.
                    await run.breaker.failure("error", f"a timeout after {run.timeout:g} s")
                return report("timeout", f"no answer within {budget:.3g} s")
            text = redact(str(err), self.secrets)
            log.info("engine %s failed: %s", run.name, text)
            cause = classify(err, failure.http_status, keyed=planned is not None)
            if cause == "key" and planned is not None and run.pool is not None:
                refused = KeyRefused(run.name, planned.index, planned.total, planned.key, err)
                seconds = await run.pool.cool(refused)
                text = redact(str(refused), self.secrets)
                attempts.append(f"{text} (key cooled for {format_seconds(seconds)})")
                tried.add(planned.index)
                untried = [p for p in plan if p is not None and p.index not in tried]
                if untried:
                    planned = untried[0]
                    continue
                wait = await self._key_retry_delay(run.pool, refused, retry, until)
                if wait is None:
                    return report(refused.status, text)
                retry += 1
                await asyncio.sleep(wait)
                plan = list(await run.pool.plan())
                if not plan:
                    return report(*await run.pool.resting())
                planned, tried = plan[0], set()
                continue
            if failure.http_status in RETRYABLE_STATUSES and cause != "captcha":
                wait = self.backoff.next_delay(
                    retry, err.retry_after, until - time.monotonic(), self.rng
                )
                if wait is not None:
                    attempts.append(f"{label}{text} (retried after {wait:.2g} s)")
                    retry += 1
                    await asyncio.sleep(wait)
                    continue
            attempts.append(f"{label}{text}")
            if run.breaker is not None:
                await run.breaker.failure(cause, text, err.retry_after)
            return report(err.status, text)

    async def _admit(
        self, run: EngineRun, until: float
    ) -> tuple[list[PlannedKey | None], Outcome | None]:
        """The keys to try, or why the engine is not asked at all: every key resting, or its
        breaker open (or half-open with another request probing it)."""
        # Keys first: a provider whose every key rests is not asked, and takes no breaker probe.
        plan: list[PlannedKey | None] = list(await run.pool.plan()) if run.pool else [None]
        if not plan and run.pool is not None:
            status, text = await run.pool.resting()
            resting = EngineReport(run.name, status, latency_ms=0, error=text)  # type: ignore[arg-type]
            return plan, Outcome(resting, None)
        # A probe may take until the deadline; its claim lapses a little after it.
        probe_seconds = max(0.0, until - time.monotonic()) + 1.0
        if run.breaker is not None and (state := await run.breaker.check(probe_seconds)):
            return plan, Outcome(EngineReport(run.name, "skipped", error=state.describe()), None)
        return plan, None

    async def _key_retry_delay(
        self, pool: KeyPool, refused: KeyRefused, retry: int, until: float
    ) -> float | None:
        """After every key failed: how long to wait for one to recover, or None to give up.

        Only rate limits are waited out (a refused key will not recover in seconds).
        """
        if refused.refused:
            return None
        # A hair past the rest: the loop's timers may fire a little early by the wall clock.
        recovers = await pool.recovers_in() + REST_MARGIN_SECONDS
        return self.backoff.next_delay(retry, recovers, until - time.monotonic(), self.rng)

    def _prepare(self, run: EngineRun, request: HttpRequest) -> HttpRequest:
        """Scraped pages go out with a browser's User-Agent (a different one each time)."""
        if not run.engine.scraped or any(k.lower() == "user-agent" for k in request.headers):
            return request
        return dataclasses.replace(
            request, headers={**request.headers, "User-Agent": self.agents.next()}
        )

    async def _exchange(
        self, run: EngineRun, query: Query, planned: PlannedKey | None, budget: float
    ) -> tuple[list[Hit] | None, _Failure | None]:
        """One request (and its follow-ups) and the parse: hits, or what went wrong."""
        key = planned.key if planned else None
        client = run.client or self._client(run.proxy, run.name)
        status: int | None = None
        try:
            async with asyncio.timeout(budget):
                retried = functools.partial(self.stale_retries.update, (run.name,))
                response = await send(
                    client,
                    run.base_url,
                    self._prepare(run, run.engine.request(query, key)),
                    budget,
                    retried,
                )
                status = response.status
                while (nxt := run.engine.follow_up(response, query, key)) is not None:
                    response = await send(
                        client, run.base_url, self._prepare(run, nxt), budget, retried
                    )
                    status = response.status
                return apply_limits(run.engine.parse(response, query), run), None
        except (TimeoutError, httpx.TimeoutException):
            return None, _Failure(None, status)
        except EngineError as err:
            return None, _Failure(err, status)
        except Exception as err:  # a parser bug must not fail the whole search
            log.warning("engine %s raised %s", run.name, type(err).__name__)
            return None, _Failure(EngineError(f"unexpected {type(err).__name__}"), status)
