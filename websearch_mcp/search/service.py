"""The search service: cache, single-flight, fan-out, ranking and the answer's shape.

The MCP tools, the CLI and the HTTP routes all call this one object.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import functools
import time
from collections.abc import Awaitable, Callable, Mapping, Sequence
from datetime import UTC, datetime
from typing import Any, Protocol, TypedDict

from websearch_mcp import __version__
from websearch_mcp.cache import (
    Cache,
    CacheHit,
    cache_key,
    config_fingerprint,
    open_cache,
    run_cleanup_loop,
)
from websearch_mcp.config import Settings
from websearch_mcp.errors import SearchFailed
from websearch_mcp.fetch.extract import close_pools
from websearch_mcp.models import (
    AcademicSearchArgs,
    EngineReport,
    Hit,
    Query,
    RankedResult,
    WebSearchArgs,
)
from websearch_mcp.net.cooldowns.recent_reads import shared_cooldown_store
from websearch_mcp.ranking.academic import rank_papers
from websearch_mcp.ranking.domain import load_suffix_list
from websearch_mcp.ranking.pipeline import rank
from websearch_mcp.ranking.prepared import Preparation
from websearch_mcp.ranking.urls import canonical_key
from websearch_mcp.runtime import LeaderLock, runtime_dir
from websearch_mcp.search.answer import (
    STORED_FORM,
    Answered,
    PageOut,
    PapersOut,
    SearchOut,
    SummarizedSearchOut,
)
from websearch_mcp.search.fan_out import EngineRun, Orchestrator
from websearch_mcp.search.pages import Pages
from websearch_mcp.search.read_pages import read_results
from websearch_mcp.search.single_flight import SingleFlight
from websearch_mcp.search.strategies import IRRELEVANT, MOVED_DOWN
from websearch_mcp.search.summary import ProgressFn, SharedProgress, Summarizer

#: Statuses that mean an engine taking part failed (`rate_limited` also with no request sent).
FAILED_STATUSES = frozenset({"error", "timeout", "blocked", "rate_limited"})
#: The answer's `note` when every list that came back seems to answer another query.
UNCERTAIN = (
    "relevance is uncertain: no engine's results share a word with the query; these are the"
    " fused results as the engines returned them"
)

#: A fresh web search reads its engines' lists as they arrive when fewer than this many other
#: fresh searches are waiting for their engines in the process.
PREPARE_BELOW = 2


class Summary(TypedDict, total=False):
    """`{"summary": ...}` or `{"summary_error": ...}`: merged into a summarised answer."""

    summary: str | None
    summary_error: str | None


class Fuse(Protocol):
    """A ranking: the engines' lists for one query, fused into one list."""

    def __call__(
        self,
        lists: Mapping[str, Sequence[Hit]],
        query: Query,
        *,
        weights: Mapping[str, float],
        now: datetime,
    ) -> list[RankedResult]: ...


def _answering_first(
    fuse: Fuse,
    lists: Mapping[str, Sequence[Hit]],
    demoted: frozenset[str],
    query: Query,
    weights: Mapping[str, float],
    now: datetime,
    factor: float,
) -> list[RankedResult]:
    """The lists that answer the query fused as if the others (`demoted`: they seem to answer
    another query) were not there; then, in the room left, the results only those returned, as
    one fusion of every list orders and keeps them, each score times `factor`. That fusion also
    says which of their pages or papers another list returned (one link, DOI or title): those
    the answer holds already, as it does the reports in a story's `also`. (Fused with the
    others at a lower weight, a demoted list's first results outranked the others' later ones,
    the rank position and the coverage credit reading no weight, and took places among the
    results the neighbours read; at a lower weight, that fusion's relevance threshold would cut
    most of them.)"""
    answering = {name: hits for name, hits in lists.items() if name not in demoted}
    # A result only muted engines (weight 0) returned scores 0: not listed (the top two of a
    # fusion always stay, but these would stand above the moved-down ones).
    ranked = [r for r in fuse(answering, query, weights=weights, now=now) if r.score > 0]
    room = query.max_results - len(ranked)
    if room <= 0:
        return ranked
    every = dataclasses.replace(query, max_results=sum(len(hits) for hits in lists.values()))
    held = {canonical_key(str(o["url"])) for r in ranked for o in r.also if o.get("url")}
    listed = held | {r.key for r in ranked}

    def holds(result: RankedResult) -> bool:
        """Whether the answer holds a report folded into `result` (its `also` names one
        report per publisher: a publisher's other copies are in `folded` only)."""
        urls = (canonical_key(str(o["url"])) for o in result.also if o.get("url"))
        return any(key in listed for key in (*result.folded, *urls))

    # A story a demoted report leads in that fusion, one of the answer's reports folded into
    # it, is a story the answer holds already.
    strays = [
        result
        for result in fuse(lists, every, weights=weights, now=now)
        if demoted.issuperset(result.engines) and result.key not in held and not holds(result)
    ]
    return ranked + [_moved_down(result, factor) for result in strays[:room]]


