"""Score regularisation: the head of the fused list shares its scores by similar words."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from websearch_mcp.config import SearchSettings
from websearch_mcp.models import Hit, Query
from websearch_mcp.ranking.neighbours import POOL, overlap, regularised
from websearch_mcp.ranking.pipeline import rank


def search(weight: float) -> SearchSettings:
    return SearchSettings.model_validate(
        {
            "relevance_threshold": 0.0,
            "mmr": {"enabled": False},
            "ranking": {"neighbour_weight": weight, "agreement_weight": 0},
        }
    )


def hit(engine: str, rank_: int, slug: str, snippet: str) -> Hit:
    return Hit(slug, f"https://{slug}.org/", snippet, rank_, engine)


def nearest(texts, count):
    return overlap(texts, count)[0]


def smoothed_by(scores, texts, weight):
    return regularised(scores, nearest(texts, 5), weight)


def test_nearest_ranks_by_jaccard_and_leaves_out_strangers() -> None:
    texts = [{"a", "b", "c"}, {"a", "b"}, {"a", "x", "y", "z"}, {"q"}]
    near = nearest(texts, 2)
    assert near[0] == [(-2 / 3, 1), (-1 / 6, 2)]
    assert near[1] == [(-2 / 3, 0), (-1 / 5, 2)]
    assert near[3] == []  # shares nothing: no neighbours at all
    assert [j for _, j in nearest(texts, 1)[2]] == [1]  # ties on similarity: the nearer place


@settings(max_examples=200, deadline=None)
@given(st.lists(st.sets(st.sampled_from("abcdefgh"), max_size=6), max_size=12), st.integers(0, 6))
def test_nearest_is_the_sorted_head_of_every_similarity(texts, count) -> None:
    """Per text: every other text sharing a term, as (-Jaccard, index), sorted, first `count`."""
    expected = [
        sorted(
            (-len(mine & other) / len(mine | other), j)
            for j, other in enumerate(texts)
            if j != i and mine & other
        )[:count]
        for i, mine in enumerate(texts)
    ]
    assert nearest(texts, count) == expected
    shared = overlap(texts, count)[1]
    assert shared == [
        [len(a & b) if i != j else 0 for j, b in enumerate(texts)] for i, a in enumerate(texts)
    ]


def test_weight_zero_and_strangers_keep_their_scores() -> None:
    scores = [0.9, 0.5, 0.2]
    texts = [{"a", "b"}, {"a", "c"}, {"z"}]
    assert [s for s, _ in smoothed_by(scores, texts, 0.0)] == scores
    smoothed = smoothed_by(scores, texts, 0.4)
    assert smoothed[2] == (0.2, None)
    assert smoothed[1] == (pytest.approx(0.6 * 0.5 + 0.4 * 0.9), 0.9)  # one neighbour: its score
    assert smoothed[0][0] == pytest.approx(0.6 * 0.9 + 0.4 * 0.5)


@settings(max_examples=200, deadline=None)
@given(
    st.lists(
        st.tuples(st.floats(0.0, 1.0), st.frozensets(st.sampled_from("abcdefgh"), max_size=5)),
        min_size=1,
        max_size=12,
    ),
    st.floats(0.0, 1.0),
)
def test_scores_stay_within_the_old_ones(results, weight) -> None:
    scores = sorted((s for s, _ in results), reverse=True)
    texts = [t for _, t in results]
    for old, (new, mean) in zip(scores, smoothed_by(scores, texts, weight), strict=True):
        assert min(scores) - 1e-12 <= new <= max(scores) + 1e-12
        if mean is None:
            assert new == old
        else:  # between its own score and its neighbours' mean
            assert min(old, mean) - 1e-12 <= new <= max(old, mean) + 1e-12


@settings(max_examples=200, deadline=None)
@given(st.floats(0.0, 1.0), st.floats(0.0, 1.0), st.floats(0.0, 0.49))
def test_two_mirrors_keep_their_order_below_half_weight(first, second, weight) -> None:
    high, low = max(first, second), min(first, second)
    same = {"hnsw", "build", "guide"}
    (a, _), (b, _) = smoothed_by([high, low], [same, set(same)], weight)
    assert a >= b


def test_a_page_one_index_holds_rises_when_it_reads_like_the_top_results() -> None:
    topic = "boundary layer transition supersonic flow heat transfer"
    lists = {
        "brave": [hit("brave", 1, "agreed", topic), hit("brave", 2, "filler-b", "cooking pasta")],
        "tavily": [hit("tavily", 1, "agreed", topic), hit("tavily", 2, "filler-t", "gardening")],
        "mojeek": [
            hit("mojeek", 1, "off-topic", "stock market news today"),
            hit("mojeek", 2, "alike", "heat transfer in a supersonic boundary layer flow"),
        ],
    }
    query = Query("supersonic", max_results=10)

    def order(weight: float) -> list[str]:
        # A gentler position scale than the default's: there one engine's rank 2 stays below
        # its rank 1 whatever the neighbours say, in a pool this small.
        settings = search(weight).model_copy(deep=True)
        settings.ranking.position_k, settings.ranking.position_weight = 5.0, 20.0
        return [r.title for r in rank(lists, query, settings, weights={})]

    plain = order(0.0)
    assert plain.index("off-topic") < plain.index("alike")  # one engine's order
    smoothed = order(0.4)
    assert smoothed.index("alike") < smoothed.index("off-topic")
    assert smoothed[0] == "agreed"


def test_only_the_head_takes_part_and_details_show_the_neighbours() -> None:
    lists = {"brave": [hit("brave", i, f"p{i}", "common words here") for i in range(1, 31)]}
    results = rank(lists, Query("words", max_results=30), search(0.4), weights={})
    assert len(results) == 30
    means = [r.details["neighbours"] for r in results]
    assert all(m is not None for m in means[:POOL])
    assert means[POOL:] == [None] * (30 - POOL)
    off = rank(lists, Query("words", max_results=30), search(0.0), weights={})
    assert all(r.details["neighbours"] is None for r in off)


def test_the_neighbours_mean_is_weighted_by_similarity() -> None:
    """Two neighbours of very different likeness: the nearer one's score counts for more
    (docs/ranking.md: "the mean score of its five most similar results there ... weighted
    by similarity")."""
    texts = [{"a", "b", "c", "d"}, {"a", "b", "c", "d", "e"}, {"a", "x", "y", "z", "w"}]
    scores = [0.2, 1.0, 0.0]
    near = nearest(texts, 5)
    (score, mean) = regularised(scores, near, 0.4)[0]
    close, far = 4 / 5, 1 / 8
    expected = (close * 1.0 + far * 0.0) / (close + far)
    assert mean == pytest.approx(expected)  # an unweighted mean would be 0.5
    assert score == pytest.approx(0.6 * 0.2 + 0.4 * expected)


def test_a_result_shares_the_scores_of_its_five_most_similar_results_only() -> None:
    """`overlap` keeps each result's five nearest (the docs' "five most similar results")."""
    texts = [{"a", "b", str(i)} for i in range(9)]
    near = overlap(texts)[0]
    assert [len(row) for row in near] == [5] * 9


def test_only_the_first_twenty_results_take_part() -> None:
    """docs/ranking.md: "each of the fused list's first 20 results" is regularised; further
    down a result keeps its score and shows no neighbours."""
    lists = {
        "e": [
            hit("e", i, f"site{i:02d}", "shared words about the same topic") for i in range(1, 26)
        ]
    }
    results = rank(lists, Query("query", max_results=30), search(0.4), weights={})
    assert len(results) == 25
    shown = [r.details["neighbours"] for r in results]
    assert all(value is not None for value in shown[:20])
    assert shown[20:] == [None] * 5


def test_only_exact_copies_surely_keep_the_engines_order_below_half_weight() -> None:
    """docs/ranking.md: below 0.5 two exact copies keep the engines' order; near-copies need
    not, when the one ranked higher also reads like results further down. At the defaults
    (neighbour_weight 0.4) the near-copy an engine ranked second moves ahead of its first."""
    first = "tokio runtime scheduler internals workers threads"
    second = "tokio runtime scheduler internals workers"
    lower = [hit("e", 3 + i, f"lower{i}", "threads") for i in range(4)]
    lists = {"e": [hit("e", 1, "first", first), hit("e", 2, "second", second), *lower]}
    plain = rank(lists, Query("rust async"), search(0.0), weights={})
    assert [r.title for r in plain[:2]] == ["first", "second"]
    near = rank(lists, Query("rust async"), SearchSettings(), weights={})
    assert [r.title for r in near[:2]] == ["second", "first"]
    copy = {"e": [hit("e", 1, "first", first), hit("e", 2, "second", first), *lower]}
    exact = rank(copy, Query("rust async"), SearchSettings(), weights={})
    assert [r.title for r in exact[:2]] == ["first", "second"]
