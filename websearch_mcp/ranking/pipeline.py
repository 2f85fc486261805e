"""The ranking pipeline: the engines' lists in, one fused, explained list out.

    merge by canonical URL -> one vote per index family -> weighted RRF, normalised to [0, 1],
    credited for the voters that likely do not index the result (coverage) -> text signals
    (alignment, rare terms, phrase) -> domain quality -> consensus, rank position, engine
    scores, authority, freshness -> neighbours (the head's scores shared by similar texts) ->
    threshold -> MMR -> truncate

RRF is the backbone; every other signal s in [0, 1] enters as a bounded factor
(1 + w * s) / (1 + w) in (0, 1], and the domain as 1 or 1 - domain_penalty. So the final score
stays in [0, 1], no signal can outweigh RRF's ordering by more than its factor's range, and a
weight of 0 switches a signal off exactly. Engines of one index family (`families`) vote once.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from collections.abc import Set as AbstractSet
from dataclasses import dataclass
from datetime import UTC, datetime
from operator import attrgetter
from typing import Any

from websearch_mcp.config import RankingSettings, SearchSettings
from websearch_mcp.models import Hit, Query, RankedResult
from websearch_mcp.ranking.boosts import (
    authority,
    consensus,
    freshness,
    site_authority,
    wants_recent,
)
from websearch_mcp.ranking.coverage import Unseen, containment, credited
from websearch_mcp.ranking.domain import (
    DomainVerdict,
    domain_info,
    domain_lists,
    domain_quality,
    is_error_code_query,
    matches,
)
from websearch_mcp.ranking.families import (
    family_of,
    family_weights,
    one_vote_per_family,
    shares_an_index,
)
from websearch_mcp.ranking.fusion import Merged, merge, normalised
from websearch_mcp.ranking.lexical import (
    DocTerms,
    QueryTerms,
    alignment,
    analyze_doc,
    analyze_query,
    phrase_share,
    rare_share,
)
from websearch_mcp.ranking.mmr import mmr
from websearch_mcp.ranking.neighbours import POOL, regularised
from websearch_mcp.ranking.positions import EngineEvidence
from websearch_mcp.ranking.prepared import Preparation

MIN_KEPT = 2  # the threshold never leaves fewer results than this (when there are as many)


class Factor:
    """A signal's multiplier (1 + w * s) / (1 + w), as base + slope * s with the weight fixed;
    1 when the signal does not apply (None) and for every signal when w = 0."""

    __slots__ = ("base", "on", "slope")

    def __init__(self, weight: float) -> None:
        weight = max(0.0, weight)
        self.base = 1.0 / (1.0 + weight)
        self.slope = weight / (1.0 + weight)
        # Off: exactly 1 for every signal, so a score need not compute the signal at all.
        self.on = not (self.base == 1.0 and self.slope == 0.0)

    def __call__(self, signal: float | None) -> float:
        return 1.0 if signal is None else self.base + self.slope * signal


class _Factors:
    def __init__(self, s: RankingSettings) -> None:
        self.alignment = Factor(s.alignment_weight)
        self.rare = Factor(s.rare_term_weight)
        self.phrase = Factor(s.phrase_weight)
        self.consensus = Factor(s.consensus_weight)
        self.position = Factor(s.position_weight)
        self.engine_score = Factor(s.engine_score_weight)
        self.authority = Factor(s.authority_weight)
        self.freshness = Factor(s.freshness_weight)


def kept_count(scores: Sequence[float], threshold: float) -> int:
    """How many of `scores` (sorted best first) pass `threshold`; never fewer than the top
    result and two results, when there are that many."""
    passing = sum(1 for s in scores if s >= threshold)
    return max(passing, min(MIN_KEPT, len(scores)))


class _Context:
    """Per-request values every result's scoring needs, computed once."""

    def __init__(
        self,
        lists: Mapping[str, Sequence[Hit]],
        query: Query,
        search: SearchSettings,
        weights: Mapping[str, float],
        families: Mapping[str, str],
        now: datetime,
    ) -> None:
        self.search = search
        self.settings: RankingSettings = search.ranking
        self.weights = weights
        self.query = query
        self.terms: QueryTerms = analyze_query(query.text)
        self.error_code = is_error_code_query(query.text)
        self.recent = wants_recent(self.terms, query.time_range, now)
        self.now = now
        self.families = {e: family_of(e, families) for e in lists}
        # The engines voting under another name (DuckDuckGo as Bing): a result none of them
        # returned keeps its ranks as they are.
        self.renamed = frozenset(e for e, f in self.families.items() if f != e)
        self.shared_index = shares_an_index(lists, families)
        # The engines whose index another answering engine serves too: a result that fewer
        # than two of them returned has one engine per family already.
        members = Counter(self.families.values())
        self.sharing = frozenset(e for e, f in self.families.items() if members[f] > 1)
        # Voters are index families, each with its best member's weight.
        self.family_weights = family_weights(lists, weights, families)
        self.best = sum(w / (search.rrf_k + 1) for w in self.family_weights.values())
        self.voters = sum(1 for w in self.family_weights.values() if w > 0)
        self.every_engine_votes = self.voters == len(lists)
        self.evidence = EngineEvidence(lists, weights, self.settings.position_k)
        self.unseen: Unseen | None = None  # with the coverage credit on
        self.domains = domain_lists(self.settings, search.block_domains)
        self.factors = _Factors(self.settings)
        self._hosts: dict[str, tuple[DomainVerdict, float]] = {}

    def site(self, host: str) -> tuple[DomainVerdict, float]:
        """The domain verdict and site authority of `host`, computed once per request."""
        found = self._hosts.get(host)
        if found is None:
            info = domain_info(host)
            found = self._hosts[host] = (
                domain_quality(
                    host, self.terms, self.error_code, self.domains, self.settings.domain_penalty
                ),
                site_authority(info, self.terms, self.domains),
            )
        return found

    def votes(self, ranks: Mapping[str, int]) -> Mapping[str, int]:
        """A result's ranks (in engine-name order, as merging makes them) with one engine per
        index family (all of them when no two of its engines share an index)."""
        if not self.shared_index or len(self.sharing.intersection(ranks)) < 2:
            return ranks
        return one_vote_per_family(ranks, self.weights, self.families, self.search.rrf_k)

    def by_family(self, votes: Mapping[str, int]) -> Mapping[str, int]:
        if self.renamed.isdisjoint(votes):
            return votes
        return {self.families[e]: r for e, r in votes.items()}

    def engines_agreeing(self, votes: Mapping[str, int]) -> int:
        """How many index families with a positive weight returned the result."""
        if self.every_engine_votes:
            return len(votes)
        return sum(1 for e in votes if self.weights.get(e, 1.0) > 0)


