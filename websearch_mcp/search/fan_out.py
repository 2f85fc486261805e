"""The engines at work: each under its own timeout, all under one deadline, kept answering.

Per engine: a circuit breaker (skip an engine that just failed), a token bucket (stay under its
rate limit), a key pool (rotate keys, cool refused ones and try the next), retries with backoff
for 429/502/503, a proxy chosen per engine, rotating browser User-Agents for scraped pages. The
strategy (`search.strategy`, see `strategies.py`) decides which engines are asked and in what
order; `engine_call.py` runs one engine call for it and holds each engine's record.
"""

from __future__ import annotations

import collections
import itertools
import json
import logging
import os
import random
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from websearch_mcp.config import Settings
from websearch_mcp.engines.registry import ENGINES
from websearch_mcp.errors import ToolInputError
from websearch_mcp.models import EngineReport, Hit, Query
from websearch_mcp.net.backoff import Backoff
from websearch_mcp.net.cooldowns.store import (
    Clock,
    CooldownStore,
    MemoryCooldownStore,
    system_clock,
)
from websearch_mcp.net.engine_http import EngineClient, build_client
from websearch_mcp.net.http import URL_LOGGERS
from websearch_mcp.net.useragents import UserAgentRotation
from websearch_mcp.redaction import RedactingFilter
from websearch_mcp.search.activity import Activity
from websearch_mcp.search.engine_call import CallKit, EngineCall, EngineRun, Outcome, configure
from websearch_mcp.search.strategies import STRATEGIES, Search

__all__ = ["EngineRun", "FanOut", "Orchestrator"]

#: What an engine of each kind is, for an error naming one to the other kind's tool.
_KINDS = {"web": "a web engine", "academic": "an academic index"}


@dataclass(slots=True)
class FanOut:
    """What a fan-out gathered: hits of the engines that answered, and a report for every engine."""

    lists: dict[str, list[Hit]]
    reports: list[EngineReport]
    #: Engines whose lists seem to answer another query (reported `irrelevant`).
    demoted: frozenset[str] = frozenset()
    #: Engines sent no request (breaker open, every key resting, no slot of the rate limit).
    unasked: frozenset[str] = frozenset()
    #: Engines the strategy never reached (not needed, or no time left for them).
    unreached: frozenset[str] = frozenset()


