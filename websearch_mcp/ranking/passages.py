"""The few short passages of a page that best answer a query (`web_search` with `read`).

The extracted text (Markdown) is cut into chunks of whole sentences, at most `MAX_PASSAGE_CHARS`
each, that do not run across paragraphs except to join a heading or list items to what follows
(or a short last line of the page to what precedes it).
Boilerplate gets no say: lines that are mostly links (menus, "related" lists) are dropped, a
line repeated on the page (a banner, a share line) counts once, and a query term's weight falls
with the share of chunks it occurs in (BM25's idf over the page), so a site name on every line
scores little.

A chunk's score is the idf-weighted share of the query's content terms it holds (rare and
compound terms weigh more), plus a bonus for the query's adjacent word pairs found adjacent.
The best chunks, none below half the best score, are kept up to `MAX_PASSAGES` and
`PASSAGE_BUDGET` characters together, and returned in page order.
"""

from __future__ import annotations

import math
import re
import unicodedata
from dataclasses import dataclass

from websearch_mcp.ranking.lexical import QueryTerms, analyze_doc, analyze_query, phrase_share
from websearch_mcp.text_encoding import markdown_words, visible

PASSAGE_BUDGET = 2000
MAX_PASSAGES = 4
MAX_PASSAGE_CHARS = 500
#: Shorter chunks (headings, list items, menu leftovers) join the next one (the page's last
#: joins the one before) or are dropped.
MIN_PASSAGE_CHARS = 60
#: Only the start of a very long page is searched: the work stays bounded on untrusted text.
SCAN_CHARS = 400_000
#: Chunks scoring under this share of the best one are not worth the reader's time.
MIN_SHARE_OF_BEST = 0.5
RARE_WEIGHT = 1.5
PHRASE_BONUS = 0.5
#: A line with more than this share of its text inside links is navigation.
MAX_LINK_SHARE = 0.6
ELLIPSIS = "…"

# A link's text holds no bracket and its target only balanced parentheses (Foo_(bar)): every
# bracket or parenthesis ends a scan, so a line of unclosed ones is read in linear time.
_LINK = re.compile(r"(!?)\[([^\[\]\n]*)\]\([^()\n]*(?:\([^()\n]*\)[^()\n]*)*\)")
# Emphasis marks: doubled, code and strike marks anywhere; a single `*` or `_` only where it
# opens or closes a word (`*word*`), never inside one (`run_until_complete`, `2*3`) nor
# escaped (`\*`). Read without pairing, and a run of marks from its start only, so a line of
# them costs linear time.
_EMPHASIS = re.compile(r"\*\*|__|`|~~|(?<![\w\\*])[*_]++(?=[^\W_])|(?<=[^\W_])[*_]++(?!\w)")
# Markdown's escapes (trafilatura writes `run\_until\_complete`): the character itself.
_ESCAPED = re.compile(r"\\([!-/:-@\[-`{-~])")
# A code span: its text as written (no emphasis, no escape), only the backticks go. Up to the
# next backtick only, so a line of them is read in linear time.
_CODE_SPAN = re.compile(r"`([^`\n]+)`")
# A word whose full stop ends no sentence: an initial ("J."), initials ("U.S.", "e.g."), a title.
_ABBREVIATION = re.compile(
    r"(?:^|[\s(])(?:[A-Z]|(?:[A-Za-z]\.)+[A-Za-z]|i\.e|e\.g|cf|vs|Dr|Mr|Mrs|Ms|Prof|St|Jr|Sr|Fig)\.$"
)
# A code fence: three or more backticks and an info string without one ("```x```" is code).
_FENCE = re.compile(r"```+[^`]*")
_LINE_MARKER = re.compile(r"^\s*(?:#{1,6}\s+|[-*+]\s+|\d{1,3}[.)]\s+|>\s*)+")
_PAGE_MARKER = re.compile(r"^-+\s*page \d+\s*-+$", re.IGNORECASE)
_CJK_STOPS = ("。", "！", "？")
# Full stops and marks that end a sentence before a space: Latin, the danda of Devanagari and
# Bengali (।, ॥), Arabic's question mark and Urdu's full stop (؟, ۔); CJK's need none.
_SENTENCE_END = re.compile(r"(?<=[.!?…।॥؟۔])\s+(?=\S)|(?<=[。！？])")
_SPACES = re.compile(r"\s+")
_ALNUM = re.compile(r"[^\W_]")
#: Joins a heading or a list item to the text that follows it.
JOINER = " — "


