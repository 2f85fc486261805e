"""Per-query engine reliability from the agreement between the lists: rank-biased overlap, the
relative reliability it gives each index family, and its effect on the fused order."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from websearch_mcp.config import SearchSettings
from websearch_mcp.models import Hit, Query
from websearch_mcp.ranking.agreement import agreement, rbo, reliability, reliable_weights
from websearch_mcp.ranking.pipeline import rank


def test_rbo_is_one_for_the_same_list_and_zero_for_disjoint_ones() -> None:
    assert rbo([1, 2, 3], [1, 2, 3]) == pytest.approx(1.0)
    assert rbo([1, 2, 3], [4, 5, 6]) == 0.0
    assert rbo([], []) == 0.0
    # A list that holds only the other's first result is not the same list.
    assert 0.0 < rbo([1], [1, 2, 3]) < 1.0


def test_rbo_weighs_the_top_more_than_the_tail() -> None:
    base = list(range(10))
    top_swapped = [1, 0, *base[2:]]
    tail_swapped = [*base[:8], 9, 8]
    assert rbo(base, tail_swapped) > rbo(base, top_swapped) > rbo(base, base[::-1])


@given(st.permutations(list(range(12))), st.permutations(list(range(12))))
def test_rbo_is_symmetric_and_within_zero_and_one(first: list[int], second: list[int]) -> None:
    value = rbo(first, second)
    assert 0.0 <= value <= 1.0 + 1e-12
    assert value == pytest.approx(rbo(second, first))


def _ranked(lists: dict[str, list[str]]) -> list[dict[str, int]]:
    """Per result, voter -> rank, as the pipeline gives `agreement`."""
    out: dict[str, dict[str, int]] = {}
    for voter, items in lists.items():
        for rank_, item in enumerate(items, start=1):
            out.setdefault(item, {})[voter] = rank_
    return list(out.values())


def test_the_list_that_stands_apart_agrees_least() -> None:
    lists = {
        "a": ["p1", "p2", "p3", "p4"],
        "b": ["p2", "p1", "p3", "p5"],
        "c": ["p1", "p3", "p2", "p6"],
        "odd": ["x1", "x2", "p4", "x3"],
    }
    agreed = agreement(_ranked(lists))
    assert min(agreed, key=agreed.__getitem__) == "odd"
    factors = reliability(agreed, 0.9)
    assert max(factors.values()) == 1.0
    assert 0.1 <= factors["odd"] < min(factors[v] for v in "abc")


def test_no_overlap_anywhere_changes_no_weight() -> None:
    agreed = agreement(_ranked({"a": ["1"], "b": ["2"], "c": ["3"]}))
    assert reliability(agreed, 0.9) == {"a": 1.0, "b": 1.0, "c": 1.0}
    assert reliability({"a": 0.5, "b": 0.1}, 0.0) == {"a": 1.0, "b": 1.0}


def test_engines_of_one_family_agree_as_one_list() -> None:
    # Serper and SerpAPI both serve Google's index: their sameness is not agreement.
    ranked = _ranked(
        {"serper": ["g1", "g2", "g3"], "serpapi": ["g1", "g2", "g3"], "brave": ["b1", "g2", "b2"]}
    )
    families = {"serper": "google", "serpapi": "google"}
    weights = reliable_weights(ranked, {}, families, 0.9)
    assert weights["serper"] == weights["serpapi"] == weights["brave"] == 1.0  # two voters


def hits(engine: str, slugs: list[str]) -> list[Hit]:
    return [
        Hit(f"page {s}", f"https://{s}.org/", "words", i, engine) for i, s in enumerate(slugs, 1)
    ]


def test_a_list_that_agrees_with_no_other_is_outvoted() -> None:
    good = ["p1", "p2", "p3", "p4", "p5"]
    lists = {
        "tavily": hits("tavily", good),
        "brave": hits("brave", ["p2", "p1", "p3", "p5", "p4"]),
        "exa": hits("exa", ["p1", "p3", "p2", "p4", "p6"]),
        "bing": hits("bing", ["noise1", "noise2", "p5", "noise3", "noise4"]),
    }
    query = Query("page", max_results=10)

    def order(weight: float) -> list[str]:
        settings = SearchSettings.model_validate({"ranking": {"agreement_weight": weight}})
        return [r.url for r in rank(lists, query, settings, weights={})]

    plain, agreed = order(0.0), order(0.9)
    noise = "https://noise1.org/"
    assert agreed.index(noise) > plain.index(noise)
    assert set(agreed[:5]) == {f"https://{s}.org/" for s in good}


def test_a_family_agrees_by_its_best_rank_for_each_result() -> None:
    """A family's list is "a family's best rank for every result": two Google-family engines
    whose best ranks together repeat the other lists' order agree with them fully."""
    # Four results: every engine ranks them 1 to 4, except one Google engine, which has them
    # at 8 to 5. Ranks come in engine-name order, as merging makes them.
    families = {"serper": "google", "serpapi": "google"}
    for worse, better in (("serpapi", "serper"), ("serper", "serpapi")):
        ranked = [
            dict(sorted({"bing": r, "brave": r, worse: 9 - r, better: r}.items()))
            for r in range(1, 5)
        ]
        weights = reliable_weights(ranked, {}, families, 0.9)
        assert weights == {name: pytest.approx(1.0) for name in ranked[0]}


def test_rbo_compares_the_first_twenty_ranks() -> None:
    """Two lists that differ only between ranks 11 and 20 do not agree fully."""
    base = list(range(20))
    assert rbo(base, base[:10] + base[10:][::-1]) < 1.0 - 1e-6
