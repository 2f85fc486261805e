"""Boost signals, each in [0, 1] or None when it does not apply to the request.

- consensus: share of the other answering engines that also returned the result;
- authority: official documentation, reference sites and the query's own subject site;
- freshness: how recent the result is, only when the query or `time_range` asks for it.
"""

from __future__ import annotations

import re
from datetime import datetime
from typing import Final

from websearch_mcp.config import NewsSettings, RankingSettings
from websearch_mcp.ranking.domain import DomainInfo, DomainLists, host_facts
from websearch_mcp.ranking.lexical import QueryTerms

# The span a time_range names, used as the freshness half-life.
TIME_RANGE_DAYS = {"day": 1.0, "week": 7.0, "month": 30.0, "year": 365.0}
_DOCS_PATH = re.compile(r"/(?:docs|documentation|manual|reference|handbook)(?:/|$)")
_DOCS_PATH_WORDS: Final = ("doc", "manual", "reference", "handbook")  # one is in every match


def consensus(engines: int, voters: int) -> float | None:
    """Share of the other answering engines that agree: (engines - 1) / (voters - 1).
    None with a single answering engine, where agreement means nothing."""
    if voters <= 1:
        return None
    return min(1.0, max(0, engines - 1) / (voters - 1))


def site_authority(info: DomainInfo, query: QueryTerms, lists: DomainLists) -> float:
    """1 for a listed authority site or the site the query names (redis.io for "redis ..."),
    0.5 for documentation hosts (docs.*, developer.*) and public-institution suffixes (.gov,
    .edu, .ac.uk), else 0."""
    return host_facts(info.host, lists).site_authority(query)


def authority(site: float, path: str) -> float:
    """The site's authority, raised to 0.5 for a documentation path (/docs/, /manual/)."""
    if site or not any(word in path for word in _DOCS_PATH_WORDS):  # most paths: no pattern run
        return site
    return 0.5 if _DOCS_PATH.search(path) else site


def wants_recent(query: QueryTerms, time_range: str | None, now: datetime) -> bool:
    """Whether freshness applies: a time_range, a recency word ("latest", "最新") or this year."""
    return bool(time_range) or query.recency or str(now.year) in query.words


def freshness(
    published: datetime | None, now: datetime, time_range: str | None, settings: RankingSettings
) -> float:
    """0.5 ** (age / half-life): 1 for today (or a future date), 0.5 at one half-life. The
    half-life is the time_range's span, else `freshness_half_life_days`; undated results get
    `freshness_undated`."""
    if published is None:
        return settings.freshness_undated
    half_life = TIME_RANGE_DAYS.get(time_range or "", settings.freshness_half_life_days)
    age_days = (now - published).total_seconds() / 86_400
    return 0.5 ** (max(0.0, age_days) / half_life)


def news_freshness(published: datetime | None, now: datetime, settings: NewsSettings) -> float:
    """0.5 ** (age / half-life) in hours, as `freshness` is in days: a news search asks for
    what is recent whatever its words; undated results get `settings.undated`."""
    if published is None:
        return settings.undated
    age_hours = (now - published).total_seconds() / 3600
    return 0.5 ** (max(0.0, age_hours) / settings.half_life_hours)
