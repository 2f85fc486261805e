"""Recorded engine answers damaged as networks, proxies and changing APIs damage them, and the
contract every parser keeps on them: well-formed hits or an `EngineError`, in bounded time.

`damaged(body)` draws one damage of a recorded body: cut at any byte, bits flipped, invalid
UTF-8 put in, a JSON value replaced by one of another type (null, a number, a list, an object, a
huge one), a key or an item dropped or doubled, HTML or XML elements dropped or doubled, an XML
declaration naming an encoding Python cannot read, a wrong charset, an empty body or another
engine's recorded body.
"""

from __future__ import annotations

import copy
import functools
import json
import re
import time
from collections.abc import Sequence
from datetime import date
from typing import Any

from hypothesis import strategies as st

from testing.engine_answers import resp
from testing.shared import FIXTURES
from websearch_mcp.engines.base import Engine
from websearch_mcp.errors import EngineError
from websearch_mcp.models import Hit, Query

#: Every recorded answer of a result list, by engine, with the category it answers.
RECORDED: dict[str, tuple[tuple[str, str], ...]] = {
    "tavily": (("tavily/test_basic_search.json", "general"),),
    "brave": (
        ("brave_api/web_search_hello_world.json", "general"),
        ("brave_api/news_search.json", "news"),
        ("news/brave/brave-search-python-client_news_hello-world.json", "news"),
    ),
    "exa": (
        ("exa/docs_search_highlights_example.json", "general"),
        ("exa/pasted_keyword_search_with_text.json", "general"),
    ),
    "searxng": (("news/searxng/browse-API_searxng_news_artificial-intelligence.json", "news"),),
    "duckduckgo": (("duckduckgo_html/html_fake_cache_bypass_2020.html", "general"),),
    "bing": (("bing_html/search_fake_cache_bypass_2020.html", "general"),),
    "wikipedia": (
        ("wikipedia/search_srlimit3.json", "general"),
        ("wikipedia/search_srinfo_suggestion.json", "general"),
    ),
    "baidu": (("baidu_html/captcha_wappass_security_verification_2020.html", "general"),),
    "serper": (
        ("serper/search_olivia_wilde.json", "general"),
        ("news/serper/langchain-docs_serper_news_tesla-inc.json", "news"),
    ),
    "serpapi": (
        ("serpapi/google_capital_of_france_2025.json", "general"),
        ("serpapi/google_coffee_2018_legacy.json", "general"),
        ("news/serpapi/serpapi-tutorials_google_news_topic_technology_2025-10-07.json", "news"),
    ),
    "google_cse": (("google_cse/web_search_youtube.json", "general"),),
    "jina": (("jina/docs_search_example_abridged.json", "general"),),
    "google": (
        ("news/blocked/unlim-proxy-engine_google_sorry_captcha_2026-07-25.html", "general"),
    ),
    "google_news": (
        ("news/google_news/monument-watch_bears-ears_2026-07-14.xml", "news"),
        ("news/google_news/jkl_legacy-NFE1_topic-vladimir-putin_2012.xml", "news"),
        ("news/google_news/RSS-Parser_topstories_fr-BE_2020-03-08_trimmed.xml", "news"),
    ),
    "arxiv": (("arxiv/search_testing_m10.xml", "general"),),
    "crossref": (("crossref/works_query_ecology_rows2.json", "general"),),
    "openalex": (
        ("openalex/docs_works_list_envelope_abridged.json", "general"),
        ("openalex/work_single_W2741809807.json", "general"),
    ),
    "semantic_scholar": (("semanticscholar/paper_search_turing_title.json", "general"),),
    "pubmed": (
        ("pubmed/esearch_mdat_range_usehistory.json", "general"),
        ("pubmed/esummary_pubmed_14760269.json", "general"),
    ),
    "europepmc": (("europepmc/search_cancer_lite.json", "general"),),
    "dblp": (
        ("dblp/publ_search_test_star_h1.json", "general"),
        ("dblp/publ_search_single_author_object_EDITED.json", "general"),
    ),
    "core": (("core/search_works_flutter_limit5.json", "general"),),
}