@dataclass(frozen=True, slots=True)
class _Chunk:
    index: int
    text: str


def _logical_lines(text: str, markdown: bool = True) -> list[tuple[str, bool]]:
    """Markdown lines with a wrapped paragraph (or list item) joined back into one line;
    headings and table rows stand alone. Each says whether it is a code block's (as written,
    as all of a text that is not Markdown is: its wrapped lines join up to a blank one)."""
    out: list[list[str]] = []  # each line's parts, joined once: no copy per wrapped line
    code: list[bool] = []
    open_line = in_fence = False
    for raw in text[:SCAN_CHARS].splitlines():
        stripped = raw.strip()
        # A code fence is markup, and the extractor puts no blank line after a closing one.
        fence = markdown and _FENCE.fullmatch(stripped) is not None
        if not stripped or fence:
            open_line = False
            in_fence ^= fence
            continue
        heading = markdown and not in_fence and stripped.startswith("#")  # a comment, in code
        row = markdown and not in_fence and stripped.startswith("|")
        marked = heading or row or (markdown and not in_fence and bool(_LINE_MARKER.match(raw)))
        if open_line and not marked:
            out[-1].append(stripped)
        else:
            out.append([stripped])
            code.append(in_fence or not markdown)
        open_line = not (heading or row)
    return [(" ".join(parts), fenced) for parts, fenced in zip(out, code, strict=True)]


def _unmarked(text: str) -> str:
    """`text` without emphasis marks and with Markdown's escapes read, outside code spans."""
    return _ESCAPED.sub(r"\1", _EMPHASIS.sub("", text))


def plain_lines(text: str, markdown: bool = True) -> list[str]:
    """The page's lines as plain text: links reduced to their text, images, emphasis and
    heading/list markers dropped, Markdown's escapes read, control and format characters left
    out, table pipes and runs of spaces collapsed; navigation lines (mostly links), lines
    without a letter or digit and repeats of a line left out."""
    lines = []
    seen: set[str] = set()
    for raw, fenced in _logical_lines(text, markdown):
        linked = sum(len(m.group(2)) for m in _LINK.finditer(raw) if not m.group(1))
        line = _LINK.sub(lambda m: "" if m.group(1) else m.group(2), raw)
        if not fenced:  # a code block's text is as written: `2**10`, `__init__`
            line = _LINE_MARKER.sub("", line)
            parts, at = [], 0
            for span in _CODE_SPAN.finditer(line):
                parts += [_unmarked(line[at : span.start()]), span.group(1)]
                at = span.end()
            line = "".join([*parts, _unmarked(line[at:])]).replace("|", " ")
        # Escapes read can spell a link or image the page wrote as text (`![x]\`(url)`): its
        # words only. No control or format character is shown (plain text, PDFs, readers).
        line = visible(markdown_words(line))
        line = _SPACES.sub(" ", line).strip()
        if not _ALNUM.search(line) or _PAGE_MARKER.match(line):
            continue
        if linked > MAX_LINK_SHARE * len(line) or line.lower() in seen:
            continue
        seen.add(line.lower())
        lines.append(line)
    return lines


def _sentences(line: str) -> list[str]:
    """A line's sentences; one longer than a passage is cut at word boundaries into pieces that
    say they go on (an ellipsis), so no part of the page is out of reach."""
    whole: list[list[str]] = []  # each sentence's parts, joined once: linear in the line
    for part in _SENTENCE_END.split(line):  # "Dr. Smith", "e.g. salmon": one sentence
        if whole and _ABBREVIATION.search(whole[-1][-1][-40:]):
            whole[-1].append(part)
        else:
            whole.append([part])
    out = []
    for sentence in (" ".join(parts) for parts in whole):
        rest = sentence.strip()
        while len(rest) > MAX_PASSAGE_CHARS:
            cut = rest[: MAX_PASSAGE_CHARS - 1]
            if " " in cut:
                piece = cut.rsplit(" ", 1)[0]
            else:  # no word to cut at (Thai, Chinese): no vowel sign or accent cut from its letter
                end = len(cut)
                while end > 1 and unicodedata.category(rest[end]).startswith("M"):
                    end -= 1
                piece = rest[:end]
            out.append(piece + ELLIPSIS)
            rest = rest[len(piece) :].strip()
        if rest:
            out.append(rest)
    return out


