"""Coverage credit and index families: what engines that may not hold a result, and engines that
share one index, count for in fusion."""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from websearch_mcp.config import SearchSettings
from websearch_mcp.errors import ConfigError
from websearch_mcp.models import Hit, Query
from websearch_mcp.ranking.context import Context
from websearch_mcp.ranking.coverage import Unseen, containment, credited
from websearch_mcp.ranking.families import family_weights, one_vote_per_family
from websearch_mcp.ranking.pipeline import rank
from websearch_mcp.search.configuration import parse_config
from websearch_mcp.search.fan_out import Orchestrator

NOW = datetime(2026, 1, 1, tzinfo=UTC)
GOOGLE = {"serper": "google", "serpapi": "google", "google_cse": "google", "google": "google"}


def hits(engine: str, urls: list[str]) -> list[Hit]:
    return [Hit(u, u, "", i, engine) for i, u in enumerate(urls, start=1)]


def pages(prefix: str, count: int) -> list[str]:
    return [f"https://{prefix}.org/{i}" for i in range(1, count + 1)]


def only(**ranking: float) -> SearchSettings:
    """Every signal off except the named ones; no threshold, no MMR."""
    off = dict.fromkeys(
        ("alignment_weight", "rare_term_weight", "phrase_weight", "domain_penalty",
         "consensus_weight", "position_weight", "coverage_weight", "engine_score_weight",
         "authority_weight", "freshness_weight", "neighbour_weight", "agreement_weight"),
        0.0,
    )  # fmt: skip
    return SearchSettings.model_validate(
        {"relevance_threshold": 0.0, "mmr": {"enabled": False}, "ranking": off | ranking}
    )


def scores(lists, search, families=None) -> dict[str, float]:
    results = rank(lists, Query("x", max_results=100), search, weights={}, families=families)
    return {r.url: r.score for r in results}


# --- containment and the unseen weight ----------------------------------------------------------


def test_containment_is_the_share_of_an_engines_head_the_other_returned() -> None:
    ranked = [{"a": 1, "b": 3}, {"a": 2}, {"a": 3, "b": 1}, {"b": 2}]
    contained = containment(ranked, head=2)
    assert contained[("b", "a")] == 0.5  # a's head: results 0 and 1; b returned 0
    assert contained[("a", "b")] == 0.5  # b's head: results 2 and 3; a returned 2
    assert containment(ranked, head=5)[("b", "a")] == pytest.approx(2 / 3)


def unseen(
    voters: dict[str, float], contained: dict[tuple[str, str], float]
) -> Callable[[dict[str, int]], float]:
    """`Unseen(...).weight` of a result's ranks (voter -> rank), a new `Unseen` for every call."""

    def weigh(ranks: dict[str, int]) -> float:
        return Unseen(voters, contained).weight(ranks)

    return weigh


def test_an_engine_holding_the_others_best_results_leaves_nothing_unseen() -> None:
    voters = {"a": 1.0, "b": 1.0, "c": 1.0}
    contained = {("b", "a"): 1.0, ("c", "a"): 0.0}
    # b returns a's head: its silence on this result is a judgment. c shares nothing: unseen.
    assert unseen(voters, contained)({"a": 4}) == 1.0
    assert unseen(voters, contained)({"a": 4, "b": 2, "c": 9}) == 0.0
    half = {("b", "a"): 0.5, ("c", "a"): 0.5}
    assert unseen(voters, half)({"a": 1}) == pytest.approx(2 * 0.75)
    assert unseen(voters, half)({}) == 0.0
    assert unseen({"a": 1.0, "b": 0.0}, {})({"a": 1}) == 0.0  # a muted engine does not count


def test_unseen_voters_vote_as_the_returning_ones_did() -> None:
    assert credited(0.25, {"a": 1}, {"a": 1.0, "b": 1.0}, 1.0, 1.0) == 0.5
    assert credited(0.25, {"a": 1}, {"a": 1.0, "b": 1.0}, 1.0, 0.5) == 0.375
    assert credited(0.25, {"a": 1}, {"a": 1.0, "b": 1.0}, 1.0, 0.0) == 0.25
    assert credited(0.25, {}, {"a": 1.0}, 1.0, 1.0) == 0.25


