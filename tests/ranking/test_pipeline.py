"""The whole ranking pipeline: merge, RRF, signals, threshold, MMR, truncation, details."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest
from hypothesis import given
from hypothesis import strategies as st

from testing.engine_answers import parse
from testing.shared import fixture_bytes
from websearch_mcp.config import SearchSettings
from websearch_mcp.engines.web.brave import Brave
from websearch_mcp.models import Hit, Query, RankedResult
from websearch_mcp.ranking.context import Factor
from websearch_mcp.ranking.domain import DomainVerdict
from websearch_mcp.ranking.fusion import Merged
from websearch_mcp.ranking.lexical import DocTerms
from websearch_mcp.ranking.pipeline import _behind, _best_first, _Scored, kept_count, rank

NOW = datetime(2026, 6, 1, tzinfo=UTC)
DETAIL_KEYS = {
    "rrf", "alignment", "rare", "phrase", "domain", "consensus", "position", "engine_score",
    "authority", "freshness", "final", "ranks",
}  # fmt: skip


def hit(url: str, rank: int, engine: str, title: str = "", snippet: str = "", **kw: object) -> Hit:
    return Hit(title=title, url=url, snippet=snippet, rank=rank, engine=engine, **kw)  # type: ignore[arg-type]


def settings(**ranking: object) -> SearchSettings:
    """Settings with the threshold and MMR off unless asked, so tests see one signal at a time."""
    mmr = ranking.pop("mmr", False)
    threshold = ranking.pop("threshold", 0.0)
    return SearchSettings.model_validate(
        {"relevance_threshold": threshold, "mmr": {"enabled": bool(mmr), "lambda": mmr or 0.85},
         "ranking": ranking}
    )  # fmt: skip


PLAIN = {
    "alignment_weight": 0.0, "rare_term_weight": 0.0, "phrase_weight": 0.0,
    "domain_penalty": 0.0, "consensus_weight": 0.0, "position_weight": 0.0, "coverage_weight": 0.0,
    "engine_score_weight": 0.0, "authority_weight": 0.0, "freshness_weight": 0.0,
    "neighbour_weight": 0.0, "agreement_weight": 0.0,
}  # fmt: skip


def urls(results: list) -> list[str]:
    return [r.url for r in results]


def test_factor_is_bounded_and_switchable() -> None:
    assert Factor(0.5)(1.0) == pytest.approx(1.0)
    assert Factor(0.5)(0.0) == pytest.approx(1 / 1.5)
    assert Factor(0.5)(0.4) == pytest.approx((1 + 0.5 * 0.4) / 1.5)
    assert Factor(0.0)(0.0) == 1.0
    assert Factor(3.0)(None) == 1.0


def test_threshold_keeps_the_top_and_at_least_two() -> None:
    assert kept_count([0.9, 0.5, 0.1], 0.95) == 2
    assert kept_count([0.9], 0.95) == 1
    assert kept_count([0.9, 0.5, 0.1, 0.01], 0.05) == 3
    assert kept_count([0.9, 0.5, 0.1], 0.0) == 3


def test_empty_input() -> None:
    assert rank({}, Query("x"), SearchSettings(), weights={}) == []
    assert rank({"bing": []}, Query("x"), SearchSettings(), weights={}) == []


def test_details_and_fields_are_filled() -> None:
    lists = {
        "bing": [hit("http://www.example.com/a/?utm_source=b", 2, "bing", "A title", "short")],
        "brave": [
            hit("https://example.com/a", 1, "brave", "A", "longer snippet text", score=0.9,
                published="2025-01-02"),
        ],
    }  # fmt: skip
    (result,) = rank(lists, Query("example a"), SearchSettings(), weights={}, now=NOW)
    assert result.key == "https://example.com/a"
    assert result.url == "https://example.com/a"
    assert result.engines == ["brave", "bing"]
    assert result.ranks == {"brave": 1, "bing": 2}
    assert result.snippet == "longer snippet text"
    assert result.title == "A"
    assert result.engine_scores == {"brave": 0.9}
    assert result.published == "2025-01-02"
    assert set(result.details) >= DETAIL_KEYS
    assert result.details["ranks"] == {"brave": 1, "bing": 2}
    assert result.details["final"] == pytest.approx(result.score, abs=1e-4)
    assert 0.0 <= result.score <= 1.0
    out = result.to_dict(explain=True)
    assert out["score_details"]["rrf"] == result.details["rrf"]


def test_with_every_signal_off_the_score_is_normalised_rrf() -> None:
    lists = {
        "a": [hit("https://x.com/1", 1, "a"), hit("https://x.com/2", 2, "a")],
        "b": [hit("https://x.com/2", 1, "b"), hit("https://x.com/3", 2, "b")],
    }
    results = rank(lists, Query("anything"), settings(**PLAIN), weights={})
    assert urls(results) == ["https://x.com/2", "https://x.com/1", "https://x.com/3"]
    best = 2 / 61
    assert [r.score for r in results] == pytest.approx(
        [(1 / 61 + 1 / 62) / best, 0.5, 1 / 62 / best]
    )
    assert all(r.score == pytest.approx(r.details["rrf"], abs=1e-4) for r in results)


def test_engine_weights() -> None:
    lists = {"a": [hit("https://x.com/1", 1, "a")], "b": [hit("https://x.com/2", 1, "b")]}
    results = rank(lists, Query("q"), settings(**PLAIN), weights={"a": 1.0, "b": 3.0})
    assert urls(results) == ["https://x.com/2", "https://x.com/1"]
    assert results[0].score == pytest.approx(0.75)
    muted = rank(lists, Query("q"), settings(**PLAIN), weights={"b": 0.0})
    assert muted[0].url == "https://x.com/1"
    assert muted[1].score == 0.0


def test_consensus_counts_only_the_engines_that_vote() -> None:
    """An engine of weight 0 neither agrees nor counts among the others."""
    lists = {
        "a": [hit("https://x.com/ab", 1, "a"), hit("https://x.com/ac", 2, "a")],
        "b": [hit("https://x.com/ab", 1, "b")],
        "c": [hit("https://x.com/ac", 1, "c")],
    }
    results = rank(lists, Query("q"), settings(**PLAIN), weights={"b": 0.0})
    consensus = {r.url: r.details["consensus"] for r in results}
    assert consensus == {"https://x.com/ab": 0.0, "https://x.com/ac": 1.0}


def test_rrf_stays_the_backbone() -> None:
    """A result every engine ranks first beats a better text match found by one engine."""
    engines = ["a", "b", "c", "d"]
    lists = {
        e: [
            hit("https://x.com/consensus", 1, e, "Rust tutorial", "learn"),
            hit(f"https://{e}.com/only", 2, e, "Rust borrow checker explained", "borrow checker"),
        ]
        for e in engines
    }
    results = rank(lists, Query("rust borrow checker"), SearchSettings(), weights={})
    assert results[0].url == "https://x.com/consensus"


def test_text_signals_reorder_equal_rrf() -> None:
    lists = {
        "a": [hit("https://x.com/off", 1, "a", "Cooking pasta", "recipes")],
        "b": [hit("https://x.com/on", 1, "b", "pgvector HNSW index", "tuning pgvector hnsw index")],
    }
    query = Query("pgvector hnsw index")
    # Rare terms are on by default: the result holding the query's identifier comes first.
    on, off = rank(lists, query, SearchSettings(), weights={})
    assert on.url == "https://x.com/on"
    assert on.details["rare"] == 1.0 and off.details["rare"] == 0.0
    # With no text signal the two tie and come by key.
    plain = SearchSettings.model_validate({"ranking": {"rare_term_weight": 0}})
    assert urls(rank(lists, query, plain, weights={})) == ["https://x.com/off", "https://x.com/on"]
    # Alignment, off by default, reorders them alone when switched on.
    aligned = SearchSettings.model_validate(
        {"ranking": {"alignment_weight": 0.05, "rare_term_weight": 0}}
    )
    on, off = rank(lists, query, aligned, weights={})
    assert on.url == "https://x.com/on"
    assert on.details["alignment"] == 1.0 and off.details["alignment"] == 0.0
    assert on.details["phrase"] == 1.0


def test_block_domains_remove_subdomains_too() -> None:
    lists = {
        "a": [
            hit("https://spam.example/x", 1, "a"),
            hit("https://cdn.spam.example/y", 2, "a"),
            hit("https://notspam.example/z", 3, "a"),
        ]
    }
    search = SearchSettings(block_domains=["spam.example"], relevance_threshold=0.0)
    assert urls(rank(lists, Query("x"), search, weights={})) == ["https://notspam.example/z"]


@pytest.mark.parametrize("blocked", ["bücher.de", "xn--bcher-kva.de", "www.XN--BCHER-KVA.de"])
def test_an_internationalised_site_is_one_result_and_blocked_in_either_spelling(
    blocked: str,
) -> None:
    lists = {
        "a": [hit("https://xn--bcher-kva.de/buch", 1, "a", "Buch"), hit("https://o.de/", 2, "a")],
        "b": [hit("https://www.bücher.de/buch/", 1, "b", "Buch", "Ein Buch")],
    }
    (page, other) = rank(lists, Query("buch"), settings(), weights={})
    assert page.engines == ["a", "b"] and page.details["ranks"] == {"a": 1, "b": 1}
    assert page.snippet == "Ein Buch" and other.url == "https://o.de/"
    search = SearchSettings(block_domains=[blocked], relevance_threshold=0.0)
    assert urls(rank(lists, Query("buch"), search, weights={})) == ["https://o.de/"]


def test_shop_is_demoted_with_reason() -> None:
    lists = {
        "a": [hit("https://www.amazon.com/usb-c-cable", 1, "a", "USB-C cable", "usb-c cable")],
        "b": [hit("https://cables.org/usb-c-cable", 1, "b", "USB-C cable", "usb-c cable")],
    }
    results = rank(lists, Query("usb-c cable"), SearchSettings(), weights={})
    assert urls(results)[0] == "https://cables.org/usb-c-cable"
    assert results[1].details["domain"] == 0.5
    assert results[1].details["domain_reason"] == "e-commerce or brand site"


def test_freshness_applies_only_when_asked() -> None:
    lists = {
        "a": [hit("https://x.com/old", 1, "a", "Python release", "", published="2020-01-01")],
        "b": [hit("https://x.com/new", 1, "b", "Python release", "", published="2026-05-30")],
    }
    plain = rank(lists, Query("python release"), SearchSettings(), weights={}, now=NOW)
    assert all(r.details["freshness"] is None for r in plain)
    assert plain[0].score == plain[1].score
    recent = rank(lists, Query("python release", time_range="month"), SearchSettings(),
                  weights={}, now=NOW)  # fmt: skip
    assert urls(recent)[0] == "https://x.com/new"
    assert recent[0].details["freshness"] > recent[1].details["freshness"]
    worded = rank(lists, Query("latest python release"), SearchSettings(), weights={}, now=NOW)
    assert urls(worded)[0] == "https://x.com/new"


def test_threshold_drops_weak_results_but_keeps_two() -> None:
    lists = {"a": [hit(f"https://x.com/{i}", i, "a", "unrelated", "") for i in range(1, 6)]}
    high = rank(lists, Query("pgvector"), settings(threshold=0.99), weights={})
    assert urls(high) == ["https://x.com/1", "https://x.com/2"]
    assert len(rank(lists, Query("pgvector"), settings(threshold=0.0), weights={})) == 5


def test_similarity_is_shown_only_where_mmr_compared_a_result_with_those_above_it() -> None:
    """The first result has none above it: no similarity, whether one result is asked or more
    (it was 0.0, a word overlap never measured, beside none for `max_results` 1); a later one
    that shares no words with those above shows a measured 0.0."""
    hits = parse(Brave(), fixture_bytes("brave_api/web_search_hello_world.json"))
    (one,) = rank(
        {"brave": hits}, Query("hello world", max_results=1), SearchSettings(), weights={}
    )
    three = rank({"brave": hits}, Query("hello world", max_results=3), SearchSettings(), weights={})
    assert three[0].url == one.url
    assert "similarity" not in one.details and "similarity" not in three[0].details
    assert [r.details["similarity"] for r in three[1:]] == [0.0263, 0.0]


def test_mmr_demotes_a_near_duplicate_and_keeps_the_top_first() -> None:
    text = "pgvector hnsw index build time memory settings maintenance work mem"
    lists = {
        "a": [
            hit("https://x.com/1", 1, "a", "HNSW build guide", text),
            hit("https://mirror.com/1", 2, "a", "HNSW build guide", text + " copy"),
            hit("https://y.com/2", 3, "a", "IVFFlat lists", "pgvector ivfflat index probes"),
            hit("https://z.com/3", 20, "a", "Unrelated", "cooking"),
        ]
    }
    query = Query("pgvector index")
    plain = rank(lists, query, settings(), weights={})
    assert urls(plain)[:3] == ["https://x.com/1", "https://mirror.com/1", "https://y.com/2"]
    diverse = rank(lists, query, settings(mmr=0.7), weights={})
    assert urls(diverse)[:3] == ["https://x.com/1", "https://y.com/2", "https://mirror.com/1"]
    assert diverse[2].details["similarity"] > 0.8
    assert "similarity" not in diverse[0].details  # no result above it to resemble
    # Two results too: the near-duplicate does not keep the second place.
    two = rank(lists, Query("pgvector index", max_results=2), settings(mmr=0.7), weights={})
    assert urls(two) == ["https://x.com/1", "https://y.com/2"]


def test_truncates_to_max_results() -> None:
    lists = {"a": [hit(f"https://x.com/{i}", i, "a", f"t{i}", f"s{i}") for i in range(1, 30)]}
    assert len(rank(lists, Query("t", max_results=7), settings(), weights={})) == 7
    assert len(rank(lists, Query("t", max_results=7), SearchSettings(), weights={})) <= 7


def test_academic_fields_are_merged() -> None:
    lists = {
        "crossref": [hit("https://doi.org/10.1/x", 1, "crossref", "Paper", "", doi="10.1/x",
                         citations=3, venue="J")],
        "openalex": [hit("https://doi.org/10.1/x", 1, "openalex", "Paper", "", citations=7,
                         authors=("A. Author",), pdf_url="https://x.org/p.pdf")],
    }  # fmt: skip
    (result,) = rank(lists, Query("paper"), SearchSettings(), weights={})
    assert (result.doi, result.venue, result.citations) == ("10.1/x", "J", 7)
    assert result.authors == ("A. Author",)
    assert result.pdf_url == "https://x.org/p.pdf"


def test_the_source_comes_from_the_best_ranked_engine_that_names_one() -> None:
    """A merged result's publisher (`source`) is the one given by the best-ranked engine that
    names one: an engine that names none does not blank it."""
    lists = {
        "bing": [hit("https://news.example/story", 1, "bing", "Story")],
        "serper": [hit("https://news.example/story", 2, "serper", "Story", source="AP News")],
        "brave": [hit("https://news.example/story", 3, "brave", "Story", source="npr.org")],
    }
    (result,) = rank(lists, Query("story"), settings(), weights={})
    assert result.engines == ["bing", "serper", "brave"]
    assert result.source == "AP News"


_FIELDS = st.fixed_dictionaries(
    {
        "rank": st.integers(1, 3),
        "authors": st.sampled_from([(), ("A",), ("B", "C")]),
        "doi": st.sampled_from([None, "", "10.1/a", "10.1/b"]),
        "venue": st.sampled_from([None, "", "J", "K"]),
        "citations": st.sampled_from([None, 0, 3, 7]),
        "pdf_url": st.sampled_from([None, "", "https://x.org/a.pdf"]),
        "score": st.sampled_from([None, 0.5, 2.0]),
    }
)


@given(st.dictionaries(st.sampled_from(["a", "b", "c", "d"]), _FIELDS, min_size=1))
def test_each_field_comes_from_the_best_ranked_hit_that_has_it(answers: dict) -> None:
    lists = {
        engine: [hit("https://doi.org/10.1/x", f.pop("rank"), engine, "Paper", "", **f)]
        for engine, f in ((e, dict(f)) for e, f in answers.items())
    }
    (result,) = rank(lists, Query("paper"), settings(), weights={})
    ordered = [lists[e][0] for e in result.engines]
    assert result.ranks == {e: lists[e][0].rank for e in result.engines}
    assert result.engine_scores == {
        e: h.score for e, h in zip(result.engines, ordered, strict=True) if h.score is not None
    }
    assert result.authors == next((h.authors for h in ordered if h.authors), ())
    assert result.doi == next((h.doi for h in ordered if h.doi), None)
    assert result.venue == next((h.venue for h in ordered if h.venue), None)
    assert result.pdf_url == next((h.pdf_url for h in ordered if h.pdf_url), None)
    cited = [h.citations for h in ordered if h.citations is not None]
    assert result.citations == (max(cited) if cited else None)


def _scored(score: float, url: str) -> _Scored:
    item = Merged(url, "example.org", "/", {}, {})
    result = _Scored(item, {}, DocTerms([], set(), url), 0.0, None, 0.0, DomainVerdict(1.0), 0.0)
    result.score = score
    return result


@given(
    st.lists(
        st.tuples(
            st.sampled_from([0.0, -0.0, 0.125, 0.5, 0.5000000000000001, 1.0]),
            st.text(alphabet="ab/", max_size=3),
        ),
        max_size=40,
    ),
    st.integers(min_value=0, max_value=40),
)
def test_results_are_sorted_best_first_with_ties_by_url(pairs, at) -> None:
    """Sorting by score and then each run of equal scores by URL is the order of the pairs
    (-score, url), whatever the input's order; `_behind` agrees with it."""
    scored = [_scored(score, url) for score, url in pairs]
    expected = sorted(scored, key=lambda r: (-r.score, r.item.key))
    _best_first(scored)
    assert [(r.score, r.item.key) for r in scored] == [(r.score, r.item.key) for r in expected]
    if len(scored) > 1:
        first, second = scored[at % len(scored)], scored[(at + 1) % len(scored)]
        order = (-first.score, first.item.key) > (-second.score, second.item.key)
        assert _behind(first, second) == order


