"""Strategies: hybrid's relevance gate, sequential's quality rules, the pool's order and fallback.

Unit tests drive the strategies with a scripted engine call; the last tests run the pool and
sequential strategies end to end through the MCP endpoint against fake engines.
"""

from __future__ import annotations

import asyncio
import functools
import random
import time
from collections import Counter
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any

import httpx
import pytest

from testing.fake_engines import FakeEngines, Fault, ResultsFn
from testing.resilience_helpers import JSON_HEADERS, report, settings_for, statuses, web_search
from testing.server_helpers import tool_call
from testing.serving import serve_app
from testing.wire_formats import wikipedia_result
from websearch_mcp.cache.base import NullCache
from websearch_mcp.config import (
    EngineSettings,
    PoolSettings,
    RankingSettings,
    SearchSettings,
    SequentialSettings,
    Settings,
)
from websearch_mcp.engines.registry import ENGINES
from websearch_mcp.models import EngineReport, Hit, Query, RankedResult
from websearch_mcp.ranking.pipeline import rank
from websearch_mcp.ranking.quality import list_quality
from websearch_mcp.search import strategies
from websearch_mcp.search.engine_call import Outcome
from websearch_mcp.search.fan_out import EngineRun
from websearch_mcp.search.service import SearchService, _answering_first
from websearch_mcp.server.app import create_app
from websearch_mcp.server.arguments import web_search_args

QUERY = "python asyncio event loop"
GOOD = ["python asyncio event loop"]  # quality 1.0
FAIR = ["python asyncio"]  # quality 0.57
WEAK = ["python snakes"]  # quality 0.25
UNRELATED = ["cooking pasta"]  # no word of the query


def engine_run(name: str, weight: float = 1.0) -> EngineRun:
    return EngineRun(
        engine=ENGINES[name](),
        settings=EngineSettings(weight=weight),
        base_url="http://127.0.0.1:9",
        timeout=1.0,
        enabled=True,
    )


def answered(name: str, titles: list[str]) -> Outcome:
    hits = [
        Hit(title, f"https://{name}.example/{i}", "", i + 1, name) for i, title in enumerate(titles)
    ]
    return Outcome(EngineReport(name, "ok" if hits else "empty", results=len(hits)), hits)


def failed(name: str, status: str = "error") -> Outcome:
    return Outcome(EngineReport(name, status, error="HTTP 500"), None)  # type: ignore[arg-type]


class Script:
    """An engine call answering from a script; records the order of calls."""

    def __init__(self, answers: dict[str, Outcome], delays: dict[str, float] | None = None):
        self.answers = answers
        self.delays = delays or {}
        self.called: list[str] = []

    async def __call__(self, run: EngineRun) -> Outcome:
        self.called.append(run.name)
        if run.name in self.delays:
            await asyncio.sleep(self.delays[run.name])
        return self.answers[run.name]


def by_name(outcomes: list[Outcome]) -> dict[str, Outcome]:
    return {o.report.name: o for o in outcomes}


# --- hybrid --------------------------------------------------------------------------------------


async def test_hybrid_demotes_an_unrelated_list_as_irrelevant() -> None:
    runs = [engine_run("bing"), engine_run("duckduckgo"), engine_run("brave")]
    script = Script(
        {
            "bing": answered("bing", UNRELATED),
            "duckduckgo": answered("duckduckgo", FAIR),
            "brave": answered("brave", []),
        }
    )
    outcomes = by_name(await strategies.hybrid(runs, QUERY, time.monotonic() + 1, 1, script))
    assert outcomes["bing"].report.status == "irrelevant"
    assert outcomes["bing"].report.error == strategies.IRRELEVANT
    # Demoted, not deleted: the list still goes into the fusion, with a lower weight.
    assert outcomes["bing"].hits and outcomes["bing"].demoted
    assert outcomes["duckduckgo"].hits and outcomes["duckduckgo"].report.status == "ok"
    assert not outcomes["duckduckgo"].demoted
    assert outcomes["brave"].report.status == "empty" and outcomes["brave"].hits == []


async def test_hybrid_never_suspects_a_semantic_engine_for_sharing_no_word() -> None:
    assert ENGINES["exa"].semantic and ENGINES["jina"].semantic and not ENGINES["bing"].semantic
    runs = [engine_run("exa"), engine_run("jina"), engine_run("tavily")]
    synonyms = ["Speed up Windows 11: 12 tips for better PC performance"]
    script = Script(
        {
            "exa": answered("exa", synonyms),
            "jina": answered("jina", ["Why is my computer slow? Fixes that work"]),
            "tavily": answered("tavily", ["How to make my laptop faster"]),
        }
    )
    query = "how to make my laptop faster"
    outcomes = by_name(await strategies.hybrid(runs, query, time.monotonic() + 1, 1, script))
    assert {o.report.status for o in outcomes.values()} == {"ok"}
    assert not any(o.demoted for o in outcomes.values())


async def test_hybrid_an_answer_in_another_script_is_no_evidence() -> None:
    runs = [engine_run("tavily"), engine_run("brave")]
    script = Script(
        {
            "tavily": answered("tavily", ["Machine learning for beginners"]),
            "brave": answered("brave", ["An introduction to machine learning"]),
        }
    )
    outcomes = await strategies.hybrid(runs, "機器學習入門", time.monotonic() + 1, 1, script)
    assert [o.report.status for o in outcomes] == ["ok", "ok"]
    # In the query's own script, sharing no word is evidence.
    script = Script({"tavily": answered("tavily", ["天氣預報"]), "brave": answered("brave", [])})
    until = time.monotonic() + 1
    named = by_name(await strategies.hybrid(runs, "機器學習入門", until, 1, script))
    assert named["tavily"].demoted and named["tavily"].report.status == "irrelevant"


