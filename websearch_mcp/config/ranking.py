"""The ranking keys of `search`: MMR diversity and the weights and lists of the signals."""

from __future__ import annotations

from pydantic import Field

from websearch_mcp.config.types import CommaList, Days, Fraction, Section, Weight


class MMRSettings(Section):
    """Maximal marginal relevance: pick `lambda * relevance - (1 - lambda) * similarity`, with
    the relevance min-max normalised over the candidates and token Jaccard similarity (words
    shared with the query left out). 0.95 still demotes near-copies. On by default for the open
    web's near-copies, which the judged collections do not hold: there it can only cost, and
    costs next to nothing (docs/benchmarks.md, the ablation)."""

    enabled: bool = True
    lambda_: Fraction = Field(0.95, alias="lambda")


class RankingSettings(Section):
    """Weights and lists of the ranking signals (docs/ranking.md).

    The final score is the normalised RRF score times one bounded factor per signal. A signal
    s in [0, 1] with weight w gives the factor (1 + w * s) / (1 + w): 1 when s = 1, 1 / (1 + w)
    when s = 0, and exactly 1 for every result when w = 0, so each signal is switched off by a
    weight of 0 and RRF stays the backbone. Domain lists match a host and its subdomains, and
    extend built-in lists (so an empty list keeps the built-in protection).
    """

    # Off, as are phrases: across the judged collections neither adds enough nDCG@10 to stay
    # on (docs/benchmarks.md, the ablation).
    alignment_weight: Weight = Field(
        0.0, description="share of the query's content words in the result"
    )
    # On for the open web's identifiers (error codes, package names), which the judged
    # collections' queries do not hold: there it never acts.
    rare_term_weight: Weight = Field(
        0.3, description="share of rare/compound query terms (pgvector, pg18)"
    )
    phrase_weight: Weight = Field(
        0.0, description="share of adjacent query word pairs adjacent in the result"
    )
    domain_penalty: Fraction = Field(
        0.5, description="a penalised site's score is multiplied by 1 - this"
    )
    # Off: it repeats RRF's vote count, and where engines index different parts of the web,
    # counting votes is what misleads.
    consensus_weight: Weight = Field(
        0.0, description="share of the other answering index families that agree"
    )
    # RRF at k = 60 is nearly a vote count. Times a heavily weighted mean of the steep
    # (k + 1) / (k + rank) it comes close to RRF with that small k, whose top ranks count.
    # Weight and k chosen with the agreement below by leave-one-collection-out over five judged
    # collections, two engine line-ups and two coverages (docs/benchmarks.md).
    position_weight: float = Field(
        10.0,
        ge=0.0,
        le=100.0,
        description="how high the engines that returned the result ranked it",
    )
    position_k: float = Field(
        3.0, ge=0.0, le=100.0, description="steepness of the position scale (k + 1) / (k + rank)"
    )
    # Engines that likely do not index a result vote as the ones that returned it did on
    # average; at most 1 (a full vote each). Worth most when engines see different documents.
    coverage_weight: Fraction = Field(
        0.5, description="credit for the engines that likely do not index a result"
    )
    # Off: the reported scores (Tavily's relevance, SearXNG's 1/position) cost nDCG@10 and
    # MRR@10 next to the position signal.
    engine_score_weight: Weight = Field(
        0.0, description="the engines' own relevance scores in place of ranks"
    )
    # Relevant pages resemble each other: each of the fused list's first 20 keeps 1 - this of
    # its score and takes this times the mean score of its 5 most similar ones there (words
    # beyond the query's). Below 0.5, where two exact copies keep their order.
    neighbour_weight: Fraction = Field(
        0.4, description="share of a result's score taken from the top results most like it"
    )
    # An engine whose list agrees with none of the others' on this query counts for less:
    # a poor engine's list stands apart, a good one's shares its head with other good ones.
    # Below 1, so that an engine whose list shares nothing with the others' still votes.
    agreement_weight: Fraction = Field(
        0.9, description="how much an engine's weight follows its list's agreement with the others"
    )
    authority_weight: Weight = Field(
        0.1, description="official documentation or the query's own site"
    )
    freshness_weight: Weight = Field(
        0.3, description="recency, only when the query or time_range asks for it"
    )
    freshness_half_life_days: Days = Field(
        180.0, description="age halving the freshness without a time_range"
    )
    freshness_undated: Fraction = Field(
        0.5, description="freshness of a result without a known date"
    )
    quality_phrase_bonus: Fraction = Field(
        0.2, description="engine list quality: bonus for contiguous query pairs"
    )
    quality_offtopic_penalty: Fraction = Field(
        0.5, description="engine list quality: a hit with an off-topic word"
    )
    # Lists extend the built-in ones in websearch_mcp/ranking/domain.py and quality.py.
    penalized_domains: CommaList = Field(
        default_factory=list, description="added to the built-in e-commerce and brand sites"
    )
    dictionary_domains: CommaList = Field(
        default_factory=list, description="added to the dictionaries penalised on error codes"
    )
    authority_domains: CommaList = Field(
        default_factory=list, description="added to the built-in official and reference sites"
    )
    low_quality_tlds: CommaList = Field(
        default_factory=list, description="added to the built-in low-quality suffixes"
    )
    offtopic_words: CommaList = Field(
        default_factory=list, description="added to the built-in off-topic words (list quality)"
    )