def test_a_score_equal_to_the_threshold_passes() -> None:
    """Results "scoring under `search.relevance_threshold` are dropped": one at it stays."""
    assert kept_count([0.9, 0.5, 0.3, 0.2], 0.3) == 3
    assert kept_count([0.9, 0.5, 0.3, 0.2], 0.31) == 2


def _alone(url: str, text: str = "python tutorial", **ranking: object) -> tuple[float, dict]:
    """The score and details of `url`, ranked second of two by one engine (no neighbours)."""
    lists = {
        "e": [
            hit("https://a.org/x", 1, "e", "python tutorial"),
            hit(url, 2, "e", "python tutorial"),
        ]
    }
    results = rank(
        lists, Query(text), settings(neighbour_weight=0.0, **ranking), weights={}, now=NOW
    )
    (found,) = [r for r in results if r.url == url]
    return found.score, found.details


def test_the_domain_verdict_multiplies_the_score() -> None:
    """A penalised domain keeps `1 - domain_penalty` of its score."""
    plain, _ = _alone("https://spam.xyz/a", domain_penalty=0.0)
    penalised, details = _alone("https://spam.xyz/a", domain_penalty=0.5)
    assert details["domain"] == 0.5
    assert penalised == pytest.approx(plain * 0.5)


def test_authority_is_a_bounded_factor_of_the_score() -> None:
    """`authority_weight` w turns the site's authority a into (1 + w*a) / (1 + w)."""
    off, _ = _alone("https://b.org/y", authority_weight=0.0)
    on, details = _alone("https://b.org/y", authority_weight=1.0)
    assert on == pytest.approx(off * (1 + details["authority"]) / 2)


