"""The rank position and engine score signals, alone and in the pipeline."""

from __future__ import annotations

import math

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from websearch_mcp.config import SearchSettings
from websearch_mcp.models import Hit, Query
from websearch_mcp.ranking.fusion import rrf
from websearch_mcp.ranking.pipeline import rank
from websearch_mcp.ranking.positions import EngineEvidence, place


def hits(engine: str, count: int, scores: list[float | None] | None = None) -> list[Hit]:
    scores = scores or [None] * count
    return [
        Hit(title=f"{engine} {i}", url=f"https://{engine}.com/{i}", snippet="", rank=i,
            engine=engine, score=scores[i - 1])
        for i in range(1, count + 1)
    ]  # fmt: skip


def search(**ranking: float) -> SearchSettings:
    """Only the named signals on (threshold and MMR off), so a test sees them alone."""
    off = dict.fromkeys(
        ("alignment_weight", "rare_term_weight", "phrase_weight", "domain_penalty",
         "consensus_weight", "position_weight", "coverage_weight", "engine_score_weight",
         "authority_weight",
         "freshness_weight", "neighbour_weight", "agreement_weight"),
        0.0,
    )  # fmt: skip
    return SearchSettings.model_validate(
        {"relevance_threshold": 0.0, "mmr": {"enabled": False}, "ranking": off | ranking}
    )


# --- position -----------------------------------------------------------------------------------


def test_the_position_scale_falls_steeply_from_the_top() -> None:
    assert place(1, 5.0) == 1.0
    assert place(7, 5.0) == 0.5  # rank k + 2
    assert place(0, 5.0) == 1.0  # a missing rank counts as the top, never above 1
    assert place(2, 0.0) == 0.5  # k = 0: 1 / rank
    steps = [place(r, 5.0) - place(r + 1, 5.0) for r in range(1, 20)]
    assert steps == sorted(steps, reverse=True)  # each rank down costs less than the one above


def test_position_is_the_same_for_a_rank_in_a_short_and_a_long_list() -> None:
    evidence = EngineEvidence({"a": hits("a", 20), "b": hits("b", 3)}, {}, 5.0)
    assert evidence.position({"a": 1}) == 1.0
    assert evidence.position({"a": 3}) == evidence.position({"b": 3}) == pytest.approx(6 / 8)


def test_position_is_the_weighted_mean_over_the_engines_that_returned_the_result() -> None:
    lists = {"a": hits("a", 5), "b": hits("b", 5), "c": hits("c", 5)}
    evidence = EngineEvidence(lists, {"a": 1.0, "b": 3.0, "c": 0.0}, 0.0)
    assert evidence.position({"a": 1, "b": 4}) == pytest.approx((1.0 + 3 * 0.25) / 4)
    assert evidence.position({"a": 1, "c": 5}) == 1.0  # a muted engine does not count
    assert evidence.position({"c": 1}) is None
    # Engines that did not return the result are not counted as zeros.
    assert evidence.position({"b": 2}) == 0.5


def test_one_result_per_list_is_the_top() -> None:
    evidence = EngineEvidence({"a": hits("a", 1), "b": hits("b", 1)}, {}, 5.0)
    assert evidence.position({"a": 1, "b": 1}) == 1.0


def test_position_lets_an_engines_first_result_pass_two_engines_last_ones() -> None:
    shared = "https://shared.org/x"
    lists = {
        "a": [*hits("a", 19), Hit("Shared", shared, "", 20, "a")],
        "b": [*hits("b", 19), Hit("Shared", shared, "", 20, "b")],
    }
    query = Query("x", max_results=40)
    plain = rank(lists, query, search(), weights={})
    assert plain[0].url == shared  # RRF at k = 60: two votes beat any single rank
    placed = rank(lists, query, search(position_weight=20.0, position_k=5.0), weights={})
    assert placed[0].url in ("https://a.com/1", "https://b.com/1")
    by_url = {r.url: r for r in placed}
    assert by_url[shared].details["position"] == pytest.approx(6 / 25, abs=1e-4)
    assert by_url["https://a.com/1"].details["position"] == 1.0


