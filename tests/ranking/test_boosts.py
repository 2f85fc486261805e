"""Consensus, authority and freshness signals."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from websearch_mcp.config import NewsSettings, RankingSettings
from websearch_mcp.dates import parse_date
from websearch_mcp.ranking.boosts import (
    _DOCS_PATH,
    authority,
    consensus,
    freshness,
    news_freshness,
    site_authority,
    wants_recent,
)
from websearch_mcp.ranking.domain import domain_info, domain_lists
from websearch_mcp.ranking.lexical import analyze_query

NOW = datetime(2026, 6, 1, tzinfo=UTC)
SETTINGS = RankingSettings()
LISTS = domain_lists(SETTINGS)


def test_consensus_is_the_share_of_other_engines() -> None:
    assert consensus(1, 4) == 0.0
    assert consensus(3, 4) == pytest.approx(2 / 3)
    assert consensus(4, 4) == 1.0
    assert consensus(1, 1) is None  # one engine: agreement means nothing


def site(host: str, query: str = "how to configure replication") -> float:
    return site_authority(domain_info(host), analyze_query(query), LISTS)


def test_authority_sites() -> None:
    assert site("docs.python.org") == 1.0
    assert site("en.wikipedia.org") == 1.0
    assert site("redis.io", "redis replication") == 1.0  # the query names the site
    assert site("scikit-learn.org", "scikit-learn pipeline") == 1.0  # as its name is spelled
    assert site("scikit-learn.org", "scikitlearn pipeline") == 1.0  # or closed up
    assert site("docs.somevendor.com") == 0.5  # documentation host
    assert site("cs.stanford.edu") == 0.5
    assert site("www.ox.ac.uk") == 0.5
    assert site("randomblog.net") == 0.0
    assert site("anything.ac") == 0.0  # Ascension Island's domain, open to anyone
    assert site("www.nasa.gov") == 0.5


def test_documentation_paths_raise_authority() -> None:
    assert authority(0.0, "/docs/replication") == 0.5
    assert authority(0.0, "/blog/replication") == 0.0
    assert authority(1.0, "/blog/x") == 1.0


@settings(max_examples=300, deadline=None)
@given(
    st.lists(
        st.sampled_from(["/", "docs", "doc", "documentation", "manual", "reference", "handbook",
                         "Docs", "x", "-", "a/b"]),
        max_size=6,
    ).map("".join),
    st.sampled_from([0.0, 0.5, 1.0]),
)  # fmt: skip
def test_a_documentation_path_is_the_patterns_match(path: str, site_value: float) -> None:
    """The words checked first only spare the pattern where it cannot match."""
    expected = 0.5 if not site_value and _DOCS_PATH.search(path) else site_value
    assert authority(site_value, path) == expected


def test_freshness_only_when_asked() -> None:
    plain = analyze_query("python release notes")
    assert not wants_recent(plain, None, NOW)
    assert wants_recent(plain, "week", NOW)
    assert wants_recent(analyze_query("latest python release"), None, NOW)
    assert wants_recent(analyze_query("python release 2026"), None, NOW)
    assert not wants_recent(analyze_query("python release 2019"), None, NOW)


def test_freshness_halves_every_half_life() -> None:
    today = parse_date("2026-06-01")
    half = parse_date("2026-05-25")
    assert freshness(today, NOW, "week", SETTINGS) == 1.0
    assert freshness(half, NOW, "week", SETTINGS) == pytest.approx(0.5)
    year_old = parse_date("2025-06-01")
    assert freshness(year_old, NOW, "year", SETTINGS) == pytest.approx(0.5)
    assert freshness(year_old, NOW, None, SETTINGS) == pytest.approx(0.5 ** (365 / 180))
    assert freshness(None, NOW, "week", SETTINGS) == SETTINGS.freshness_undated
    assert freshness(parse_date("2027-01-01"), NOW, "day", SETTINGS) == 1.0  # future: fresh


def test_news_freshness_halves_every_half_life_in_hours() -> None:
    news = NewsSettings()
    half = NOW - timedelta(hours=news.half_life_hours)
    assert news_freshness(NOW, NOW, news) == 1.0
    assert news_freshness(half, NOW, news) == pytest.approx(0.5)
    assert news_freshness(NOW + timedelta(hours=5), NOW, news) == 1.0  # future: fresh
    assert news_freshness(None, NOW, news) == news.undated


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("2024-05-01", datetime(2024, 5, 1, tzinfo=UTC)),
        ("2024-05-01T10:30:00Z", datetime(2024, 5, 1, 10, 30, tzinfo=UTC)),
        ("2024-05", datetime(2024, 5, 1, tzinfo=UTC)),
        ("2024", datetime(2024, 1, 1, tzinfo=UTC)),
        ("2024-5-7", datetime(2024, 5, 7, tzinfo=UTC)),  # not ISO: read by its numbers
        ("yesterday", None),
        ("2024-13-45", None),
        (None, None),
    ],
)
def test_parse_date(text: str | None, expected: datetime | None) -> None:
    assert parse_date(text) == expected
