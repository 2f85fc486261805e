"""Properties of the ranking that must hold for any input."""

from __future__ import annotations

import random

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from websearch_mcp.config import SearchSettings
from websearch_mcp.models import Hit, Query
from websearch_mcp.ranking.pipeline import rank
from websearch_mcp.ranking.prepared import Preparation
from websearch_mcp.ranking.urls import canonical_key

ENGINES = ["bing", "brave", "duckduckgo", "mojeek", "tavily"]
HOSTS = ["docs.python.org", "example.com", "amazon.com", "blog.xyz", "github.com", "wiki.org"]
WORDS = ["python", "asyncio", "tutorial", "event", "loop", "pgvector", "index", "fast", "guide"]
QUERIES = ["python asyncio tutorial", "pgvector index", "latest python guide", "event loop"]

texts = st.lists(st.sampled_from(WORDS), max_size=8).map(" ".join)
paths = st.sampled_from(["", "/a", "/b", "/docs/x", "/c/d"])
hits_data = st.tuples(st.sampled_from(HOSTS), paths, texts, texts)
lists_strategy = st.dictionaries(
    st.sampled_from(ENGINES), st.lists(hits_data, max_size=8), min_size=1, max_size=5
)
search_strategy = st.builds(
    lambda threshold, mmr_on, lam: SearchSettings.model_validate(
        {"relevance_threshold": threshold, "mmr": {"enabled": mmr_on, "lambda": lam}}
    ),
    st.sampled_from([0.0, 0.05, 0.3]),
    st.booleans(),
    st.sampled_from([0.0, 0.5, 0.85, 1.0]),
)
PROPS = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def build(data: dict[str, list[tuple[str, str, str, str]]]) -> dict[str, list[Hit]]:
    return {
        engine: [
            Hit(title=t, url=f"https://{host}{path}", snippet=s, rank=i, engine=engine)
            for i, (host, path, t, s) in enumerate(items, start=1)
        ]
        for engine, items in data.items()
    }


def dump(results: list) -> list[dict]:
    return [r.to_dict(explain=True) | {"key": r.key} for r in results]


@PROPS
@given(lists_strategy, st.sampled_from(QUERIES), search_strategy, st.randoms())
def test_engine_order_never_changes_the_output(data, text, search, rnd: random.Random) -> None:
    lists = build(data)
    shuffled_names = list(lists)
    rnd.shuffle(shuffled_names)
    shuffled = {name: lists[name] for name in shuffled_names}
    query = Query(text, max_results=10)
    assert dump(rank(lists, query, search, weights={})) == dump(
        rank(shuffled, query, search, weights={})
    )


@PROPS
@given(lists_strategy, st.sampled_from(QUERIES), search_strategy, st.integers(1, 50))
def test_output_invariants(data, text, search, max_results: int) -> None:
    results = rank(build(data), Query(text, max_results=max_results), search, weights={})
    assert len(results) <= max_results
    keys = [r.key for r in results]
    assert len(keys) == len(set(keys))
    assert all(0.0 <= r.score <= 1.0 for r in results)
    assert all(0.0 <= r.details["rrf"] <= 1.0 for r in results)
    assert all(r.engines == sorted(r.ranks, key=lambda e: (r.ranks[e], e)) for r in results)
    if results:  # the best-scoring result comes first, whatever MMR does after it
        assert results[0].score == max(r.score for r in results)


@PROPS
@given(lists_strategy, st.sampled_from(QUERIES), st.integers(1, 12), st.sampled_from([0.0, 0.5]))
def test_without_mmr_the_best_scores_come_first_in_order(
    data, text, max_results: int, neighbours: float
) -> None:
    """After the neighbours' smoothing re-orders the head, a shorter list is the longer one's
    start, and every list is in score order (ties by canonical URL)."""
    search = SearchSettings.model_validate(
        {"relevance_threshold": 0.0, "mmr": {"enabled": False},
         "ranking": {"neighbour_weight": neighbours}}
    )  # fmt: skip
    lists = build(data)
    every = rank(lists, Query(text, max_results=200), search, weights={})
    assert [(-r.score, r.key) for r in every] == sorted((-r.score, r.key) for r in every)
    first = rank(lists, Query(text, max_results=max_results), search, weights={})
    assert [r.key for r in first] == [r.key for r in every[:max_results]]


@pytest.mark.parametrize("neighbours", [0.3, 0.6, 0.9])
def test_a_head_result_smoothed_below_an_equal_one_behind_it_moves_back(neighbours) -> None:
    """Equal results beyond the head: the smoothing's rounding can put the head's results a hair
    below them (it does at 0.6 and 0.9), and the order is then the full one."""
    lists = {
        f"engine{i:02}": [Hit("alpha beta gamma", f"https://h{i:02}.example/", "delta", 1, "x")]
        for i in range(30)
    }
    search = SearchSettings.model_validate(
        {"relevance_threshold": 0.0, "mmr": {"enabled": False},
         "ranking": {"neighbour_weight": neighbours, "coverage_weight": 0}}
    )  # fmt: skip
    every = rank(lists, Query("alpha", max_results=30), search, weights={})
    assert len(every) == 30
    assert [(-r.score, r.key) for r in every] == sorted((-r.score, r.key) for r in every)
    first = rank(lists, Query("alpha", max_results=5), search, weights={})
    assert [r.key for r in first] == [r.key for r in every[:5]]


