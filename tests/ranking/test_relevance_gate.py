"""The `irrelevant` gate end to end: fake engines on 127.0.0.1, the real server under uvicorn,
the official MCP client. Good lists that share no word with the query are kept; a list about
another topic stays out of the top results; a search whose every list is suspect still answers.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from mcp import Client

from testing.fake_engines import FakeEngines, serve_fake_engines
from testing.resilience_helpers import settings_for
from testing.server_helpers import text_of
from testing.serving import serve_app
from websearch_mcp.search.service import UNCERTAIN
from websearch_mcp.search.strategies import IRRELEVANT
from websearch_mcp.server.app import create_app

ASYNCIO = [
    {
        "title": "asyncio — Asynchronous I/O",
        "url": "https://docs.python.org/3/library/asyncio.html",
        "snippet": "asyncio is a library to write concurrent code; the event loop runs tasks.",
    },
    {
        "title": "Python asyncio event loop explained",
        "url": "https://superfastpython.com/asyncio-event-loop/",
        "snippet": "The asyncio event loop runs Python coroutines and callbacks.",
    },
    {
        "title": "Async IO in Python: a walkthrough",
        "url": "https://realpython.com/async-io-python/",
        "snippet": "Coroutines, the event loop and tasks in Python.",
    },
]
FLIGHTS = [
    {
        "title": f"Cheap flights to {city}",
        "url": f"https://flights.example/{city.lower()}",
        "snippet": f"Compare airfares and book cheap flights to {city} today.",
    }
    for city in ("Paris", "Rome", "Lisbon", "Oslo")
]
LAPTOP_EXA = [
    {
        "title": "Speed up Windows 11: 12 tips for better PC performance",
        "url": "https://support.example.com/windows-performance",
        "snippet": "Disable startup programs, free disk space and update drivers.",
    },
    {
        "title": "Why is my computer slow? Fixes that work",
        "url": "https://pcguide.example/slow-computer",
        "snippet": "Common reasons a PC slows down and what to do about each.",
    },
]
LAPTOP_TAVILY = [
    {
        "title": "How to make your laptop faster",
        "url": "https://howto.example/laptop-faster",
        "snippet": "Ten ways to make a laptop faster.",
        "score": 0.9,
    }
]
ML_ENGLISH = [
    {
        "title": "Machine learning for beginners",
        "url": "https://ml.example/beginners",
        "snippet": "An introduction to machine learning: models, data and training.",
    },
    {
        "title": "A gentle introduction to machine learning",
        "url": "https://course.example/intro-ml",
        "snippet": "Start here: supervised and unsupervised learning explained.",
    },
]
KEYS = {"tavily": ["tvly-k1"], "brave": ["brave-k1"], "exa": ["exa-k1"]}


def lists(answers: dict[str, list[dict[str, Any]]]) -> FakeEngines:
    return FakeEngines(lambda engine, query: answers.get(engine, []))


@pytest.fixture
def serve() -> Iterator[Any]:
    """Serve fake engines with the given lists, and the real app asking exactly those engines."""
    stack: list[Any] = []

    def start(answers: dict[str, list[dict[str, Any]]]) -> str:
        engines = serve_fake_engines(lists(answers))
        base = engines.__enter__()
        stack.append(engines)
        conf = {name: {"api_keys": KEYS[name]} if name in KEYS else {} for name in answers}
        app = serve_app(create_app(settings_for(base, conf)))
        url = app.__enter__()
        stack.append(app)
        return url

    yield start
    for context in reversed(stack):
        context.__exit__(None, None, None)


async def search(url: str, query: str) -> tuple[dict[str, Any], str, bool]:
    async with Client(f"{url}/mcp", mode="legacy", cache=None) as client:
        result = await client.call_tool("web_search", {"query": query, "max_results": 10})
    return result.structured_content, text_of(result), result.is_error


def status_of(answer: dict[str, Any]) -> dict[str, str]:
    return {e["name"]: e["status"] for e in answer["engines"]}


async def test_a_list_about_another_topic_stays_out_of_the_top(serve) -> None:
    url = serve({"tavily": ASYNCIO, "brave": ASYNCIO[::-1], "bing": FLIGHTS})
    answer, text, is_error = await search(url, "python asyncio event loop")
    assert not is_error
    assert status_of(answer) == {"tavily": "ok", "brave": "ok", "bing": "irrelevant"}
    urls = [r["url"] for r in answer["results"]]
    on_topic = [i for i, u in enumerate(urls) if "flights" not in u]
    off_topic = [i for i, u in enumerate(urls) if "flights" in u]
    assert len(on_topic) == 3 and max(on_topic) < min(off_topic, default=99)
    assert "note" not in answer
    assert "bing irrelevant 4" in text


async def test_a_semantic_engine_sharing_no_word_is_kept(serve) -> None:
    url = serve({"exa": LAPTOP_EXA, "tavily": LAPTOP_TAVILY})
    answer, _, is_error = await search(url, "how to make my laptop faster")
    assert not is_error
    assert status_of(answer) == {"exa": "ok", "tavily": "ok"}
    urls = [r["url"] for r in answer["results"]]
    # Exa's top result sits next to Tavily's literal match, not at the bottom.
    assert set(urls[:2]) == {LAPTOP_EXA[0]["url"], LAPTOP_TAVILY[0]["url"]}
    assert LAPTOP_EXA[1]["url"] in urls


async def test_a_query_in_one_script_answered_in_another_is_kept(serve) -> None:
    url = serve({"tavily": ML_ENGLISH, "brave": ML_ENGLISH[::-1]})
    answer, _, is_error = await search(url, "機器學習入門")
    assert not is_error
    assert status_of(answer) == {"tavily": "ok", "brave": "ok"}
    assert {r["url"] for r in answer["results"]} == {h["url"] for h in ML_ENGLISH}
    assert "note" not in answer


async def test_every_list_suspect_still_answers_with_a_note(serve) -> None:
    url = serve({"bing": FLIGHTS, "duckduckgo": FLIGHTS[:2]})
    answer, text, is_error = await search(url, "python asyncio event loop")
    assert not is_error
    assert status_of(answer) == {"bing": "irrelevant", "duckduckgo": "irrelevant"}
    assert {r["url"] for r in answer["results"]} == {h["url"] for h in FLIGHTS}
    assert answer["note"] == UNCERTAIN
    assert f"Note: {UNCERTAIN}." in text
    # Nothing was moved down: no list answered the query better.
    assert {r["error"] for r in answer["engines"]} == {IRRELEVANT}
    assert not any("moved down" in r["error"] for r in answer["engines"])


async def test_an_empty_list_next_to_suspect_ones_still_gets_the_note(serve) -> None:
    """An engine answering no results vouches for nothing: when every list with results is
    suspect, the answer still carries the note that relevance is uncertain."""
    url = serve({"bing": FLIGHTS, "searxng": []})
    answer, _, is_error = await search(url, "python asyncio event loop")
    assert not is_error
    assert status_of(answer) == {"searxng": "empty", "bing": "irrelevant"}
    assert {r["url"] for r in answer["results"]} == {h["url"] for h in FLIGHTS}
    assert answer["note"] == UNCERTAIN