@pytest.mark.parametrize(
    ("query", "titles"),
    [
        # Pages (and phone keyboards) print the typographic apostrophe.
        ("O'Reilly", ["O\u2019Reilly Media", "O\u2019Reilly books"]),
        # The same word without its accents, as most people type it.
        ("pokemon", ["Pokémon", "Pokémon Scarlet and Violet"]),
        ("beyonce", ["Beyoncé", "Beyoncé tour dates"]),
        ("αθηνα καιρος", ["Καιρός Αθήνα"]),
        # Traditional characters answered in simplified ones (Baidu), a Japanese query in
        # Chinese: the same Han characters, written another way.
        ("機器學習入門", ["机器学习入门教程"]),
        ("東京の天気", ["东京天气预报"]),
    ],
    ids=[
        "curly-apostrophe",
        "accents-pokemon",
        "accents-beyonce",
        "accents-greek",
        "traditional-simplified",
        "japanese-chinese",
    ],
)
async def test_hybrid_another_spelling_of_the_querys_words_is_no_evidence(
    query: str, titles: list[str]
) -> None:
    """docs/engines.md: the gate acts only on evidence that a list answers another query. A
    list holding the query's own words spelt another way (a curly apostrophe, accents the
    query left out) or in another writing of them (simplified for traditional characters, a
    Chinese page for a Japanese query in kanji) answers this one: it is neither reported
    `irrelevant` nor moved down (and with every list so, no note says relevance is uncertain)."""
    runs = [engine_run("bing"), engine_run("duckduckgo")]
    script = Script({"bing": answered("bing", titles), "duckduckgo": answered("duckduckgo", [])})
    outcomes = by_name(await strategies.hybrid(runs, query, time.monotonic() + 1, 1, script))
    assert outcomes["bing"].report.status == "ok", outcomes["bing"].report.error
    assert not outcomes["bing"].demoted


async def test_hybrid_a_page_another_list_vouches_for_is_not_demoted() -> None:
    runs = [engine_run("bing"), engine_run("duckduckgo")]
    shared = Hit("Tasks and coroutines", "https://docs.example/tasks", "", 1, "bing")
    script = Script(
        {
            "bing": Outcome(EngineReport("bing", "ok", results=1), [shared]),
            "duckduckgo": Outcome(
                EngineReport("duckduckgo", "ok", results=2),
                [
                    Hit("python asyncio", "https://docs.example/asyncio", "", 1, "duckduckgo"),
                    Hit("Tasks", "https://www.docs.example/tasks/", "", 2, "duckduckgo"),
                ],
            ),
        }
    )
    outcomes = await strategies.hybrid(runs, QUERY, time.monotonic() + 1, 1, script)
    assert [o.demoted for o in outcomes] == [False, False]


async def test_hybrid_keeps_every_list_when_the_query_has_no_content_words() -> None:
    runs = [engine_run("bing")]
    script = Script({"bing": answered("bing", UNRELATED)})
    (outcome,) = await strategies.hybrid(runs, "the of and", time.monotonic() + 1, 1, script)
    assert outcome.report.status == "ok" and outcome.hits


async def test_hybrid_reports_what_missed_the_deadline_as_timeout() -> None:
    runs = [engine_run("bing"), engine_run("duckduckgo")]
    script = Script(
        {"bing": answered("bing", GOOD), "duckduckgo": answered("duckduckgo", GOOD)},
        delays={"duckduckgo": 5},
    )
    started = time.monotonic()
    outcomes = by_name(await strategies.hybrid(runs, QUERY, started + 0.2, 0.2, script))
    assert time.monotonic() - started < 0.5
    assert outcomes["duckduckgo"].report.status == "timeout"
    assert outcomes["duckduckgo"].report.error == "no answer within the search's deadline (0.2 s)"
    # It was waited for the whole deadline: the status page's latency counts it so.
    assert outcomes["duckduckgo"].report.latency_ms == 200
    assert outcomes["bing"].hits


# --- sequential ----------------------------------------------------------------------------------


async def sequential(
    answers: dict[str, Outcome], order: list[str] | None = None, **conf: Any
) -> tuple[dict[str, Outcome], list[str]]:
    runs = [engine_run(name) for name in answers]
    script = Script(answers)
    outcomes = await strategies.sequential(
        runs,
        QUERY,
        time.monotonic() + 5,
        script,
        SequentialSettings(order=order or [], **conf),
        RankingSettings(),
    )
    assert sorted(o.report.name for o in outcomes) == sorted(answers)  # every engine reported
    return by_name(outcomes), script.called


async def test_sequential_stops_at_a_good_first_list() -> None:
    outcomes, called = await sequential(
        {"tavily": answered("tavily", GOOD), "brave": answered("brave", GOOD)}
    )
    assert called == ["tavily"]
    assert outcomes["tavily"].hits and outcomes["tavily"].report.quality == 1.0
    assert outcomes["brave"].report.status == "skipped"
    assert outcomes["brave"].report.error == "not needed: tavily answered with quality 1.00"


async def test_sequential_accepts_a_fair_list_only_after_the_first_engine() -> None:
    outcomes, called = await sequential(
        {
            "tavily": answered("tavily", FAIR),
            "brave": failed("brave"),
            "bing": answered("bing", FAIR),
        }
    )
    # A fair first list is not enough to stop; after the second engine it is accepted.
    assert called == ["tavily", "brave"]
    assert outcomes["tavily"].hits and outcomes["tavily"].report.status == "ok"
    assert outcomes["brave"].report.status == "error"
    assert outcomes["bing"].report.status == "skipped"


async def test_sequential_returns_the_best_list_when_none_is_good_enough() -> None:
    outcomes, called = await sequential(
        {
            "tavily": answered("tavily", WEAK),
            "brave": answered("brave", UNRELATED),
            "bing": answered("bing", ["python asyncio snakes", "snakes"]),
        }
    )
    assert called == ["tavily", "brave", "bing"]
    assert outcomes["brave"].report.status == "irrelevant" and outcomes["brave"].hits is None
    tavily, bing = outcomes["tavily"].report, outcomes["bing"].report
    assert tavily.quality is not None and bing.quality is not None
    assert bing.quality > tavily.quality
    assert outcomes["bing"].hits and outcomes["tavily"].hits is None
    assert tavily.status == "irrelevant" and tavily.error == "list quality 0.25 is below 0.3"


