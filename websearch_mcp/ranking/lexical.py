"""Text signals: how well a result's words fit the query's words (terms as `tokens` reads
them).

Signals, each in [0, 1]:
- alignment: share of the query's content words present in the result;
- rare: share of the query's rare or compound terms present (None when it has none);
- phrase: share of adjacent query word pairs found adjacent in the result (None for one word).
"""

from __future__ import annotations

import re
import string
import unicodedata
from collections.abc import Iterable
from dataclasses import dataclass
from functools import lru_cache
from itertools import chain, pairwise

from websearch_mcp.ranking.tokens import (
    UNSPACED,
    Terms,
    Texts,
    bigrams,
    fold,
    folded,
    read,
    sequence,
    stem,
    tokens_of,
    unhyphenated,
    url_words,
)

# What `is_rare` looks for in an ASCII word, a character at a time (no pattern run per word).
_NAME_JOINERS = frozenset("._-+#&")
_DIGITS = frozenset(string.digits)
_LETTERS = frozenset(string.ascii_letters)
_VOWELS = frozenset("aeiouy")
_CAMEL = re.compile(r"[a-z][A-Z]|[A-Z]{2,}[a-z]")
_ACRONYM = re.compile(r"\b[A-Z]{2,6}s?\b")
_SHOUTED_WORD = re.compile(r"[A-Z]{2,}")
_SHOUTED_WORDS = 3
# Initials and dotted abbreviations ("H.C.", "U.S.", "a.m."): names and common words, spelled
# without the dots just as often, so no identifier a result must hold.
_INITIALS = re.compile(r"[a-z](?:\.[a-z])+")

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
        "b", "bl", "br", "c", "ch", "chl", "chr", "cl", "cr", "cz", "d", "dr", "dw", "f", "fl",
        "fr", "g", "gh", "gl", "gn", "gr", "h", "j", "k", "kh", "kl", "kn", "kr", "l", "m", "mn",
        "n", "p", "ph", "phl", "phr", "pl", "pn", "pr", "ps", "pt", "q", "r", "rh", "s", "sc",
        "sch", "scl", "scr", "sh", "shr", "sk", "sl", "sm", "sn", "sp", "sph", "spl", "spr", "sq",
        "st", "str", "sv", "sw", "t", "th", "thr", "thw", "tr", "ts", "tw", "v", "w", "wh", "wr",
        "x", "y", "z", "zh"
    }
)  # fmt: skip


@dataclass(frozen=True, slots=True)
class QueryTerms:
    """What the ranking needs to know about the query text, computed once per query."""

    content: tuple[str, ...]  # unique content terms in query order (normalised)
    content_set: frozenset[str]  # the same as a set
    rare: tuple[str, ...]  # rare or compound content terms, in query order
    pairs: tuple[tuple[str, str], ...]  # adjacent content terms (a, b), for phrase contiguity
    words: frozenset[str]  # every word of the query, stop words included (normalised)
    recency: bool  # the text asks for recent results ("latest", "最新", ...)


class DocTerms:
    """A result's words: `text`, the content terms of title + snippet, and `url`, those of its
    URL; `joined`, all its terms in order separated by single spaces (a phrase is a substring
    of it, `holds`). The URL's terms are read on first use: most results need none, having
    the query's words in their title or snippet (`url_may_hold` says which do)."""

    __slots__ = ("_folded", "_link", "_parts", "_url", "_url_parts", "_url_words", "text")

    def __init__(self, parts: list[Terms], text: set[str], url: str) -> None:
        self.text = text
        self._parts = parts  # the terms of `text` in order, chunk by chunk
        self._link = url
        self._url: set[str] | None = None
        self._url_parts: list[Terms] = []  # the same for the URL, once read
        self._url_words: str | None = None  # `url_words` of it, for both uses below
        self._folded: str | None = None

    def _words(self) -> str:
        if self._url_words is None:
            self._url_words = url_words(self._link)
        return self._url_words

    def _url_terms(self) -> set[str]:
        if self._url is None:
            self._url_parts, self._url = read(self._words())
        return self._url

    @property
    def url(self) -> set[str]:
        return self._url_terms()

    @property
    def joined(self) -> str:
        self._url_terms()
        words = " ".join(chain.from_iterable(self._parts))
        return f" {words} | {' '.join(chain.from_iterable(self._url_parts))} "

    def url_may_hold(self, terms: Iterable[str]) -> bool:
        """False when none of `terms` is among the URL's terms, decided without finding them:
        a term less its last character is part of the folded text it came from (stemming
        only changes a word's end: studies -> study), so most terms are ruled out at once."""
        if self._url is not None:
            return not self._url.isdisjoint(terms)
        return any(term[:-1] in self._folded_url() for term in terms)

    def _folded_url(self) -> str:
        if self._folded is None:
            self._folded = folded(self._words())
        return self._folded

    def holds(self, first: str, second: str) -> bool:
        """Whether " first second " is in `joined`: whether `second` follows `first` in the
        terms of title + snippet or in those of the URL (no term holds a space or "|"), found
        without joining them. The title and snippet are read only when both terms are among
        theirs, the URL only when it may hold both (see `url_may_hold`)."""
        text = self.text
        if first in text and second in text and _adjacent(self._parts, first, second):
            return True
        if self._url is None and not (
            first[:-1] in self._folded_url() and second[:-1] in self._folded_url()
        ):
            return False
        self._url_terms()
        return _adjacent(self._url_parts, first, second)


