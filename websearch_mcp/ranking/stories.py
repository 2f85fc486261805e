"""One story, one place: news results reporting the same story folded into the best-ranked one.

Two results are one story when both are dated within the window of each other and either
their titles or their snippets say the same thing:

- titles: every content word of the shorter title is in the longer one (the longer may add
  words, never replace one), the shorter has at least `MIN_WORDS` of them, the shared words
  are at least `fold_min_overlap` of all their words (Jaccard), they carry the same numbers,
  and the longer adds no negation. "President Trump reduces size of 2 monuments" folds into "Trump
  reduces size of 2 monuments"; "Storm hits Texas coast" and "Storm hits Florida coast" stay
  apart (a word replaced), as do "Fed raises rates by 0.25" and "by 0.5" (another number).
- snippets: both have at least `MIN_SNIPPET_WORDS` content words, share
  `SNIPPET_OVERLAP` of them with the same numbers (one wire text), and the titles still share a
  third of their words.

Content words are lower-cased words and numbers less a short list of English function words;
numbers keep their separators ("121,100", "0.25"). An undated result never folds: nothing shows
it is this story rather than an older one. Pure functions.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from functools import cached_property

from websearch_mcp.config import NewsSettings
from websearch_mcp.ranking.tokens import MARKS

MIN_WORDS = 3
MIN_SNIPPET_WORDS = 8
SNIPPET_OVERLAP = 0.8
TITLE_OVERLAP_WITH_SNIPPET = 1 / 3

# A word keeps its combining marks: "हिन्दी" is one word, not three letters that other
# headlines share.
_WORD_RE = re.compile(rf"\d+(?:[.,:]\d+)*|[^\W\d_](?:[^\W\d_]|[{MARKS}])*")
# English function words, and the words that turn a headline into its opposite.
_FUNCTION_TEXT = (
    "a an the of in on at to for and or as by with from is are was were be been its it this "
    "that these those after over about into s his her their our your amid says say said"
)
_FUNCTION_WORDS = frozenset(_FUNCTION_TEXT.split())
_NEGATION_TEXT = "not no never nor without denies deny denied rejects won t isn"
_NEGATIONS = frozenset(_NEGATION_TEXT.split())


def content_words(text: str) -> frozenset[str]:
    """The content words of `text` (see the module's doc)."""
    return frozenset(word for word in _WORD_RE.findall(text.lower()) if word not in _FUNCTION_WORDS)


def _numbers(words: frozenset[str]) -> frozenset[str]:
    return frozenset(word for word in words if word[0].isdigit())


@dataclass(frozen=True)
class Report:
    """What the fold reads of one result."""

    title: str
    snippet: str
    published: datetime | None

    @cached_property
    def title_words(self) -> frozenset[str]:
        return content_words(self.title)

    @cached_property
    def snippet_words(self) -> frozenset[str]:
        return content_words(self.snippet)


def _jaccard(a: frozenset[str], b: frozenset[str]) -> float:
    union = len(a | b)
    return len(a & b) / union if union else 0.0


def same_title(a: frozenset[str], b: frozenset[str], min_overlap: float) -> bool:
    """Whether two titles' content words say one thing (see the module's doc)."""
    short, long = (a, b) if len(a) <= len(b) else (b, a)
    if len(short) < MIN_WORDS or not short <= long or _numbers(short) != _numbers(long):
        return False
    return _jaccard(a, b) >= min_overlap and not (long - short) & _NEGATIONS


def same_snippet(a: Report, b: Report) -> bool:
    """Whether two snippets are one text (with titles that still resemble each other)."""
    x, y = a.snippet_words, b.snippet_words
    if min(len(x), len(y)) < MIN_SNIPPET_WORDS or _numbers(x) != _numbers(y):
        return False
    return (
        _jaccard(x, y) >= SNIPPET_OVERLAP
        and _jaccard(a.title_words, b.title_words) >= TITLE_OVERLAP_WITH_SNIPPET
    )


def same_story(a: Report, b: Report, settings: NewsSettings) -> bool:
    """Whether `a` and `b` report one story: dated within the window, titles or snippets alike."""
    if a.published is None or b.published is None:
        return False
    apart = abs((a.published - b.published).total_seconds()) / 3600
    if apart > settings.fold_window_hours:
        return False
    return same_title(a.title_words, b.title_words, settings.fold_min_overlap) or same_snippet(a, b)


class _Leads:
    """The stories' leads by their words (of titles, or of snippets)."""

    __slots__ = ("_by_word", "_sizes")

    def __init__(self) -> None:
        self._by_word: dict[str, list[int]] = {}  # word -> the groups whose lead has it
        self._sizes: list[int] = []  # per group, how many words its lead has

    def add(self, words: frozenset[str]) -> None:
        """The next group's lead's words."""
        group = len(self._sizes)
        self._sizes.append(len(words))
        for word in words:
            self._by_word.setdefault(word, []).append(group)

    def sharing(self, words: frozenset[str]) -> list[tuple[int, int, int]]:
        """(group, words shared, the lead's words) of each group whose lead has one of `words`."""
        counts = Counter(g for word in words for g in self._by_word.get(word, ()))
        sizes = self._sizes
        return [(g, common, sizes[g]) for g, common in counts.items()]


def _candidates(report: Report, titles: _Leads, snippets: _Leads) -> list[int]:
    """The groups whose lead shares enough words with `report` for a rule to hold: all the
    words of the shorter title (`same_title`), or `SNIPPET_OVERLAP` of the snippets' words
    (`same_snippet`). The words are counted, not compared pair by pair: every report of a
    search has the query's words, and comparing each with every lead grew with their square."""
    words = report.title_words
    found = {g for g, common, size in titles.sharing(words) if common == min(len(words), size)}
    text = report.snippet_words
    if len(text) >= MIN_SNIPPET_WORDS:
        found.update(
            g
            for g, common, size in snippets.sharing(text)
            if common / (len(text) + size - common) >= SNIPPET_OVERLAP
        )
    return sorted(found)


def fold(reports: Sequence[Report], settings: NewsSettings) -> list[list[int]]:
    """Groups of indexes into `reports` (best first): each group's first is the best-ranked
    report of a story, the rest the later ones folded into it, in order. Each report is
    compared with the groups' first reports only, so a group never drifts from its lead, and
    only with those sharing enough words for a rule to hold (`_candidates`)."""
    groups: list[list[int]] = []
    titles, snippets = _Leads(), _Leads()
    for index, report in enumerate(reports):
        for g in _candidates(report, titles, snippets):
            if same_story(reports[groups[g][0]], report, settings):
                groups[g].append(index)
                break
        else:
            titles.add(report.title_words)
            # A snippet too short for the rule is no lead's snippet to compare with.
            short = len(report.snippet_words) < MIN_SNIPPET_WORDS
            snippets.add(frozenset() if short else report.snippet_words)
            groups.append([index])
    return groups