#: The longest a parser may take on one damaged recorded answer (they take milliseconds).
PARSE_SECONDS = 2.0

_HUGE = 2**70  # past 64 bits: what orjson refuses and the json module reads
# Values of every JSON type where an API documents one: strings, numbers, lists, objects.
_ODD_VALUES = st.sampled_from(
    [
        *(None, "", 0, -1, 1.5, True, "text", [], {}, [None], ["a", "b"], {"value": "x"}),
        *({"name": ["x"]}, _HUGE, -_HUGE, 1e308, "x" * 100_000, "javascript:alert(1)"),
        *("0000-00-00", "99999-99-99", "<b>x</b>", "1e400"),
    ]
)
_INVALID_UTF8 = st.sampled_from([b"\xff", b"\xc3", b"\xed\xa0\x80", b"\x00", b"\xfe\xff"])
_CONTENT_TYPES = st.sampled_from(
    [
        "application/json",
        "text/html; charset=utf-8",
        "text/html; charset=utf-16",
        "application/json; charset=latin-1",
        "text/xml; charset=bogus",
        "text/html; charset=shift_jis",
        "text/html; charset=undefined",
        "text/html; charset=idna",
    ]
)
# Encodings an XML declaration may name that Python has no text codec for, or none for XML.
_XML_ENCODINGS = st.sampled_from(["WTF-8", "rot13", "hex", "utf-7", "UTF-16", "idna", "latin-1"])
_XML_DECLARATION = re.compile(rb"""encoding=["'][^"']*["']""")
_TAG_START = re.compile(rb"<[A-Za-z]")
_ISO_STAMP = re.compile(r"\d{4}(-\d{2}(-\d{2}(T\d{2}:\d{2}:\d{2}Z)?)?)?")
# A tag as HTML reads one: what a plain title or snippet never holds.
_TAG = re.compile(r"</?[A-Za-z][A-Za-z0-9]*(\s[^<>]*)?>")
# A list's or an object's Python text (`['a', 'b']`, `{'value': 'x'}`, `[None]`): what a value
# of another type than the API documents becomes when it is taken for text. In full, so that a
# flipped bit in real text ("users'" read as "user{'") is not taken for one.
_PYTHON_TEXT = re.compile(r"\{'[^']*': |\['[^']*'(?:, |\])|\[None\]")