@PROPS
@given(
    lists_strategy,
    st.sampled_from(QUERIES),
    st.sampled_from(ENGINES),
    st.integers(1, 10),
    texts,
    texts,
)
def test_more_engines_never_score_lower(data, text, extra_engine, position, title, snippet):
    """All else equal, a URL that one more engine returns scores at least as high, without the
    coverage credit (with it, a low vote from an engine that holds the result is evidence
    against it, tests/ranking/test_coverage.py) and without the engine agreement (one more list
    holding the result can raise that list's agreement above the request's highest, and each
    engine's weight is relative to that: the result's own engines may then count less)."""
    target = "https://target.org/page"
    base = build(data)
    target_hit = Hit(title=title, url=target, snippet=snippet, rank=1, engine="x")
    base["searxng"] = [target_hit]  # an engine that always returns it
    with_it = {e: list(hs) for e, hs in base.items()}
    without = {e: list(hs) for e, hs in base.items()}
    other = base.get(extra_engine, [])
    slot = min(position, len(other) + 1) - 1
    filler = Hit(title="filler", url="https://filler.net/x", snippet="", rank=0, engine="x")
    with_it[extra_engine] = [*other[:slot], target_hit, *other[slot:]]
    without[extra_engine] = [*other[:slot], filler, *other[slot:]]
    for lists in (with_it, without):
        for engine, hits in lists.items():
            lists[engine] = [
                Hit(title=h.title, url=h.url, snippet=h.snippet, rank=i, engine=engine)
                for i, h in enumerate(hits, start=1)
            ]
    search = SearchSettings.model_validate(
        {"relevance_threshold": 0.0, "mmr": {"enabled": False},
         "ranking": {"coverage_weight": 0, "agreement_weight": 0}}
    )  # fmt: skip
    query = Query(text, max_results=50)

    def score(lists: dict[str, list[Hit]]) -> float:
        return next(r.score for r in rank(lists, query, search, weights={}) if r.url == target)

    assert score(with_it) >= score(without) - 1e-12


variant = st.sampled_from(
    [
        "https://example.com/guide",
        "http://example.com/guide",
        "https://www.example.com/guide",
        "https://example.com/guide/",
        "http://www.example.com/guide/?utm_source=news&utm_medium=x",
        "https://example.com/guide?utm_campaign=y#top",
    ]
)


@PROPS
@given(st.lists(variant, min_size=2, max_size=len(ENGINES)))
def test_url_variants_merge_into_one_result(variants: list[str]) -> None:
    lists = {
        engine: [Hit(title="Guide", url=url, snippet="a guide", rank=1, engine=engine)]
        for engine, url in zip(ENGINES, variants, strict=False)
    }
    results = rank(lists, Query("guide"), SearchSettings(), weights={})
    assert len(results) == 1
    assert results[0].key == canonical_key("https://example.com/guide")
    assert sorted(results[0].engines) == sorted(lists)
    assert results[0].url in variants


_PAGES = [
    "https://www.example.com/guide",
    "http://example.com/guide/",
    "https://example.com/guide?utm_source=news",
]
_COPIES = [
    "https://m.example.com/guide",
    "https://example-com.cdn.ampproject.org/c/s/example.com/guide",
    "https://example.com/guide?amp=1",
]


@PROPS
@given(
    st.lists(st.sampled_from(_PAGES), min_size=1, max_size=2),
    st.lists(st.sampled_from(_COPIES), min_size=1, max_size=3),
    st.randoms(),
)
def test_mobile_and_amp_copies_merge_and_the_page_is_shown(
    pages: list[str], copies: list[str], rnd: random.Random
) -> None:
    """A page and its mobile and AMP copies are one result, whichever engine ranks which, and
    the link shown is one of the page's own, which an agent can read and cite."""
    urls = [*pages, *copies]
    rnd.shuffle(urls)
    lists = {
        engine: [Hit(title="Guide", url=url, snippet="a guide", rank=1, engine=engine)]
        for engine, url in zip(ENGINES, urls, strict=False)
    }
    results = rank(lists, Query("guide"), SearchSettings(), weights={})
    assert len(results) == 1
    assert sorted(results[0].engines) == sorted(lists)
    assert results[0].url in pages


#: Titles and snippets beyond the word list: non-ASCII, a final sigma, a combining mark first,
#: hyphenated and joined words, CJK.
odd_texts = st.lists(
    st.sampled_from(
        [
            *WORDS,
            "ΟΔΟΣ",
            "\u0301né",
            "pg-vector",
            "fts5_virtual",
            "Node.js",
            "向量数据库",
            "x-",
            "k-means",
        ]
    ),
    max_size=6,
).map(" ".join)
odd_hits = st.tuples(st.sampled_from(HOSTS), paths, odd_texts, odd_texts)
odd_lists = st.dictionaries(
    st.sampled_from(ENGINES), st.lists(odd_hits, max_size=8), min_size=1, max_size=5
)


@PROPS
@given(odd_lists, st.sampled_from(QUERIES), search_strategy, st.randoms())
def test_lists_read_ahead_change_nothing(data, text, search, rnd: random.Random) -> None:
    """Any of the lists read as they arrived (the others left to the fusion): the same output."""
    lists = build(data)
    prepared = Preparation()
    for name in lists:
        if rnd.random() < 0.7:
            prepared.add(lists[name])
    query = Query(text, max_results=10)
    assert dump(rank(lists, query, search, weights={}, prepared=prepared)) == dump(
        rank(lists, query, search, weights={})
    )
