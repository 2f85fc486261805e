"""Which engines a search asks, in what order, and which lists it keeps.

- `hybrid` (default): every chosen engine at once, every list fused. A list that is evidence of
  answering another query (see `demote_strays`) is reported `irrelevant` and demoted in the fusion.
- `sequential`: engines one after another; a list of quality >= `quality_stop` ends the search,
  after the first engine the best list so far is accepted at >= `quality_accept`; otherwise the
  best list seen is returned. `force_all` asks every engine and keeps the best list.
- `pool`: one keyed provider per request (rotated, in priority order, or weighted by weight x
  usable keys), all its keys before the next provider, keyless engines as the last resort.

Each strategy gets a `call(run)` that runs one engine (breaker, keys, retries included) and
returns an `Outcome`; every engine chosen gets a report, asked or not. `STRATEGIES` maps the
name in `search.strategy` to the strategy, each taking one `Search`.
"""

from __future__ import annotations

import asyncio
import random
import time
from collections.abc import Awaitable, Callable, Coroutine, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from websearch_mcp.config import (
    PoolSettings,
    RankingSettings,
    SearchSettings,
    SequentialSettings,
)
from websearch_mcp.models import EngineReport
from websearch_mcp.ranking.quality import answers_another_query, list_quality
from websearch_mcp.ranking.urls import canonical_key
from websearch_mcp.search.engine_call import EngineRun, Outcome

IRRELEVANT = "none of its results shares a word with the query"
#: Said of such a list when others answered the query and it weighs less in the fusion.
MOVED_DOWN = f"{IRRELEVANT}: moved down in the fusion"
TOO_LATE = "the deadline passed before its turn"


Call = Callable[[EngineRun], Coroutine[Any, Any, Outcome]]


@dataclass(frozen=True, slots=True)
class Search:
    """One fan-out as a strategy sees it: the engines chosen, the query, the deadline (`until`
    on the `time.monotonic()` clock, `deadline` its length in seconds), the engine call, the
    search settings, and for the pool's rotation the number of this search and the randomness."""

    runs: Sequence[EngineRun]
    query_text: str
    until: float
    deadline: float
    call: Call
    settings: SearchSettings
    turn: int
    rng: random.Random


def _skipped(run: EngineRun, reason: str, status: str = "skipped") -> Outcome:
    return Outcome(EngineReport(run.name, status, error=reason), None)  # type: ignore[arg-type]


def demote_strays(outcomes: Sequence[Outcome], runs: Sequence[EngineRun], query_text: str) -> None:
    """Demote the lists that are evidence of answering another query (a stale cached page).

    Evidence is a lexical engine's list sharing no content word with the query while written
    in the query's script, none of whose pages another, unsuspected list also returned. A
    semantic engine (neural retrieval) is never suspected for sharing no word.
    """
    semantic = {run.name for run in runs if run.engine.semantic}
    suspects = {
        id(o)
        for o in outcomes
        if o.hits and o.report.name not in semantic and answers_another_query(o.hits, query_text)
    }
    if not suspects:
        return
    vouched = {
        canonical_key(h.url) for o in outcomes if o.hits and id(o) not in suspects for h in o.hits
    }
    for outcome in outcomes:
        hits = outcome.hits or ()
        if id(outcome) in suspects and not any(canonical_key(h.url) in vouched for h in hits):
            outcome.report.status = "irrelevant"
            outcome.report.error = IRRELEVANT
            outcome.demoted = True


async def hybrid(
    runs: Sequence[EngineRun], query_text: str, until: float, deadline: float, call: Call
) -> list[Outcome]:
    """Every engine at once; whatever has not answered by `until` is reported `timeout`."""
    tasks = {asyncio.create_task(call(run), name=run.name): run for run in runs}
    pending: set[asyncio.Task[Outcome]] = set(tasks)
    try:
        if tasks:
            _, pending = await asyncio.wait(tasks, timeout=max(0.0, until - time.monotonic()))
    finally:
        # Late engines are given up at the deadline, and every engine with the search when
        # it is cancelled (the service closing), rather than left running on their own.
        for task in pending:
            task.cancel()
        if pending:
            await asyncio.gather(*pending, return_exceptions=True)
    outcomes = []
    for task, run in tasks.items():
        if task in pending:
            outcomes.append(
                Outcome(
                    EngineReport(
                        run.name,
                        "timeout",
                        latency_ms=int(deadline * 1000),
                        error=f"no answer within the search's deadline ({deadline:g} s)",
                    ),
                    None,
                )
            )
        else:
            outcomes.append(task.result())
    demote_strays(outcomes, runs, query_text)
    return outcomes


def in_order(runs: Sequence[EngineRun], first: Sequence[str]) -> list[EngineRun]:
    """`runs` with the names in `first` leading in that order, the others after as they were."""
    position = {name: i for i, name in enumerate(first)}
    return sorted(runs, key=lambda r: position.get(r.name, len(position)))