def _adjacent(parts: list[Terms], first: str, second: str) -> bool:
    """Whether `second` comes right after `first` in `parts`' terms read in order."""
    previous = ""  # never a term
    for part in parts:
        for term in part:
            if term == second and previous == first:
                return True
            previous = term
    return False


def is_rare(word: str, original: str = "") -> bool:
    """Rare or compound: identifiers and names a general word list lacks, whose presence matters.

    `original` is the word as typed (case kept) for camelCase and acronym checks. Rare are:
    letters mixed with digits (pg18, fts5), joined parts (fts5_virtual, node.js), camelCase
    (PostgreSQL), acronyms (WAL), words without vowels (sql, npm) and words that begin the way
    no English word does (pgvector, nginx). Initials (h.c, u.s) are not."""
    if not word.isascii() or len(word) < 2:
        return False
    letters = digits = joiners = False
    for char in word:
        if char in _LETTERS:
            letters = True
        elif char in _DIGITS:
            digits = True
        elif char in _NAME_JOINERS:
            joiners = True
    if joiners and letters:
        return _INITIALS.fullmatch(word) is None
    if digits:
        return letters
    # Both patterns need a capital: a word typed in lower case runs neither.
    if (
        original
        and not original.islower()
        and (_CAMEL.search(original) or _ACRONYM.fullmatch(original))
    ):
        return True
    if not word.isalpha():
        return False
    if not any(char in _VOWELS for char in word):
        return len(word) >= 3
    onset = ""
    for char in word:
        if char in _VOWELS and not (char == "y" and not onset):
            break
        onset += char
    return onset not in _ENGLISH_ONSETS and onset != ""


def is_shouted(text: str) -> bool:
    """A text typed in capitals throughout ("HOW TO FIX THIS"), where every word would look
    like an acronym or an errno name."""
    return text.isupper() and len(_SHOUTED_WORD.findall(text)) >= _SHOUTED_WORDS


@lru_cache(maxsize=1024)
def analyze_query(text: str) -> QueryTerms:
    """Content terms, rare terms, adjacent pairs and recency of a query (cached)."""
    joined, every = sequence(text)
    seq = joined.split()
    content = tuple(dict.fromkeys(seq))
    normal = unicodedata.normalize("NFKC", text)
    typed = unhyphenated(normal)
    originals = {} if is_shouted(text) else {stem(fold(t)): t for t in tokens_of(typed)}
    # Names joined by hyphens also stay whole, as sites spell them: "scikit-learn" names
    # scikit-learn.org.
    raw = {token for token in tokens_of(fold(normal)) if "-" in token}
    for token in tokens_of(fold(typed)):
        raw.update(bigrams(token) if UNSPACED.match(token) else (token, stem(token)))
    return QueryTerms(
        content=content,
        content_set=frozenset(content),
        rare=tuple(t for t in content if is_rare(t, originals.get(t, ""))),
        pairs=tuple(dict.fromkeys(pairwise(seq))),
        words=frozenset(raw | every),
        recency=bool(raw & RECENCY_WORDS),
    )


def analyze_doc(title: str, snippet: str, url: str, texts: Texts | None = None) -> DocTerms:
    """Tokenise a result once: title + snippet terms, URL terms and their order. With `texts`,
    the title and the snippet are looked up there: a newline is a separator, and no chunk,
    normalisation or case rule reads across one, so the two read apart give the same terms."""
    if texts is None:
        parts, text = read(f"{title}\n{snippet}")
    else:
        (head, head_terms), (body, body_terms) = texts[title], texts[snippet]
        parts, text = head + body, head_terms | body_terms
    return DocTerms(parts, text, url)


def _found(wanted: tuple[str, ...], doc: DocTerms) -> int:
    """How many of `wanted` (distinct terms) the result holds: in its title and snippet, or
    else in its URL (read only when it may hold one of the others)."""
    missing = [term for term in wanted if term not in doc.text]
    found = len(wanted) - len(missing)
    if missing and doc.url_may_hold(missing):
        found += len(doc.url.intersection(missing))
    return found


def alignment(query: QueryTerms, doc: DocTerms) -> float:
    """Share of the query's content terms found in the result (1.0 for a query without any)."""
    if not query.content:
        return 1.0
    return _found(query.content, doc) / len(query.content)


def rare_share(query: QueryTerms, doc: DocTerms) -> float | None:
    """Share of the query's rare terms in the result; None when the query has none."""
    if not query.rare:
        return None
    return _found(query.rare, doc) / len(query.rare)


def phrase_share(query: QueryTerms, doc: DocTerms) -> float | None:
    """Share of adjacent query term pairs that are adjacent in the result; None without pairs."""
    if not query.pairs:
        return None
    return sum(1 for first, second in query.pairs if doc.holds(first, second)) / len(query.pairs)
