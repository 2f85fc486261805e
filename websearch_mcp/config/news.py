"""The `search.news` keys: how a news search (`category: news`) ranks and folds its results."""

from __future__ import annotations

from pydantic import Field

from websearch_mcp.config.types import Fraction, Section, Weight


class NewsSettings(Section):
    """News ranking: the web fusion with the freshness signal always on, its half-life in
    hours, and the story fold (docs/news.md): results reporting one story within
    `fold_window_hours` of each other take one place."""

    # Recency matters for every news query: stronger than the web's freshness weight.
    freshness_weight: Weight = Field(1.0, description="recency of a news result")
    half_life_hours: float = Field(
        24.0, gt=0.0, le=8_760.0, description="age at which a news result's freshness halves"
    )
    undated: Fraction = Field(0.3, description="freshness of a news result without a date")
    fold: bool = Field(True, description="fold results reporting the same story into one")
    fold_window_hours: float = Field(
        48.0, gt=0.0, le=720.0, description="the most apart two reports of one story may be"
    )
    # Shared content words over all of two titles' (the shorter's all in the longer): below
    # it the longer says too much more to be sure it is the same story.
    fold_min_overlap: Fraction = Field(
        0.6, description="least share of two titles' content words that both have"
    )
