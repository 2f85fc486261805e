"""Words and terms: text as the ranking reads it.

Text is NFKC-normalised and case-folded, split into words (identifiers such as `fts5_virtual`,
`node.js`, `c++`, `AT&T` stay whole and also yield their parts; "boundary-layer" is two words,
"B-tree" one, "btree") and runs of scripts without spaces (Chinese, Japanese, Thai) into
character bigrams. English and Chinese stop words, including search filler such as "latest" or
"最新", are not content words. A light plural stemmer lets "models" match "model". A cache of
chunks makes a text its terms in a few C-level calls: tokenising is the ranking's hot path.
"""

from __future__ import annotations

import re
import threading
import unicodedata
from functools import lru_cache
from itertools import chain
from urllib.parse import unquote

# Scripts written without spaces between words, read as character bigrams: Chinese and Japanese,
# then Thai, Lao, Myanmar and Khmer.
_UNSPACED_CHARS = (
    r"\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff"
    r"\u0e00-\u0eff\u1000-\u109f\u1780-\u17ff"
    # Hangul: Korean is written with spaces, but its particles join their words ("서울의") and
    # queries often run words together ("서울날씨").
    r"\u1100-\u11ff\u3130-\u318f\uac00-\ud7af"
)


def _token_pattern(letter: str) -> re.Pattern[str]:
    """A run of a script without spaces, or a word of `letter`s with optional joined parts
    (fts5_virtual, node.js, gpt-4o, at&t) and c++ / c#. Names joined by "&" (AT&T, S&P, R&D)
    would otherwise be lost whole: their parts are single letters and stop words."""
    word = rf"(?:{letter})+"
    return re.compile(rf"[{_UNSPACED_CHARS}]+|{word}(?:[._\-+#'&]{word})*[+#]*")


_LETTER = rf"[^\W_{_UNSPACED_CHARS}]"
# Combining marks (Mn, Mc, Me) are parts of words though `\w` matches none: the vowel signs of
# Devanagari and other Indic scripts, Arabic and Hebrew points. The Basic Multilingual Plane's
# alone make a class that `re` tests in one step (a bitmap), not range by range.
#: Combining marks (Unicode Mn, Mc, Me): part of their letter's word (Devanagari vowel signs).
MARKS = "".join(
    re.escape(char)
    for char in map(chr, range(0x10000))
    if unicodedata.category(char) in ("Mn", "Mc", "Me")
)
_MARK = re.compile(f"[{MARKS}]")
TOKEN = _token_pattern(_LETTER)
# Text holding marks is read by a slower pattern that keeps them on their letters.
_MARKED_TOKEN = _token_pattern(f"{_LETTER}[{MARKS}]*")
UNSPACED = re.compile(rf"[{_UNSPACED_CHARS}]")


def tokens_of(text: str) -> list[str]:
    """The tokens of `text` (see `_token_pattern`), combining marks kept in their words."""
    return (_MARKED_TOKEN if _MARK.search(text) else TOKEN).findall(text)


# A hyphen between two letters joins ordinary words (boundary-layer = boundary layer); one next
# to a digit is part of a name (gpt-4o, ORA-00942, utf-8).
_LETTER_HYPHEN = re.compile(r"(?<=[^\W\d_])-(?=[^\W\d_])")
# But a lone letter before a hyphen is part of the word (B-tree, k-means, p-value, e-mail): split
# off, it would be dropped as a single letter and "B-tree" read as "tree". Closed up, the word
# also meets its spelling without the hyphen (email). "a" and "i" are words ("a-guide-to").
_LONE_LETTER = re.compile(r"(?<![\w.'&+#-])([^\W\d_aAiI])-(?=[^\W\d_]{2})")
_JOINERS = re.compile(r"[._\-+#'&]+")

#: A chunk's content terms, in order.
Terms = tuple[str, ...]