@dataclass(slots=True)
class _Scored:
    """One merged result with its signals. A signal whose weight is 0 leaves every score
    alone: it is computed only for the results returned (`explain`), as are the `details`."""

    item: Merged
    votes: Mapping[str, int]
    doc: DocTerms
    rrf: float
    unseen: float | None
    coverage: float
    domain: DomainVerdict
    authority: float
    alignment: float | None = None
    rare: float | None = None
    phrase: float | None = None
    consensus: float | None = None
    position: float | None = None
    engine_score: float | None = None
    freshness: float | None = None
    neighbours: float | None = None  # the neighbours' mean score, when regularised
    score: float = 0.0
    similarity: float | None = None
    unasked_terms: AbstractSet[str] | None = None

    def unasked(self, asked: AbstractSet[str]) -> AbstractSet[str]:
        """The result's content terms less the query's (`asked`): the words every result shares
        with the query are relevance, not likeness. Made on first use, once."""
        if self.unasked_terms is None:
            self.unasked_terms = self.doc.text - asked
        return self.unasked_terms

    def explain(self, ctx: _Context) -> None:
        """Compute the signals the score did without (their weight is 0)."""
        f, terms = ctx.factors, ctx.terms
        if not f.alignment.on:
            self.alignment = alignment(terms, self.doc)
        if not f.rare.on:
            self.rare = rare_share(terms, self.doc)
        if not f.phrase.on:
            self.phrase = phrase_share(terms, self.doc)
        if not f.consensus.on:
            self.consensus = consensus(ctx.engines_agreeing(self.votes), ctx.voters)
        if not f.position.on:
            self.position = ctx.evidence.position(self.votes)
        if not f.engine_score.on:
            self.engine_score = ctx.evidence.engine_score(self.item.hits, self.votes)
        if not f.freshness.on:
            self.freshness = _freshness(self.item, ctx)

    def details(self) -> dict[str, Any]:
        """The explanation shown as `score_details` (values rounded to 4 places)."""
        out: dict[str, Any] = {
            name: None if (value := read(self)) is None else round(value, 4)
            for name, read in _SHOWN
        }
        out["ranks"] = {e: self.item.ranks[e] for e in self.item.engines}
        if self.domain.reason:
            out["domain_reason"] = self.domain.reason
        if self.similarity is not None:
            out["similarity"] = round(self.similarity, 4)
        return out


