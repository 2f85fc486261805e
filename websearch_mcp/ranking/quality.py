"""Engine-level list quality: how well one engine's whole list answers the query.

Per hit: the share of the query's content words present, plus `quality_phrase_bonus` times
the share of adjacent query pairs found adjacent, minus `quality_offtopic_penalty` when an
off-topic word (casino, 博彩 ...) appears as a whole word, clamped to [0, 1]; the list's
quality is the mean over its hits. Off-topic words the query itself uses never count. A query
without content words cannot be judged: every list gets 0.5.
"""

from __future__ import annotations

import dataclasses
import re
import unicodedata
from collections.abc import Sequence
from functools import lru_cache

from websearch_mcp.config import RankingSettings
from websearch_mcp.models import Hit
from websearch_mcp.ranking.lexical import (
    DocTerms,
    QueryTerms,
    alignment,
    analyze_doc,
    analyze_query,
    phrase_share,
)
from websearch_mcp.ranking.tokens import terms

NO_CONTENT_QUALITY = 0.5
# Built-in off-topic words (spam topics); the settings' `offtopic_words` are added to them.
OFFTOPIC_WORDS = (
    "casino", "casinos", "gambling", "betting", "bet365", "poker", "lottery", "porn", "porno",
    "xxx", "escort", "escorts", "viagra", "cialis", "payday", "keygen", "warez", "博彩", "赌博",
    "赌场", "彩票", "色情", "代孕", "代开发票", "六合彩", "娱乐城",
)  # fmt: skip


@lru_cache(maxsize=64)
def _offtopic_terms(words: tuple[str, ...]) -> tuple[frozenset[str], ...]:
    """Each off-topic word as the set of terms that must all be present (bigrams for Chinese)."""
    return tuple(t for w in words if (t := frozenset(terms(w))))


def _is_offtopic(doc: DocTerms, offtopic: Sequence[frozenset[str]]) -> bool:
    return any(
        word <= doc.text or (doc.url_may_hold(word) and word <= doc.url) for word in offtopic
    )


def _hit_quality(
    query: QueryTerms, doc: DocTerms, offtopic: Sequence[frozenset[str]], s: RankingSettings
) -> float:
    value = alignment(query, doc)
    phrase = phrase_share(query, doc)
    if phrase is not None:
        value += s.quality_phrase_bonus * phrase
    if _is_offtopic(doc, offtopic):
        value -= s.quality_offtopic_penalty
    return min(1.0, max(0.0, value))


# Latin, Greek and Cyrillic accents; Hebrew points and Arabic short vowels, which the words are
# typed without too.
_ACCENTS = re.compile(
    "[\u0300-\u036f\u0591-\u05bd\u05bf\u05c1\u05c2\u05c4\u05c5\u05c7"
    "\u064b-\u065f\u0670\u06d6-\u06ed]"
)


def unaccented(text: str) -> str:
    """`text` without combining accents ("Pokémon" -> "Pokemon", "Αθήνα" -> "Αθηνα"), as most
    people type the words."""
    if text.isascii():
        return text
    # Only these: kana voicing marks (バス, パス) and Thai tone marks (ข่าว, ขาว) make another
    # word.
    return unicodedata.normalize("NFC", _ACCENTS.sub("", unicodedata.normalize("NFD", text)))


def _unaccented_hit(hit: Hit) -> Hit:
    return dataclasses.replace(hit, title=unaccented(hit.title), snippet=unaccented(hit.snippet))


def list_quality(hits: Sequence[Hit], query_text: str, settings: RankingSettings) -> float:
    """The mean per-hit quality of one engine's list in [0, 1] (0 for an empty list); accents
    are not told apart (the query usually leaves them out)."""
    query_text = unaccented(query_text)
    hits = [_unaccented_hit(h) for h in hits]
    query = analyze_query(query_text)
    if not query.content:
        return NO_CONTENT_QUALITY
    if not hits:
        return 0.0
    offtopic = [
        word
        for word in _offtopic_terms(OFFTOPIC_WORDS + tuple(settings.offtopic_words))
        if not word & query.words  # the query asks for this topic
    ]
    total = sum(
        _hit_quality(query, analyze_doc(h.title, h.snippet, h.url), offtopic, settings)
        for h in hits
    )
    return total / len(hits)