# Search filler ("latest", "current", "please find") is not a content word either, nor are the
# Latin abbreviations of running text ("i.e.", "e.g."): no identifier a result must hold.
STOP_WORDS_EN = frozenset(
    {
        "a", "about", "above", "after", "again", "against", "all", "also", "am", "an", "and",
        "any", "are", "aren't", "as", "at", "be", "because", "been", "before", "being", "below",
        "between", "both", "but", "by", "can", "cannot", "could", "did", "do", "does", "doing",
        "don't", "down", "during", "each", "either", "etc", "few", "for", "from", "further", "get",
        "gets", "getting", "got", "had", "has", "have", "having", "he", "her", "here", "hers",
        "herself", "him", "himself", "his", "how", "however", "i", "if", "in", "into", "is",
        "isn't", "it", "it's", "its", "itself", "just", "let", "me", "more", "most", "my",
        "myself", "no", "nor", "not", "of", "off", "on", "once", "only", "or", "other", "our",
        "ours", "ourselves", "out", "over", "own", "per", "same", "she", "should", "shall", "must",
        "may", "might", "so", "some", "such", "than", "that", "the", "their", "theirs", "them",
        "themselves", "then", "there", "these", "they", "this", "those", "through", "to", "too",
        "under", "until", "up", "upon", "us", "very", "via", "was", "we", "were", "what", "when",
        "where", "whether", "which", "while", "who", "whom", "whose", "why", "will", "with",
        "within", "without", "would", "yet", "you", "your", "yours", "yourself", "vs", "versus",
        "latest", "newest", "recent", "recently", "current", "currently", "nowadays", "today",
        "now", "please", "tell", "show", "find", "search", "know", "want", "need", "way", "ways",
        "thing", "things", "something", "anything", "someone", "anyone", "somebody",
        "e.g", "i.e", "cf", "viz",
    }
)  # fmt: skip
# Chinese stop words as bigrams: Chinese text is split into character bigrams before this check.
STOP_WORDS_ZH = frozenset(
    {
        "最新", "最近", "近期", "目前", "当前", "现在", "如今", "今天", "今年", "本周", "本月",
        "如何", "怎么", "怎样", "什么", "为什么", "哪些", "哪个", "哪里", "是否", "可以", "能否",
        "一下", "一个", "一些", "这个", "那个", "这些", "那些", "我们", "你们", "他们", "自己",
        "还是", "或者", "以及", "关于", "请问", "告诉", "介绍", "有没", "没有", "有哪", "应该",
        "需要", "知道", "查找", "搜索", "方法", "问题",
    }
)  # fmt: skip
_ZH_PARTICLES = frozenset("的了吗呢吧啊么呀哦")  # a bigram with one of these spans two words
STOP_WORDS = STOP_WORDS_EN | STOP_WORDS_ZH


@lru_cache(maxsize=16384)
def stem(word: str) -> str:
    """Harman's plural stemmer plus a dropped final e, on plain lower-case words, so that both
    forms meet: models, model -> model; studies -> study; indexes, index -> index; cookies,
    cookie -> cooky (a final -ie as the -y that -ies becomes)."""
    if len(word) <= 3 or not word.isalpha():
        return word
    if word.endswith("ies") and not word.endswith(("eies", "aies")):
        return word[:-3] + "y"
    if word.endswith("s") and not word.endswith(("us", "ss", "is")):
        word = word[:-1]  # -es keeps its e here; a final e goes below
    if len(word) > 4 and word.endswith("ie"):
        return word[:-2] + "y"
    return word[:-1] if len(word) > 4 and word.endswith("e") else word


def bigrams(run: str) -> list[str]:
    """A run of Chinese or Japanese characters as its character pairs, leaving out those that
    hold a particle (的, 了, 吗 ...), unless that leaves none: 吗啡 (morphine), 酒吧 (bar) and
    了解 (to understand) are words."""
    if len(run) == 1:
        return [run]
    grams = [run[i : i + 2] for i in range(len(run) - 1)]
    return [g for g in grams if not (_ZH_PARTICLES & set(g))] or grams


def _is_content(word: str) -> bool:
    if word in STOP_WORDS:
        return False
    return not (len(word) == 1 and word.isascii() and word.isalpha())


# ASCII characters that never occur inside a token become spaces, so a text splits into chunks
# (at C speed) that the cache below turns into terms: "(fts5_virtual)," -> "fts5_virtual".
_KEEP = frozenset(c for c in range(128) if chr(c).isalnum() or chr(c) in "._-+#'&")
_SEPARATORS = str.maketrans({chr(c): " " for c in range(128) if c not in _KEEP})
# For ASCII text one C-level pass both lower-cases and separates.
_BYTE_TABLE = bytes(
    (ord(chr(c).lower()) if c in _KEEP else 32) if c < 128 else c for c in range(256)
)


#: Typographic apostrophes (and the modifier letter) read as the typewriter's: "O\u2019Reilly".
_APOSTROPHES = str.maketrans(dict.fromkeys("\u2018\u2019\u02bc", "'"))


def fold(text: str) -> str:
    """Non-ASCII text as the ranking compares it: NFKC, case-folded (so "Straße" is "strasse",
    as Swiss German writes it), the dot of a capital "İ" dropped ("İstanbul" is "istanbul") and
    a typographic apostrophe read as "'"."""
    folded = unicodedata.normalize("NFKC", text).casefold().replace("i\u0307", "i")
    return folded.translate(_APOSTROPHES)


def _chunks(text: str) -> list[str] | list[bytes]:
    """Lower-cased pieces of `text` between separators (bytes for ASCII text: faster)."""
    if text.isascii():
        return text.encode("ascii").translate(_BYTE_TABLE).split()
    return fold(text).translate(_SEPARATORS).split()


def unhyphenated(text: str) -> str:
    """`text` with its hyphens between letters read: closed up after a lone letter, else spaces."""
    return _LETTER_HYPHEN.sub(" ", _LONE_LETTER.sub(r"\1", text))


def folded(text: str) -> str:
    """`text` as `_chunks` reads it, separators kept and lone letters' hyphens closed up: every
    term of it is made of its parts."""
    lowered = text.lower() if text.isascii() else fold(text)
    return _LONE_LETTER.sub(r"\1", lowered) if "-" in lowered else lowered