async def test_sequential_force_all_asks_everyone_and_keeps_the_best() -> None:
    outcomes, called = await sequential(
        {
            "tavily": answered("tavily", GOOD),
            "brave": answered("brave", FAIR),
            "bing": answered("bing", WEAK),
        },
        force_all=True,
    )
    assert called == ["tavily", "brave", "bing"]
    assert outcomes["tavily"].hits
    assert outcomes["brave"].hits is None and outcomes["brave"].report.status == "ok"
    assert outcomes["bing"].hits is None and outcomes["bing"].report.status == "irrelevant"


async def test_sequential_follows_the_configured_order_and_thresholds() -> None:
    outcomes, called = await sequential(
        {"tavily": answered("tavily", GOOD), "bing": answered("bing", FAIR)},
        order=["bing"],
        quality_stop=0.5,
    )
    assert called == ["bing"]
    assert outcomes["bing"].hits and outcomes["tavily"].report.status == "skipped"


async def test_sequential_thresholds_are_reached_at_their_value() -> None:
    """docs/engines.md: a list "scoring `quality_stop`" ends the search, and after the first
    engine the best list is accepted "at `quality_accept`": a list exactly at either counts."""
    outcomes, called = await sequential(
        {"tavily": answered("tavily", GOOD), "brave": answered("brave", GOOD)},
        quality_stop=1.0,
    )
    assert outcomes["tavily"].report.quality == 1.0
    assert called == ["tavily"]
    weak = list_quality(answered("brave", WEAK).hits or [], QUERY, RankingSettings())
    outcomes, called = await sequential(
        {
            "tavily": failed("tavily"),
            "brave": answered("brave", WEAK),
            "bing": answered("bing", GOOD),
        },
        quality_accept=weak,
    )
    assert outcomes["brave"].report.quality == weak
    assert called == ["tavily", "brave"]
    assert outcomes["brave"].hits and outcomes["brave"].report.status == "ok"
    # A list left out of the fusion is `irrelevant` only below `quality_accept`, not at it.
    outcomes, _ = await sequential(
        {"brave": answered("brave", WEAK), "bing": answered("bing", GOOD)},
        quality_accept=weak,
        force_all=True,
    )
    assert outcomes["bing"].hits and outcomes["brave"].hits is None
    assert outcomes["brave"].report.status == "ok"


@pytest.mark.parametrize(
    ("query", "typed", "printed"),
    [
        ("O'Reilly", "O'Reilly Media", "O\u2019Reilly Media"),
        ("pokemon", "Pokemon Scarlet", "Pokémon Scarlet"),
    ],
    ids=["curly-apostrophe", "accents"],
)
async def test_sequential_stops_at_a_list_printing_the_querys_word_its_own_way(
    query: str, typed: str, printed: str
) -> None:
    """A list whose every title holds the query's word, as the page prints it, is as good as
    one spelling it as the query does: it ends the search (quality >= `quality_stop`)."""
    conf = RankingSettings()
    assert list_quality(answered("bing", [typed]).hits or [], query, conf) == 1.0
    runs = [engine_run("bing"), engine_run("duckduckgo")]
    script = Script(
        {"bing": answered("bing", [printed]), "duckduckgo": answered("duckduckgo", [typed])}
    )
    until = time.monotonic() + 5
    outcomes = by_name(
        await strategies.sequential(runs, query, until, script, SequentialSettings(), conf)
    )
    assert script.called == ["bing"]
    assert outcomes["bing"].report.status == "ok" and outcomes["bing"].hits


async def test_sequential_reports_engines_left_at_the_deadline() -> None:
    runs = [engine_run("tavily"), engine_run("bing")]
    script = Script(
        {"tavily": answered("tavily", WEAK), "bing": answered("bing", GOOD)},
        delays={"tavily": 0.15},
    )
    outcomes = by_name(
        await strategies.sequential(
            runs, QUERY, time.monotonic() + 0.1, script, SequentialSettings(), RankingSettings()
        )
    )
    assert script.called == ["tavily"]
    assert outcomes["bing"].report.status == "timeout"
    assert outcomes["bing"].report.error == strategies.TOO_LATE
    assert outcomes["tavily"].hits  # the best (only) list seen


# --- pool ----------------------------------------------------------------------------------------


def names(runs: list[EngineRun]) -> list[str]:
    return [r.name for r in runs]


def test_round_robin_rotates_the_first_provider() -> None:
    runs = [engine_run("tavily"), engine_run("brave"), engine_run("exa")]
    usable = {"tavily": 1, "brave": 2, "exa": 1}
    conf = PoolSettings()
    firsts = [
        names(strategies.order_providers(runs, conf, usable, turn, random.Random()))[0]
        for turn in range(6)
    ]
    assert firsts == ["tavily", "brave", "exa"] * 2


def test_priority_order_and_providers_without_usable_keys_last() -> None:
    runs = [engine_run("tavily"), engine_run("brave"), engine_run("exa")]
    conf = PoolSettings(order="priority", providers=["exa", "tavily"])
    usable = {"tavily": 1, "brave": 1, "exa": 1}
    assert names(strategies.order_providers(runs, conf, usable, 0, random.Random())) == [
        "exa",
        "tavily",
        "brave",
    ]
    usable["exa"] = 0
    assert names(strategies.order_providers(runs, conf, usable, 0, random.Random())) == [
        "tavily",
        "brave",
        "exa",
    ]


def test_weighted_order_follows_weight_times_usable_keys() -> None:
    runs = [engine_run("tavily", weight=1.0), engine_run("brave", weight=1.0)]
    usable = {"tavily": 3, "brave": 1}  # 3:1
    rng = random.Random(12345)
    conf = PoolSettings(order="weighted")
    firsts = Counter(
        strategies.order_providers(runs, conf, usable, 0, rng)[0].name for _ in range(2000)
    )
    assert 0.70 < firsts["tavily"] / 2000 < 0.80
    runs = [engine_run("tavily", weight=0.0), engine_run("brave", weight=1.0)]
    assert {strategies.order_providers(runs, conf, usable, 0, rng)[0].name for _ in range(50)} == {
        "brave"
    }


