"""Tokens, stop words, CJK bigrams, rare terms, alignment and phrase contiguity."""

from __future__ import annotations

import contextlib
import re
import sys
import threading
from collections.abc import Iterator
from itertools import pairwise
from urllib.parse import unquote

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from websearch_mcp.ranking import lexical, tokens
from websearch_mcp.ranking.lexical import (
    alignment,
    analyze_doc,
    analyze_query,
    is_rare,
    phrase_share,
    rare_share,
)
from websearch_mcp.ranking.tokens import Texts, stem, terms, url_words


def stems(*words: str) -> tuple[str, ...]:
    return tuple(stem(w) for w in words)


def test_stop_words_and_search_filler_are_not_content() -> None:
    q = analyze_query("What is the latest news about the current Rust release?")
    assert q.content == stems("news", "rust", "release")
    assert analyze_query("最新的向量数据库").content == ("向量", "量数", "数据", "据库")


def test_query_of_only_stop_words_has_no_content() -> None:
    assert analyze_query("what is the latest").content == ()
    assert analyze_query("最新 如何").content == ()


def test_chinese_is_split_into_bigrams_without_particle_bridges() -> None:
    assert terms("向量数据库") == {"向量", "量数", "数据", "据库"}
    assert "库的" not in terms("数据库的性能")  # a bigram across 的 spans two words
    assert terms("数据库的性能") == {"数据", "据库", "性能"}
    assert terms("库") == {"库"}  # a lone character stays a term


def test_a_chinese_word_holding_a_particle_character_is_kept() -> None:
    # 吗啡 (morphine), 酒吧 (bar), 了解 (to understand): left without them, nothing is searched.
    assert terms("吗啡") == {"吗啡"} and terms("酒吧") == {"酒吧"} and terms("了解") == {"了解"}
    assert analyze_query("吗啡").content == ("吗啡",)


def test_lao_myanmar_and_khmer_runs_are_read_as_bigrams_too() -> None:
    # Written without spaces between words, as Thai is.
    assert terms("ພາສາ") == {"ພາ", "າສ", "ສາ"}  # Lao
    assert terms("မြန်") == {"မြ", "ြန", "န်"}  # Myanmar
    assert terms("ភាសា") == {"ភា", "ាស", "សា"}  # Khmer


def test_korean_is_read_as_bigrams_across_its_particles_and_run_together_words() -> None:
    assert terms("서울날씨") == {"서울", "울날", "날씨"}
    # A query of words run together meets a title that spaces them, and one with a particle.
    assert alignment(analyze_query("서울날씨"), analyze_doc("오늘 서울 날씨", "", "")) > 0.5
    assert alignment(analyze_query("서울 날씨"), analyze_doc("서울의 날씨", "", "")) == 1.0


def test_letters_in_compatibility_forms_are_the_plain_ones() -> None:
    # Full-width letters and ligatures, in text that is not ASCII, read as the letters they are.
    assert terms("ＰＹＴＨＯＮ ﬁle über") == {"python", "file", "über"}


def test_mixed_chinese_and_latin() -> None:
    assert terms("Python教程，2024版") == {"python", "教程", "2024", "版"}


def test_identifiers_stay_whole_and_yield_parts() -> None:
    assert terms("create an fts5_virtual table") == set(
        stems("create", "fts5_virtual", "fts5", "virtual", "table")
    )
    assert {"node.js", "c++", "c#", "gpt-4o"} <= terms("Node.js, C++ and C# with gpt-4o.")


def test_names_joined_by_an_ampersand_are_terms() -> None:
    # Their parts are single letters and stop words: split, "AT&T outage" would be "outage".
    q = analyze_query("AT&T outage and S&P 500 R&D")
    assert q.content == ("at&t", stem("outage"), "s&p", "500", "r&d")
    assert q.rare == ("at&t", "s&p", "r&d")
    assert alignment(q, analyze_doc("AT&T outage hits S&P 500 R&D", "", "")) == 1.0
    assert alignment(q, analyze_doc("Verizon outage", "500 users", "")) == pytest.approx(2 / 5)
    # Words with "&" standing between them are words apart.
    assert terms("Tom & Jerry, salt&&pepper") == {"tom", "jerry", "salt", "pepper"}
    assert terms("rock&roll") == {"rock&roll", "rock", "roll"}


