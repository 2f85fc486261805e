"""Text signals: how well a result's words fit the query's words.

Text is NFKC-normalised and lower-cased, split into words (identifiers such as `fts5_virtual`,
`node.js`, `c++` stay whole and also yield their parts) and Chinese/Japanese runs into character
bigrams. English and Chinese stop words, including search filler such as "latest" or "最新", are
not content words. A light plural stemmer lets "models" match "model".

Signals, each in [0, 1]:
- alignment: share of the query's content words present in the result;
- rare: share of the query's rare or compound terms present (None when it has none);
- phrase: share of adjacent query word pairs found adjacent in the result (None for one word).
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass
from functools import lru_cache
from itertools import pairwise
from urllib.parse import unquote

_CJK_CHARS = r"\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff"
_WORD = rf"[^\W_{_CJK_CHARS}]"
# A CJK run, or a word with optional joined parts (fts5_virtual, node.js, gpt-4o) and c++ / c#.
_TOKEN = re.compile(rf"(?P<cjk>[{_CJK_CHARS}]+)|(?P<word>{_WORD}+(?:[._\-+#']{_WORD}+)*[+#]*)")
_JOINERS = re.compile(r"[._\-+#']+")
_HAS_DIGIT = re.compile(r"\d")
_HAS_ALPHA = re.compile(r"[^\W\d_]")
_VOWELS = frozenset("aeiouy")
_CAMEL = re.compile(r"[a-z][A-Z]|[A-Z]{2,}[a-z]")
_ACRONYM = re.compile(r"\b[A-Z]{2,6}s?\b")

# Search filler ("latest", "current", "please find") is not a content word either.
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

RECENCY_WORDS = frozenset(
    {
        "latest", "newest", "recent", "recently", "current", "currently", "nowadays", "today",
        "最新", "最近", "近期", "目前", "当前", "现在", "如今", "今天", "今年", "本周", "本月",
        "近日",
    }
)  # fmt: skip
# English words begin with a vowel or one of these consonant clusters; "pgvector", "nginx" do not.
_ENGLISH_ONSETS = frozenset(
    {
        "b", "bl", "br", "c", "ch", "chr", "cl", "cr", "cz", "d", "dr", "dw", "f", "fl", "fr", "g",
        "gh", "gl", "gn", "gr", "h", "j", "k", "kh", "kl", "kn", "kr", "l", "m", "n", "p", "ph",
        "phr", "pl", "pn", "pr", "ps", "pt", "q", "r", "rh", "s", "sc", "sch", "scr", "sh", "shr",
        "sk", "sl", "sm", "sn", "sp", "sph", "spl", "spr", "squ", "st", "str", "sv", "sw", "t",
        "th", "thr", "tr", "ts", "tw", "v", "w", "wh", "wr", "x", "y", "z", "zh", "mn", "scl",
        "thw"
    }
)  # fmt: skip


@dataclass(frozen=True, slots=True)
class QueryTerms:
    """What the ranking needs to know about the query text, computed once per query."""

    content: tuple[str, ...]  # unique content terms in query order (normalised)
    rare: frozenset[str]  # rare or compound content terms
    pairs: frozenset[tuple[str, str]]  # adjacent content terms, for phrase contiguity
    words: frozenset[str]  # every word of the query, stop words included (normalised)
    recency: bool  # the text asks for recent results ("latest", "最新", ...)


@dataclass(frozen=True, slots=True)
class DocTerms:
    """A result's words: content terms of title + snippet, of its URL, and adjacent pairs."""

    text: frozenset[str]
    url: frozenset[str]
    pairs: frozenset[tuple[str, str]]


@lru_cache(maxsize=16384)
def stem(word: str) -> str:
    """Harman's plural stemmer plus a dropped final e, on plain lower-case words, so that both
    forms meet: models, model -> model; studies -> study; indexes, index -> index."""
    if len(word) <= 3 or not word.isalpha():
        return word
    if word.endswith("ies") and not word.endswith(("eies", "aies")):
        word = word[:-3] + "y"
    elif word.endswith("s") and not word.endswith(("us", "ss", "is")):
        word = word[:-1]  # -es keeps its e here; a final e goes below
    return word[:-1] if len(word) > 4 and word.endswith("e") else word


def _bigrams(run: str) -> list[str]:
    if len(run) == 1:
        return [run]
    grams = [run[i : i + 2] for i in range(len(run) - 1)]
    return [g for g in grams if not (_ZH_PARTICLES & set(g))]


