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


def test_quality_reads_the_querys_words_with_or_without_accents() -> None:
    """An accented query answered by titles without the accents is answered, as the other way
    round is."""
    assert list_quality(hits(("Pokemon Scarlet", "")), "pokémon", SETTINGS) == 1.0
    assert list_quality(hits(("Pokémon Scarlet", "")), "pokemon", SETTINGS) == 1.0


@pytest.mark.parametrize("apostrophe", ["\u2019", "\u2018", "\u02bc"])
def test_a_typographic_apostrophe_is_the_querys_own(apostrophe: str) -> None:
    """A page printing `O’Reilly` with a curly apostrophe (or the modifier letter, or the
    left quotation mark an autocorrect puts) shares the word of a query typed `O'Reilly`."""
    printed = hits((f"O{apostrophe}Reilly Media", f"O{apostrophe}Reilly books"))
    assert not answers_another_query(printed, "O'Reilly")
    assert list_quality(printed, "O'Reilly", SETTINGS) == 1.0


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


@pytest.mark.parametrize(
    ("query", "titles"),
    [
        # A casino list for "machine learning for beginners": only 门 of 澳门 (Macau) in common.
        ("机器学习入门", ["澳门新葡京娱乐城官网", "真人百家乐在线平台"]),
        # Beijing's weather answered with Tokyo travel tips, Tokyo's with a Peking duck recipe.
        ("北京天气预报", ["东京旅游攻略"]),
        ("東京の天気", ["北京烤鸭做法大全"]),
    ],
    ids=["casino", "beijing-tokyo", "tokyo-beijing"],
)
def test_one_han_character_in_common_is_no_other_writing_of_the_query(
    query: str, titles: list[str]
) -> None:
    """docs/engines.md: simplified characters for traditional ones, or Chinese for Japanese
    kanji, are the query's words written another way. One common character in a whole list is
    no such thing: thousands of characters are shared by unrelated words (门 of 澳门 and of
    入门, 京 of 北京 and of 东京), and a list on another topic must still be gated."""
    listed = hits(*((title, "") for title in titles))
    assert answers_another_query(listed, query)


@pytest.mark.parametrize(
    ("query", "titles"),
    [
        # Beijing's weather answered with a lottery and casino list: 天 and 北, apart.
        ("北京天气", ["天天彩票 北方赌场", "天下北方娱乐城"]),
        # The Tokyo Olympics answered with a casino list: 东 and 京 in two other words.
        ("东京奥运会", ["东方娱乐城 京城赌场"]),
        # Tokyo's weather answered with a casino: 京 and 天, adjacent in the query past its
        # kana, one character apart in the result.
        ("東京の天気", ["京城天下娱乐城"]),
    ],
    ids=["weather-lottery", "olympics-casino", "kana-in-query"],
)
def test_two_han_characters_apart_are_no_other_writing_of_the_query(
    query: str, titles: list[str]
) -> None:
    """The query's words written another way keep its characters where they stand (one
    simplified character for each traditional one: 器 and 入 of 機器學習入門 three apart in
    机器学习入门 too). Two of them anywhere in a result, each in an unrelated word, are no such
    thing: a casino list answering a Chinese query must still be gated."""
    listed = hits(*((title, "") for title in titles))
    assert answers_another_query(listed, query)


@pytest.mark.parametrize(
    ("query", "titles"),
    [
        # Beijing to Nanjing answered with a casino list: 京 twice, no other character.
        ("北京到南京", ["京城京彩娱乐城"]),
        # "How to learn Japanese" answered with "how to win money": only the filler 如何.
        ("如何学习日语", ["如何赢钱 娱乐城官网"]),
        # Tokyo's weather answered with Beijing's casinos: 京 and the particle 的.
        ("东京的天气", ["北京的赌场"]),
    ],
    ids=["one-character-twice", "stop-word", "particle"],
)
def test_a_repeated_character_or_a_stop_word_is_no_other_writing_of_the_query(
    query: str, titles: list[str]
) -> None:
    """Two of the query's Han characters are two different characters of its words: one
    character twice, or the characters of a stop word or a particle (如何, 最新, 的), which
    the query's content leaves out, are in every other list too: it must still be gated."""
    listed = hits(*((title, "") for title in titles))
    assert answers_another_query(listed, query)