def test_hyphenated_words_split_but_names_do_not() -> None:
    assert terms("boundary-layer control") == {"boundary", "layer", "control"}
    assert "utf-8" in terms("UTF-8 encoding")


def test_a_lone_letter_before_a_hyphen_stays_with_its_word() -> None:
    # Split off, the letter was dropped: "B-tree" read as "tree", "p-value" as "value".
    q = analyze_query("B-tree index, p-value of a t-test")
    assert q.content == ("btre", "index", "pvalu", "ttest")
    assert q.rare == ("btre", "pvalu", "ttest")
    assert alignment(q, analyze_doc("Tree index", "the value of a test", "")) == pytest.approx(0.25)
    assert alignment(q, analyze_doc("Btree index", "its p-value, a t-test", "")) == 1.0
    # Closed up, both spellings meet, in text and in a URL's slug.
    assert terms("e-mail") == terms("E-Mail") == terms("email") == {"email"}
    assert terms("k-means") == terms("kmeans") == {"kmean"}
    doc = analyze_doc("", "", "https://example.com/x-ray-guide")
    assert doc.url_may_hold({"xray"}) and doc.url == {"xray", stem("guide"), "com", "exampl"}
    # "a" and "i" are words; a letter within a word's parts, or before one letter, is not lone.
    assert terms("a-guide-to-python") == {stem("guide"), "python"}
    assert terms("vitamin-b-complex x-y") == {"vitamin", "complex"}


def test_plural_stemming_meets_singular() -> None:
    assert stem("models") == stem("model")
    assert stem("studies") == stem("study")
    assert stem("indexes") == stem("index")
    # A plural in -ies of a word in -ie: "cookies" met "cooky", never "cookie".
    for word in ("cookie", "movie", "calorie", "zombie"):
        assert stem(f"{word}s") == stem(word)
    assert terms("chocolate cookies") == terms("chocolate cookie")
    assert stem("analysis") == "analysis"
    assert stem("class") == "class"
    # A word of three letters keeps its last one: "gas" is no plural, and "dns" stays rare.
    assert stem("gas") == "gas"
    assert analyze_query("dns records").rare == ("dns",)


def test_a_possessive_is_its_word() -> None:
    query = analyze_query("Dijkstra's algorithm")
    assert query.content == ("dijkstra", "algorithm") and query.rare == ()
    assert phrase_share(query, analyze_doc("Dijkstra algorithm explained", "", "")) == 1.0


@pytest.mark.parametrize("word", ["pgvector", "fts5_virtual", "pg18", "nginx", "sql", "node.js"])
def test_rare_terms(word: str) -> None:
    assert is_rare(word)


@pytest.mark.parametrize(
    "word",
    [
        "database",
        "performance",
        "index",
        "python",
        "2024",
        "speed",
        "square",
        "squeeze",
        "chloride",
        "phlebitis",
    ],
)
def test_common_words_are_not_rare(word: str) -> None:
    assert not is_rare(word)


def test_every_english_onset_is_read_as_one() -> None:
    # An onset the vowel scan cannot produce ("squ": u is a vowel) would mark its words rare.
    assert [o for o in sorted(lexical._ENGLISH_ONSETS) if is_rare(o + "ade")] == []


def test_latin_abbreviations_are_not_terms() -> None:
    query = analyze_query("selective dissemination, e.g. SDI, i.e. current awareness, cf. KWIC")
    assert query.rare == ("sdi", "kwic")
    assert not {"e.g", "i.e", "cf"} & query.content_set