async def test_pool_stops_at_the_first_answer_and_reports_every_engine() -> None:
    runs = [engine_run("tavily"), engine_run("brave"), engine_run("duckduckgo")]
    script = Script(
        {
            "tavily": failed("tavily", "rate_limited"),
            "brave": answered("brave", FAIR),
            "duckduckgo": answered("duckduckgo", GOOD),
        }
    )
    outcomes = by_name(await strategies.pool(runs, QUERY, time.monotonic() + 5, script))
    assert script.called == ["tavily", "brave"]
    assert outcomes["tavily"].report.status == "rate_limited"
    assert outcomes["brave"].hits
    assert outcomes["duckduckgo"].report.status == "skipped"
    assert outcomes["duckduckgo"].report.error == "not needed: brave answered"


async def test_pool_falls_back_past_empty_and_irrelevant_lists() -> None:
    runs = [engine_run("tavily"), engine_run("brave"), engine_run("duckduckgo")]
    script = Script(
        {
            "tavily": answered("tavily", []),
            "brave": answered("brave", UNRELATED),
            "duckduckgo": answered("duckduckgo", FAIR),
        }
    )
    outcomes = by_name(await strategies.pool(runs, QUERY, time.monotonic() + 5, script))
    assert script.called == ["tavily", "brave", "duckduckgo"]
    assert outcomes["tavily"].report.status == "empty" and outcomes["tavily"].hits is None
    assert outcomes["brave"].report.status == "irrelevant"
    assert outcomes["brave"].hits is None  # another list answered: only that one is fused
    assert outcomes["duckduckgo"].hits


async def test_pool_keeps_a_demoted_list_when_nothing_else_answers() -> None:
    runs = [engine_run("tavily"), engine_run("brave"), engine_run("duckduckgo")]
    script = Script(
        {
            "tavily": answered("tavily", UNRELATED),
            "brave": failed("brave"),
            "duckduckgo": answered("duckduckgo", ["knitting patterns"]),
        }
    )
    outcomes = by_name(await strategies.pool(runs, QUERY, time.monotonic() + 5, script))
    assert script.called == ["tavily", "brave", "duckduckgo"]
    assert outcomes["tavily"].demoted and outcomes["tavily"].hits  # the first suspect list
    assert outcomes["duckduckgo"].demoted and outcomes["duckduckgo"].hits is None


async def test_pool_reports_providers_left_at_the_deadline() -> None:
    # A provider whose turn comes after the deadline is not called: its keys are not planned
    # and a half-open breaker's probe is not claimed by a call that could send nothing.
    runs = [engine_run("tavily"), engine_run("brave")]
    script = Script(
        {"tavily": failed("tavily"), "brave": answered("brave", GOOD)}, delays={"tavily": 0.15}
    )
    outcomes = by_name(await strategies.pool(runs, QUERY, time.monotonic() + 0.1, script))
    assert script.called == ["tavily"]
    assert outcomes["brave"].report.status == "timeout"
    assert outcomes["brave"].report.error == strategies.TOO_LATE


async def test_sequential_never_stops_at_a_demoted_list() -> None:
    outcomes, called = await sequential(
        {"bing": answered("bing", UNRELATED), "duckduckgo": answered("duckduckgo", GOOD)},
        order=["bing", "duckduckgo"],
    )
    assert called == ["bing", "duckduckgo"]
    assert outcomes["bing"].report.status == "irrelevant" and outcomes["bing"].hits is None
    assert outcomes["duckduckgo"].hits


async def test_sequential_keeps_an_answer_in_another_script_over_a_demoted_list() -> None:
    """Both lists score 0, but only bing's is evidence of answering another query: the list
    kept is the other engine's (docs/engines.md: a gated list "is kept only when no other
    engine answers")."""
    outcomes, called = await sequential(
        {"bing": answered("bing", UNRELATED), "baidu": answered("baidu", ["异步 事件 循环 教程"])},
        order=["bing", "baidu"],
    )
    assert called == ["bing", "baidu"]
    assert outcomes["bing"].demoted and outcomes["bing"].hits is None
    assert outcomes["baidu"].hits


# --- end to end ----------------------------------------------------------------------------------

KEY_A, KEY_B, KEY_C = "tvly-pool-key-A", "tvly-pool-key-B", "brave-pool-key-C"


def results_for(engine: str, query: str) -> list[dict[str, Any]]:
    if engine == "wikipedia":
        return [wikipedia_result("Asyncio event loop", f"{query} in Python")]
    return [
        {
            "title": f"{query} ({engine})",
            "url": f"https://{engine}.example/asyncio",
            "snippet": f"All about {query}.",
        }
    ]


@pytest.fixture
def engine_results() -> ResultsFn:
    return results_for


def pool_settings(base: str, **pool: Any):
    return settings_for(
        base,
        {
            "tavily": {"api_keys": [KEY_A, KEY_B]},
            "brave": {"api_keys": [KEY_C]},
            "wikipedia": {},
        },
        strategy="pool",
        pool=pool,
    )


def test_pool_end_to_end_rotates_providers_and_keys(fake: FakeEngines, engines_url: str) -> None:
    with serve_app(create_app(pool_settings(engines_url))) as url:
        answers = [web_search(url, QUERY)["structuredContent"] for _ in range(4)]
    used = [next(e["name"] for e in a["engines"] if e["status"] == "ok") for a in answers]
    assert used == ["tavily", "brave", "tavily", "brave"]
    assert fake.key_counts == {KEY_A: 1, KEY_B: 1, KEY_C: 2}
    assert fake.counts["wikipedia"] == 0
    first = answers[0]
    assert statuses(first) == {"tavily": "ok", "brave": "skipped", "wikipedia": "skipped"}
    assert report(first, "brave")["error"] == "not needed: tavily answered"
    assert {r["engines"][0] for r in first["results"]} == {"tavily"}
    assert first["partial"] is False