def test_the_position_shown_is_the_mean_weighted_by_the_engines_weights() -> None:
    """docs/ranking.md: the position signal is the mean of `(k + 1) / (k + rank)` over the
    engines that returned the result, "each engine counting with its weight for the search"."""
    ahead = [hit(f"https://y.org/{i}", i, "b") for i in range(1, 5)]
    lists = {"a": [hit("https://x.org/1", 1, "a")], "b": [*ahead, hit("https://x.org/1", 5, "b")]}
    results = rank(lists, Query("q"), SearchSettings(), weights={"a": 1.0, "b": 3.0})
    (shared,) = [r for r in results if r.url == "https://x.org/1"]
    assert shared.details["ranks"] == {"a": 1, "b": 5}
    # position_k 3: rank 1 is 1, rank 5 is 4 / 8; the plain mean of the two would be 0.75.
    assert shared.details["position"] == pytest.approx((1.0 * 1.0 + 3.0 * 0.5) / 4, abs=1e-4)


def _listed(engine: str, urls: list[str]) -> list[Hit]:
    return [
        Hit(title=f"page {u.rsplit('/', 1)[1]}", url=u, snippet="", rank=i, engine=engine)
        for i, u in enumerate(urls, start=1)
    ]


def _shown(results: list[RankedResult]) -> list[tuple[str, float]]:
    return [(r.key, r.score) for r in results]