@pytest.mark.parametrize("voters", [1, 2, 4, 8, 16])
def test_a_last_ranked_vote_never_lowers_the_score_in_lists_up_to_20_deep(voters: int) -> None:
    """The bound for the default position signal without the coverage credit and the engines'
    agreement, whose whole point is that a vote can lower a score (tests/ranking/test_coverage.py,
    test_agreement.py): (k + 1) / (k + depth) >= w * (1 - place(depth)) / (1 + w), k = 60,
    w = 10, position_k = 3: up to 20 deep."""
    target = Hit("Target", "https://target.org/", "", 1, "x")
    lists = {f"e{i}": [target, *hits(f"e{i}", 20)[1:]] for i in range(voters)}
    deep = hits("late", 20)
    without = {**lists, "late": deep}
    with_vote = {**lists, "late": [*deep[:-1], Hit("Target", target.url, "", 20, "late")]}
    settings_ = SearchSettings.model_validate(
        {
            "relevance_threshold": 0.0,
            "mmr": {"enabled": False},
            "ranking": {"coverage_weight": 0, "agreement_weight": 0},
        }
    )
    query = Query("target", max_results=50)

    def score(lists: dict[str, list[Hit]]) -> float:
        return next(
            r.score for r in rank(lists, query, settings_, weights={}) if r.url == target.url
        )

    assert score(with_vote) >= score(without)


# --- engine scores ------------------------------------------------------------------------------


def test_no_engine_score_without_two_different_scores() -> None:
    assert EngineEvidence({"a": hits("a", 3)}, {}, 0.0).engine_score({}, {"a": 1}) is None
    same = {"a": hits("a", 3, [0.5, 0.5, 0.5])}
    assert EngineEvidence(same, {}, 0.0).engine_score({"a": same["a"][0]}, {"a": 1}) is None
    broken = {"a": hits("a", 3, [math.nan, math.inf, 0.4])}
    assert EngineEvidence(broken, {}, 0.0).engine_score({"a": broken["a"][2]}, {"a": 3}) is None


def test_scores_spread_an_engines_results_over_the_range_its_ranks_cover() -> None:
    lists = {"tavily": hits("tavily", 3, [0.9, 0.85, 0.3]), "brave": hits("brave", 5)}
    evidence = EngineEvidence(lists, {}, 0.0)
    t1, t2, t3 = lists["tavily"]
    # Tavily's ranks cover 1 .. 1/3 of the position scale (1 / rank with k = 0).
    assert evidence.engine_score({"tavily": t1}, {"tavily": 1}) == 1.0
    assert evidence.engine_score({"tavily": t3}, {"tavily": 3}) == pytest.approx(1 / 3)
    share = (0.85 - 0.3) / (0.9 - 0.3)
    assert evidence.engine_score({"tavily": t2}, {"tavily": 2}) == pytest.approx(
        1 / 3 + 2 / 3 * share
    )
    assert evidence.position({"tavily": 2}) == 0.5  # what its rank alone says


def test_engines_without_scores_neither_gain_nor_lose() -> None:
    lists = {"tavily": hits("tavily", 5, [5.0, 4.0, 3.0, 2.0, 1.0]), "brave": hits("brave", 5)}
    evidence = EngineEvidence(lists, {}, 0.0)
    brave = lists["brave"]
    for rank_ in range(1, 6):
        alone = {"brave": rank_}
        assert evidence.engine_score({"brave": brave[rank_ - 1]}, alone) == evidence.position(alone)
    both = {"tavily": 2, "brave": 4}
    both_hits = {"tavily": lists["tavily"][1], "brave": brave[3]}
    # Tavily's 4.0 is 0.75 of its score range, spread over 1 .. 1/5; Brave's rank 4 is 1/4.
    assert evidence.engine_score(both_hits, both) == pytest.approx((0.2 + 0.8 * 0.75 + 0.25) / 2)


def test_engine_scores_reorder_results_with_the_same_ranks() -> None:
    lists = {
        "tavily": [
            Hit("T1", "https://t.com/1", "", 1, "tavily", score=0.9),
            Hit("T2", "https://t.com/2", "", 2, "tavily", score=0.89),
            Hit("T3", "https://t.com/3", "", 3, "tavily", score=0.1),
        ],
        "brave": hits("brave", 3),
    }
    query = Query("x")
    plain = [r.url for r in rank(lists, query, search(), weights={})]
    assert plain.index("https://brave.com/2") < plain.index("https://t.com/2")  # tie: by key
    scored = rank(lists, query, search(engine_score_weight=1.0, position_k=5.0), weights={})
    order = [r.url for r in scored]
    assert order.index("https://t.com/2") < order.index("https://brave.com/2")
    details = {r.url: r.details for r in scored}
    # position_k 5: Tavily's ranks cover 1 .. 6/8, Brave's rank 2 is 6/7.
    assert details["https://t.com/2"]["engine_score"] == pytest.approx(
        0.75 + 0.25 * 0.79 / 0.8, abs=1e-4
    )
    assert details["https://brave.com/2"]["engine_score"] == pytest.approx(6 / 7, abs=1e-4)


