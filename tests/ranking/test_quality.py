"""Engine-level list quality and the relevance gate."""

from __future__ import annotations

import pytest

from websearch_mcp.config import RankingSettings
from websearch_mcp.models import Hit
from websearch_mcp.ranking.quality import (
    NO_CONTENT_QUALITY,
    answers_another_query,
    list_quality,
    scripts,
    shares_content_word,
)

SETTINGS = RankingSettings()


def hits(*pairs: tuple[str, str]) -> list[Hit]:
    return [
        Hit(title=t, snippet=s, url=f"https://e{i}.com/x", rank=i, engine="e")
        for i, (t, s) in enumerate(pairs, start=1)
    ]


def test_on_topic_list_scores_high_and_phrase_adds() -> None:
    on_topic = hits(("pgvector index tuning", "how to tune a pgvector index"))
    scattered = hits(("index", "tuning of the pgvector extension"))
    assert list_quality(on_topic, "pgvector index tuning", SETTINGS) == 1.0
    assert list_quality(scattered, "pgvector index tuning", SETTINGS) == pytest.approx(1.0)
    partial = hits(("pgvector", "an extension"))
    assert list_quality(partial, "pgvector index tuning", SETTINGS) == pytest.approx(1 / 3)


def test_quality_is_the_mean_over_hits() -> None:
    mixed = hits(("rust borrow checker", ""), ("cooking pasta", "recipes"))
    # 1 + phrase bonus, clamped to 1, and 0 for the unrelated hit
    assert list_quality(mixed, "rust borrow checker", SETTINGS) == pytest.approx(0.5)
    half = hits(("rust borrow", ""), ("rust guide", ""))
    assert list_quality(half, "rust borrow checker", SETTINGS) == pytest.approx(
        ((2 / 3 + 0.2 * 0.5) + 1 / 3) / 2
    )


def test_offtopic_words_penalise_whole_words_only() -> None:
    spam = hits(("python tutorial", "best online casino bonus"))
    assert list_quality(spam, "python tutorial", SETTINGS) == pytest.approx(0.7)
    word_inside = hits(("python tutorial", "casinoroyale is not the word"))
    assert list_quality(word_inside, "python tutorial", SETTINGS) == 1.0
    in_url = [Hit(title="python tutorial", snippet="", url="https://casino.example/python",
                  rank=1, engine="e")]  # fmt: skip
    assert list_quality(in_url, "python tutorial", SETTINGS) == pytest.approx(0.7)
    # A hit is worth 0 at least: an off-topic hit off the query is no worse than none.
    assert list_quality(hits(("online casino", "bonus")), "python tutorial", SETTINGS) == 0.0


def test_offtopic_words_the_query_asks_for_are_not_penalised() -> None:
    casino = hits(("casino royale", "the casino film"))
    assert list_quality(casino, "casino royale", SETTINGS) == 1.0
    chinese = hits(("彩票 开奖", "博彩 网站"))
    assert list_quality(chinese, "彩票 开奖", SETTINGS) < 1.0  # 博彩 was not asked for
    assert list_quality(hits(("彩票 开奖", "今日彩票")), "彩票 开奖", SETTINGS) == 1.0


def test_query_without_content_words_gets_the_neutral_value() -> None:
    assert (
        list_quality(hits(("anything", "")), "what is the latest", SETTINGS) == NO_CONTENT_QUALITY
    )


def test_empty_list_has_no_quality() -> None:
    assert list_quality([], "rust", SETTINGS) == 0.0


def test_gate_drops_a_list_sharing_no_content_word() -> None:
    cached_page = hits(("Bing", "Cached page of a site"), ("Weather", "sunny"))
    assert not shares_content_word(cached_page, "pgvector hnsw")
    assert shares_content_word(hits(("HNSW explained", "")), "pgvector hnsw")
    assert shares_content_word([*cached_page, *hits(("HNSW explained", ""))], "pgvector hnsw")
    assert shares_content_word(cached_page, "what is the latest")


def test_own_offtopic_words_are_added() -> None:
    listed = hits(("python tutorial", "sponsored crypto airdrop"))
    assert list_quality(listed, "python tutorial", SETTINGS) == 1.0
    own = RankingSettings(offtopic_words=["airdrop"])
    assert list_quality(listed, "python tutorial", own) == pytest.approx(0.7)


def test_hangul_kana_and_han_are_one_script_family() -> None:
    assert scripts("검색 エンジン 搜索") == frozenset({"CJK"})
    # A Korean query answered in Chinese about something else: the same script family, so the
    # list is evidence of answering another query.
    off = [Hit("赌场优惠活动", "https://x.cn/1", "最新赌场优惠", 1, "e")]
    assert answers_another_query(off, "파이썬 비동기 프로그래밍")
