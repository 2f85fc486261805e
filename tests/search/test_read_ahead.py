"""A fresh web search reads each engine's list as it arrives while few others are waiting for
their engines, and leaves it all to the fusion under load (`ranking.prepared`). Real service,
fake engines over HTTP on 127.0.0.1."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence

import pytest

from testing.fake_engines import FakeEngines, Fault
from testing.server_helpers import settings_for
from websearch_mcp.models import Hit
from websearch_mcp.ranking.prepared import Preparation
from websearch_mcp.search.service import PREPARE_BELOW, SearchService
from websearch_mcp.server.arguments import web_search_args


@pytest.fixture
def read(monkeypatch: pytest.MonkeyPatch) -> list[tuple[int, str]]:
    """(id of the preparation, engine) for each list read ahead."""
    seen: list[tuple[int, str]] = []
    real = Preparation.add

    def recording(self: Preparation, hits: Sequence[Hit]) -> None:
        seen.append((id(self), hits[0].engine))
        real(self, hits)

    monkeypatch.setattr(Preparation, "add", recording)
    return seen


async def test_a_lone_search_reads_every_list_as_it_arrives(
    engines_url: str, read: list[tuple[int, str]]
) -> None:
    service = SearchService(settings_for(engines_url))
    await service.start()
    try:
        answer = await service.web_search(web_search_args(query="python asyncio"))
    finally:
        await service.close()
    answered = {r["name"] for r in answer["engines"] if r["status"] == "ok"}
    assert answered == {"tavily", "searxng"}
    assert sorted(engine for _, engine in read) == sorted(answered)


async def test_searches_beyond_the_first_few_in_flight_leave_it_to_the_fusion(
    fake: FakeEngines, engines_url: str, read: list[tuple[int, str]]
) -> None:
    for engine in ("tavily", "searxng"):
        fake.faults[engine] = Fault(delay=0.4)  # all searches wait for their engines together
    service = SearchService(settings_for(engines_url))
    await service.start()
    try:
        searches = PREPARE_BELOW + 3
        answers = await asyncio.gather(
            *(
                service.web_search(web_search_args(query=f"python asyncio {i}"))
                for i in range(searches)
            )
        )
    finally:
        await service.close()
    assert all(a["results"] for a in answers)
    assert len({prepared for prepared, _ in read}) == PREPARE_BELOW
    assert len(read) == 2 * PREPARE_BELOW  # both engines' lists of each of those searches
