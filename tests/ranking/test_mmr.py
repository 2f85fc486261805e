"""Maximal marginal relevance on a normalised scale."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from websearch_mcp.ranking.mmr import Shared, jaccard, mmr, normalise
from websearch_mcp.ranking.neighbours import overlap


def test_jaccard() -> None:
    assert jaccard(frozenset("ab"), frozenset("bc")) == 1 / 3
    assert jaccard(frozenset(), frozenset("a")) == 0.0
    assert jaccard(frozenset("ab"), frozenset("ab")) == 1.0


def test_normalise_to_unit_range() -> None:
    assert normalise([0.02, 0.06, 0.04]) == pytest.approx([0.0, 1.0, 0.5])
    assert normalise([0.3, 0.3]) == [1.0, 1.0]
    assert normalise([]) == []


DUP = frozenset({"pgvector", "hnsw", "index", "build", "memory"})
OTHER = frozenset({"ivfflat", "list", "probe", "recall"})


def test_near_duplicate_is_demoted_and_top_stays_first() -> None:
    relevance = [0.030, 0.029, 0.027, 0.010]  # raw RRF-sized scores: normalisation matters
    tokens = [DUP, DUP | {"copy"}, OTHER, frozenset({"misc"})]
    order, sims = mmr(relevance, tokens, 0.7, 4)
    assert order[0] == 0
    assert order.index(2) < order.index(1)  # the distinct result overtakes the near-duplicate
    assert sims[order.index(1)] > 0.8


def test_lambda_one_keeps_relevance_order() -> None:
    order, _ = mmr([0.9, 0.8, 0.7], [DUP, DUP, DUP], 1.0, 3)
    assert order == [0, 1, 2]


def test_ties_keep_the_input_order() -> None:
    misc = frozenset({"misc"})
    assert mmr([0.5, 0.5, 0.5], [DUP, OTHER, misc], 0.7, 3) == ([0, 1, 2], [0.0, 0.0, 0.0])


def test_lambda_zero_still_keeps_the_top_first() -> None:
    order, _ = mmr([0.9, 0.8, 0.7], [DUP, DUP, OTHER], 0.0, 3)
    assert order[0] == 0
    assert order[1] == 2


def test_limit_and_empty() -> None:
    assert mmr([0.5, 0.4, 0.3], [DUP, OTHER, DUP], 0.7, 2)[0] == [0, 1]
    assert mmr([], [], 0.7, 5) == ([], [])


class _Recorded(dict[int, frozenset[str]]):
    """Terms made on first read, as the pipeline's are; `read` lists the candidates asked for."""

    def __init__(self, tokens: list[frozenset[str]]) -> None:
        super().__init__()
        self.tokens = tokens
        self.read: list[int] = []

    def __missing__(self, index: int) -> frozenset[str]:
        self.read.append(index)
        value = self[index] = self.tokens[index]
        return value


def test_terms_made_on_first_read_give_the_same_order_and_only_the_scanned_are_read() -> None:
    # Two close at the top, then a long tail far below: with lambda 0.95 no tail candidate can
    # win a round, so its terms are never needed.
    relevance = [0.9, 0.89, 0.88] + [0.1 - i / 1000 for i in range(20)]
    tokens = [DUP, DUP | {"copy"}, OTHER] + [frozenset({f"tail{i}", "misc"}) for i in range(20)]
    lazy = _Recorded(tokens)
    assert mmr(relevance, lazy, 0.95, 3) == mmr(relevance, tokens, 0.95, 3)
    assert sorted(lazy.read) == [0, 1, 2]


@settings(max_examples=300, deadline=None)
@given(
    st.lists(st.frozensets(st.sampled_from("abcdef"), max_size=4), min_size=1, max_size=12),
    st.integers(0, 12),
    st.sampled_from([0.0, 0.5, 0.95, 1.0]),
    st.integers(1, 12),
)
def test_counted_pairs_give_the_same_order_without_reading_their_terms(
    tokens: list[frozenset[str]], head: int, lambda_: float, limit: int
) -> None:
    relevance = sorted((1.0 - i / 20 for i in range(len(tokens))), reverse=True)
    head = min(head, len(tokens))
    counts = overlap(tokens[:head])[1]
    rows = [*range(head), *[-1] * (len(tokens) - head)]
    shared = Shared(counts, [len(t) for t in tokens[:head]], rows)
    lazy = _Recorded(tokens)
    assert mmr(relevance, lazy, lambda_, limit, shared) == mmr(relevance, tokens, lambda_, limit)
    if head == len(tokens):  # every pair counted: no candidate's terms are read
        assert lazy.read == []


def test_relevance_is_compared_with_similarity_on_the_normalised_scale() -> None:
    """A slightly similar result close in relevance to the best stays ahead of a distinct but
    far less relevant one: on raw RRF-sized scores the similarity would outweigh relevance."""
    relevance = [0.030, 0.029, 0.010]
    tokens = [frozenset("abcde"), frozenset("afghi"), frozenset("xyz")]  # 1 shares 1/9 with 0
    order, sims = mmr(relevance, tokens, 0.7, 3)
    assert order == [0, 1, 2]
    assert sims[1] == pytest.approx(1 / 9)