def test_initials_are_not_rare_terms() -> None:
    # Spelled with or without the dots alike ("U.S."/"US"), so a result is not rewarded for one.
    assert analyze_query("U.S. tariffs and a.m. trading hours").rare == ()
    assert analyze_query("H.C. Andrews on image processing").rare == ()
    assert "u.s" in analyze_query("U.S. tariffs").content_set
    # Names with a longer part stay rare.
    assert analyze_query("io.js, node.js and a.out").rare == ("io.js", "node.js", "a.out")


def test_case_as_typed_marks_names_and_acronyms() -> None:
    assert analyze_query("PostgreSQL WAL archiving").rare == ("postgresql", "wal")
    assert analyze_query("HOW TO INSTALL PYTHON").rare == ()  # shouting is not acronyms
    assert analyze_query("AWS EC2").rare == ("aws", "ec2")  # two capital words are acronyms
    # Matched to its word as the text is folded: "İstanbulCard" is "istanbulcard", camelCase.
    assert analyze_query("İstanbulCard bakiye").rare == ("istanbulcard",)


def test_alignment_counts_title_snippet_and_url_words() -> None:
    q = analyze_query("pgvector hnsw index")
    assert alignment(q, analyze_doc("HNSW indexes", "", "https://e.com/")) == pytest.approx(2 / 3)
    in_url = analyze_doc("HNSW indexes", "", "https://github.com/pgvector/pgvector")
    assert alignment(q, in_url) == 1.0
    assert alignment(q, analyze_doc("Unrelated", "nothing here", "https://e.com/x")) == 0.0
    assert alignment(analyze_query("the latest"), analyze_doc("a", "b", "")) == 1.0
    # A digit is a word: "python 3" is not "python 2".
    three = analyze_query("python 3 tutorial")
    assert alignment(three, analyze_doc("Python 3 tutorial", "", "")) == 1.0
    assert alignment(three, analyze_doc("Python 2 tutorial", "", "")) == pytest.approx(2 / 3)


def test_rare_share_rewards_rare_terms_and_is_none_without_them() -> None:
    q = analyze_query("pgvector index tuning")
    assert rare_share(q, analyze_doc("pgvector tuning", "", "")) == 1.0
    assert rare_share(q, analyze_doc("index tuning guide", "", "")) == 0.0
    assert rare_share(analyze_query("index tuning"), analyze_doc("x", "", "")) is None


def test_phrase_contiguity_ignores_stop_words_between() -> None:
    q = analyze_query("speed of sound in air")
    together = analyze_doc("The speed of sound in air", "", "")
    apart = analyze_doc("Sound travels through air at a speed", "", "")
    assert phrase_share(q, together) == 1.0
    assert phrase_share(q, apart) == 0.0
    assert phrase_share(analyze_query("pgvector"), together) is None


def test_phrase_found_in_url_slug() -> None:
    q = analyze_query("install pgvector")
    doc = analyze_doc("Guide", "", "https://e.com/how-to-install-pgvector")
    assert phrase_share(q, doc) == 1.0


def test_recency_words() -> None:
    assert analyze_query("latest python release").recency
    assert analyze_query("最新的大模型").recency
    assert not analyze_query("python release notes").recency


# Text that reaches every tokenising path: identifiers, hyphens, apostrophes, plurals, CJK,
# full-width letters, percent-escapes and slugs.
_PIECES = st.sampled_from(
    [
        "fts5_virtual", "node.js", "c++", "gpt-4o", "boundary-layer", "it's", "studies",
        "indexes", "models", "最新的向量数据库", "ＦＵＬＬ", "Straße", "%C3%BC", "how-to-fix",
        "_to_use", "ORA-00942", "/", ".", " ", "-", "_", "%", "über", "Loop_stream:", "B-tree",
        "e-mail",
    ]
)  # fmt: skip
_TEXTS = st.lists(st.one_of(_PIECES, st.text(max_size=8)), max_size=12).map("".join)


