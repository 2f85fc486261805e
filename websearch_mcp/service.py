"""The search service: engine choice, fan-out, ranking and the answer's shape.

The MCP tools, the CLI and the HTTP routes all call this one object.
"""

from __future__ import annotations

import time
from datetime import UTC, datetime
from typing import Any

from websearch_mcp.arguments import WebSearchArgs
from websearch_mcp.config import Settings
from websearch_mcp.fetch import fetch_document
from websearch_mcp.models import EngineReport
from websearch_mcp.orchestrator import Orchestrator
from websearch_mcp.ranking.pipeline import rank

#: Statuses that mean an engine was asked and did not answer.
FAILED_STATUSES = frozenset({"error", "timeout", "blocked", "rate_limited"})


class SearchFailed(Exception):
    """No engine gave an answer; the message lists every engine's status."""

    def __init__(self, reports: list[EngineReport]) -> None:
        self.reports = reports
        detail = "; ".join(
            f"{r.name}: {r.status}" + (f" ({r.error})" if r.error else "") for r in reports
        )
        super().__init__(f"no engine answered: {detail}" if reports else "no engine is enabled")


def _ordered(reports: list[EngineReport], order: list[str]) -> list[EngineReport]:
    position = {name: i for i, name in enumerate(order)}
    return sorted(reports, key=lambda r: position.get(r.name, len(position)))


class SearchService:
    """One per process; stateless between requests apart from the shared clients."""

    def __init__(self, settings: Settings, orchestrator: Orchestrator | None = None) -> None:
        self.settings = settings
        self.orchestrator = orchestrator or Orchestrator(settings)

    async def close(self) -> None:
        await self.orchestrator.close()

    async def web_search(self, args: WebSearchArgs) -> dict[str, Any]:
        """Fan out, fuse and shape one web search. Raises `SearchFailed` when no engine answered."""
        orchestrator = self.orchestrator
        runs, skipped = orchestrator.choose("web", args.engines)
        order = orchestrator.names("web")
        if not runs:
            raise SearchFailed(_ordered(skipped, order))
        started = time.perf_counter()
        fan = await orchestrator.fan_out(args.query, runs, self.settings.search.deadline_seconds)
        reports = _ordered(fan.reports + skipped, order)
        if not fan.lists:
            raise SearchFailed(reports)
        weights = {name: orchestrator.runs[name].settings.weight for name in fan.lists}
        ranked = rank(
            fan.lists, args.query, self.settings.search, weights=weights, now=datetime.now(UTC)
        )
        return {
            "query": args.query.text,
            "results": [r.to_dict(explain=args.explain) for r in ranked],
            "engines": [r.to_dict() for r in reports],
            "cached": False,
            "partial": any(r.status in FAILED_STATUSES for r in reports),
            "took_ms": int((time.perf_counter() - started) * 1000),
        }

    async def fetch_page(self, url: str, *, max_chars: int, start: int) -> dict[str, Any]:
        """One page as clean text, the window [start, start + max_chars) of it.

        Raises `FetchError` (a `ToolInputError`) for refused or unreadable pages.
        """
        document = await fetch_document(url, settings=self.settings.fetch)
        return document.window(max_chars=max_chars, start=start)
