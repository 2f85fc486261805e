"""Fan-out: every chosen engine at once, each under its own timeout, all under one deadline."""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Sequence
from dataclasses import dataclass

import httpx

from websearch_mcp.config import EngineSettings, Settings
from websearch_mcp.engines.base import Engine
from websearch_mcp.engines.registry import ENGINES
from websearch_mcp.errors import EngineError, ToolInputError
from websearch_mcp.models import EngineReport, Hit, Query
from websearch_mcp.net.http import build_client, redact, send

log = logging.getLogger("websearch_mcp.orchestrator")


@dataclass(slots=True)
class EngineRun:
    """One configured engine: the pure engine object plus what the config says of it."""

    engine: Engine
    settings: EngineSettings
    base_url: str
    timeout: float
    enabled: bool

    @property
    def name(self) -> str:
        return self.engine.name

    @property
    def keys(self) -> list[str]:
        return self.settings.api_keys


@dataclass(slots=True)
class FanOut:
    """What a fan-out gathered: hits of the engines that answered, and a report for every engine."""

    lists: dict[str, list[Hit]]
    reports: list[EngineReport]


def apply_limits(hits: list[Hit], run: EngineRun) -> list[Hit]:
    """Per-engine `min_score` (only for engines that return scores) and `max_size`."""
    if run.engine.returns_score and run.settings.min_score > 0:
        hits = [h for h in hits if h.score is None or h.score >= run.settings.min_score]
    return hits if run.settings.max_size is None else hits[: run.settings.max_size]


class Orchestrator:
    """Holds the configured engines and the shared HTTP client; runs one fan-out per call."""

    def __init__(self, settings: Settings, client: httpx.AsyncClient | None = None) -> None:
        self.settings = settings
        self.client = client or build_client(proxy=settings.proxy.url)
        self.runs: dict[str, EngineRun] = {}
        for name, engine_cls in ENGINES.items():
            conf = settings.engine(name)
            self.runs[name] = EngineRun(
                engine=engine_cls(),
                settings=conf,
                base_url=(conf.base_url or engine_cls.base_url).rstrip("/"),
                timeout=conf.timeout_seconds or engine_cls.default_timeout,
                enabled=engine_cls.default_enabled if conf.enabled is None else conf.enabled,
            )

    async def close(self) -> None:
        await self.client.aclose()

    def names(self, kind: str) -> list[str]:
        """Every known engine of `kind` ("web" or "academic")."""
        return [n for n, r in self.runs.items() if r.engine.kind == kind]

    def choose(
        self, kind: str, asked: Sequence[str] | None
    ) -> tuple[list[EngineRun], list[EngineReport]]:
        """The engines to query, and reports for those that will not be (disabled, no key)."""
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
            chosen.append(run)
        return chosen, skipped

    async def fan_out(self, query: Query, runs: Sequence[EngineRun], deadline: float) -> FanOut:
        """Query `runs` at once; what arrived by the deadline counts, the rest is `timeout`."""
        tasks = {asyncio.create_task(self._one(run, query), name=run.name): run for run in runs}
        _, pending = await asyncio.wait(tasks, timeout=deadline) if tasks else (set(), set())
        for task in pending:
            task.cancel()
        lists: dict[str, list[Hit]] = {}
        reports: list[EngineReport] = []
        for task, run in tasks.items():
            if task in pending:
                reports.append(
                    EngineReport(
                        run.name,
                        "timeout",
                        latency_ms=int(deadline * 1000),
                        error=f"no answer within the {deadline:g} s deadline",
                    )
                )
                continue
            report, hits = task.result()
            reports.append(report)
            if hits is not None:
                lists[run.name] = hits
        if pending:
            await asyncio.gather(*pending, return_exceptions=True)
        return FanOut(lists, reports)

    async def _one(self, run: EngineRun, query: Query) -> tuple[EngineReport, list[Hit] | None]:
        """One engine, never raising: its hits (None when it failed) and its report."""
        started = time.perf_counter()
        key = run.keys[0] if run.keys else None
        secrets = tuple(run.keys)

        def elapsed() -> int:
            return int((time.perf_counter() - started) * 1000)

        try:
            async with asyncio.timeout(run.timeout):
                request = run.engine.request(query, key)
                response = await send(self.client, run.base_url, request, run.timeout)
                while (nxt := run.engine.follow_up(response, query, key)) is not None:
                    response = await send(self.client, run.base_url, nxt, run.timeout)
                hits = apply_limits(run.engine.parse(response, query), run)
        except (TimeoutError, httpx.TimeoutException):
            return EngineReport(
                run.name,
                "timeout",
                latency_ms=elapsed(),
                error=f"no answer within {run.timeout:g} s",
            ), None
        except EngineError as err:
            text = redact(str(err), secrets)
            log.info("engine %s failed: %s", run.name, text)
            return EngineReport(run.name, err.status, latency_ms=elapsed(), error=text), None
        except Exception as err:  # a parser bug must not fail the whole search
            log.warning("engine %s raised %s", run.name, type(err).__name__)
            return EngineReport(
                run.name, "error", latency_ms=elapsed(), error=f"unexpected {type(err).__name__}"
            ), None
        status = "ok" if hits else "empty"
        return EngineReport(run.name, status, results=len(hits), latency_ms=elapsed()), hits
