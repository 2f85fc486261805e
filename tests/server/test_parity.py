"""Both parts of an answer say the same thing. Claude Code, Codex and OpenCode give a model only
`structuredContent` when there is one; Kimi Code and the OpenAI Agents SDK only the text; an
error result is read as text by all. So every fact the text shows is in `structuredContent`,
and an error's text names the argument and what it may be."""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from mcp import Client

from testing.fake_engines import FakeEngines, Fault
from testing.server_helpers import settings_for, text_of
from testing.serving import serve_app
from websearch_mcp.search.answer import PageOut, SummarizedSearchOut
from websearch_mcp.server.app import create_app
from websearch_mcp.server.rendering import page_text, papers_text, search_text

# Values are drawn from letters the rendering's own words never use, so that once the values
# are taken out of the text, whatever is left is the rendering's and shows nothing of its own.
WORD = st.text(alphabet="αβγδεζηθικλμνξπρστυφχψω", min_size=2, max_size=8)
TEXT = st.lists(WORD, min_size=1, max_size=4).map(" ".join)
URL = WORD.map(lambda word: f"https://{word}.test/{word}")
STATUS = st.sampled_from(["ok", "empty", "error", "timeout", "blocked", "rate_limited"])
PAGE_STATUS = st.sampled_from(["ok", "timeout", "refused", "blocked", "error", "unsupported"])
SCORE = st.floats(0, 10, allow_nan=False).map(lambda x: round(x, 4))
COUNT = st.integers(0, 5000)
DAY = st.dates().map(lambda day: day.isoformat())

ENGINE = st.fixed_dictionaries(
    {"name": WORD, "status": STATUS, "results": COUNT},
    optional={
        "latency_ms": st.none() | COUNT,
        "error": st.none() | TEXT,
        "attempts": st.lists(TEXT, max_size=3),
    },
)
RESULT = st.fixed_dictionaries(
    {
        "title": st.just("") | TEXT,
        "url": URL,
        "snippet": st.just("") | TEXT,
        "engines": st.lists(WORD, min_size=1, max_size=3),
        "score": SCORE,
    },
    optional={
        "published": st.none() | DAY,
        "also": st.lists(
            st.fixed_dictionaries({"url": URL}, optional={"source": TEXT, "published": DAY}),
            max_size=3,
        ),
        "passages": st.none() | st.lists(TEXT, max_size=3),
        "page_status": st.none() | PAGE_STATUS,
        "page_error": TEXT,
    },
)
SEARCH = st.fixed_dictionaries(
    {
        "query": TEXT,
        "results": st.lists(RESULT, max_size=4),
        "engines": st.lists(ENGINE, max_size=4),
        "cached": st.booleans(),
        "partial": st.booleans(),
    },
    optional={"note": st.none() | TEXT, "summary": st.none() | TEXT, "summary_error": TEXT},
)
PAPER_FACTS = st.fixed_dictionaries(
    {},
    optional={
        "authors": st.none() | st.lists(TEXT, max_size=5),
        "venue": st.none() | TEXT,
        "doi": st.none() | WORD.map(lambda word: f"10.1000/{word}"),
        "citations": st.none() | COUNT,
        "pdf_url": st.none() | URL,
        "ids": st.none() | st.fixed_dictionaries({}, optional={"arxiv": WORD}),
    },
)
PAPERS = st.tuples(
    SEARCH, st.lists(st.tuples(RESULT, PAPER_FACTS), max_size=4), st.integers(1, 50)
).map(lambda made: {**made[0], "page": made[2], "results": [{**r, **f} for r, f in made[1]]})
PAGE = st.fixed_dictionaries(
    {
        "url": URL,
        "final_url": URL,
        "content": TEXT,
        "content_type": st.just("text/html"),
        "total_chars": COUNT,
        "start": COUNT,
        "truncated": st.booleans(),
    },
    optional={
        "title": st.none() | TEXT,
        "next_start": st.none() | COUNT,
        "published": DAY,
        "capped": TEXT,
    },
)

#: The rendering's own words: labels, and what a flag or a status reads as.
SCAFFOLDING = (
    "partial: some engines did not answer",
    "(page read: nothing in it matches the query)",
    "(page not read:",
    "(no summary:",
    "No results for",
    "No papers for",
    "call again with start=",
    "call again with a higher page for more",
    "the last",
    "also reported by",
    "page",
    "to read on",
    "nothing from start=",
    "the text has",
    "published",
    "capped:",
    "characters",
    "attempts:",
    "engines:",
    "cited by",
    "et al.",
    "cached",
    "score",
    "Note:",
    "arXiv:",
    "PDF:",
    "doi:",
    " of ",
    "ms",
)
#: What may be left of a text once the facts and the labels are out: layout only.
LAYOUT = re.compile(r"[\s\[\]();:,.>#'\"-]*")
NUMBERING = re.compile(r"^\d+\. ", re.MULTILINE)


def facts(value: Any) -> Iterator[str]:
    """Every value in an answer as text (a date's year too, which a byline shows)."""
    if isinstance(value, dict):
        for item in value.values():
            yield from facts(item)
    elif isinstance(value, list):
        for item in value:
            yield from facts(item)
    elif isinstance(value, str):
        yield value
        if re.fullmatch(r"\d{4}-\d{2}-\d{2}", value):
            yield value[:4]
    elif value is not None and not isinstance(value, bool):
        yield str(value)


def left_over(text: str, answer: Mapping[str, Any]) -> str:
    """`text` without its numbering, the rendering's labels and every fact of `answer`."""
    text = NUMBERING.sub("", text)
    for label in SCAFFOLDING:
        text = text.replace(label, " ")
    for fact in sorted(set(facts(answer)), key=len, reverse=True):
        text = text.replace(fact, " ")
    return text