voter_names = st.sampled_from(["a", "b", "c", "d", "e"])
ranked_strategy = st.lists(
    st.dictionaries(voter_names, st.integers(1, 30), min_size=1, max_size=5), max_size=30
)
voter_weights = st.dictionaries(voter_names, st.sampled_from([0.0, 0.5, 2.0]))


@settings(max_examples=200, deadline=None)
@given(ranked_strategy, st.integers(1, 8), voter_weights)
def test_coverage_signals_stay_in_their_bounds(ranked, head, weights) -> None:
    contained = containment(ranked, head)
    assert all(0.0 <= c <= 1.0 for c in contained.values())
    present = {v for ranks in ranked for v in ranks}
    voters = {v: weights.get(v, 1.0) for v in present}
    total = sum(voters.values())
    weigh = Unseen(voters, contained).weight  # one memo for every result
    for ranks in ranked:
        cast = sum(voters[v] for v in ranks)
        missing = weigh(ranks)
        assert -1e-12 <= missing <= total - cast + 1e-12
        assert unseen(voters, contained)(ranks) == missing  # deterministic, memo or not
        for rrf in (0.0, 0.3, 1.0):
            assert rrf <= credited(rrf, ranks, voters, missing, 0.5) <= 1.0


def unseen_as_written(voters, contained, ranks) -> float:
    """The unseen weight as the docstring defines it, summed in the voters' sorted order."""
    weighted = [(v, w) for v, w in sorted(voters.items()) if w > 0]
    present = [v for v, _ in weighted if v in ranks]
    if not present:
        return 0.0
    total = 0.0
    for m, weight in weighted:
        if m in ranks:
            continue
        shared = 0.0
        for s in present:
            shared += contained.get((m, s), 0.0)
        shared /= float(len(present))
        total += weight * (1.0 - shared * shared)
    return total


@settings(max_examples=200, deadline=None)
@given(ranked_strategy, st.integers(1, 8), voter_weights)
def test_the_unseen_weight_is_the_sum_as_written(ranked, head, weights) -> None:
    contained = containment(ranked, head)
    voters = {v: weights.get(v, 1.0) for ranks in ranked for v in ranks}
    weigh = unseen(voters, contained)
    for ranks in [*ranked, {}, dict.fromkeys(voters, 1), {"unknown": 1}]:
        assert weigh(ranks) == unseen_as_written(voters, contained, ranks)


@settings(max_examples=200, deadline=None)
@given(ranked_strategy, st.integers(1, 8))
def test_containment_ranks_ties_by_the_results_order(ranked, head) -> None:
    """The table is the plain definition: each voter's `head` best (rank, then place in
    `ranked`) and the share of them every other voter returned."""
    voters = sorted({v for ranks in ranked for v in ranks})
    expected = {}
    for s in voters:
        best = [i for _, i in sorted((r[s], i) for i, r in enumerate(ranked) if s in r)[:head]]
        for m in voters:
            if m != s:
                expected[(m, s)] = sum(1 for i in best if m in ranked[i]) / len(best)
    assert containment(ranked, head) == expected


@settings(max_examples=100, deadline=None)
@given(st.floats(0.0, 1.0), st.floats(0.0, 1.0))
def test_more_shared_results_leave_less_unseen(low: float, high: float) -> None:
    low, high = sorted((low, high))
    voters = {"a": 1.0, "b": 1.0}
    more = unseen(voters, {("b", "a"): high})({"a": 1})
    assert more <= unseen(voters, {("b", "a"): low})({"a": 1})


# --- in the pipeline ----------------------------------------------------------------------------


def test_a_first_result_other_indexes_lack_beats_results_found_everywhere_low() -> None:
    """Disjoint lists: no engine holds another's results, so one engine's first result is not
    outvoted by what every engine returns near the bottom."""
    common = [f"https://common.org/{i}" for i in range(3)]
    lists = {e: hits(e, [*pages(e, 17), *common]) for e in ("brave", "mojeek", "exa", "tavily")}
    plain = scores(lists, only())  # RRF alone: four votes at rank 18 beat one at rank 1
    credit = scores(lists, only(coverage_weight=1.0))
    assert plain["https://common.org/0"] > plain["https://brave.org/1"]
    assert credit["https://brave.org/1"] > credit["https://common.org/0"]