def _words(text: str) -> list[list[str]]:
    """Lower-cased words of `text`, each as [whole, part, part...] (parts only for identifiers)."""
    out: list[list[str]] = []
    for match in _TOKEN.finditer(unicodedata.normalize("NFKC", text).lower()):
        cjk = match.group("cjk")
        if cjk is not None:
            out.extend([g] for g in _bigrams(cjk))
            continue
        word = match.group("word")
        if not _JOINERS.search(word):
            out.append([word])
            continue
        if "-" in word and word.replace("-", "").isalpha():  # boundary-layer = boundary layer
            out.extend([p] for p in word.split("-") if p)
            continue
        parts = [p for p in _JOINERS.split(word) if p]
        out.append([word, *parts] if len(parts) > 1 else [word])
    return out


def _is_content(word: str) -> bool:
    if word in STOP_WORDS:
        return False
    return not (len(word) == 1 and word.isascii() and word.isalpha())


def _sequence(text: str) -> tuple[list[str], set[str]]:
    """The content terms of `text` in order (whole words) and every term including parts."""
    seq: list[str] = []
    every: set[str] = set()
    for group in _words(text):
        whole = group[0]
        if not _is_content(whole):
            continue
        term = stem(whole)
        seq.append(term)
        every.add(term)
        every.update(stem(p) for p in group[1:] if _is_content(p))
    return seq, every


def terms(text: str) -> set[str]:
    """The content terms of `text`: stop words removed, stemmed, identifier parts included."""
    return _sequence(text)[1]


def is_rare(word: str, original: str = "") -> bool:
    """Rare or compound: identifiers and names a general word list lacks, whose presence matters.

    `original` is the word as typed (case kept) for camelCase and acronym checks. Rare are:
    letters mixed with digits (pg18, fts5), joined parts (fts5_virtual, node.js), camelCase
    (PostgreSQL), acronyms (WAL), words without vowels (sql, npm) and words that begin the way
    no English word does (pgvector, nginx)."""
    if not word.isascii() or len(word) < 2:
        return False
    if _JOINERS.search(word) and _HAS_ALPHA.search(word):
        return True
    if _HAS_DIGIT.search(word):
        return bool(_HAS_ALPHA.search(word))
    if original and (_CAMEL.search(original) or _ACRONYM.fullmatch(original)):
        return True
    if not word.isalpha():
        return False
    if not _VOWELS & set(word):
        return len(word) >= 3
    onset = ""
    for char in word:
        if char in _VOWELS and not (char == "y" and not onset):
            break
        onset += char
    return onset not in _ENGLISH_ONSETS and onset != ""


@lru_cache(maxsize=1024)
def analyze_query(text: str) -> QueryTerms:
    """Content terms, rare terms, adjacent pairs and recency of a query (cached)."""
    seq, _ = _sequence(text)
    content = tuple(dict.fromkeys(seq))
    shouted = text.isupper()  # in an all-capitals query every word would look like an acronym
    originals = {
        stem(m.group(0).lower()): m.group(0)
        for m in _TOKEN.finditer(unicodedata.normalize("NFKC", text))
        if m.group("word") and not shouted
    }
    rare = frozenset(t for t in content if is_rare(t, originals.get(t, "")))
    words = frozenset(stem(w) for group in _words(text) for w in group)
    lowered = {group[0] for group in _words(text)}
    return QueryTerms(
        content=content,
        rare=rare,
        pairs=frozenset(pairwise(seq)),
        words=words,
        recency=bool(lowered & RECENCY_WORDS),
    )


def url_words(url: str) -> str:
    """The words of a URL's host and path (decoded), for matching: `docs.python.org/3/library`."""
    rest = url.split("://", 1)[-1].split("?", 1)[0].split("#", 1)[0]
    return unquote(rest).replace("/", " ").replace(".", " ").replace("_", " ")


def analyze_doc(title: str, snippet: str, url: str) -> DocTerms:
    """Tokenise a result once: title + snippet terms, URL terms and adjacent pairs."""
    pairs: set[tuple[str, str]] = set()
    text: set[str] = set()
    for part in (title, snippet):
        seq, every = _sequence(part)
        text |= every
        pairs.update(pairwise(seq))
    url_seq, url_terms = _sequence(url_words(url))
    pairs.update(pairwise(url_seq))
    return DocTerms(text=frozenset(text), url=frozenset(url_terms), pairs=frozenset(pairs))


def alignment(query: QueryTerms, doc: DocTerms) -> float:
    """Share of the query's content terms found in the result (1.0 for a query without any)."""
    if not query.content:
        return 1.0
    found = sum(1 for t in query.content if t in doc.text or t in doc.url)
    return found / len(query.content)


def rare_share(query: QueryTerms, doc: DocTerms) -> float | None:
    """Share of the query's rare terms in the result; None when the query has none."""
    if not query.rare:
        return None
    return sum(1 for t in query.rare if t in doc.text or t in doc.url) / len(query.rare)


def phrase_share(query: QueryTerms, doc: DocTerms) -> float | None:
    """Share of adjacent query term pairs that are adjacent in the result; None without pairs."""
    if not query.pairs:
        return None
    return len(query.pairs & doc.pairs) / len(query.pairs)
