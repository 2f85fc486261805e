"""One paper from many indexes: identifiers, and merging the hits that name the same paper.

Each hit's identifiers are read from every field that carries one: the DOI, `ids` (arXiv and
PubMed ids an index gives), and the URL and PDF link (arxiv.org/abs/..., doi.org/...,
pubmed.ncbi.nlm.nih.gov/..., europepmc.org/article/MED/...). arXiv's own DOIs (10.48550/arXiv.*)
count as arXiv ids, so a preprint DOI never looks like a different paper than the journal DOI.

Hits are joined with union-find: any shared DOI, arXiv id, PubMed id or canonical URL joins two
groups, so a Crossref record (DOI), an arXiv entry (arXiv id) and a Semantic Scholar record
(both) become one paper. Normalised title + publication year joins groups too, but only when
they do not contradict each other: no two different ids of one kind, and, where both list
authors, at least one surname in common. Engines are visited in name order and each list in
rank order, so the grouping never depends on the order the lists arrived in.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime

from websearch_mcp.dates import parse_date
from websearch_mcp.models import Hit
from websearch_mcp.ranking.urls import canonicalize

ID_KINDS = ("doi", "arxiv", "pmid")  # in merge-key priority order

_ARXIV = r"\d{4}\.\d{4,5}|[a-z]+(?:-[a-z]+)*(?:\.[a-z]{2})?/\d{7}"  # 1706.03762, hep-th/9901001
_ARXIV_ID = re.compile(rf"^(?:arxiv:)?({_ARXIV})(?:v\d+)?$", re.IGNORECASE)
_ARXIV_DOI = re.compile(rf"^10\.48550/arxiv\.({_ARXIV})(?:v\d+)?$", re.IGNORECASE)
_ARXIV_URL = re.compile(
    rf"//(?:export\.|www\.)?arxiv\.org/(?:abs|pdf)/({_ARXIV})(?:v\d+)?(?:\.pdf)?/?(?:[?#]|$)",
    re.IGNORECASE,
)
_PMID_URL = re.compile(
    r"//(?:pubmed\.ncbi\.nlm\.nih\.gov/|(?:www\.)?ncbi\.nlm\.nih\.gov/pubmed/"
    r"|(?:www\.)?europepmc\.org/(?:abstract|article)/MED/)(\d{1,9})/?(?:[?#]|$)",
    re.IGNORECASE,
)
_DOI_URL = re.compile(r"^https?://(?:dx\.)?doi\.org/(10\.\d{4,9}/\S+)$", re.IGNORECASE)
_NOT_WORD = re.compile(r"[\W_]+")
# A title shorter than this is too generic ("Editorial", "Deep learning") to merge on.
MIN_TITLE_WORDS = 3
MIN_TITLE_CHARS = 12
# Records of which none lists authors join on a title only this long: shorter ones are notices
# that every journal prints many of ("Department of Error", "Table of Contents").
MIN_TITLE_WORDS_WITHOUT_AUTHORS = 5


def arxiv_id(value: str | None) -> str | None:
    """A bare arXiv id without version (`1706.03762`, `hep-th/9901001`), lower-case."""
    found = _ARXIV_ID.match(value.strip()) if value else None
    return found[1].lower() if found else None


def _doi(value: str | None) -> str | None:
    doi = (value or "").strip().lower()
    return doi if doi.startswith("10.") and "/" in doi else None


#: Letters that do not decompose into a base letter and an accent, as indexes spell them in
#: ASCII: `Jørgensen`, `Jorgensen`.
_UNACCENTED = str.maketrans(
    {"ø": "o", "Ø": "O", "ł": "l", "Ł": "L", "đ": "d", "Đ": "D", "ð": "d", "Ð": "D", "ı": "i"}
    | {"æ": "ae", "Æ": "AE", "œ": "oe", "Œ": "OE", "þ": "th", "Þ": "TH"}
)


def fold(text: str) -> str:
    """Lower-case words without accents or punctuation, single-spaced: `Schrödinger's cat!`
    -> `schrodinger s cat`, `Jørgensen` -> `jorgensen`."""
    decomposed = unicodedata.normalize("NFKD", text.translate(_UNACCENTED))
    plain = "".join(c for c in decomposed if not unicodedata.combining(c))
    return _NOT_WORD.sub(" ", plain.casefold()).strip()


def year_of(published: str | None) -> int | None:
    """The year of an ISO date (`2017-06-12`, `2017`), or None."""
    head = (published or "")[:4]
    return int(head) if len(head) == 4 and head.isdigit() else None


def title_key(title: str, year: int | None) -> str | None:
    """`attention is all you need|2017`; None without a year or for a too generic title."""
    words = fold(title)
    if year is None or len(words) < MIN_TITLE_CHARS or words.count(" ") + 1 < MIN_TITLE_WORDS:
        return None
    return f"{words}|{year}"


def _initials(part: str) -> bool:
    """`A`, `A.`, `AS`, `J.-C.`: a given name's initials, not a name ("Li", "Wu" are names)."""
    letters = _NOT_WORD.sub("", part)
    return len(letters) <= 1 or (len(letters) == 2 and letters.isupper())