#: The signals of `score_details`, in the order they are shown; `domain` and `final` are read
#: from the domain verdict and the score (`_SHOWN`: each signal's reader).
_SIGNALS = (
    "rrf",
    "unseen",
    "coverage",
    "alignment",
    "rare",
    "phrase",
    "domain",
    "consensus",
    "position",
    "engine_score",
    "authority",
    "freshness",
    "neighbours",
    "final",
)
_SHOWN = tuple(
    (name, attrgetter({"domain": "domain.factor", "final": "score"}.get(name, name)))
    for name in _SIGNALS
)


class _Unasked(dict[int, AbstractSet[str]]):
    """Index -> `scored[index].unasked(asked)`, made when MMR first reads it: its scan of each
    round stops early, so most results' terms are never compared."""

    def __init__(self, scored: list[_Scored], asked: AbstractSet[str]) -> None:
        super().__init__()
        self._scored, self._asked = scored, asked

    def __missing__(self, index: int) -> AbstractSet[str]:
        value = self[index] = self._scored[index].unasked(self._asked)
        return value


def _freshness(item: Merged, ctx: _Context) -> float | None:
    if not ctx.recent:
        return None
    return freshness(item.published_at, ctx.now, ctx.query.time_range, ctx.settings)


def _score(
    item: Merged, votes: Mapping[str, int], voted: Mapping[str, int], doc: DocTerms, ctx: _Context
) -> _Scored:
    """`votes`: the result's ranks, one engine per index family; `voted`, the same by family.
    The score multiplies the factors in one fixed order (an unused one is exactly 1), so it is
    the same float whichever signals are on."""
    terms, f = ctx.terms, ctx.factors
    verdict, site = ctx.site(item.host)
    vote, position = ctx.evidence.rrf_and_position(votes, ctx.search.rrf_k)
    rrf = normalised(vote, ctx.best)
    missing, covered = None, rrf
    if ctx.unseen is not None:
        missing = ctx.unseen(voted)
        covered = credited(rrf, voted, ctx.family_weights, missing, ctx.settings.coverage_weight)
    s = _Scored(item, votes, doc, rrf, missing, covered, verdict, authority(site, item.path))
    # Each factor is `Factor.__call__` written out; a signal that does not apply (None) is a
    # factor of exactly 1, and multiplying by it is left out: the same float either way.
    final = covered
    signal: float | None
    if (on := f.alignment).on:
        s.alignment = signal = alignment(terms, doc)
        final *= on.base + on.slope * signal
    if (on := f.rare).on and (signal := rare_share(terms, doc)) is not None:
        s.rare = signal
        final *= on.base + on.slope * signal
    if (on := f.phrase).on and (signal := phrase_share(terms, doc)) is not None:
        s.phrase = signal
        final *= on.base + on.slope * signal
    final *= verdict.factor
    if (on := f.consensus).on and (
        signal := consensus(ctx.engines_agreeing(votes), ctx.voters)
    ) is not None:
        s.consensus = signal
        final *= on.base + on.slope * signal
    if (on := f.position).on and (signal := position) is not None:
        s.position = signal
        final *= on.base + on.slope * signal
    if (on := f.engine_score).on and (
        signal := ctx.evidence.engine_score(item.hits, votes)
    ) is not None:
        s.engine_score = signal
        final *= on.base + on.slope * signal
    final *= f.authority.base + f.authority.slope * s.authority
    if (on := f.freshness).on and ctx.recent:  # not recent: no freshness, a factor of exactly 1
        s.freshness = signal = _freshness(item, ctx)
        if signal is not None:
            final *= on.base + on.slope * signal
    s.score = min(1.0, max(0.0, final))
    return s