@pytest.mark.parametrize("between", ["academic_search", "wikipedia", "tavily"])
def test_pool_round_robin_rotates_over_searches_that_ask_a_provider(
    fake: FakeEngines, engines_url: str, between: str
) -> None:
    """docs/engines.md: the pool takes "one keyed provider per request" in `round_robin` turn.
    An `academic_search` between two web searches (its indexes are all asked at once, whatever
    `search.strategy` says), a web search naming only a keyless engine, or one provider (it
    starts there whatever the turn), has no rotation to advance: it takes no turn, or a client
    alternating it with plain web searches would get the same provider every time."""
    settings = settings_for(
        engines_url,
        {
            "tavily": {"api_keys": [KEY_A]},
            "brave": {"api_keys": [KEY_C]},
            "wikipedia": {},
            "arxiv": {"base_url": f"{engines_url}/arxiv", "rate_limit": 0},
        },
        strategy="pool",
    )
    used = []
    with serve_app(create_app(settings)) as url:
        for _ in range(2):
            answer = web_search(url, QUERY)["structuredContent"]
            used.append(next(e["name"] for e in answer["engines"] if e["status"] == "ok"))
            if between == "academic_search":
                httpx.post(
                    f"{url}/mcp",
                    headers=JSON_HEADERS,
                    json=tool_call({"query": QUERY}, name="academic_search"),
                    timeout=20,
                ).raise_for_status()
            else:
                assert not web_search(url, QUERY, engines=[between]).get("isError")
    assert used == ["tavily", "brave"]


def test_pool_tries_every_key_then_the_next_provider_then_keyless(
    fake: FakeEngines, engines_url: str
) -> None:
    fake.key_faults[KEY_A] = Fault(status=401, body=b'{"detail": "bad key"}')
    fake.key_faults[KEY_B] = Fault(status=429, retry_after="3600")
    fake.faults["brave"] = Fault(status=500)
    settings = pool_settings(engines_url, order="priority", providers=["tavily", "brave"])
    with serve_app(create_app(settings)) as url:
        answer = web_search(url, QUERY)["structuredContent"]
    assert statuses(answer) == {"tavily": "rate_limited", "brave": "error", "wikipedia": "ok"}
    tavily = report(answer, "tavily")
    assert tavily["attempts"] == [
        "key 1 of 2: HTTP 401: the API key was refused (key cooled for 6 h)",
        "key 2 of 2: HTTP 429 Too Many Requests (key cooled for 1 h)",
    ]
    assert fake.key_counts == {KEY_A: 1, KEY_B: 1, KEY_C: 1}
    assert [r["engines"] for r in answer["results"]] == [["wikipedia"]]
    assert answer["partial"] is True


def test_pool_end_to_end_leaves_out_a_demoted_list_when_another_answers(
    fake: FakeEngines, engines_url: str
) -> None:
    """A gated list "is kept only when no other engine answers": the one left out of the
    fusion is reported `irrelevant` and is no part of the answer's weights."""
    fake.results = lambda engine, query: (
        [{"title": "Cached page", "url": "https://cached.example/", "snippet": "Weather today"}]
        if engine == "tavily"
        else results_for(engine, query)
    )
    settings = pool_settings(engines_url, order="priority", providers=["tavily", "brave"])
    with serve_app(create_app(settings)) as url:
        result = web_search(url, QUERY)
    assert not result.get("isError"), result
    answer = result["structuredContent"]
    assert statuses(answer) == {"tavily": "irrelevant", "brave": "ok", "wikipedia": "skipped"}
    assert [r["engines"] for r in answer["results"]] == [["brave"]]
    assert "note" not in answer


def test_hybrid_end_to_end_keeps_thai_lists_holding_the_query_inside_longer_runs(
    fake: FakeEngines, engines_url: str
) -> None:
    """Thai puts no space between words: a page about "ภาษาไทย" (the Thai language) holds it
    inside a longer run of letters, which shares a word with the query all the same."""
    fake.results = lambda engine, query: [
        {
            "title": f"เรียนภาษาไทยออนไลน์ฟรี ({engine})",
            "url": f"https://{engine}.example/thai",
            "snippet": "หลักสูตรภาษาไทยสำหรับชาวต่างชาติ เริ่มเรียนได้ทุกวัน",
        }
    ]
    settings = settings_for(engines_url, {"searxng": {}, "bing": {}})
    with serve_app(create_app(settings)) as url:
        answer = web_search(url, "ภาษาไทย")["structuredContent"]
    assert statuses(answer) == {"searxng": "ok", "bing": "ok"}


def sequential_settings(base: str) -> Settings:
    return settings_for(
        base,
        {"searxng": {}, "wikipedia": {}, "bing": {}},
        strategy="sequential",
        sequential={"order": ["bing", "searxng"]},
    )


def test_sequential_end_to_end_saves_requests(fake: FakeEngines, engines_url: str) -> None:
    settings = sequential_settings(engines_url)
    with serve_app(create_app(settings)) as url:
        answer = web_search(url, QUERY)["structuredContent"]
        rows = httpx.get(f"{url}/status.json", timeout=5).json()["engines"]
    assert fake.counts == {"bing": 1}
    assert statuses(answer) == {"searxng": "skipped", "bing": "ok", "wikipedia": "skipped"}
    assert report(answer, "bing")["quality"] >= 0.8
    # docs/status.md: `calls` are requests made, `skipped` searches a breaker, resting keys or
    # a rate limit kept from asking it; an engine not needed after a good list is neither.
    hour = {row["name"]: row["hour"] for row in rows}
    assert hour["bing"]["statuses"] == {"ok": 1}
    for name in ("searxng", "wikipedia"):
        assert hour[name]["statuses"] == {} and hour[name]["skipped"] == 0, name