#: Words after a name that are no family name ("Gillman MW Jr", "John Smith III").
_SUFFIXES = frozenset({"jr", "sr", "ii", "iii", "iv", "2nd", "3rd"})


def family_name(name: str) -> str:
    """The family name in each index's spelling of a name: "Ashish Vaswani", "A. Vaswani",
    "Vaswani A", "Vaswani, Ashish" -> `vaswani`. Without initials to tell, the words after the
    first are taken ("Juan Carlos de la Cruz" -> `carlos de la cruz`). A suffix ("Jr", "III")
    is no family name."""
    family, comma, _ = name.partition(",")
    parts = name.split() if not comma else family.split()
    parts = [part for part in parts if fold(part) not in _SUFFIXES] or parts
    words = [part for part in parts if not _initials(part)] or parts
    if not comma and len(words) > 1 and not _initials(parts[-1]):
        words = words[1:]  # "Given Family": the given name comes first
    return fold(" ".join(words))


def surnames(authors: Iterable[str]) -> frozenset[str]:
    """Every word of two or more letters of the authors' family names (`family_name`)."""
    return frozenset(
        part for name in authors for part in family_name(name).split() if len(part) > 1
    )


@dataclass(frozen=True, slots=True)
class PaperIds:
    """The identifiers one hit carries."""

    doi: str | None = None
    arxiv: str | None = None
    pmid: str | None = None

    def items(self) -> list[tuple[str, str]]:
        return [(kind, value) for kind in ID_KINDS if (value := getattr(self, kind))]


def paper_ids(hit: Hit) -> PaperIds:
    """The DOI, arXiv id and PubMed id of a hit, from every field that carries one."""
    doi = _doi(hit.doi)
    arxiv = arxiv_id(hit.ids.get("arxiv"))
    pmid = (hit.ids.get("pmid") or "").strip() or None
    for url in (hit.url, hit.pdf_url or ""):
        if doi is None and (found := _DOI_URL.match(url.strip())):
            doi = _doi(found[1])
        if arxiv is None and (found := _ARXIV_URL.search(url)):
            arxiv = found[1].lower()
        if pmid is None and (found := _PMID_URL.search(url)):
            pmid = found[1]
    if doi is not None and (found := _ARXIV_DOI.match(doi)):
        arxiv, doi = arxiv or found[1].lower(), None  # arXiv's DOI names the preprint
    return PaperIds(doi=doi, arxiv=arxiv, pmid=pmid if pmid and pmid.isdigit() else None)


@dataclass(slots=True)
class _Group:
    """What a union-find root knows of its members: ids by kind, author surnames, link kinds."""

    ids: dict[str, set[str]]
    names: frozenset[str]
    links: set[str] = field(default_factory=set)

    def contradicts(self, other: _Group) -> bool:
        for kind in ID_KINDS:
            mine, theirs = self.ids[kind], other.ids[kind]
            if mine and theirs and mine.isdisjoint(theirs):
                return True
        return bool(self.names and other.names and self.names.isdisjoint(other.names))

    def absorb(self, other: _Group, link: str) -> None:
        for kind in ID_KINDS:
            self.ids[kind] |= other.ids[kind]
        self.names |= other.names
        self.links |= other.links | {link}


class _UnionFind:
    def __init__(self, groups: list[_Group]) -> None:
        self.parent = list(range(len(groups)))
        self.groups = groups

    def find(self, i: int) -> int:
        while self.parent[i] != i:
            self.parent[i] = self.parent[self.parent[i]]
            i = self.parent[i]
        return i

    def union(self, a: int, b: int, link: str, *, careful: bool = False) -> None:
        """Join the groups of `a` and `b` (the smaller index stays the root). `careful`:
        only when they do not contradict each other."""
        ra, rb = sorted((self.find(a), self.find(b)))
        if ra == rb or (careful and self.groups[ra].contradicts(self.groups[rb])):
            return
        self.parent[rb] = ra
        self.groups[ra].absorb(self.groups[rb], link)