_URLS = [f"https://h{i % 3}.org/p{i}" for i in range(10)]


@given(
    st.dictionaries(
        st.sampled_from(["a", "b", "c"]),
        st.lists(st.sampled_from(_URLS), min_size=1, max_size=8),
        min_size=1,
    )
)
def test_an_engine_that_found_nothing_changes_nothing(data: dict[str, list[str]]) -> None:
    # Its empty list holds no vote: counted, it lowered every score and credited every result
    # as unseen by it, so a page two engines agree on could lose first place.
    lists = {engine: _listed(engine, urls) for engine, urls in data.items()}
    query = Query("q", max_results=10)
    search = SearchSettings.model_validate({"relevance_threshold": 0.3})
    alone = rank(lists, query, search, weights={})
    assert _shown(rank({**lists, "empty": []}, query, search, weights={})) == _shown(alone)


def test_a_muted_engine_moves_none_of_the_others_results() -> None:
    # Weight 0: no share of any score, and none of how far the other engines agree.
    a = _listed("a", [f"https://x.com/{i}" for i in range(1, 6)])
    b = _listed(
        "b", ["https://x.com/1", "https://x.com/2", *(f"https://y.com/{i}" for i in (1, 2, 3))]
    )
    c = _listed(
        "c", [*(f"https://y.com/{i}" for i in (1, 2, 3)), "https://z.com/1", "https://z.com/2"]
    )
    search = SearchSettings.model_validate(
        {"mmr": {"enabled": False}, "ranking": {"neighbour_weight": 0.0}}
    )
    query = Query("q", max_results=20)
    two = rank({"a": a, "b": b}, query, search, weights={})
    muted = rank({"a": a, "b": b, "c": c}, query, search, weights={"c": 0.0})
    assert _shown(two) == [(k, s) for k, s in _shown(muted) if "z.com" not in k]


