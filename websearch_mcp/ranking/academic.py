"""The academic ranking: the indexes' lists in, one list of papers out, every score explained.

    merge by paper (DOI, arXiv id, PubMed id, title + year, URL: see papers.py) -> year filter
    -> weighted RRF, normalised to [0, 1] -> text signals (alignment, rare terms, phrase) ->
    citations, venue, open access, freshness (only when the query asks for recent work) ->
    threshold -> truncate

The same core as the web pipeline (pipeline.py): RRF is the backbone and every signal s in
[0, 1] enters as the bounded factor (1 + w * s) / (1 + w), so the final score stays in [0, 1]
and a weight of 0 switches a signal off. Weights and the threshold are `academic:` settings.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from typing import Any
from urllib.parse import quote

from websearch_mcp.config import AcademicSettings
from websearch_mcp.models import Hit, Query, RankedResult
from websearch_mcp.ranking.boosts import wants_recent
from websearch_mcp.ranking.context import Factor
from websearch_mcp.ranking.domain import domain_set, matches
from websearch_mcp.ranking.fusion import normalised_rrf, rrf_best
from websearch_mcp.ranking.lexical import (
    QueryTerms,
    alignment,
    analyze_doc,
    analyze_query,
    phrase_share,
    rare_share,
)
from websearch_mcp.ranking.papers import Entry, Paper, entries_of, group_papers
from websearch_mcp.ranking.pipeline import kept_count
from websearch_mcp.ranking.urls import canonicalize
from websearch_mcp.ranking.venues import VenueList, venue_list

_YEAR = re.compile(r"\b(1[5-9]\d\d|2\d\d\d)\b")
# Preprint servers name a venue only in a weak sense: a journal's name is shown before them.
_PREPRINT = re.compile(
    r"\b(?:[a-z]*rxiv|ssrn|preprints?|corr|research square|authorea)\b", re.I
)  # arXiv, bioRxiv, PsyArXiv, TechRxiv, ...
# Where a paper's link leads, best first after the publisher's own page (0): its DOI, arXiv,
# PubMed, Europe PMC, other indexes; a PDF is last (it is shown as pdf_url anyway).
_LINK_HOSTS: tuple[frozenset[str], ...] = (
    frozenset({"doi.org", "dx.doi.org"}),
    frozenset({"arxiv.org"}),
    frozenset({"pubmed.ncbi.nlm.nih.gov", "ncbi.nlm.nih.gov"}),
    frozenset({"europepmc.org"}),
    frozenset({"semanticscholar.org", "openalex.org", "core.ac.uk", "dblp.org",
               "dblp.uni-trier.de", "scholar.google.com", "researchgate.net"}),
)  # fmt: skip
_PDF_LINK = len(_LINK_HOSTS) + 1
_UNSAFE_IN_DOI_LINKS = frozenset('#?%" ')
_PDF = re.compile(r"\.pdf$|^/pdf/", re.IGNORECASE)


def wants_recent_papers(text: str, terms: QueryTerms, now: datetime) -> bool:
    """A recency word ("recent", "latest") or last or this year ("2025" in 2026; not "2100
    projections" nor "2048-bit keys")."""
    if wants_recent(terms, None, now):
        return True
    return any(now.year - 1 <= int(y) <= now.year for y in _YEAR.findall(text))


def citation_signal(citations: int | None, settings: AcademicSettings) -> float:
    """log(1 + c) / log(1 + saturation), at most 1; `citations_unknown` when no index counts."""
    if citations is None:
        return settings.citations_unknown
    saturation = math.log1p(settings.citations_saturation)
    return min(1.0, math.log1p(max(0, citations)) / saturation)


def freshness(published: datetime | None, now: datetime, settings: AcademicSettings) -> float:
    """0.5 ** (age / half-life): 1 for this day, 0.5 at one half-life; undated papers get
    `freshness_undated`."""
    if published is None:
        return settings.freshness_undated
    age_days = (now - published).total_seconds() / 86_400
    return 0.5 ** (max(0.0, age_days) / settings.freshness_half_life_days)


def url_rank(url: str) -> int:
    """How good a link to a paper is: 0 for the publisher's page, 1 for doi.org, 2 for arXiv,
    3 for PubMed, 4 for Europe PMC, 5 for other indexes, 6 for a PDF."""
    _, host, path = canonicalize(url)
    if _PDF.search(path) or "pdf=render" in url:
        return _PDF_LINK
    return next((i for i, hosts in enumerate(_LINK_HOSTS, 1) if matches(host, hosts)), 0)


@dataclass(slots=True)
class _Fields:
    """A paper's shown fields, chosen from its hits."""

    title: str
    url: str
    snippet: str
    published: str | None
    published_at: datetime | None
    authors: tuple[str, ...]
    venue: str | None
    citations: int | None
    pdf_url: str | None
    ids: dict[str, str]


def _doi_link(url: str, doi: str | None) -> str:
    """One spelling of a doi.org link; built from the DOI when that holds a character a link
    reads otherwise (`#` ends old Wiley DOIs: `...3.0.CO;2-#`)."""
    if doi and any(char in doi for char in _UNSAFE_IN_DOI_LINKS):
        return "https://doi.org/" + quote(doi, safe="/:;()[]@!$&'*+,=")
    return "https://doi.org" + canonicalize(url).path


def paper_fields(paper: Paper, query: Query | None = None) -> _Fields:
    """Best-ranked title, best link, longest abstract, earliest date (in the `query`'s years
    where an index gives one there), longest author list, a journal before a preprint server
    (and another index's name for it before an arXiv record's citation of it),
    most citations, a PDF link, every kind of id."""
    hits = paper.hits  # best rank first
    best = min(
        paper.entries,
        key=lambda e: (url_rank(e.hit.url), not e.hit.url.startswith("https:"), e.rank, e.engine),
    ).hit.url
    if canonicalize(best).host in ("doi.org", "dx.doi.org"):
        best = _doi_link(best, paper.ids().get("doi"))
    # A preprint's own record names its journal as a citation in words (arXiv's journal_ref):
    # the other indexes' venue names come first.
    by_record = sorted(hits, key=lambda h: matches(canonicalize(h.url).host, _LINK_HOSTS[1]))
    venues = [h.venue for h in by_record if h.venue]
    pdfs = sorted((not u.startswith("https:"), n) for n, h in enumerate(hits) if (u := h.pdf_url))
    citations = [h.citations for h in hits if h.citations is not None]
    years = (query.year_from, query.year_to) if query else (None, None)
    published, published_at = paper.published(*years)
    return _Fields(
        title=next((h.title for h in hits if h.title.strip()), ""),
        url=best,
        snippet=max((h.snippet for h in hits), key=len),
        published=published,
        published_at=published_at,
        authors=max((h.authors for h in hits), key=len),
        venue=next((v for v in venues if not _PREPRINT.search(v)), venues[0] if venues else None),
        citations=max(citations) if citations else None,
        pdf_url=hits[pdfs[0][1]].pdf_url if pdfs else None,  # https first, then by rank
        ids=paper.ids(),
    )


def in_years(paper: Paper, query: Query) -> bool:
    """Whether any year an index gives for the paper lies in the asked range (papers without a
    known year stay: the indexes that filter by year already chose them)."""
    low, high = query.year_from, query.year_to
    if low is None and high is None:
        return True
    years = paper.years()
    return not years or any(
        (low is None or y >= low) and (high is None or y <= high) for y in years
    )


class _Context:
    """Per-request values every paper's scoring needs, computed once."""

    def __init__(
        self,
        voters: Iterable[str],
        query: Query,
        settings: AcademicSettings,
        weights: Mapping[str, float],
        rrf_k: int,
        now: datetime,
    ) -> None:
        """`voters`: the indexes that gave a paper not on a blocked site and in the asked
        years (one that gave none holds no vote: counted, it would lower every paper's share
        of the best RRF)."""
        self.settings = settings
        self.weights = weights
        self.rrf_k = rrf_k
        self.now = now
        self.query = query
        self.terms = analyze_query(query.text)
        self.recent = wants_recent_papers(query.text, self.terms, now)
        self.best = rrf_best(voters, weights, rrf_k)
        self.venues: VenueList = venue_list(tuple(settings.venues))
        self.factors = {
            "alignment": Factor(settings.alignment_weight),
            "rare": Factor(settings.rare_term_weight),
            "phrase": Factor(settings.phrase_weight),
            "citations": Factor(settings.citations_weight),
            "venue": Factor(settings.venue_weight),
            "open_access": Factor(settings.open_access_weight),
            "freshness": Factor(settings.freshness_weight),
        }


@dataclass(slots=True)
class _Scored:
    paper: Paper
    fields: _Fields
    score: float
    details: dict[str, Any]


def _score(paper: Paper, ctx: _Context) -> _Scored:
    fields = paper_fields(paper, ctx.query)
    # Authors and venue are words a literature query names ("vaswani attention", "nejm").
    extra = " ".join((*fields.authors, fields.venue or ""))
    doc = analyze_doc(fields.title, f"{fields.snippet}\n{extra}", fields.url)
    venue_match = next((found for h in paper.hits if (found := ctx.venues.match(h.venue))), None)
    rrf = normalised_rrf(paper.ranks, ctx.weights, ctx.rrf_k, ctx.best)
    signals: dict[str, float | None] = {
        "alignment": alignment(ctx.terms, doc),
        "rare": rare_share(ctx.terms, doc),
        "phrase": phrase_share(ctx.terms, doc),
        "citations": citation_signal(fields.citations, ctx.settings),
        "venue": 1.0 if venue_match else 0.0,
        "open_access": 1.0 if fields.pdf_url else 0.0,
        "freshness": freshness(fields.published_at, ctx.now, ctx.settings) if ctx.recent else None,
    }
    final = rrf
    for name, factor in ctx.factors.items():
        final *= factor(signals[name])
    score = min(1.0, max(0.0, final))
    details: dict[str, Any] = {"rrf": round(rrf, 4)} | {
        name: None if value is None else round(value, 4) for name, value in signals.items()
    }
    details["final"] = round(score, 4)
    details["ranks"] = {e: paper.ranks[e] for e in paper.engines}
    if fields.citations is not None:
        details["citation_count"] = fields.citations
    if venue_match:
        details["top_venue"] = venue_match
    if fields.ids:
        details["ids"] = dict(fields.ids)
    if paper.links:
        details["merged_by"] = sorted(paper.links)
    return _Scored(paper, fields, score, details)


def _key(scored: _Scored) -> str:
    """The paper's identity: its DOI, arXiv id or PubMed id, else its link's canonical form."""
    ids = scored.fields.ids
    for kind in ("doi", "arxiv", "pmid"):
        if kind in ids:
            return f"{kind}:{ids[kind]}"
    return "url:" + canonicalize(scored.fields.url).key


def _result(scored: _Scored, key: str) -> RankedResult:
    paper, fields = scored.paper, scored.fields
    scores: dict[str, float] = {}
    for entry in paper.entries:
        if entry.hit.score is not None:
            scores.setdefault(entry.engine, entry.hit.score)
    return RankedResult(
        key=key,
        title=fields.title,
        url=fields.url,
        snippet=fields.snippet,
        engines=paper.engines,
        ranks={e: paper.ranks[e] for e in paper.engines},
        score=scored.score,
        published=fields.published,
        engine_scores=scores,
        authors=fields.authors,
        doi=fields.ids.get("doi"),
        venue=fields.venue,
        citations=fields.citations,
        pdf_url=fields.pdf_url,
        ids=fields.ids,
        details=scored.details,
    )


def _without_blocked_pdf(entry: Entry, blocked: frozenset[str]) -> Entry:
    """`entry`, without its PDF link when that is on a blocked domain."""
    pdf = entry.hit.pdf_url
    if not pdf or not blocked or not matches(canonicalize(pdf).host, blocked):
        return entry
    return replace(entry, hit=replace(entry.hit, pdf_url=None))


def rank_papers(
    lists: Mapping[str, Sequence[Hit]],
    query: Query,
    settings: AcademicSettings,
    *,
    weights: Mapping[str, float],
    rrf_k: int = 60,
    block_domains: Sequence[str] = (),
    now: datetime | None = None,
) -> list[RankedResult]:
    """Fuse the indexes' lists (engine name -> its hits in rank order, only engines that
    answered) into at most `query.max_results` papers, best first, each with `details` (rrf,
    alignment, rare, phrase, citations, venue, open_access, freshness, final, ranks; and where
    known citation_count, top_venue, ids, merged_by). Papers outside `query.year_from` ..
    `year_to` (by any year an index gives) and hits on `block_domains` are left out. `weights`
    are per-engine weights (1.0 for a missing name); `now` is for freshness."""
    now = now or datetime.now(UTC)
    if now.tzinfo is None:
        now = now.replace(tzinfo=UTC)
    blocked = domain_set(tuple(block_domains))
    entries = [
        _without_blocked_pdf(e, blocked)
        for e in entries_of(lists)
        if not matches(canonicalize(e.hit.url).host, blocked)
    ]
    papers = [paper for paper in group_papers(entries) if in_years(paper, query)]
    ctx = _Context(
        {e for paper in papers for e in paper.ranks}, query, settings, weights, rrf_k, now
    )
    scored = [_score(paper, ctx) for paper in papers]
    keyed = sorted(((s, _key(s)) for s in scored), key=lambda t: (-t[0].score, t[1]))
    keyed = keyed[: kept_count([s.score for s, _ in keyed], settings.relevance_threshold)]
    return [_result(s, key) for s, key in keyed[: max(0, query.max_results)]]