@dataclass(slots=True)
class Entry:
    """One hit in the merge: its engine, its rank there and its identifiers."""

    engine: str
    rank: int
    hit: Hit
    ids: PaperIds


@dataclass(slots=True)
class Paper:
    """Every hit of one paper, and each engine's best rank for it."""

    entries: list[Entry]  # by rank, then engine name
    ranks: dict[str, int]
    links: frozenset[str]  # what joined the hits: doi, arxiv, pmid, title, url

    @property
    def engines(self) -> list[str]:
        """Engines that returned the paper, best rank first (ties by name)."""
        return sorted(self.ranks, key=lambda e: (self.ranks[e], e))

    @property
    def hits(self) -> list[Hit]:
        return [entry.hit for entry in self.entries]

    def ids(self) -> dict[str, str]:
        """One identifier per kind, from the best-ranked entry that has one."""
        out: dict[str, str] = {}
        for entry in self.entries:
            for kind, value in entry.ids.items():
                out.setdefault(kind, value)
        return out

    def years(self) -> set[int]:
        return {y for h in self.hits if (y := year_of(h.published)) is not None}

    def published(
        self, year_from: int | None = None, year_to: int | None = None
    ) -> tuple[str | None, datetime | None]:
        """The earliest year any index gives, at the best precision known for that year; of
        the years from `year_from` to `year_to` where an index gives one (the paper is kept
        for it: an earlier one would show a date outside the asked years)."""
        dated = [
            (d, h.published) for h in self.hits if h.published and (d := parse_date(h.published))
        ]
        asked = [
            (d, p)
            for d, p in dated
            if (year_from is None or d.year >= year_from) and (year_to is None or d.year <= year_to)
        ]
        dated = asked or dated
        if not dated:
            return None, None
        first_year = min(d.year for d, _ in dated)
        day, text = min(
            ((d, p) for d, p in dated if d.year == first_year), key=lambda t: (-len(t[1]), t[0])
        )
        return text, day


def entries_of(lists: Mapping[str, Sequence[Hit]]) -> list[Entry]:
    """Every hit with its rank (position when the engine gave none), engines in name order."""
    return [
        Entry(engine, hit.rank if hit.rank >= 1 else position, hit, paper_ids(hit))
        for engine in sorted(lists)
        for position, hit in enumerate(lists[engine], start=1)
    ]


def group_papers(entries: Sequence[Entry]) -> list[Paper]:
    """Join entries naming the same paper (see the module docstring); papers in order of their
    first entry."""
    groups = [_Group({kind: set() for kind in ID_KINDS}, surnames(e.hit.authors)) for e in entries]
    for group, entry in zip(groups, entries, strict=True):
        for kind, value in entry.ids.items():
            group.ids[kind].add(value)
    uf = _UnionFind(groups)
    first_seen: dict[tuple[str, str], int] = {}
    by_title: dict[str, list[int]] = {}
    for i, entry in enumerate(entries):
        url = canonicalize(entry.hit.url)
        keys = [*entry.ids.items(), *([("url", url.key)] if url.host else [])]
        for kind, value in keys:
            j = first_seen.setdefault((kind, value), i)
            if j != i:
                uf.union(j, i, kind)
        if key := title_key(entry.hit.title, year_of(entry.hit.published)):
            by_title.setdefault(key, []).append(i)

    # In an order of the records' own content (rank, ids, link), not of their indexes' names:
    # a record that may join either of two papers that contradict each other joins one
    # whatever the indexes are called.
    def content(i: int) -> tuple[object, ...]:
        entry = entries[i]
        return (entry.rank, sorted(entry.ids.items()), canonicalize(entry.hit.url).key, i)

    for key in sorted(by_title):
        members = sorted(by_title[key], key=content)
        short = key.count(" ") + 1 < MIN_TITLE_WORDS_WITHOUT_AUTHORS
        for pos, i in enumerate(members[1:], start=1):
            for j in members[:pos]:
                a, b = uf.find(j), uf.find(i)
                if a != b and (not short or uf.groups[a].names or uf.groups[b].names):
                    uf.union(j, i, "title", careful=True)
                    if uf.find(i) == uf.find(j):
                        break
    papers: dict[int, list[Entry]] = {}
    for i, entry in enumerate(entries):
        papers.setdefault(uf.find(i), []).append(entry)
    out = []
    for root, found in papers.items():
        found.sort(key=lambda e: (e.rank, e.engine))
        ranks: dict[str, int] = {}
        for e in found:
            ranks.setdefault(e.engine, e.rank)
        out.append(Paper(found, ranks, frozenset(uf.groups[root].links)))
    return out