def test_an_engine_whose_every_result_is_blocked_changes_nothing() -> None:
    a = _listed("a", ["https://x.com/1", "https://x.com/2", "https://x.com/3"])
    b = _listed("b", ["https://y.com/1", "https://x.com/2", "https://y.com/3"])
    c = _listed("c", ["https://spam.example/1", "https://spam.example/2"])
    search = SearchSettings.model_validate({"block_domains": ["spam.example"]})
    query = Query("q", max_results=10)
    two = rank({"a": a, "b": b}, query, search, weights={})
    assert two[0].url == "https://x.com/2"
    assert _shown(rank({"a": a, "b": b, "c": c}, query, search, weights={})) == _shown(two)


def test_a_blocked_result_moves_none_of_the_others() -> None:
    # A blocked site is removed: the agreement between the lists may not count the two
    # engines that returned it as agreeing (the engines' ranks of the rest stay as they gave).
    a, b, c = "https://a.org/1", "https://b.org/1", "https://c.org/1"
    lists = {
        "a": _listed("a", ["https://spam.example/x", a, c]),
        "b": _listed("b", ["https://spam.example/x", b, "https://c.org/2"]),
        "c": _listed("c", [c, a, "https://c.org/2"]),
    }
    search = SearchSettings.model_validate({"block_domains": ["spam.example"]})
    query = Query("q", max_results=10)
    unblocked = {e: [h for h in hits if "spam" not in h.url] for e, hits in lists.items()}
    assert _shown(rank(lists, query, search, weights={})) == _shown(
        rank(unblocked, query, search, weights={})
    )