@settings(max_examples=500, deadline=None)
@given(st.text(alphabet="ab.:/?#%2F", max_size=24))
def test_url_words_are_the_host_and_path_before_any_query_or_fragment(url: str) -> None:
    rest = url.split("://", 1)[-1].split("?", 1)[0].split("#", 1)[0]
    rest = unquote(rest) if "%" in rest else rest
    assert url_words(url) == rest.replace("/", " ").replace(".", " ")


@settings(max_examples=300, deadline=None)
@given(_TEXTS, _TEXTS)
def test_a_url_term_less_its_last_character_is_in_the_folded_url(url: str, word: str) -> None:
    """Why `url_may_hold` may skip tokenising a URL: stemming only changes a word's end."""
    doc = analyze_doc("", "", url)
    lowered = tokens.fold(url_words(url))
    folded = tokens.folded(url_words(url))  # lone letters' hyphens closed up too
    assert folded.replace("-", "") == lowered.replace("-", "")
    assert all(term[:-1] in folded for term in doc.url)
    wanted = terms(word) | {word}
    assert analyze_doc("", "", url).url_may_hold(wanted) >= bool(wanted & doc.url)


@settings(max_examples=300, deadline=None)
@given(_TEXTS, _TEXTS, _TEXTS)
def test_a_pair_is_found_where_the_joined_terms_hold_it(title: str, url: str, query: str) -> None:
    """`holds` leaves a URL that cannot hold both words untokenised; its answer is the
    substring test on `joined`, for the URL's own pairs, the title's and a query's."""
    ordered = [terms_in_order(text) for text in (title, url_words(url), query)]
    pairs = {(a, b) for words in ordered for a, b in pairwise(words)}
    pairs |= set(analyze_query(query).pairs)
    for first, second in pairs:
        doc = analyze_doc(title, "", url)
        expected = f" {first} {second} " in analyze_doc(title, "", url).joined
        assert doc.holds(first, second) is expected
        assert doc.holds(first, second) is expected  # once the URL is tokenised too


def terms_in_order(text: str) -> list[str]:
    return analyze_doc(text, "", "").joined.split("|")[0].split()


@settings(max_examples=300, deadline=None)
@given(_TEXTS, _TEXTS, _TEXTS)
def test_alignment_is_the_same_whether_the_url_was_read_or_not(
    query: str, text: str, url: str
) -> None:
    q = analyze_query(query)
    lazy = analyze_doc(text, "", url)
    read = analyze_doc(text, "", url)
    assert read.url is not None  # read before scoring
    assert alignment(q, lazy) == alignment(q, read)
    assert rare_share(q, lazy) == rare_share(q, read)


@contextlib.contextmanager
def _small_term_cache(limit: int) -> Iterator[tokens._TermCache]:
    saved, tokens._TERMS = tokens._TERMS, tokens._TermCache(limit)
    try:
        yield tokens._TERMS
    finally:
        tokens._TERMS = saved


@settings(max_examples=200, deadline=None)
@given(st.lists(_TEXTS, min_size=1, max_size=30))
def test_terms_do_not_depend_on_what_the_bounded_cache_still_holds(texts: list[str]) -> None:
    """The term cache keeps two generations of `limit` chunks; one of three chunks here starts
    a new generation, and every text keeps its terms, compounds' parts included."""
    fresh = [terms(t) for t in texts]
    with _small_term_cache(3) as cache:
        for text, expected in zip(texts * 2, fresh * 2, strict=True):
            assert terms(text) == expected
            # Checked between texts, never during: fewer than 3 chunks, then this text's (each
            # with its hyphenated words, so no more than its length).
            assert len(cache) <= 3 + len(text)