class StoredFor(NullCache):
    """No cache; the lifetime each answer would be stored for (None: the full TTL)."""

    def __init__(self) -> None:
        super().__init__()
        self.ttls: list[int | None] = []

    async def set(
        self, namespace: str, key: str, value: dict[str, Any], *, ttl_seconds: int | None = None
    ) -> None:
        self.ttls.append(ttl_seconds)


@pytest.mark.parametrize(
    ("settings_of", "first"),
    [
        (sequential_settings, "bing"),
        (
            functools.partial(pool_settings, order="priority", providers=["tavily", "brave"]),
            "tavily",
        ),
    ],
    ids=["sequential", "pool"],
)
async def test_an_engine_not_needed_does_not_shorten_the_answers_life_by_its_breaker(
    fake: FakeEngines, engines_url: str, settings_of: Callable[[str], Any], first: str
) -> None:
    """service.py: an answer with an engine "left out while its breaker is open" is kept only
    `partial_ttl_seconds`. An engine the strategy never needed (after a good list) was not left
    out by its breaker, which could not have changed the answer: the answer keeps its full TTL.
    The first engine left out by its breaker still shortens it."""
    settings = settings_of(engines_url)
    cache = StoredFor()
    service = SearchService(settings, cache=cache)
    try:
        for tripped in ("wikipedia", first):
            breaker = service.orchestrator.runs[tripped].breaker
            assert breaker is not None
            await breaker.failure("error", "HTTP 500")
            answer = dict(await service.web_search(web_search_args(query=f"{QUERY} {tripped}")))
            assert report(answer, "wikipedia")["error"].startswith("not needed")
    finally:
        await service.close()
    assert report(answer, first)["status"] == "skipped"  # its breaker open
    assert cache.ttls == [None, settings.cache.partial_ttl_seconds]


def test_hybrid_end_to_end_reports_an_unrelated_list_irrelevant(
    fake: FakeEngines, engines_url: str
) -> None:
    fake.results = lambda engine, query: (
        [{"title": "Cached page", "url": "https://cached.example/", "snippet": "Weather today"}]
        if engine == "bing"
        else results_for(engine, query)
    )
    settings = settings_for(engines_url, {"bing": {}, "searxng": {}})
    with serve_app(create_app(settings)) as url:
        answer = web_search(url, QUERY)["structuredContent"]
    assert report(answer, "bing") == {
        "name": "bing",
        "status": "irrelevant",
        "results": 1,
        "latency_ms": report(answer, "bing")["latency_ms"],
        "error": strategies.MOVED_DOWN,
    }
    # Demoted below every result of the list that answers the query, not deleted.
    engines = [r["engines"] for r in answer["results"]]
    assert engines[-1] == ["bing"] and all(e == ["searxng"] for e in engines[:-1])
    assert answer["partial"] is False and "note" not in answer


def _pasta_beside_the_query(pasta: int, answering: int) -> Callable[[str, str], list[Any]]:
    """Fake answers: Bing's, `pasta` recipes (a list answering another query); every other
    engine's, `answering` pages on the query."""

    def answer(engine: str, query: str) -> list[dict[str, Any]]:
        if engine == "bing":
            return [
                {"title": f"Pasta recipe {i}", "url": f"https://food.test/{i}", "snippet": "Boil"}
                for i in range(1, pasta + 1)
            ]
        return [
            {"title": f"{query} part {i}", "url": f"https://py.example/{i}", "snippet": query}
            for i in range(1, answering + 1)
        ]

    return answer


def test_a_demoted_lists_best_results_stay_below_every_result_of_the_others(
    fake: FakeEngines, engines_url: str
) -> None:
    """docs/engines.md: a list that seems to answer another query stays below the lists that
    answer this one, its first results too (the position and the coverage credit, which read
    no weight, lifted them over the others' later ones), and none is lost while room is left."""

    fake.results = _pasta_beside_the_query(pasta=8, answering=15)
    settings = settings_for(engines_url, {"bing": {}, "searxng": {}})
    with serve_app(create_app(settings)) as url:
        answer_ = web_search(url, QUERY, max_results=50, explain=True)["structuredContent"]
    assert statuses(answer_) == {"bing": "irrelevant", "searxng": "ok"}
    engines = [r["engines"] for r in answer_["results"]]
    assert engines == [["searxng"]] * 15 + [["bing"]] * 8
    scores = [r["score"] for r in answer_["results"]]
    assert scores == sorted(scores, reverse=True)
    assert answer_["results"][-1]["score_details"]["moved_down"] == 0.05


def test_a_muted_engine_answering_beside_a_demoted_list_lists_none_of_its_own_pages(
    fake: FakeEngines, engines_url: str
) -> None:
    """docs/engines.md: an engine weighted 0 is asked and reported, but the pages only it
    returned score 0, under `search.relevance_threshold`, and are not listed. Fused alone, as
    the lists that answer when another is moved down, its first two were kept (the top two
    always stay), at score 0, above the moved-down results."""

    fake.results = _pasta_beside_the_query(pasta=5, answering=5)
    settings = settings_for(engines_url, {"bing": {}, "searxng": {"weight": 0}})
    with serve_app(create_app(settings)) as url:
        answer_ = web_search(url, QUERY, explain=True)["structuredContent"]
    assert statuses(answer_) == {"bing": "irrelevant", "searxng": "ok"}
    assert [r["engines"] for r in answer_["results"] if "searxng" in r["engines"]] == []


def test_a_demoted_list_fills_only_the_room_the_others_leave(
    fake: FakeEngines, engines_url: str
) -> None:
    """An answer holds `max_results` results at most: after the 15 of the list that answers
    the query, 5 of the demoted list's 8."""
    fake.results = _pasta_beside_the_query(pasta=8, answering=15)
    settings = settings_for(engines_url, {"bing": {}, "searxng": {}})
    with serve_app(create_app(settings)) as url:
        answer = web_search(url, QUERY, max_results=20)["structuredContent"]
    assert statuses(answer) == {"bing": "irrelevant", "searxng": "ok"}
    assert [r["engines"] for r in answer["results"]] == [["searxng"]] * 15 + [["bing"]] * 5


