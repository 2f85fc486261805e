"""The `search` section: the strategy, fusion, and how engines are asked (keys, retries,
breakers). The ranking keys are in `ranking.py`."""

from __future__ import annotations

from typing import Literal

from pydantic import AliasChoices, Field

from websearch_mcp.config.news import NewsSettings
from websearch_mcp.config.ranking import MMRSettings, RankingSettings
from websearch_mcp.config.types import CommaList, Fraction, Rest, Section


class PoolSettings(Section):
    """The `pool` strategy: one keyed provider per request, a keyless engine as last resort."""

    order: Literal["round_robin", "priority", "weighted"] = "round_robin"
    # `priority`: these first, in this order; the other keyed providers follow.
    providers: CommaList = Field(default_factory=list)


class SequentialSettings(Section):
    """The `sequential` strategy: engines one after another until a list is good enough."""

    # These first, in this order; the other chosen engines follow in the built-in order.
    order: CommaList = Field(default_factory=list)
    quality_stop: Fraction = 0.8
    quality_accept: Fraction = Field(
        0.3, validation_alias=AliasChoices("quality_accept", "relevance_threshold")
    )
    force_all: bool = False


class KeySettings(Section):
    """Key pools: how long a key that failed is left alone."""

    cooldown_seconds: Rest = 1800.0  # rate limit or quota without Retry-After
    refused_cooldown_seconds: Rest = 21_600.0  # 401/403: the key was refused


class RetrySettings(Section):
    """Retries of 429/502/503 answers within the deadline (exponential backoff with jitter)."""

    retries: int = Field(2, ge=0, le=5)
    base_seconds: float = Field(0.25, gt=0.0, le=10.0)
    max_seconds: float = Field(2.0, gt=0.0, le=60.0)


class BreakerSettings(Section):
    """Per-engine circuit breakers: how long each failure rests an engine (docs/engines.md)."""

    enabled: bool = True
    captcha_seconds: Rest = 3600.0
    denied_seconds: Rest = 180.0  # access denied or 429 without Retry-After
    error_step_seconds: Rest = 5.0  # grows per failure in a row
    error_max_seconds: Rest = 120.0


class SearchSettings(Section):
    strategy: Literal["hybrid", "sequential", "pool"] = "hybrid"
    max_results: int = Field(10, ge=1, le=50)
    deadline_seconds: float = Field(8.0, gt=0, le=120)
    # On the final score (normalised RRF times the signal factors); the top two always stay.
    relevance_threshold: Fraction = 0.05
    rrf_k: int = Field(60, ge=1, le=1000)
    mmr: MMRSettings = Field(default_factory=MMRSettings)
    block_domains: CommaList = Field(default_factory=list)
    # Multiplies the scores of the results of a list reported `irrelevant` (it seems to answer
    # another query), listed after those of the lists that answer this one.
    irrelevant_weight: Fraction = 0.05
    ranking: RankingSettings = Field(default_factory=RankingSettings)
    news: NewsSettings = Field(default_factory=NewsSettings)
    pool: PoolSettings = Field(default_factory=PoolSettings)
    sequential: SequentialSettings = Field(default_factory=SequentialSettings)
    keys: KeySettings = Field(default_factory=KeySettings)
    retry: RetrySettings = Field(default_factory=RetrySettings)
    breaker: BreakerSettings = Field(default_factory=BreakerSettings)