def chunks(text: str, markdown: bool = True) -> list[str]:
    """The page cut into candidate passages, in page order, each at most `MAX_PASSAGE_CHARS`;
    `markdown` False for a text that is not Markdown (a text file's, a PDF's)."""
    out: list[str] = []
    current = ""
    for line in plain_lines(text, markdown):
        # A new line starts a new chunk unless the one so far is too short to stand alone.
        if len(current) >= MIN_PASSAGE_CHARS:
            out.append(current)
            current = ""
        sep = JOINER
        for sentence in _sentences(line):
            if current and len(current) + len(sep) + len(sentence) > MAX_PASSAGE_CHARS:
                out.append(current)
                current = ""
            current = f"{current}{sep}{sentence}" if current else sentence
            # Chinese and Japanese put no space after a full stop.
            sep = "" if sentence.endswith(_CJK_STOPS) else " "
    # The page's last line has no next one to join: a short one (a table's last row, a list's
    # last item) joins the chunk before it rather than be lost.
    tail = len(JOINER) + len(current)
    if out and len(current) < MIN_PASSAGE_CHARS and len(out[-1]) + tail <= MAX_PASSAGE_CHARS:
        current = out.pop() + JOINER + current
    out.append(current)
    return [c for c in out if len(c) >= MIN_PASSAGE_CHARS]


def _weights(query: QueryTerms, found: list[frozenset[str]]) -> dict[str, float]:
    """Each query term's idf over the page's chunks (BM25's, always positive)."""
    total = len(found)
    weights = {}
    for term in query.content:
        df = sum(1 for terms in found if term in terms)
        idf = math.log(1 + (total - df + 0.5) / (df + 0.5))
        weights[term] = idf * (RARE_WEIGHT if term in query.rare else 1.0)
    return weights


def best_passages(text: str, query: str, *, markdown: bool = True) -> list[str]:
    """The passages of `text` that best answer `query`, in page order: at most `MAX_PASSAGES`,
    together at most `PASSAGE_BUDGET` characters; none when no chunk holds a query term.
    `markdown` False: `text` is read as written (see `chunks`)."""
    wanted = analyze_query(query)
    if not wanted.content:
        return []
    candidates: list[_Chunk] = []
    seen: set[str] = set()
    for index, piece in enumerate(chunks(text, markdown)):
        key = piece.lower()
        if key not in seen:  # a sentence repeated within a line makes a repeated chunk
            seen.add(key)
            candidates.append(_Chunk(index, piece))
    docs = [analyze_doc("", c.text, "") for c in candidates]
    found = [frozenset(wanted.content_set.intersection(d.text)) for d in docs]
    weights = _weights(wanted, found)
    whole = sum(weights.values())
    scores = []
    for chunk, doc, terms in zip(candidates, docs, found, strict=True):
        if not terms:
            continue
        score = sum(weights[t] for t in terms) / whole
        score += PHRASE_BONUS * (phrase_share(wanted, doc) or 0.0)
        scores.append((score, chunk))
    if not scores:
        return []
    best = max(score for score, _ in scores)
    chosen: list[_Chunk] = []
    used = 0
    for score, chunk in sorted(scores, key=lambda s: (-s[0], s[1].index)):
        if score < MIN_SHARE_OF_BEST * best or len(chosen) == MAX_PASSAGES:
            break
        if used + len(chunk.text) <= PASSAGE_BUDGET:
            chosen.append(chunk)
            used += len(chunk.text)
    return [c.text for c in sorted(chosen, key=lambda c: c.index)]