def _regularise(scored: list[_Scored], ctx: _Context) -> None:
    """Share the head's scores among results with similar words (`neighbours`); `scored` is
    sorted best first, and sorted again after."""
    head = scored[:POOL]
    asked = ctx.terms.content_set
    smoothed = regularised(
        [r.score for r in head], [r.unasked(asked) for r in head], ctx.settings.neighbour_weight
    )
    for r, (score, mean) in zip(head, smoothed, strict=True):
        r.score, r.neighbours = score, mean
    scored.sort(key=lambda r: (-r.score, r.item.key))


def _result(scored: _Scored, ctx: _Context) -> RankedResult:
    scored.explain(ctx)
    item = scored.item
    ordered = [item.hits[e] for e in item.engines]
    citations = [h.citations for h in ordered if h.citations is not None]
    return RankedResult(
        key=item.key,
        title=item.title,
        url=item.url,
        snippet=item.snippet,
        engines=list(item.engines),
        ranks={e: item.ranks[e] for e in item.engines},
        score=scored.score,
        published=item.published,
        engine_scores={
            e: h.score for e, h in zip(item.engines, ordered, strict=True) if h.score is not None
        },
        authors=next((h.authors for h in ordered if h.authors), ()),
        doi=next((h.doi for h in ordered if h.doi), None),
        venue=next((h.venue for h in ordered if h.venue), None),
        citations=max(citations) if citations else None,
        pdf_url=next((h.pdf_url for h in ordered if h.pdf_url), None),
        details=scored.details(),
    )


def rank(
    lists: Mapping[str, Sequence[Hit]],
    query: Query,
    search: SearchSettings,
    *,
    weights: Mapping[str, float],
    families: Mapping[str, str] | None = None,
    now: datetime | None = None,
    prepared: Preparation | None = None,
) -> list[RankedResult]:
    """Fuse the engines' lists (engine name -> its hits in rank order, only engines that
    answered) into the final list: at most `query.max_results` results, best first, each with
    `details` filled (rrf, unseen, coverage, alignment, rare, phrase, domain, consensus,
    position, engine_score, authority, freshness, neighbours, final, and ranks {engine: rank};
    `domain_reason` when penalised, `similarity` after MMR).
    `weights` are per-engine weights (1.0 for a missing name); `families` name each engine's
    index family (engine -> family; a missing engine is a family of its own); `now` is for
    freshness; `prepared`, the hits read as their lists arrived (the result is the same)."""
    now = now or datetime.now(UTC)
    if now.tzinfo is None:
        now = now.replace(tzinfo=UTC)
    ctx = _Context(lists, query, search, weights, families or {}, now)
    merged = merge(lists, prepared.canonical) if prepared else merge(lists)
    texts = prepared.texts if prepared else None
    items = [item for item in merged if not matches(item.host, ctx.domains.blocked)]
    votes = [ctx.votes(item.ranks) for item in items]
    voted = [ctx.by_family(v) for v in votes]
    if search.ranking.coverage_weight > 0 and ctx.voters > 1:
        contained = containment(voted)
        if contained:
            ctx.unseen = Unseen(ctx.family_weights, contained)
    scored = [
        _score(item, vote, family, analyze_doc(item.title, item.snippet, item.key, texts), ctx)
        for item, vote, family in zip(items, votes, voted, strict=True)
    ]
    scored.sort(key=lambda r: (-r.score, r.item.key))
    if search.ranking.neighbour_weight > 0 and len(scored) > 1:
        _regularise(scored, ctx)
    scored = scored[: kept_count([r.score for r in scored], search.relevance_threshold)]
    limit = max(0, query.max_results)
    if search.mmr.enabled and len(scored) > 1 and limit > 1:
        order, sims = mmr(
            [r.score for r in scored],
            _Unasked(scored, ctx.terms.content_set),
            search.mmr.lambda_,
            limit,
        )
        for index, sim in zip(order, sims, strict=True):
            scored[index].similarity = sim
        scored = [scored[i] for i in order]
    return [_result(r, ctx) for r in scored[:limit]]