async def sequential(
    runs: Sequence[EngineRun],
    query_text: str,
    until: float,
    call: Call,
    conf: SequentialSettings,
    ranking: RankingSettings,
) -> list[Outcome]:
    """Engines one by one until a list is good enough; only the best list is kept."""
    outcomes: list[Outcome] = []
    judged: list[tuple[float, Outcome]] = []
    done: str | None = None
    for position, run in enumerate(in_order(runs, conf.order)):
        if done:
            outcomes.append(_skipped(run, done))
            continue
        if time.monotonic() >= until:
            outcomes.append(_skipped(run, TOO_LATE, "timeout"))
            continue
        outcome = await call(run)
        demote_strays([outcome], runs, query_text)
        outcomes.append(outcome)
        if outcome.hits:
            quality = list_quality(outcome.hits, query_text, ranking)
            outcome.report.quality = quality
            judged.append((quality, outcome))
        if not judged or conf.force_all:
            continue
        best_quality, best = max(judged, key=lambda j: j[0])
        if best_quality >= conf.quality_stop or (
            position > 0 and best_quality >= conf.quality_accept
        ):
            done = f"not needed: {best.report.name} answered with quality {best_quality:.2f}"
    if judged:
        _keep_best(outcomes, judged, conf.quality_accept)
    return outcomes


def _keep_best(
    outcomes: Sequence[Outcome], judged: Sequence[tuple[float, Outcome]], accept: float
) -> None:
    """Only the best judged list goes into the fusion; the others below `accept` are reported
    `irrelevant` (a demoted one keeps its own reason)."""
    # A demoted list only when every judged list is; the first of equals: earlier in the order.
    _, kept = max(judged, key=lambda j: (not j[1].demoted, j[0]))
    _keep_only(outcomes, kept)
    for quality, outcome in judged:
        if outcome is kept or outcome.demoted:
            continue
        if quality < accept:
            outcome.report.status = "irrelevant"
            outcome.report.error = f"list quality {quality:.2f} is below {accept:g}"


def _keep_only(outcomes: Sequence[Outcome], kept: Outcome) -> None:
    """Only `kept` goes into the fusion (empty lists would dilute its normalised scores)."""
    for outcome in outcomes:
        if outcome is not kept:
            outcome.hits = None


def order_providers(
    runs: Sequence[EngineRun],
    conf: PoolSettings,
    usable: Mapping[str, int],
    turn: int,
    rng: random.Random,
) -> list[EngineRun]:
    """The keyed providers in the order the pool tries them for request number `turn`.

    `round_robin` rotates the start by one each request; `priority` follows `conf.providers`;
    `weighted` draws without replacement with chances proportional to weight x usable keys.
    Providers with every key cooled come last whatever the order.
    """
    if not runs:
        return []
    if conf.order == "priority":
        ordered = in_order(runs, conf.providers)
    elif conf.order == "weighted":
        # Efraimidis-Spirakis: sorting by u ** (1 / w) draws without replacement by weight.
        def draw(run: EngineRun) -> float:
            weight = run.settings.weight * usable.get(run.name, 0)
            return rng.random() ** (1.0 / weight) if weight > 0 else -1.0

        ordered = sorted(runs, key=draw, reverse=True)
    else:
        start = turn % len(runs)
        ordered = [*runs[start:], *runs[:start]]
    return sorted(ordered, key=lambda r: usable.get(r.name, 0) == 0)


async def pool(
    runs: Sequence[EngineRun], query_text: str, until: float, call: Call
) -> list[Outcome]:
    """`runs` (keyed providers in order, then keyless engines) one by one until one answers.

    A demoted list does not end the search; it is kept only when no later engine answers.
    """
    outcomes: list[Outcome] = []
    answered: str | None = None
    fallback: Outcome | None = None
    for run in runs:
        if answered:
            outcomes.append(_skipped(run, f"not needed: {answered} answered"))
        elif time.monotonic() >= until:
            outcomes.append(_skipped(run, TOO_LATE, "timeout"))
        else:
            outcome = await call(run)
            demote_strays([outcome], runs, query_text)
            outcomes.append(outcome)
            if outcome.hits and not outcome.demoted:
                answered = run.name
            elif outcome.hits and fallback is None:
                fallback = outcome
    kept = next((o for o in outcomes if o.hits and not o.demoted), fallback)
    if kept is not None:
        _keep_only(outcomes, kept)
    return outcomes


async def _hybrid(search: Search) -> list[Outcome]:
    return await hybrid(search.runs, search.query_text, search.until, search.deadline, search.call)


async def _sequential(search: Search) -> list[Outcome]:
    conf = search.settings
    return await sequential(
        search.runs, search.query_text, search.until, search.call, conf.sequential, conf.ranking
    )


async def _pool(search: Search) -> list[Outcome]:
    """The keyed providers in the pool's order (by their usable keys now), then the keyless."""
    keyed = [r for r in search.runs if r.engine.needs_key]
    usable = {r.name: await r.pool.usable() if r.pool else 0 for r in keyed}
    providers = order_providers(keyed, search.settings.pool, usable, search.turn, search.rng)
    keyless = [r for r in search.runs if not r.engine.needs_key]
    return await pool(providers + keyless, search.query_text, search.until, search.call)


#: `search.strategy` -> the strategy.
STRATEGIES: dict[str, Callable[[Search], Awaitable[list[Outcome]]]] = {
    "hybrid": _hybrid,
    "sequential": _sequential,
    "pool": _pool,
}