@settings(max_examples=150, deadline=None)
@given(SEARCH)
def test_the_text_of_a_search_shows_nothing_the_structured_answer_lacks(answer: Any) -> None:
    text = search_text(answer)
    assert LAYOUT.fullmatch(left_over(text, answer)), text
    assert ("cached" in text) == answer["cached"]
    assert ("partial:" in text) == answer["partial"]


@settings(max_examples=100, deadline=None)
@given(PAPERS)
def test_the_text_of_papers_shows_nothing_the_structured_answer_lacks(answer: Any) -> None:
    text = papers_text(answer)
    assert LAYOUT.fullmatch(left_over(text, answer)), text


@settings(max_examples=50, deadline=None)
@given(SEARCH, PAPERS)
def test_the_text_alone_names_every_report_of_a_story_and_the_page_of_papers(
    answer: Any, papers: Any
) -> None:
    # Some clients give the model the text only: where else a story was reported, and which
    # page of papers this is, are in it.
    text = search_text(answer)
    for result in answer["results"]:
        for other in result.get("also", []):
            assert other["url"] in text
    shown = papers_text(papers)
    assert (f"[page {papers['page']}" in shown) == bool(papers["results"])
    # The last page the argument takes asks for no other.
    assert ("higher page" in shown) == (bool(papers["results"]) and papers["page"] < 50)
    last: Any = {
        **papers,
        "page": 50,
        "results": [{"title": "t", "url": "u", "engines": [], "score": 1}],
    }
    assert "[page 50, the last]" in papers_text(last)


@settings(max_examples=100, deadline=None)
@given(PAGE)
def test_the_text_of_a_page_shows_nothing_the_structured_answer_lacks(page: Any) -> None:
    text = page_text(page)
    assert LAYOUT.fullmatch(left_over(text, page)), text


def test_the_last_window_of_a_page_is_not_said_to_be_empty() -> None:
    # Read on to the end: the window holds the text's last characters, and no note says that
    # nothing was found from `start` (only an empty window past the end says so).
    page: PageOut = {
        "url": "https://example.com/a",
        "final_url": "https://example.com/a",
        "content": "the last words of the page",
        "content_type": "text/html",
        "total_chars": 1026,
        "start": 1000,
        "truncated": False,
    }
    text = page_text(page)
    assert "nothing from start=" not in text
    assert text.endswith("the last words of the page"), text


def test_the_scaffolding_check_catches_a_fact_only_the_text_has() -> None:
    answer: SummarizedSearchOut = {
        "query": "αβ",
        "results": [],
        "engines": [],
        "cached": False,
        "partial": False,
    }
    assert LAYOUT.fullmatch(left_over(search_text(answer), answer))
    assert not LAYOUT.fullmatch(left_over(search_text(answer) + " took 12", answer))


@pytest.fixture
def server(fake: FakeEngines, engines_url: str) -> Iterator[str]:
    fake.faults["brave"] = Fault(status=500, body=b"upstream broke")
    with serve_app(create_app(settings_for(engines_url, brave=True))) as url:
        yield url


async def test_the_text_on_the_wire_is_the_rendering_of_the_structured_answer(server: str) -> None:
    async with Client(f"{server}/mcp", mode="legacy", cache=None) as client:
        result = await client.call_tool("web_search", {"query": "python asyncio"})
    answer = result.structured_content
    assert answer is not None and answer["results"]
    assert {e["name"]: e["status"] for e in answer["engines"]}["brave"] == "error"
    assert text_of(result) == search_text(answer)


@pytest.mark.parametrize(
    ("tool", "arguments", "named"),
    [
        ("web_search", {"time_range": "decade"}, ["time_range", "day, week, month, year"]),
        ("web_search", {"max_results": 0}, ["max_results", "from 1 to 50"]),
        ("web_search", {"read": 11}, ["read", "from 0 to 10"]),
        ("web_search", {"explain": "maybe"}, ["explain", "true or false"]),
        ("web_search", {"language": "english!"}, ["language", "en, de or zh-CN"]),
        ("web_search", {"engines": ["altavista"]}, ['engine "altavista"', "allowed: baidu, bing"]),
        ("academic_search", {"page": 51}, ["page", "from 1 to 50"]),
        ("academic_search", {"year_from": 99}, ["year_from", "from 1000 to"]),
        ("fetch_page", {"url": "https://a.test/", "max_chars": 0}, ["max_chars", "from 1 to"]),
    ],
)
async def test_an_errors_text_names_the_argument_and_what_it_may_be(
    server: str, tool: str, arguments: dict[str, Any], named: list[str]
) -> None:
    async with Client(f"{server}/mcp", mode="legacy", cache=None) as client:
        result = await client.call_tool(tool, {"query": "q", **arguments})
    assert result.is_error and result.structured_content is None
    text = text_of(result)
    assert all(part in text for part in named), text


def test_the_text_of_papers_shows_the_score_details_asked_for() -> None:
    paper = {
        "title": "Attention Is All You Need",
        "url": "https://arxiv.org/abs/1706.03762",
        "snippet": "",
        "engines": ["arxiv"],
        "score": 0.9,
        "score_details": {"rrf": 0.5, "ranks": {"arxiv": 1}},
    }
    answer: Any = {"query": "q", "results": [paper], "engines": [], "partial": False, "page": 1}
    assert '   details: {"rrf":0.5,"ranks":{"arxiv":1}}' in papers_text(answer).splitlines()
    del paper["score_details"]
    assert "details:" not in papers_text(answer)
