"""The `academic` section: the ranking of `academic_search` (websearch_mcp/ranking/academic.py)."""

from __future__ import annotations

from pydantic import Field

from websearch_mcp.config.types import CommaList, Days, Fraction, Section, Weight


class AcademicSettings(Section):
    """The ranking of `academic_search` (websearch_mcp/ranking/academic.py).

    As in the web ranking, the score is the normalised RRF score times one bounded factor
    (1 + w * s) / (1 + w) per signal s in [0, 1]; a weight of 0 switches a signal off. The
    threshold is lower than the web one: indexes cover different fields (dblp, PubMed), so a
    paper found by a single index out of many is normal, and its RRF share is small.
    """

    relevance_threshold: Fraction = Field(
        0.04, description="final score below which results go (top two stay)"
    )
    alignment_weight: Weight = Field(
        1.0, description="share of the query's content words in the paper"
    )
    rare_term_weight: Weight = Field(
        0.3, description="share of rare/compound query terms (bert, covid-19)"
    )
    phrase_weight: Weight = Field(
        0.2, description="share of adjacent query word pairs adjacent in the paper"
    )
    citations_weight: Weight = Field(
        0.3, description="citations, log-compressed: log(1 + c) / log(1 + sat)"
    )
    citations_saturation: int = Field(
        1000, ge=1, description="citation count at which the citation signal reaches 1"
    )
    citations_unknown: Fraction = Field(
        0.25, description="citation signal of a paper no index counted"
    )
    venue_weight: Weight = Field(
        0.2, description="published in a top venue (built-in list + venues)"
    )
    open_access_weight: Weight = Field(0.1, description="a full-text PDF link is known")
    freshness_weight: Weight = Field(
        0.3, description="recency, only when the query asks for it (latest, 2025)"
    )
    freshness_half_life_days: Days = Field(730.0, description="age halving the freshness signal")
    freshness_undated: Fraction = Field(
        0.5, description="freshness of a paper without a known date"
    )
    venues: CommaList = Field(
        default_factory=list,
        description="added to the built-in top venues: acronyms (NeurIPS) match as a word, "
        "names of three or more words as a phrase, shorter names exactly",
    )