class Orchestrator:
    """The configured engines, their shared clients and state; runs the configured strategy.

    `store` holds key and breaker cooldowns (in memory by default; a shared one lets replicas
    agree), `clock` is the wall clock for cooldowns, `rng` drives jitter and weighted choice,
    `environ` is where `HTTP(S)_PROXY` and friends are read (the process environment by default).

    The rest of the service asks it questions (`names`, `weights`, `breaker_states`, ...); the
    run records (`runs`) are for the strategies and the engine calls.
    """

    def __init__(
        self,
        settings: Settings,
        *,
        store: CooldownStore | None = None,
        clock: Clock = system_clock,
        rng: random.Random | None = None,
        environ: Mapping[str, str] | None = None,
    ) -> None:
        self.settings = settings
        store = store or MemoryCooldownStore()
        rng = rng or random.Random()
        self._searches = itertools.count()  # numbers the fan-outs (the pool's rotation)
        #: Requests sent again after a kept-alive connection turned out closed, per engine.
        self.stale_retries: collections.Counter[str] = collections.Counter()
        #: The last hour of engine calls, for the status page.
        self.activity = Activity()
        self._clients: dict[tuple[str | None, str | None], EngineClient] = {}
        env = os.environ if environ is None else environ
        self.runs: dict[str, EngineRun] = {
            name: configure(engine_cls, settings, env, store, clock, self._client)
            for name, engine_cls in ENGINES.items()
        }
        # Every form of every secret: an API's error text may quote its request URL, where a
        # key is percent-encoded, and a failure may name a base URL with a password.
        secrets = settings.secrets()
        retry = settings.search.retry
        self._kit = CallKit(
            backoff=Backoff(retry.retries, retry.base_seconds, retry.max_seconds),
            rng=rng,
            secrets=secrets,
            agents=UserAgentRotation(),
            client_for=lambda run: run.client or self._client(run.proxy, run.name),
            stale_retries=self.stale_retries,
        )
        # Each kind's engines, and why any of them is never asked: the configuration decides
        # both, and every search reads them.
        self._lineups: dict[str, list[tuple[EngineRun, str | None]]] = {}
        for run in self.runs.values():
            self._lineups.setdefault(run.engine.kind, []).append((run, self._left_out(run)))
        # HTTP clients may log request URLs; some APIs take the key in the URL.
        self._log_filter = RedactingFilter(secrets)
        for name in URL_LOGGERS:
            logging.getLogger(name).addFilter(self._log_filter)

    def _client(self, proxy: str | None, engine: str | None = None) -> EngineClient:
        """A pooled keep-alive client per engine and proxy (None: direct), made on first use.

        Per engine, so that each engine's cookies stay its own and a slow engine's connections
        never hold up another's.
        """
        key = (engine, proxy)
        if key not in self._clients:
            self._clients[key] = build_client(proxy=proxy)
        return self._clients[key]

    async def close(self) -> None:
        for name in URL_LOGGERS:
            logging.getLogger(name).removeFilter(self._log_filter)
        for client in self._clients.values():
            await client.aclose()
        for run in self.runs.values():
            if run.bucket is not None:
                run.bucket.close()

    # --- questions --------------------------------------------------------------------------

    def names(self, kind: str) -> list[str]:
        """Every known engine of `kind` ("web" or "academic")."""
        return [run.name for run, _ in self._lineups.get(kind, ())]

    def _not_of_this_kind(self, shown: str, name: str) -> str:
        """Why `name` (quoted as `shown`) cannot be asked: unknown, or an engine of the other
        kind, with the tool that asks it (arXiv named to `web_search`, Bing to
        `academic_search`)."""
        for kind, lineup in self._lineups.items():
            if any(run.name == name for run, _ in lineup):
                return f"{shown} is {_KINDS[kind]}: {kind}_search asks it"
        return f"unknown engine {shown}"

    def weights(self, names: Iterable[str]) -> dict[str, float]:
        """The fusion weight of each of `names`."""
        return {name: self.runs[name].settings.weight for name in names}

    def configuration(self) -> dict[str, dict[str, Any]]:
        """Per engine, what decides whether and how it takes part (its keys only as present or
        not): part of the cache's fingerprint."""
        return {
            name: {
                "settings": run.settings,
                "enabled": run.enabled,
                "keyed": bool(run.keys),
                "proxied": run.proxy is not None,
                # Why it is never asked: a restricted network also leaves out an engine that
                # needs a proxy it has not got.
                "left_out": self._left_out(run),
            }
            for name, run in self.runs.items()
        }

    def index_families(self) -> dict[str, str]:
        """Engine -> the index family it serves: `engines.<name>.index`, else the engine's own
        declaration; engines with neither are left out (each counts as a family of its own)."""
        out = {}
        for name, run in self.runs.items():
            family = run.settings.index or run.engine.index
            if family:
                out[name] = family
        return out

    def left_out(self, name: str) -> str | None:
        """Why engine `name` is never asked (disabled, no key, no proxy), or None."""
        return self._left_out(self.runs[name])

    async def breaker_states(self) -> dict[str, bool]:
        """Each enabled engine that has a circuit breaker: whether it is open now. Claims no
        probe of a half-open breaker (for metrics)."""
        return {
            name: await run.breaker.is_open()
            for name, run in self.runs.items()
            if run.breaker is not None and run.enabled
        }

    async def any_breaker_tripped(self, names: Iterable[str]) -> bool:
        """Whether one of `names` has a failure on its breaker's record (open or half-open).
        Claims no probe."""
        for name in names:
            breaker = self.runs[name].breaker
            if breaker is not None and not await breaker.closed():
                return True
        return False

    async def rest_left(self, names: Iterable[str]) -> float | None:
        """Seconds until the first of `names` that rests (its breaker open, or every key
        resting) may be asked again; None when none of them rests. Claims no probe. One that
        another request is probing is known within a search's time: its probe's answer decides."""
        probe = self.settings.search.deadline_seconds
        waits = []
        for name in names:
            run = self.runs[name]
            wait = await run.pool.recovers_in() if run.pool is not None else 0.0
            if run.breaker is not None and (state := await run.breaker.state()) is not None:
                wait = max(wait, probe if state.probing else state.seconds_left)
            if wait > 0:
                waits.append(wait)
        return min(waits, default=None)

    # --- a search ---------------------------------------------------------------------------

    def choose(
        self, kind: str, asked: Sequence[str] | None, query: Query | None = None
    ) -> tuple[list[EngineRun], list[EngineReport]]:
        """The engines to query, and reports for those that will not be (disabled, no key, no
        proxy on a restricted network, no search of the query's category, no results as deep
        as its page). An engine serving only another category is reported only when named: a
        general search never mentions `google_news`."""
        category = query.category if query is not None else "general"
        lineup = self._lineups.get(kind, [])
        if asked is not None:
            known = [run.name for run, _ in lineup]
            unknown = [n for n in asked if n not in known]
            if unknown:
                # Cut: the name is the caller's, and the message goes to the log as well.
                wrong = unknown[0]
                name = json.dumps(wrong if len(wrong) <= 40 else wrong[:30], ensure_ascii=False)
                name += "..." if len(wrong) > 40 else ""
                on = sorted(run.name for run, reason in lineup if reason is None)
                raise ToolInputError(
                    f"{self._not_of_this_kind(name, wrong)}; allowed: {', '.join(sorted(known))}"
                    f" (on here: {', '.join(on) or 'none'})"
                )
        chosen: list[EngineRun] = []
        skipped: list[EngineReport] = []
        for run, reason in lineup:
            if asked is not None and run.name not in asked:
                continue
            if category not in run.engine.categories:
                if asked is None and category == "general":
                    continue
                reason = f"has no {category} search"
            if reason is None and query is not None:
                reason = run.engine.too_deep(query)
            if reason is None:
                chosen.append(run)
            elif run.enabled or asked is not None:
                skipped.append(EngineReport(run.name, "skipped", error=reason))
        return chosen, skipped

    def _left_out(self, run: EngineRun) -> str | None:
        """Why `run` is not asked at all, or None."""
        if not run.enabled and run.settings.enabled is None:
            return f"off by default (set engines.{run.name}.enabled: true)"
        if not run.enabled:
            return "disabled in the configuration"
        if run.engine.needs_key and not run.keys:
            return "no API key configured"
        if self.settings.network == "restricted" and run.engine.needs_proxy and not run.proxy:
            return (
                "needs a proxy on this restricted network"
                f" (set proxy.url or engines.{run.name}.proxy)"
            )
        return None

    async def fan_out(
        self,
        query: Query,
        runs: Sequence[EngineRun],
        deadline: float,
        on_list: Callable[[list[Hit]], None] | None = None,
    ) -> FanOut:
        """Ask `runs` as the configured strategy says (academic indexes: all at once); what
        arrived by the deadline counts. `on_list` is given each list that will be fused, as it
        arrives."""
        until = time.monotonic() + deadline
        asked: set[str] = set()  # the engines whose call started
        conf = self.settings.search
        # The strategies spare web engines' quota: academic indexes are asked at once, as their
        # papers are merged across them, whatever `search.strategy` says.
        strategy = conf.strategy if all(run.engine.kind == "web" for run in runs) else "hybrid"

        async def call(run: EngineRun) -> Outcome:
            # Made at the search's start (every call of `hybrid`, the first of the others).
            whole = deadline if strategy == "hybrid" or not asked else None
            asked.add(run.name)
            outcome = await self.call(run, query, until, whole)
            if on_list is not None and outcome.hits:
                on_list(outcome.hits)
            return outcome

        # Only the pool's searches take a turn of its rotation: an academic search between two
        # web searches must not make them start at the same provider.
        # A search naming only keyless engines asks no provider: it takes no turn either.
        # Nor does one naming a single provider: it starts there whatever the turn.
        keyed = sum(run.engine.needs_key for run in runs) > 1
        turn = next(self._searches) if strategy == "pool" and keyed else 0
        search = Search(runs, query.text, until, deadline, call, conf, turn, self._kit.rng)
        outcomes = await STRATEGIES[strategy](search)
        # Counted once the strategy has judged the lists, so that the status page says what the
        # answer says (a demoted list `irrelevant`, one cut off at the deadline `timeout`).
        for outcome in outcomes:
            if outcome.report.name in asked:  # an engine the strategy never reached made no call
                self.activity.record(outcome.report, query.text, asked=outcome.asked)
        lists = {o.report.name: o.hits for o in outcomes if o.hits is not None}
        demoted = frozenset(o.report.name for o in outcomes if o.demoted and o.hits is not None)
        unasked = frozenset(o.report.name for o in outcomes if not o.asked)
        unreached = frozenset(o.report.name for o in outcomes) - asked
        return FanOut(lists, [o.report for o in outcomes], demoted, unasked, unreached)

    async def call(
        self, run: EngineRun, query: Query, until: float, whole_search: float | None = None
    ) -> Outcome:
        """One engine, with its breaker, rate limit, keys and retries; never raises.

        `until` is the overall deadline on the `time.monotonic()` clock; `whole_search` that
        deadline's length when the call is made at the search's start. The call is counted for
        the status page by `fan_out`, once the strategy has judged its list.
        """
        return await EngineCall(run, query, until, self._kit, whole_search).outcome()