def test_no_credit_when_the_engines_hold_each_others_best_results() -> None:
    shared = pages("shared", 5)
    lists = {
        "brave": hits("brave", [*shared, "https://only-brave.org/"]),
        "mojeek": hits("mojeek", shared),
    }
    results = rank(lists, Query("x", max_results=10), only(coverage_weight=1.0), weights={})
    by_url = {r.url: r for r in results}
    assert by_url["https://only-brave.org/"].details["unseen"] == 0.0
    assert (
        by_url["https://only-brave.org/"].details["coverage"]
        == by_url["https://only-brave.org/"].details["rrf"]
    )


def test_details_explain_the_coverage_credit() -> None:
    lists = {"brave": hits("brave", pages("b", 3)), "mojeek": hits("mojeek", pages("m", 3))}
    results = rank(lists, Query("x"), SearchSettings(), weights={})
    top = results[0].details
    assert top["unseen"] == 1.0  # mojeek holds none of brave's results
    assert top["coverage"] == pytest.approx(min(1.0, top["rrf"] * 1.5), abs=1e-4)  # weight 0.5
    alone = rank({"brave": lists["brave"]}, Query("x"), SearchSettings(), weights={})
    assert alone[0].details["unseen"] is None  # one engine: nothing to compare


# --- index families -----------------------------------------------------------------------------


def test_two_google_engines_agreeing_do_not_outvote_an_independent_engine() -> None:
    agreed, other = "https://agreed.org/", "https://other.org/"
    lists = {
        "serper": hits("serper", [agreed, *pages("s", 4)]),
        "serpapi": hits("serpapi", [agreed, *pages("p", 4)]),
        "brave": hits("brave", [other, *pages("b", 4)]),
    }
    # Neighbours off: these titles are URLs, which share words ("https", "org").
    search = SearchSettings.model_validate(
        {"relevance_threshold": 0.0, "mmr": {"enabled": False}, "ranking": {"neighbour_weight": 0}}
    )
    family = scores(lists, search, GOOGLE)
    assert family[agreed] == pytest.approx(family[other])  # one index against one index
    # The same lists from independent indexes: the agreement is two votes.
    independent = scores(lists, search, {})
    assert independent[agreed] > independent[other]


def test_a_family_votes_with_its_best_member() -> None:
    ranks = {"serper": 4, "serpapi": 2, "brave": 3}
    assert one_vote_per_family(ranks, {}, GOOGLE, 60) == {"serpapi": 2, "brave": 3}
    # A heavier member's vote can be the larger one at a worse rank.
    assert one_vote_per_family(ranks, {"serper": 2.0}, GOOGLE, 60) == {"serper": 4, "brave": 3}
    weights = family_weights(["serper", "serpapi", "brave"], {"serper": 2.0}, GOOGLE)
    assert weights == {"google": 2.0, "brave": 1.0}
    # The largest weight, whichever member has it.
    weights = family_weights(["serper", "serpapi", "brave"], {"serpapi": 2.0}, GOOGLE)
    assert weights == {"google": 2.0, "brave": 1.0}


_NAMES = ["bing", "brave", "duckduckgo", "google", "serper"]


@given(
    st.dictionaries(st.sampled_from(_NAMES), st.integers(1, 20), min_size=1),
    st.dictionaries(st.sampled_from(_NAMES), st.sampled_from(["g", "b", "bing"])),
    st.dictionaries(st.sampled_from(_NAMES), st.sampled_from([0.0, 0.5, 1.0, 2.0])),
)
def test_each_results_votes_are_one_per_family(ranks, families, weights) -> None:
    # Every engine answered; a result's ranks come in engine-name order, as merging makes them.
    context = Context({e: [] for e in _NAMES}, Query("x"), SearchSettings(), weights, families, NOW)
    ordered = dict(sorted(ranks.items()))
    expected = one_vote_per_family(ordered, weights, families, SearchSettings().rrf_k)
    assert list(expected) == [e for e in ordered if e in expected]  # still in name order
    assert list(context.votes(ordered).items()) == list(expected.items())
    voted = context.by_family(expected)
    assert list(voted.items()) == [(context.families[e], r) for e, r in expected.items()]