def test_a_word_in_use_survives_a_new_generation_and_one_off_tokens_go() -> None:
    with _small_term_cache(4) as cache:
        terms("fts5_virtual tables a1 b2")
        terms("c3 d4 e5")  # the first generation was full: these start the second
        assert b"fts5_virtual" not in cache and b"c3" in cache
        assert terms("fts5_virtual") == {"fts5_virtual", "fts5", "virtual"}  # moved back
        assert b"fts5_virtual" in cache and "fts5_virtual" in cache.compounds
        terms("f6 g7")  # a third generation: what the first held and nobody asked for again
        terms("h8")
        assert b"a1" not in cache and b"a1" not in cache._previous


def test_texts_read_in_threads_at_once_keep_their_terms() -> None:
    # Passages are read in threads while the event loop ranks: a new generation begun by one
    # text amid another's reading lost that text's compounds' parts (or raised KeyError).
    expected = terms("node.js fts5_virtual gpt-4o at&t")
    failures: list[object] = []

    def reader(seed: int) -> None:
        for i in range(3000):
            try:
                found = terms(f"node.js fts5_virtual gpt-4o at&t w{seed}x{i} v{i}.{seed}")
            except Exception as err:
                failures.append(err)
            else:
                if not expected <= found:
                    failures.append(expected - found)

    interval = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)  # threads take turns as often as they can
    try:
        with _small_term_cache(20):
            threads = [threading.Thread(target=reader, args=(n,)) for n in range(4)]
            for thread in threads:
                thread.start()
            for thread in threads:
                thread.join()
    finally:
        sys.setswitchinterval(interval)
    assert failures == []


@settings(max_examples=400, deadline=None)
@given(_TEXTS, _TEXTS, _TEXTS)
def test_a_title_and_snippet_read_apart_have_the_terms_read_together(
    title: str, snippet: str, url: str
) -> None:
    together = analyze_doc(title, snippet, url)
    apart = analyze_doc(title, snippet, url, Texts())
    assert apart.text == together.text
    assert apart.joined == together.joined
    assert apart.url == together.url


@pytest.mark.parametrize(
    ("title", "snippet"),
    [
        ("ΟΔΟΣ", "ΑΒΓ"),  # a final sigma before the newline
        ("café", "\u0301e accent"),  # a combining mark after it
        ("plain ascii-words", "naïve fts5_virtual"),  # one side ASCII, the other not
        ("", "only a snippet"),
        ("only a title", ""),
        ("the of and", "a an"),  # stop words only
    ],
)
def test_reading_apart_where_the_two_texts_meet(title: str, snippet: str) -> None:
    together = analyze_doc(title, snippet, "https://example.com/a-b")
    apart = analyze_doc(title, snippet, "https://example.com/a-b", Texts())
    assert (apart.text, apart.joined) == (together.text, together.joined)


_JOINER, _DIGIT, _LETTER = re.compile(r"[._\-+#&]"), re.compile(r"\d"), re.compile(r"[^\W\d_]")
_DOTTED_INITIALS = re.compile(r"[a-z](\.[a-z])+")


@settings(max_examples=500, deadline=None)
@given(st.text(alphabet="abxyzAEIOUQ019._-+#&'", min_size=2, max_size=8))
def test_joined_and_numbered_words_are_read_as_the_patterns_read_them(word: str) -> None:
    """Joined parts with a letter, or a digit with a letter, make a word rare; a digit without
    one does not; nor do initials. (Checked a character at a time; these are the patterns they
    stand for.)"""
    if _JOINER.search(word) and _LETTER.search(word):
        assert is_rare(word) is not bool(_DOTTED_INITIALS.fullmatch(word))
    elif _DIGIT.search(word):
        assert is_rare(word) is bool(_LETTER.search(word))


@settings(max_examples=1000)
@given(st.text(alphabet="aAbBsSzZ09_.é É", max_size=10))
def test_a_word_typed_in_lower_case_matches_neither_capital_pattern(original: str) -> None:
    """`is_rare` skips the camelCase and acronym patterns for such a word: it loses nothing."""
    if original.islower():
        assert not lexical._CAMEL.search(original)
        assert not lexical._ACRONYM.fullmatch(original)