def test_details_show_both_signals() -> None:
    lists = {"brave": hits("brave", 3)}
    results = rank(lists, Query("x"), SearchSettings(), weights={})
    assert [r.details["position"] for r in results] == [1.0, 0.8, 0.6667]  # k = 3
    assert all(r.details["engine_score"] is None for r in results)


# --- properties ---------------------------------------------------------------------------------

score_values = st.one_of(
    st.none(),
    st.floats(allow_nan=True, allow_infinity=True),
    st.sampled_from([0.0, 0.5, 1.0]),
)
engine_lists = st.dictionaries(
    st.sampled_from(["tavily", "searxng", "brave", "duckduckgo"]),
    st.lists(st.tuples(st.integers(0, 6), score_values), max_size=8),
    min_size=1,
    max_size=4,
)
engine_weights = st.dictionaries(
    st.sampled_from(["tavily", "searxng", "brave", "duckduckgo"]), st.sampled_from([0.0, 0.5, 2.0])
)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(engine_lists, engine_weights, st.sampled_from([0.0, 1.0, 5.0]), st.sampled_from([0.0, 5.0]))
def test_signals_stay_in_range_for_any_scores(data, weights, position, engine_score) -> None:
    lists = {
        engine: [
            Hit(f"t{page}", f"https://x.com/{page}", "", i, engine, score=score)
            for i, (page, score) in enumerate(items, start=1)
        ]
        for engine, items in data.items()
    }
    ranking = search(position_weight=position, engine_score_weight=engine_score)
    results = rank(lists, Query("t", max_results=50), ranking, weights=weights)
    scored = any(
        len({h.score for h in hs if h.score is not None and math.isfinite(h.score)}) > 1
        and weights.get(e, 1.0) > 0
        for e, hs in lists.items()
    )
    for r in results:
        assert 0.0 <= r.score <= 1.0
        for name in ("position", "engine_score"):
            value = r.details[name]
            assert value is None or 0.0 <= value <= 1.0
        if not scored:
            assert r.details["engine_score"] is None


@settings(max_examples=200, deadline=None)
@given(st.integers(-3, 500), st.integers(1, 500), st.floats(0.0, 100.0))
def test_the_position_scale_is_in_range_and_never_rises_with_rank(rank_, other, k) -> None:
    assert 0.0 < place(rank_, k) <= 1.0
    if rank_ <= other:
        assert place(rank_, k) >= place(other, k)


@settings(max_examples=200, deadline=None)
@given(
    st.dictionaries(
        st.sampled_from(["tavily", "searxng", "brave", "duckduckgo", "bing"]),
        st.integers(1, 30),
        min_size=1,
    ),
    st.dictionaries(
        st.sampled_from(["tavily", "searxng", "brave", "duckduckgo", "bing"]),
        st.sampled_from([0.0, 0.3, 0.5, 1.0, 1.7, 2.0]),
    ),
    st.sampled_from([0.0, 1.0, 5.0, 7.5]),
    st.sampled_from([1, 60]),
    st.data(),
)
def test_rrf_and_position_in_one_pass_are_the_same_floats(depths, weights, k, rrf_k, data) -> None:
    lists = {engine: hits(engine, depth) for engine, depth in depths.items()}
    evidence = EngineEvidence(lists, weights, k)
    returned = data.draw(st.lists(st.sampled_from(sorted(depths)), unique=True, min_size=1))
    ranks = {e: data.draw(st.integers(1, depths[e])) for e in sorted(returned)}
    assert evidence.rrf_and_position(ranks, rrf_k) == (
        rrf(ranks, weights, rrf_k),
        evidence.position(ranks),
    )


def test_scores_spread_over_the_ranks_an_engine_returned_even_on_a_later_page() -> None:
    """An engine's answer ranked 11 to 15 (a second page): its lowest score sits where its last
    rank does on the position scale, at rank 15, not at rank 5."""
    answer = [
        Hit(title=f"t{i}", url=f"https://x.com/{i}", snippet="", rank=i, engine="x", score=s)
        for i, s in zip(range(11, 16), [0.9, 0.7, 0.5, 0.3, 0.1], strict=True)
    ]
    evidence = EngineEvidence({"x": answer}, {}, 3.0)
    last = answer[-1]
    assert evidence.engine_score({"x": last}, {"x": 15}) == pytest.approx(place(15, 3.0))
    assert evidence.engine_score({"x": answer[0]}, {"x": 11}) == pytest.approx(1.0)