def _moved_down(result: RankedResult, factor: float) -> RankedResult:
    """`result` of a list moved down: its score times `factor`, which its details name."""
    score = result.score * factor
    details = {**result.details, "final": round(score, 4), "moved_down": factor}
    return dataclasses.replace(result, score=score, details=details)


def _cached(hit: CacheHit | None) -> Answered | None:
    """A stored answer (`Answered.stored`) as a cached one; None without one (a value of
    another shape is none)."""
    if hit is None:
        return None
    if (stored := Answered.from_stored(hit.value)) is None:
        return None
    # An answer that left out a resting engine says when it is asked again: from then on, the
    # search is made afresh.
    rest = hit.value.get("rest_seconds")
    if isinstance(rest, int | float) and hit.age_seconds >= rest:
        return None
    age = round(hit.age_seconds)
    return Answered({**stored.answer, "cached": True, "cache_age_seconds": age}, stored.details)


def _ordered(reports: list[EngineReport], order: list[str]) -> list[EngineReport]:
    position = {name: i for i, name in enumerate(order)}
    return sorted(reports, key=lambda r: position.get(r.name, len(position)))


class SearchService:
    """One per process; stateless between requests apart from shared clients and the cache.

    With the Redis cache, key cooldowns and open circuit breakers live in the same Redis, so
    that replicas agree on them (unless an `orchestrator` is given, which brings its own store).
    """

    def __init__(
        self,
        settings: Settings,
        orchestrator: Orchestrator | None = None,
        cache: Cache | None = None,
    ) -> None:
        self.settings = settings
        # The cache first: it says what is missing when the Redis backend cannot be used.
        self.cache = cache if cache is not None else open_cache(settings.cache)
        link = getattr(self.cache, "link", None)  # the Redis cache's connection, shared
        self._cooldowns = None if orchestrator else shared_cooldown_store(settings.cache, link)
        self.orchestrator = orchestrator or Orchestrator(settings, store=self._cooldowns)
        # Anything that changes an answer: a new version or config never serves an old ranking.
        self.fingerprint = config_fingerprint(
            __version__,
            STORED_FORM,
            settings.search,
            settings.academic,
            self.orchestrator.configuration(),
        )
        self.pages = Pages(settings, self.cache)
        self.families = self.orchestrator.index_families()
        # None without a configured model: `web_search` then offers no summaries.
        self.summarizer = Summarizer.from_settings(settings)
        self.summary_fingerprint = config_fingerprint(__version__, SUMMARY_FORM, settings.llm)
        # Searches and summaries, by cache key.
        self._in_flight = SingleFlight()
        # The progress of each summary in flight, by its cache key, told to every call sharing it.
        self._progress: dict[str, SharedProgress] = {}
        self._fan_outs = 0  # fresh searches waiting for their engines in this process
        #: Told every fresh search's engine reports once, however many requests shared it
        #: (the metrics' engine calls).
        #: Hears each search's engine reports, and the names of the engines it sent nothing to.
        self.on_engine_reports: Callable[[Sequence[EngineReport], frozenset[str]], None] = (
            lambda reports, unasked: None
        )
        self._cleanup: asyncio.Task[None] | None = None

    @property
    def single_flight_joins(self) -> int:
        """Requests that shared a search or summary already under way in this process."""
        return self._in_flight.joins

    async def start(self) -> None:
        """Start background work (the cache's periodic cleanup), and load what the first search
        would otherwise load (the public suffix list)."""
        load_suffix_list()
        if self._cleanup is None:
            # The workers of one server share the cache: the one holding the lock cleans it.
            shared = runtime_dir()
            leader = LeaderLock(shared / "cleanup.lock") if shared else None
            self._cleanup = asyncio.create_task(
                run_cleanup_loop(
                    self.cache, self.settings.cache.cleanup_interval_seconds, leader=leader
                )
            )

    async def close(self) -> None:
        # Searches and pages whose callers have all gone (a client that left, stdin closed)
        # stop first, rather than retry their engines on pools made anew after the close.
        await self._in_flight.cancel()
        await self.pages.close()
        if self._cleanup is not None:
            self._cleanup.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._cleanup
            self._cleanup = None
        await self.orchestrator.close()
        await asyncio.to_thread(close_pools)
        if self.summarizer is not None:
            await self.summarizer.close()
        await self.cache.close()
        if self._cooldowns is not None:
            await self._cooldowns.close()

    async def web_search(
        self, args: WebSearchArgs, on_progress: ProgressFn | None = None
    ) -> SummarizedSearchOut:
        """Fan out, fuse and shape one web search. Raises `SearchFailed` when no engine answered.

        With `args.read` the pages of the top results are read, within what is left of the
        search's deadline, for `passages`. With `args.summarize` and a configured model the
        answer also has `summary` (or `summary_error`); `on_progress` hears it as it streams.
        """
        started = time.monotonic()
        fuse = functools.partial(rank, search=self.settings.search, families=self.families)

        def ahead(prepared: Preparation) -> Fuse:  # the lists read as they arrive
            return functools.partial(fuse, prepared=prepared)

        answer = await self._search(
            "web", "web_search", args.query, args.engines, fuse, args.explain, ahead
        )
        if args.read:
            left = self.settings.search.deadline_seconds - (time.monotonic() - started)
            results = await read_results(
                answer["results"], args.query.text, args.read, left, self.pages.document
            )
            answer = {**answer, "results": results}
        summarized: SummarizedSearchOut = {**answer}
        if args.summarize and self.summarizer is not None:
            summary = await self._summary(self.summarizer, answer, args.intent, on_progress)
            summarized.update(summary)
        return summarized

    async def _summary(
        self,
        summarizer: Summarizer,
        answer: SearchOut,
        intent: str | None,
        on_progress: ProgressFn | None,
    ) -> Summary:
        """`{"summary": ...}` or `{"summary_error": ...}` for the answer's results.

        Cached (namespace "summary") under the results themselves, the intent and the model's
        settings, so a cached answer is summarised once, and a fresh ranking gets a fresh summary.
        Identical concurrent requests share one completion, as they share one fan-out.
        """
        results = answer["results"]
        if not results:
            return {"summary_error": "no results to summarise"}
        cited = [[r["url"], r["title"], r["snippet"], r.get("published")] for r in results]
        key = cache_key(
            "summary",
            answer["query"],
            {"intent": intent, "model": self.settings.llm.model, "results": cited},
            self.summary_fingerprint,
        )
        # Every call sharing the completion hears its progress, not only the one that began it
        # (a flight just ending has none left to tell). No await until `run` has joined or begun.
        if self._in_flight.running(key):
            progress = self._progress.get(key)
        else:
            progress = self._progress[key] = SharedProgress()
        if progress is not None and on_progress is not None:
            progress.join(on_progress)
        fresh = functools.partial(self._fresh_summary, summarizer, answer, intent, key, progress)
        try:
            return await self._in_flight.run(key, fresh)
        finally:
            if progress is not None and on_progress is not None:
                progress.leave(on_progress)

    async def _fresh_summary(
        self,
        summarizer: Summarizer,
        answer: SearchOut,
        intent: str | None,
        key: str,
        progress: SharedProgress | None,
    ) -> Summary:
        """The cached summary, else one from the model (stored; a failure is not)."""
        try:
            hit = await self.cache.get("summary", key)
            if hit is not None and isinstance(hit.value.get("summary"), str):
                return {"summary": hit.value["summary"]}
            # The summary waits no longer than the engines may: a call ends within two deadlines.
            budget = min(self.settings.llm.timeout_seconds, self.settings.search.deadline_seconds)
            outcome = await summarizer.summarize(
                answer["query"],
                intent,
                answer["results"],
                budget_seconds=budget,
                on_progress=progress,
            )
            if outcome.text is None:
                return {"summary_error": outcome.error}
            ttl = self.settings.cache.partial_ttl_seconds if answer["partial"] else None
            await self.cache.set("summary", key, {"summary": outcome.text}, ttl_seconds=ttl)
            return {"summary": outcome.text}
        finally:
            if self._progress.get(key) is progress:
                del self._progress[key]

    async def academic_search(self, args: AcademicSearchArgs) -> PapersOut:
        """Fan out to the academic indexes, merge the papers they share, rank and shape the
        answer (the web answer plus paper fields and `page`). Raises `SearchFailed` when no
        index answered."""

        fuse = functools.partial(
            rank_papers,
            settings=self.settings.academic,
            rrf_k=self.settings.search.rrf_k,
            block_domains=self.settings.search.block_domains,
        )
        answer = await self._search(
            "academic", "academic_search", args.query, args.engines, fuse, args.explain
        )
        return {**answer, "page": args.query.page}  # type: ignore[typeddict-item]

    async def _search(
        self,
        kind: str,
        tool: str,
        query: Query,
        engines: list[str] | None,
        fuse: Fuse,
        explain: bool,
        prepare: Callable[[Preparation], Fuse] | None = None,
    ) -> SearchOut:
        """Single-flight around the cache lookup and a fresh fan-out. Engine choice is validated
        first so a bad engine name is an error even when a cached answer exists. `prepare`:
        `fuse` with a `Preparation`, for a ranking that reads lists ahead (see `_fresh`)."""
        runs, skipped = self.orchestrator.choose(kind, engines, query)
        self.orchestrator.activity.searched()
        key_args = {"engines": self._engines_key(kind, engines, query), **_query_args(query)}
        key = cache_key(tool, query.text, key_args, self.fingerprint)
        # Expiry slides with every hit: a news answer is also refused once it is older than
        # the news TTL, however often it was read.
        max_age = self._max_age(query)
        # An answer the cache holds in memory needs no flight: a flight's answer is there
        # only once it is stored.
        answered = self._usable(self.cache.remembered(kind, key, max_age_seconds=max_age))
        if answered is None:
            # A flight ends only after its answer is stored: an identical request either joins
            # it or finds the answer cached.
            fresh = functools.partial(self._fresh, kind, query, runs, skipped, fuse, key, prepare)
            flight = functools.partial(self._answer, kind, key, fresh, max_age)
            answered = await self._in_flight.run(key, flight)
        answer = answered.explained() if explain else answered.answer
        # One answer serves every spelling of the query the cache counts as one: each caller
        # is told the query as it asked.
        return answer if answer["query"] == query.text else {**answer, "query": query.text}

    def _engines_key(
        self, kind: str, engines: list[str] | None, query: Query
    ) -> frozenset[str] | None:
        """The engines named, for the cache key: a set, as the configuration's order and not
        the caller's decides in what order they are asked and listed; None when they are the
        engines the search asks without being told, as it then gives the same answer."""
        if engines is None:
            return None
        named = frozenset(engines)
        runs, skipped = self.orchestrator.choose(kind, None, query)
        unnamed = {run.name for run in runs} | {report.name for report in skipped}
        return None if named == unnamed else named

    def _max_age(self, query: Query) -> int | None:
        """How long an answer to `query` may be served after it was made (None: as the cache
        keeps it). News, and the past day's pages, are stale within the hour."""
        perishable = query.category == "news" or query.time_range == "day"
        return self.settings.cache.news_ttl_seconds if perishable else None

    async def _answer(
        self,
        kind: str,
        key: str,
        fresh: Callable[[], Awaitable[Answered]],
        max_age: float | None = None,
    ) -> Answered:
        """The cached answer, else a `fresh` one (stored before it is returned)."""
        hit = await self.cache.get(kind, key, max_age_seconds=max_age)
        if (cached := self._usable(hit)) is not None:
            return cached
        if hit is not None:
            self.cache.stats.counted(None)  # a lookup that found nothing to serve: a miss
        return await fresh()

    def _usable(self, hit: CacheHit | None) -> Answered | None:
        """`hit` as a cached answer, or None; a hit that cannot be served (another shape, a
        rest now over) is taken back from the cache's count of hits."""
        answered = _cached(hit)
        if hit is not None and answered is None:
            self.cache.stats.uncount(hit)
        return answered

    async def _fresh(
        self,
        kind: str,
        query: Query,
        runs: list[EngineRun],
        skipped: list[EngineReport],
        fuse: Fuse,
        key: str,
        prepare: Callable[[Preparation], Fuse] | None,
    ) -> Answered:
        orchestrator = self.orchestrator
        order = orchestrator.names(kind)
        if not runs:
            self.on_engine_reports(skipped, frozenset())
            raise SearchFailed(_ordered(skipped, order))
        started = time.perf_counter()
        # With few searches in flight the process idles while it waits for the engines: each
        # list is read as it arrives, and the fusion after the last one has less to do. Under
        # load that work would be done for hits that fusion never reads (each merged result
        # reads one title and one snippet), so it is left to the fusion.
        prepared = Preparation() if prepare and self._fan_outs < PREPARE_BELOW else None
        if prepare is not None and prepared is not None:
            fuse = prepare(prepared)
        self._fan_outs += 1
        try:
            fan = await orchestrator.fan_out(
                query,
                runs,
                self.settings.search.deadline_seconds,
                prepared.add if prepared is not None else None,
            )
        finally:
            self._fan_outs -= 1
        reports = _ordered(fan.reports + skipped, order)
        self.on_engine_reports(reports, fan.unasked | fan.unreached)
        if not fan.lists:
            raise SearchFailed(reports)  # an all-failed answer is never cached
        weights = orchestrator.weights(fan.lists)
        trusted = {name for name, hits in fan.lists.items() if hits} - fan.demoted
        now = datetime.now(UTC)
        if trusted and fan.demoted:
            for report in fan.reports:
                if report.name in fan.demoted and report.error == IRRELEVANT:
                    report.error = MOVED_DOWN
            factor = self.settings.search.irrelevant_weight
            ranked = _answering_first(fuse, fan.lists, fan.demoted, query, weights, now, factor)
        else:
            ranked = fuse(fan.lists, query, weights=weights, now=now)
        partial = any(r.status in FAILED_STATUSES for r in reports)
        answer: SearchOut = {
            "query": query.text,
            "results": [r.to_dict(explain=True) for r in ranked],  # type: ignore[misc]
            "engines": [r.to_dict() for r in reports],  # type: ignore[misc]
            "cached": False,
            "partial": partial,
            "took_ms": int((time.perf_counter() - started) * 1000),
        }
        if fan.demoted and not trusted:  # every list with results seems to answer another query
            answer["note"] = UNCERTAIN
        # An engine left out while its breaker is open is back within minutes: an answer without
        # it is kept as briefly as one with a failed engine. One the strategy never reached (not
        # needed after a good list) could not have changed the answer, whatever its breaker says.
        left_out = (
            r.name for r in fan.reports if r.status == "skipped" and r.name not in fan.unreached
        )
        brief = partial or await orchestrator.any_breaker_tripped(left_out)
        # The briefer lifetimes never outlast the TTL: a TTL set shorter than them counts.
        briefer = [self.settings.cache.partial_ttl_seconds] if brief else []
        if (news_ttl := self._max_age(query)) is not None:
            briefer.append(news_ttl)
        ttl = min(self.settings.cache.ttl_seconds, *briefer) if briefer else None
        answered = Answered.of(answer)
        stored = answered.stored()
        if (rest := await orchestrator.rest_left(fan.unasked)) is not None:
            stored["rest_seconds"] = rest
        await self.cache.set(kind, key, stored, ttl_seconds=ttl)
        return answered

    async def fetch_page(self, url: str, *, max_chars: int, start: int) -> PageOut:
        """One page as clean text, the window [start, start + max_chars) of it (see `Pages`)."""
        return await self.pages.window(url, max_chars=max_chars, start=start)


#: The form of a stored summary: part of its cache key, so that one an earlier release wrote is
#: never served. Raise it when the prompt or the clean-up of a model's answer changes. 2: the
#: model's thinking, links, images and control characters taken out.
SUMMARY_FORM = 2

#: The query's fields that change an answer besides its text (which the key takes normalised).
_KEY_FIELDS = tuple(f.name for f in dataclasses.fields(Query) if f.name != "text")


def _query_args(query: Query) -> dict[str, Any]:
    """The query's fields that change an answer, for the cache key. Each is a scalar: read as
    they are, not deep-copied as `dataclasses.asdict` would."""
    return {name: getattr(query, name) for name in _KEY_FIELDS}