def shares_content_word(hits: Sequence[Hit], query_text: str) -> bool:
    """Whether any hit contains any content word of the query (True when it has none)."""
    query = analyze_query(query_text)
    if not query.content:
        return True
    return any(alignment(query, analyze_doc(h.title, h.snippet, h.url)) > 0 for h in hits)


# Kana and Hangul are written alongside Han characters: one script family for this purpose.
_SCRIPT_FAMILY = {"HIRAGANA": "CJK", "KATAKANA": "CJK", "HANGUL": "CJK", "FULLWIDTH": "LATIN"}
_HAN = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]")


def scripts(text: str) -> frozenset[str]:
    """The writing systems of the letters in `text` (`LATIN`, `CJK`, `CYRILLIC`, ...)."""
    found = set()
    for char in set(text):
        if char.isalpha():
            script = unicodedata.name(char, "").split(" ", 1)[0]
            found.add(_SCRIPT_FAMILY.get(script, script))
    return frozenset(found)


def _han_aligned(asked: str, query_text: str, text: str) -> bool:
    """Whether two of the query's Han characters (of its content words, two different ones)
    stand in `text` in the query's order, no farther apart than in the query: both read as
    their Han characters only (a space, kana or punctuation between two words, 東京の天気 for
    东京天气 or 机器学习 入门 for 機器學習入門, sets no character farther from the next)."""
    content = {c for c in asked if _HAN.match(c)}
    query_han = "".join(c for c in unicodedata.normalize("NFKC", query_text) if _HAN.match(c))
    text_han = "".join(c for c in unicodedata.normalize("NFKC", text) if _HAN.match(c))
    places = [(i, c) for i, c in enumerate(query_han) if c in content]
    for n, (i, first) in enumerate(places):
        for j, second in places[n + 1 :]:
            if second == first:  # one character twice is one of the query's
                continue
            gap, start = j - i, text_han.find(first)
            while start != -1:
                if second in text_han[start + 1 : start + gap + 1]:
                    return True
                start = text_han.find(first, start + 1)
    return False


def answers_another_query(hits: Sequence[Hit], query_text: str) -> bool:
    """Whether a lexical engine's list is evidence of answering some other query: it shares no
    content word with the query although it is written in a script the query's words use.

    A list in another script (an English answer to a Chinese query) proves nothing: translated
    and cross-language results are ordinary. An empty list or a query without content words
    proves nothing either.
    """
    query = analyze_query(query_text)
    if not hits or not query.content or shares_content_word(hits, query_text):
        return False  # the usual case, decided by the first hit or two: scripts are slower
    text = " ".join(f"{h.title} {h.snippet}" for h in hits)
    asked = " ".join(query.content)
    if scripts(text).isdisjoint(scripts(asked)):
        return False
    # A Han character of the query's: its words in another writing of them (simplified for
    # traditional characters, Chinese for Japanese: 东京 for 東京) rather than another query.
    # Two of them in one result: one alone is in thousands of unrelated words (门 of 澳门 and of
    # 入门, 京 of 北京 and of 东京).
    # Written another way, each character stands for one: two of the query's stand in its
    # order, no farther apart than in the query (器 and 入 of 機器學習入門 in 机器学习入门; the
    # kana of 東京の天気 may be left out in Chinese).
    if any(_han_aligned(asked, query_text, f"{h.title} {h.snippet}") for h in hits):
        return False
    # The query's words with accents the query left out, or without those it has.
    plain = [_unaccented_hit(h) for h in hits]
    return not shares_content_word(plain, unaccented(query_text))