@pytest.mark.parametrize("mmr_on", [False, True])
def test_a_muted_engine_moves_none_of_the_others_results_with_the_default_signals(mmr_on) -> None:
    # Found by hypothesis: with the neighbours on (the default), the muted engine's own result
    # (score 0) took a share of the head's scores and gave it 0 back; with MMR on, it widened
    # the range MMR normalises over.
    search = SearchSettings.model_validate({"relevance_threshold": 0.0, "mmr": {"enabled": mmr_on}})
    query = Query("pgvector index", max_results=20)
    a = [
        hit("https://x.com/1", 1, "a", "guide", "tutorial event loop"),
        hit("https://x.com/2", 2, "a", "fast", "python asyncio"),
        hit("https://x.com/3", 3, "a", "index", "tutorial python"),
    ]
    muted = [hit("https://y.com/1", 1, "m", "guide", "tutorial")]
    alone = rank({"a": a}, query, search, weights={"m": 0.0})
    heard = rank({"a": a, "m": muted}, query, search, weights={"m": 0.0})
    assert [(r.key, r.score) for r in heard if r.engines != ["m"]] == _shown(alone)
    assert [r.score for r in heard if r.engines == ["m"]] == [0.0]


def test_a_muted_engines_words_on_a_page_the_others_returned_change_nothing() -> None:
    # A muted engine returning another engine's page first, under words of its own: its title
    # and snippet would be the page's (best rank, longest snippet), and so move every score
    # through the text signals and the neighbours.
    a = [
        hit("https://u1.example.org/", 1, "a", "rust borrow checker guide", "borrowing explained"),
        hit("https://u2.example.org/", 2, "a", "borrow checker errors", "common errors in rust"),
        hit("https://u3.example.org/", 3, "a", "lifetimes in rust", "lifetime annotations"),
        hit("https://u4.example.org/", 4, "a", "rust book chapter 4", "understanding ownership"),
    ]
    b = [
        hit("https://u2.example.org/", 1, "b", "Borrow checker errors", "how to fix them"),
        hit("https://u5.example.org/", 2, "b", "the rustonomicon", "unsafe rust and lifetimes"),
        hit("https://u1.example.org/", 3, "b", "Rust borrow checker guide", "a guide"),
    ]
    words = "rust borrow checker lifetimes ownership borrowing guide explained in depth"
    c = [hit("http://m.u4.example.org/", 1, "c", words, words)]
    query = Query("rust borrow checker", max_results=10)
    search = SearchSettings()
    without = rank({"a": a, "b": b}, query, search, weights={"c": 0.0})
    muted = rank({"a": a, "b": b, "c": c}, query, search, weights={"c": 0.0})
    assert [(r.url, r.title, r.snippet, r.score) for r in muted] == [
        (r.url, r.title, r.snippet, r.score) for r in without
    ]
    assert next(r for r in muted if "u4" in r.url).engines == ["a", "c"]