@given(
    st.dictionaries(st.sampled_from(_NAMES), st.integers(1, 20), min_size=1),
    st.dictionaries(st.sampled_from(_NAMES), st.sampled_from(["g", "b", "bing"])),
    st.dictionaries(st.sampled_from(_NAMES), st.sampled_from([0.0, 0.5, 1.0, 2.0])),
)
def test_a_familys_vote_is_the_largest_then_the_better_rank_then_the_first_name(
    ranks, families, weights
) -> None:
    best: dict[str, tuple[tuple[float, int], str]] = {}
    for engine in sorted(ranks):
        vote = (max(0.0, weights.get(engine, 1.0)) / (60 + ranks[engine]), -ranks[engine])
        family = families.get(engine) or engine
        if family not in best or vote > best[family][0]:
            best[family] = (vote, engine)
    kept = {engine for _, engine in best.values()}
    expected = {engine: rank for engine, rank in ranks.items() if engine in kept}
    chosen = one_vote_per_family(ranks, weights, families, 60)
    assert list(chosen.items()) == list(expected.items())


def test_family_results_keep_every_engines_rank_in_details() -> None:
    page = "https://agreed.org/"
    lists = {"serper": hits("serper", [page]), "serpapi": hits("serpapi", [page])}
    results = rank(lists, Query("x"), SearchSettings(), weights={}, families=GOOGLE)
    assert results[0].details["ranks"] == {"serpapi": 1, "serper": 1}
    assert results[0].engines == ["serpapi", "serper"]


def test_the_service_reads_each_engines_index_family() -> None:
    settings = parse_config({"engines": {"searxng": {"base_url": "http://127.0.0.1:9"}}}, "t", {})
    families = Orchestrator(settings, environ={}).index_families()
    assert {e for e, f in families.items() if f == "google"} == {
        "serper", "serpapi", "google_cse", "google", "google_news"
    }  # fmt: skip
    assert families["duckduckgo"] == families["bing"] == "bing"
    assert "searxng" not in families  # unknown upstream: an index of its own
    configured = parse_config({"engines": {"searxng": {"index": "google"}}}, "t", {})
    assert Orchestrator(configured, environ={}).index_families()["searxng"] == "google"


def test_a_blank_index_name_leaves_the_engines_own() -> None:
    settings = parse_config({"engines": {"searxng": {"index": " "}}}, "t", {})
    assert settings.engine("searxng").index is None  # the engine's declaration
    with pytest.raises(ConfigError, match="index"):
        parse_config({"engines": {"searxng": {"index": "x" * 41}}}, "t", {})


engine_names = st.sampled_from(["serper", "serpapi", "google", "brave", "bing", "duckduckgo"])
FAMILIES = {**GOOGLE, "duckduckgo": "bing"}


@settings(max_examples=200, deadline=None)
@given(
    st.dictionaries(engine_names, st.integers(1, 30), min_size=1),
    st.dictionaries(engine_names, st.sampled_from([0.0, 0.5, 1.0, 3.0])),
)
def test_one_vote_per_family_keeps_one_member_of_each_family(ranks, weights) -> None:
    votes = one_vote_per_family(ranks, weights, FAMILIES, 60)
    assert votes.items() <= ranks.items()
    families = [FAMILIES.get(e, e) for e in votes]
    assert len(families) == len(set(families)) == len({FAMILIES.get(e, e) for e in ranks})
    independent = one_vote_per_family(ranks, weights, {}, 60)
    assert independent == ranks  # without families every engine votes


@settings(max_examples=100, deadline=None)
@given(
    st.dictionaries(engine_names, st.lists(st.integers(0, 8), max_size=8), min_size=1),
    st.randoms(),
)
def test_family_fusion_does_not_depend_on_the_order_of_the_lists(data, rnd) -> None:
    lists = {
        e: [Hit(f"t{p}", f"https://x.org/{p}", "", i, e) for i, p in enumerate(pages_, 1)]
        for e, pages_ in data.items()
    }
    names = list(lists)
    rnd.shuffle(names)
    query = Query("t", max_results=20)

    def dump(ordered: dict[str, list[Hit]]) -> list[tuple[str, float, dict]]:
        results = rank(ordered, query, SearchSettings(), weights={}, families=FAMILIES)
        return [(r.url, r.score, r.details) for r in results]

    assert dump(lists) == dump({n: lists[n] for n in names})