def test_a_demoted_list_is_listed_below_two_lists_that_agree(
    fake: FakeEngines, engines_url: str
) -> None:
    """docs/engines.md: a gated list is not deleted, its results fill the room the others
    leave. Two engines answering with the same pages leave its results no coverage credit: in
    one fusion of every list (its weight times 0.05) they all fell under
    `search.relevance_threshold`, and the answer lost the whole list with room left."""

    def answer(engine: str, query: str) -> list[dict[str, Any]]:
        if engine == "bing":
            return [
                {"title": f"Pasta recipe {i}", "url": f"https://food.test/{i}", "snippet": "Boil"}
                for i in range(1, 6)
            ]
        return [
            {"title": f"{query} part {i}", "url": f"https://py.example/{i}", "snippet": query}
            for i in range(1, 6)
        ]

    fake.results = answer
    settings = settings_for(
        engines_url, {"bing": {}, "searxng": {}, "brave": {"api_keys": [KEY_A]}}
    )
    with serve_app(create_app(settings)) as url:
        answer_ = web_search(url, QUERY, max_results=20)["structuredContent"]
    assert statuses(answer_) == {"bing": "irrelevant", "searxng": "ok", "brave": "ok"}
    engines = [r["engines"] for r in answer_["results"]]
    assert engines[5:] == [["bing"]] * 5, engines


def test_a_demoted_list_with_no_other_list_answering_is_not_moved_down(
    fake: FakeEngines, engines_url: str
) -> None:
    """With no list to stay below, the only list that seems to answer another query is fused
    as it is: reported `irrelevant` (not moved down), its scores not cut."""
    fake.results = lambda engine, query: [
        {"title": "Cached page", "url": "https://cached.example/", "snippet": "Weather today"}
    ]
    settings = settings_for(engines_url, {"bing": {}})
    with serve_app(create_app(settings)) as url:
        answer = web_search(url, QUERY, explain=True)["structuredContent"]
    assert report(answer, "bing")["error"] == strategies.IRRELEVANT
    (result,) = answer["results"]
    assert "moved_down" not in result["score_details"]


def test_a_report_a_story_lists_in_also_is_not_listed_again_from_a_demoted_list() -> None:
    """A news story's `also` names the other publishers' reports of it: the same report from a
    demoted list (under another spelling of its link) is one the answer holds already."""
    also = [{"source": "B", "url": "http://www.b.example/report/", "published": None}]
    story = RankedResult("https://a.example/story", "Story", "https://a.example/story", "", [], {})
    story.engines, story.score, story.also = ["bing"], 0.9, also
    report_, other = (
        RankedResult(f"https://{page}", page, f"https://{page}", "", ["brave"], {}, score=0.5)
        for page in ("b.example/report", "c.example/other")
    )

    def fuse(lists: Any, query: Query, *, weights: Any, now: datetime) -> list[RankedResult]:
        return [story, report_, other] if "brave" in lists else [story]

    lists: dict[str, list[Hit]] = {"bing": [], "brave": []}
    now = datetime.now(UTC)
    ranked = _answering_first(fuse, lists, frozenset({"brave"}), Query("q"), {}, now, 0.05)
    assert [r.key for r in ranked] == [story.key, other.key]


def test_a_demoted_story_whose_also_names_a_listed_result_is_not_listed_again() -> None:
    """A report an engine grouped with a story (SerpApi's stories, Google News) is in its
    `also` but not folded into it: a demoted story naming a result the answer lists there is
    a story the answer holds already."""
    lead = RankedResult("https://a.example/story", "Story", "https://a.example/story", "", [], {})
    lead.engines, lead.score = ["bing"], 0.9
    also = [{"source": "A", "url": "http://www.a.example/story/", "published": None}]
    grouped, other = (
        RankedResult(f"https://{page}", page, f"https://{page}", "", ["brave"], {}, score=0.5)
        for page in ("b.example/story", "c.example/other")
    )
    grouped.also = also

    def fuse(lists: Any, query: Query, *, weights: Any, now: datetime) -> list[RankedResult]:
        return [lead, grouped, other] if "brave" in lists else [lead]

    lists: dict[str, list[Hit]] = {"bing": [], "brave": []}
    now = datetime.now(UTC)
    ranked = _answering_first(fuse, lists, frozenset({"brave"}), Query("q"), {}, now, 0.05)
    assert [r.key for r in ranked] == [lead.key, other.key]


@pytest.mark.parametrize(
    ("demoted_sources", "answering_source"),
    [(["Reuters"], "AP"), (["Reuters"], "Reuters"), (["Reuters", "AP"], "AP")],
    ids=["another-publisher", "the-leads-publisher", "a-publisher-also-names"],
)
def test_a_story_holding_an_answering_report_is_not_listed_twice(
    demoted_sources: list[str], answering_source: str
) -> None:
    """docs/engines.md: a report in a story's `also` is not listed twice. At their own weights,
    a demoted list's first report leads a story in the fusion of every list, and the report an
    answering list gave of it folds into it: that story was listed as the answering report,
    then again, moved down. `also` names one report per publisher: a report of the lead's
    publisher, or of one it names already, is folded into the story but not in its `also`."""
    published = "2026-07-14T10:00:00Z"
    storm = "Storm floods Texas coast towns overnight"

    def report_(title: str, url: str, rank_: int, engine: str, source: str) -> Hit:
        return Hit(title, url, "", rank_, engine, published=published, source=source)

    demoted = [report_(storm, f"https://{source.lower()}.example/storm", i, "bing", source)
               for i, source in enumerate(demoted_sources, start=1)]  # fmt: skip
    start = len(demoted) + 1
    pasta = [report_(f"Pasta recipe {i}", f"https://food.example/{i}", i, "bing", "Food")
             for i in range(start, start + 3)]  # fmt: skip
    on_topic = [report_(f"Bears Ears monument {word}", f"https://n{i}.example/", i, "brave", "N")
                for i, word in enumerate(["alpha", "gamma", "zeta"], start=1)]  # fmt: skip
    url = f"https://{answering_source.lower()}.example/2026/07/14/storm-texas"
    lists = {
        "bing": [*demoted, *pasta],
        "brave": [*on_topic, report_(storm, url, 4, "brave", answering_source)],
    }
    fuse = functools.partial(rank, search=SearchSettings())
    query = Query("Bears Ears monument", max_results=20, category="news")
    now = datetime(2026, 7, 14, 12, tzinfo=UTC)
    weights = {"bing": 1.0, "brave": 1.0}
    ranked = _answering_first(fuse, lists, frozenset({"bing"}), query, weights, now, 0.05)
    storms = [r for r in ranked if r.title == storm]
    assert len(storms) == 1, [(r.url, r.engines, r.also) for r in storms]