def _term_of(token: str) -> Terms:
    """One token's content terms: bigrams of a script without spaces, or the stemmed word, or
    none."""
    if not token.isascii() and UNSPACED.match(token):
        return tuple(g for g in bigrams(token) if g not in STOP_WORDS_ZH)
    word = token.removesuffix("'s")
    if not _is_content(word):
        return ()
    term = stem(word)
    if _JOINERS.search(term):
        parts = tuple(stem(p) for p in _JOINERS.split(term) if p and _is_content(p))
        if parts and parts != (term,):
            _TERMS.parts[term] = parts
            _TERMS.compounds.add(term)
    return (term,)


#: Chunks in one generation of the term cache (two are kept: about 5 MiB at most).
TERM_CACHE_LIMIT = 10_000


class _TermCache(dict[str | bytes, Terms]):
    """Chunk of text -> its content terms (none for stop words), filled on first use.
    Tokenising is the ranking's hot path; with this cache a text becomes its terms in a few
    C-level calls. Compound terms (fts5_virtual) register their parts in `parts`.

    Memory is bounded by two generations of `limit` chunks: once this one is full (checked by
    `make_room`, between texts), it becomes the previous one and this one starts empty. A chunk
    found in the previous one moves back with its compounds' parts, so the words in use stay
    and one-off tokens (numbers, names, identifiers) go."""

    def __init__(self, limit: int = TERM_CACHE_LIMIT) -> None:
        super().__init__()
        self.limit = limit
        self.parts: dict[str, tuple[str, ...]] = {}
        self.compounds: set[str] = set()  # the keys of `parts`, as a set for fast intersections
        self._previous: dict[str | bytes, Terms] = {}
        self._previous_parts: dict[str, tuple[str, ...]] = {}

    def make_room(self) -> None:
        """Start a new generation when this one is full. Called before a text is read, never
        during: a text's compounds then all stand in the generation its chunks are in."""
        if len(self) >= self.limit:
            self._previous, self._previous_parts = dict(self), self.parts
            self.clear()
            self.parts, self.compounds = {}, set()

    def __missing__(self, chunk: str | bytes) -> Terms:
        value = self._previous.get(chunk)
        if value is not None:
            for term in value:
                if (found := self._previous_parts.get(term)) is not None:
                    self.parts[term] = found
                    self.compounds.add(term)
            self[chunk] = value
            return value
        text = chunk.decode("ascii") if isinstance(chunk, bytes) else chunk
        if text.isascii() and text.isalnum():  # a plain word: most chunks
            value = _term_of(text)
        elif (
            isinstance(chunk, bytes)
            and all(map(bytes.isalpha, parts := chunk.split(b"-")))
            and len(parts[0]) > 1
        ):
            # Words joined by hyphens (a URL's slug), none a lone letter to close up: every
            # hyphen is between two letters, so the chunk's terms are its words', each a plain
            # word of this cache.
            value = tuple(chain.from_iterable(map(self.__getitem__, parts)))
        else:
            text = unhyphenated(text) if "-" in text else text
            value = tuple(chain.from_iterable(map(_term_of, tokens_of(text))))
        self[chunk] = value
        return value


_TERMS = _TermCache()
#: Texts are read on the event loop (ranking) and in threads (a page's passages): one at a time,
#: or a new generation begun amid another text's reading would lose its compounds' parts.
_READING = threading.Lock()


def read(text: str) -> tuple[list[Terms], set[str]]:
    """The content terms of `text` in order, chunk by chunk, and the set of them plus
    identifier parts. Each chunk's terms are one tuple of the cache: the set is their union,
    made from strings whose hashes are already known."""
    cache = _TERMS
    chunks = _chunks(text)
    with _READING:
        cache.make_room()
        parts = list(map(cache.__getitem__, chunks))
        every = set(chain.from_iterable(parts))
        for compound in every & cache.compounds:
            every.update(cache.parts[compound])
    return parts, every


def sequence(text: str) -> tuple[str, set[str]]:
    """`read`, the terms in order joined by single spaces."""
    parts, every = read(text)
    return " ".join(chain.from_iterable(parts)), every


def terms(text: str) -> set[str]:
    """The content terms of `text`: stop words removed, stemmed, identifier parts included."""
    return sequence(text)[1]


def url_words(url: str) -> str:
    """The words of a URL's host and path (decoded), for matching: `docs.python.org/3/library`."""
    # Found and sliced, not split: no list per part (a URL is read once or twice per result).
    start = url.find("://")
    rest = url[start + 3 :] if start >= 0 else url
    if (end := rest.find("?")) >= 0:
        rest = rest[:end]
    if (end := rest.find("#")) >= 0:
        rest = rest[:end]
    if "%" in rest:
        rest = unquote(rest)
    return rest.replace("/", " ").replace(".", " ")


class Texts(dict[str, tuple[list[Terms], set[str]]]):
    """Texts already tokenised, for one search (text -> `read(text)`): filled on first use, or
    ahead of time while the engines that have not answered yet are awaited
    (`ranking.prepared`)."""

    def __missing__(self, text: str) -> tuple[list[Terms], set[str]]:
        value = self[text] = read(text)
        return value