def _paths(value: Any, path: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    """The path of every value in a JSON document, the document's own (`()`) first."""
    found = [path]
    if isinstance(value, dict):
        for key, item in value.items():
            found += _paths(item, (*path, key))
    elif isinstance(value, list):
        for index, item in enumerate(value):
            found += _paths(item, (*path, index))
    return found


@st.composite
def _json_damage(draw: st.DrawFn, data: Any) -> bytes:
    """`data` with one value replaced, dropped, doubled or wrapped, serialised again."""
    data = copy.deepcopy(data)
    path = draw(st.sampled_from(_paths(data)))
    operation = draw(st.sampled_from(["replace", "drop", "double", "wrap"]))
    if not path:
        return json.dumps(draw(_ODD_VALUES)).encode()
    parent = data
    for step in path[:-1]:
        parent = parent[step]
    last = path[-1]
    if operation == "replace":
        parent[last] = draw(_ODD_VALUES)
    elif operation == "drop":
        del parent[last]
    elif operation == "double" and isinstance(parent, list):
        parent.insert(last, copy.deepcopy(parent[last]))
    else:
        parent[last] = [parent[last]] if draw(st.booleans()) else {"value": parent[last]}
    # `1e400` is written as a number (Python's json reads it as infinity), not as a string.
    return json.dumps(data).replace('"1e400"', "1e400").encode()


@st.composite
def _markup_damage(draw: st.DrawFn, body: bytes) -> bytes:
    """`body` with a run of HTML or XML elements (from one tag's start to another's) dropped or
    doubled, or, for an XML document, its declared encoding changed."""
    if body.startswith(b"<?xml") and draw(st.booleans()):
        encoding = draw(_XML_ENCODINGS).encode()
        return _XML_DECLARATION.sub(b'encoding="' + encoding + b'"', body, count=1)
    starts = [match.start() for match in _TAG_START.finditer(body)]
    if len(starts) < 2:
        return body[: len(body) // 2]
    first = draw(st.integers(0, len(starts) - 2))
    last = draw(st.integers(first + 1, min(len(starts) - 1, first + 20)))
    run = body[starts[first] : starts[last]]
    kept = run * 2 if draw(st.booleans()) else b""
    return body[: starts[first]] + kept + body[starts[last] :]


@st.composite
def damaged(draw: st.DrawFn, body: bytes, others: Sequence[bytes] = ()) -> tuple[bytes, str]:
    """One damage of a recorded `body`, and the content type it comes with."""
    content_type = draw(_CONTENT_TYPES)
    kinds = ["cut", "flip", "invalid utf-8", "charset", "empty", "structure"]
    kind = draw(st.sampled_from([*kinds, "other"] if others else kinds))
    if kind == "cut":
        return body[: draw(st.integers(0, len(body)))], content_type
    if kind == "flip":
        flipped = bytearray(body)
        for _ in range(draw(st.integers(1, 4))):
            flipped[draw(st.integers(0, len(body) - 1))] ^= 1 << draw(st.integers(0, 7))
        return bytes(flipped), content_type
    if kind == "invalid utf-8":
        at = draw(st.integers(0, len(body)))
        return body[:at] + draw(_INVALID_UTF8) + body[at:], content_type
    if kind == "charset":
        return body, content_type
    if kind == "empty":
        return b"", content_type
    if kind == "other":
        return draw(st.sampled_from(list(others))), content_type
    try:
        data = json.loads(body)
    except ValueError:
        return draw(_markup_damage(body)), content_type
    return draw(_json_damage(data)), content_type


@functools.cache
def recorded_bodies() -> tuple[bytes, ...]:
    """Every recorded answer in `RECORDED` that is present: other engines' bodies."""
    paths = (FIXTURES / path for answers in RECORDED.values() for path, _ in answers)
    return tuple(path.read_bytes() for path in paths if path.is_file())


def assert_keeps_contract(engine: Engine, body: bytes, query: Query, content_type: str) -> None:
    """`engine.follow_up` and `engine.hits` on the answer, as the service calls them: a next
    request or None, then well-formed hits, or an `EngineError` (never another exception),
    within `PARSE_SECONDS`."""
    response = resp(body, content_type=content_type)
    started = time.perf_counter()
    try:
        engine.follow_up(response, query, None)
        hits = engine.hits(response, query)
    except EngineError:
        hits = []
    assert time.perf_counter() - started < PARSE_SECONDS
    assert [hit.rank for hit in hits] == list(range(1, len(hits) + 1))
    for hit in hits:
        _assert_well_formed(hit, engine)


def _assert_well_formed(hit: Hit, engine: Engine) -> None:
    assert hit.engine == engine.name
    for url in (hit.url, hit.pdf_url or "https://"):
        assert url.startswith(("http://", "https://")), url
    assert isinstance(hit.title, str) and hit.title and hit.title == hit.title.strip()
    assert isinstance(hit.snippet, str) and "\n" not in hit.title + hit.snippet
    # An API's markup is made plain. A plain-text engine's "<b>" is text, and so is what a
    # damaged page's own text holds; a title left empty is the URL, as the engine sent it.
    if engine.markup and not engine.scraped:
        assert not _TAG.search(hit.snippet), hit.snippet
        assert hit.title == hit.url or not _TAG.search(hit.title), hit.title
    if hit.published is not None:
        assert _ISO_STAMP.fullmatch(hit.published), hit.published
        year, month, day = [*hit.published[:10].split("-"), "01", "01"][:3]
        date(int(year), int(month), int(day))
    assert all(isinstance(name, str) and name for name in hit.authors), hit.authors
    texts = (hit.title, hit.snippet, hit.url, hit.venue, hit.source, hit.pdf_url, *hit.authors)
    for text in (*texts, *hit.ids.values()):
        assert not _PYTHON_TEXT.search(text or ""), text
    assert hit.citations is None or isinstance(hit.citations, int)
    assert hit.score is None or isinstance(hit.score, float)