@pytest.mark.parametrize("strategy", ["hybrid", "sequential"])
def test_the_status_page_counts_a_demoted_list_as_the_answer_reports_it(
    fake: FakeEngines, engines_url: str, strategy: str
) -> None:
    """docs/status.md counts each call by its report status, `irrelevant` included: the
    status page and /metrics agree with what the agent was told."""
    fake.results = lambda engine, query: (
        [{"title": "Cached page", "url": "https://cached.example/", "snippet": "Weather today"}]
        if engine == "bing"
        else results_for(engine, query)
    )
    settings = settings_for(
        engines_url,
        {"bing": {}, "searxng": {}},
        strategy=strategy,
        sequential={"order": ["bing", "searxng"]},
    )
    with serve_app(create_app(settings)) as url:
        answer = web_search(url, QUERY)["structuredContent"]
        assert statuses(answer) == {"bing": "irrelevant", "searxng": "ok"}
        rows = httpx.get(f"{url}/status.json", timeout=5).json()["engines"]
        metrics = httpx.get(f"{url}/metrics", timeout=5).text
    hour = {row["name"]: row["hour"] for row in rows}
    assert hour["bing"]["statuses"] == {"irrelevant": 1}
    # It answered: no failure of it to show.
    assert {row["name"]: row["last_error"] for row in rows}["bing"] is None
    assert hour["searxng"]["statuses"] == {"ok": 1}
    assert 'websearch_engine_calls_total{engine="bing",status="irrelevant"} 1.0' in metrics


def test_hybrid_end_to_end_says_nothing_of_relevance_when_no_engine_found_anything(
    fake: FakeEngines, engines_url: str
) -> None:
    """The `note` that relevance is uncertain is for lists that all seem to answer another
    query (docs/engines.md); engines that answered with no results gated no list."""
    fake.results = lambda engine, query: []
    settings = settings_for(engines_url, {"bing": {}, "searxng": {}})
    with serve_app(create_app(settings)) as url:
        answer = web_search(url, QUERY)["structuredContent"]
    assert statuses(answer) == {"bing": "empty", "searxng": "empty"}
    assert answer["results"] == [] and answer["partial"] is False
    assert "note" not in answer


def test_min_score_drops_only_scored_results_under_it_of_engines_that_score() -> None:
    """docs/engines.md: `min_score` drops "results scored under this, applied only to engines
    that return scores": a result at it stays, one without a score stays, and an engine that
    returns no scores is never filtered."""
    from websearch_mcp.search.engine_call import apply_limits

    def listed(name: str, scores: list[float | None]) -> list[Hit]:
        return [
            Hit(f"t{i}", f"https://{name}.example/{i}", "", i + 1, name, score=s)
            for i, s in enumerate(scores)
        ]

    tavily = engine_run("tavily")
    assert tavily.engine.returns_score
    tavily.settings = EngineSettings(min_score=0.5)
    kept = apply_limits(listed("tavily", [0.9, 0.5, None, 0.49]), tavily)
    assert [h.score for h in kept] == [0.9, 0.5, None]
    bing = engine_run("bing")
    assert not bing.engine.returns_score
    bing.settings = EngineSettings(min_score=0.5)
    assert len(apply_limits(listed("bing", [0.1, 0.2]), bing)) == 2


def test_a_configured_index_overrides_the_engines_own_declaration() -> None:
    """docs/ranking.md: "any engine's declaration can be overridden the same way"
    (`engines.<name>.index`)."""
    from websearch_mcp.config import Settings
    from websearch_mcp.search.fan_out import Orchestrator

    settings = Settings.model_validate({"engines": {"duckduckgo": {"index": "ddg"}}})
    orchestrator = Orchestrator(settings, environ={})
    try:
        families = orchestrator.index_families()
        assert families["duckduckgo"] == "ddg"  # it declares "bing"
        assert families["serper"] == "google"  # the declaration where none is configured
    finally:
        asyncio.run(orchestrator.close())


def test_a_demoted_list_takes_no_place_among_the_first_20_the_neighbours_read(
    fake: FakeEngines, engines_url: str
) -> None:
    """docs/ranking.md: each of the fused list's first 20 results takes a share of its most
    similar results' scores there (`neighbours`, null only when it shares no words with them or
    is further down). A list moved down is listed after every other result: its results may not
    fill those 20 places (at their scores before the move) and leave the answering results
    shown there without neighbours, nor lend them their scores."""

    fake.results = _pasta_beside_the_query(pasta=8, answering=18)
    settings = settings_for(engines_url, {"bing": {}, "searxng": {}})
    with serve_app(create_app(settings)) as url:
        answer_ = web_search(url, QUERY, max_results=50, explain=True)["structuredContent"]
    assert statuses(answer_) == {"bing": "irrelevant", "searxng": "ok"}
    heard = [r for r in answer_["results"] if r["engines"] == ["searxng"]]
    assert len(heard) == 18
    assert [r["score_details"]["neighbours"] is not None for r in heard] == [True] * 18