@pytest.mark.parametrize(
    ("query", "titles"),
    [
        # Simplified characters with a space between the words, and the query with one.
        ("機器學習入門", ["机器学习 入门指南"]),
        ("機器學習 入門", ["机器学习入门教程"]),
        # A Chinese query answered in Japanese: kana between the words' characters.
        ("东京天气", ["東京の天気 - tenki.jp"]),
        ("机器学习入门", ["機械学習の入門"]),
        # 器 once before, too far from 入, then in the query's words written another way.
        ("機器學習入門", ["器材选购 机器学习入门"]),
        # 器 as its compatibility ideograph (U+FA38, legacy encodings), in the result or query.
        ("機器學習入門", ["机\ufa38学习入门"]),
        ("機\ufa38學習入門", ["机器学习入门"]),
    ],
    ids=[
        "space-in-result",
        "space-in-query",
        "kana-tokyo",
        "kana-machine-learning",
        "a-character-earlier",
        "compatibility-ideograph-in-result",
        "compatibility-ideograph-in-query",
    ],
)
def test_the_querys_words_written_another_way_apart_are_its_words(
    query: str, titles: list[str]
) -> None:
    """docs/engines.md: simplified characters for traditional ones, Chinese for Japanese kanji,
    are the query's words written another way. A space or kana between two words sets no
    character farther from the next: such a list answers the query (two of its characters in
    one result were before the gate asked their order)."""
    listed = hits(*((title, "") for title in titles))
    assert not answers_another_query(listed, query)


def test_kana_voicing_marks_are_no_accents() -> None:
    """Accents are left out as people type the words ("pokemon" for "Pokémon"); kana voicing
    marks never are: バス (bus) without them is ハス, and パス (pass) too. A list on passwords
    for a bus timetable shares no word with it, as unrelated as any other list."""
    query = "バス 時刻表"
    passwords, logins = hits(("パスワード 変更", "")), hits(("ログイン 方法", ""))
    assert list_quality(passwords, query, SETTINGS) == list_quality(logins, query, SETTINGS)
    assert answers_another_query(hits(("パスワード 変更 方法", "")), query)


def test_thai_tone_marks_are_no_accents() -> None:
    """Thai tone marks make another word: ข่าว (news) without its mark is ขาว (white). A list
    on white cloth is not a perfect answer to the news (it ended a `sequential` search)."""
    query = "ข่าว"
    cloth, news = hits(("ผ้าขาว", "")), hits(("ข่าว ด่วน", ""))
    assert list_quality(cloth, query, SETTINGS) < list_quality(news, query, SETTINGS)


@pytest.mark.parametrize(
    ("query", "titles"),
    [
        # Arabic is typed without its short vowels; the Quran's pages print them.
        ("القرآن الكريم", ["الْقُرْآنُ الْكَرِيمُ", "سُورَةُ الْفَاتِحَةِ"]),
        # Hebrew without its points, a Bible's pages with them.
        ("בראשית", ["בְּרֵאשִׁית בָּרָא אֱלֹהִים"]),
    ],
    ids=["arabic-harakat", "hebrew-niqqud"],
)
def test_vowel_points_are_left_out_as_accents_are(query: str, titles: list[str]) -> None:
    """The query's words as people type them, without the vowel marks a page prints, are the
    page's words: such a list answers the query (before the accents were read for Latin, Greek
    and Cyrillic only, every combining mark was left out)."""
    listed = hits(*((title, "") for title in titles))
    assert not answers_another_query(listed, query)
