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

from collections.abc import Iterable, Mapping, Sequence
from collections.abc import Set as AbstractSet
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from typing import Any

from websearch_mcp.config import NewsSettings, SearchSettings
from websearch_mcp.models import Hit, Query, RankedResult
from websearch_mcp.ranking.agreement import reliable_weights
from websearch_mcp.ranking.boosts import authority, consensus
from websearch_mcp.ranking.context import Context
from websearch_mcp.ranking.coverage import Unseen, containment, credited
from websearch_mcp.ranking.domain import DomainVerdict, domain_info, domain_lists, matches
from websearch_mcp.ranking.fusion import Merged, merge, normalised
from websearch_mcp.ranking.lexical import (
    DocTerms,
    alignment,
    analyze_doc,
    phrase_share,
    rare_share,
)
from websearch_mcp.ranking.mmr import Shared, mmr
from websearch_mcp.ranking.neighbours import POOL, overlap, regularised
from websearch_mcp.ranking.prepared import Preparation
from websearch_mcp.ranking.stories import Report, fold
from websearch_mcp.ranking.urls import canonicalize

MIN_KEPT = 2  # the threshold never leaves fewer results than this (when there are as many)


def kept_count(scores: Sequence[float], threshold: float) -> int:
    """How many of `scores` (sorted best first) pass `threshold`; never fewer than the top
    result and two results, when there are that many."""
    passing = sum(1 for s in scores if s >= threshold)
    return max(passing, min(MIN_KEPT, len(scores)))


@dataclass(slots=True)
class _Scored:
    """One merged result with its signals. A signal whose weight is 0 leaves every score
    alone: it is computed only for the results returned (`explain`), as are the `details`."""

    item: Merged
    votes: dict[str, int]
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
    place: int = -1  # its row in the head's shared-term counts (`_regularise`), if any
    score: float = 0.0
    similarity: float | None = None
    unasked_terms: AbstractSet[str] | None = None
    also: list[dict[str, str | None]] | None = None  # a news story's other reports
    folded: tuple[Merged, ...] = ()  # the results folded into this one, as one story
    #: The engines that joined with the publisher's own link after scoring (`_publisher_link`):
    #: listed in `engines`, but no vote of the score.
    linked: frozenset[str] = frozenset()

    def unasked(self, asked: AbstractSet[str]) -> AbstractSet[str]:
        """The result's content terms less the query's (`asked`): the words every result shares
        with the query are relevance, not likeness. Made on first use, once."""
        if self.unasked_terms is None:
            self.unasked_terms = self.doc.text - asked
        return self.unasked_terms

    def explain(self, ctx: Context) -> None:
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
            self.freshness = ctx.freshness(self.item)

    def details(self) -> dict[str, Any]:
        """The explanation shown as `score_details` (values rounded to 4 places), the signals
        in the order shown: `domain` is the domain verdict's factor and `final` the score."""
        out: dict[str, Any] = {
            "rrf": round(self.rrf, 4),
            "unseen": _shown(self.unseen),
            "coverage": round(self.coverage, 4),
            "alignment": _shown(self.alignment),
            "rare": _shown(self.rare),
            "phrase": _shown(self.phrase),
            "domain": round(self.domain.factor, 4),
            "consensus": _shown(self.consensus),
            "position": _shown(self.position),
            "engine_score": _shown(self.engine_score),
            "authority": round(self.authority, 4),
            "freshness": _shown(self.freshness),
            "neighbours": _shown(self.neighbours),
            "final": round(self.score, 4),
            "ranks": {e: self.item.ranks[e] for e in self.item.engines if e not in self.linked},
        }
        if self.linked:
            out["linked"] = {e: self.item.ranks[e] for e in self.item.engines if e in self.linked}
        if self.domain.reason:
            out["domain_reason"] = self.domain.reason
        if self.similarity is not None:
            out["similarity"] = round(self.similarity, 4)
        return out


def _shown(value: float | None) -> float | None:
    return None if value is None else round(value, 4)


class _Unasked(dict[int, AbstractSet[str]]):
    """Index -> `scored[index].unasked(asked)`, made when MMR first reads it: its scan of each
    round stops early, so most results' terms are never compared."""

    def __init__(self, scored: list[_Scored], asked: AbstractSet[str]) -> None:
        super().__init__()
        self._scored, self._asked = scored, asked

    def __missing__(self, index: int) -> AbstractSet[str]:
        value = self[index] = self._scored[index].unasked(self._asked)
        return value


def _score(
    item: Merged, votes: dict[str, int], voted: dict[str, int], doc: DocTerms, ctx: Context
) -> _Scored:
    """`votes`: the result's ranks, one engine per index family; `voted`, the same by family.
    The score multiplies the factors in one fixed order (an unused one is exactly 1), so it is
    the same float whichever signals are on."""
    terms, f = ctx.terms, ctx.factors
    verdict, site = ctx.site(item.host)
    vote, position = ctx.evidence.rrf_and_position(votes, ctx.rrf_k)
    rrf = normalised(vote, ctx.best)
    missing, covered = None, rrf
    if ctx.unseen is not None:
        missing = ctx.unseen.weight(voted)
        covered = credited(rrf, voted, ctx.counted, missing, ctx.coverage_weight)
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
        s.freshness = signal = ctx.freshness(item)
        if signal is not None:
            final *= on.base + on.slope * signal
    s.score = min(1.0, max(0.0, final))
    return s


def _diversified(
    scored: list[_Scored],
    ctx: Context,
    lambda_: float,
    limit: int,
    head: tuple[list[list[int]], list[int]] | None,
) -> list[_Scored]:
    """`scored` in MMR's order (`similarity` set for each result but the first, which has none
    above it); the results only muted engines returned stay last, out of MMR's normalisation
    too."""
    voiced = _heard(scored)
    if voiced < 2:
        return scored
    heard, rest = scored[:voiced], scored[voiced:]
    order, sims = mmr(
        [r.score for r in heard],
        _Unasked(heard, ctx.terms.content_set),
        lambda_,
        limit,
        Shared(head[0], head[1], [r.place for r in heard]) if head is not None else None,
    )
    for index, sim in zip(order[1:], sims[1:], strict=True):
        heard[index].similarity = sim
    return [heard[i] for i in order] + rest


def _heard(scored: Sequence[_Scored]) -> int:
    """How many of `scored` (best first) an engine with a weight returned: the others, only
    muted engines' (weight 0, so rrf 0), come last."""
    count = len(scored)
    while count and scored[count - 1].rrf <= 0:
        count -= 1
    return count


def _regularise(scored: list[_Scored], ctx: Context) -> tuple[list[list[int]], list[int]]:
    """Share the head's scores among results with similar words (`neighbours`); `scored` is
    sorted best first, and sorted again after. Returns the head's shared-term counts and
    sizes, for MMR (each result's `place` is its row)."""
    # A result only muted engines returned has no score to share, nor may it take a share of
    # the others': it changes nothing.
    head = scored[: min(POOL, _heard(scored))]
    if not head:
        return [], []
    asked = ctx.terms.content_set
    texts = [r.unasked(asked) for r in head]
    near, counts = overlap(texts)
    smoothed = regularised([r.score for r in head], near, ctx.settings.neighbour_weight)
    for place, (r, (score, mean)) in enumerate(zip(head, smoothed, strict=True)):
        r.score, r.neighbours, r.place = score, mean, place
    # Each new score is a mean of the head's scores, so the head stays ahead of the rest and
    # only it needs sorting, unless rounding or a tie puts one of it behind the next result.
    _best_first(head)
    scored[: len(head)] = head
    if len(scored) > len(head) and _behind(head[-1], scored[len(head)]):
        _best_first(scored)
    return counts, [len(t) for t in texts]


def _best_first(scored: list[_Scored]) -> None:
    """Sort best score first, ties by canonical URL, so the order never depends on the input's."""
    scored.sort(key=_order)


def _order(r: _Scored) -> tuple[float, str]:
    return -r.score, r.item.key


def _behind(r: _Scored, other: _Scored) -> bool:
    """Whether `r` comes after `other` in `_best_first`'s order."""
    return _order(r) > _order(other)


def _result(scored: _Scored, ctx: Context) -> RankedResult:
    scored.explain(ctx)
    item = scored.item
    # One pass over the engines, best rank first: each field keeps the first hit that has it
    # (citations: the most), where a generator per field was a generic iteration each.
    ranks: dict[str, int] = {}
    engine_scores: dict[str, float] = {}
    authors: tuple[str, ...] = ()
    doi: str | None = None
    venue: str | None = None
    pdf_url: str | None = None
    citations: int | None = None
    for engine in item.engines:
        hit = item.hits[engine]
        ranks[engine] = item.ranks[engine]
        if hit.score is not None:
            engine_scores[engine] = hit.score
        if not authors and hit.authors:
            authors = hit.authors
        if doi is None and hit.doi:
            doi = hit.doi
        if venue is None and hit.venue:
            venue = hit.venue
        if pdf_url is None and hit.pdf_url:
            pdf_url = hit.pdf_url
        if hit.citations is not None and (citations is None or hit.citations > citations):
            citations = hit.citations
    return RankedResult(
        key=item.key,
        title=item.title,
        url=item.url,
        snippet=item.snippet,
        engines=list(item.engines),
        ranks=ranks,
        score=scored.score,
        published=item.published,
        engine_scores=engine_scores,
        authors=authors,
        doi=doi,
        venue=venue,
        citations=citations,
        pdf_url=pdf_url,
        details=scored.details(),
        source=_source(item),
        also=scored.also or [],
        undated=ctx.news is not None and item.published is None,
        folded=tuple(other.key for other in scored.folded),
    )


def _source(item: Merged) -> str | None:
    """The publisher's name as the best-ranked engine that names one gives it."""
    return next((item.hits[e].source for e in item.engines if item.hits[e].source), None)


def _publisher(source: str | None) -> str:
    """A publisher's name as compared. Brave names a publisher by its site (`npr.org`), the other
    engines by its name (`NPR`): both come down to the letters and digits of the name, the
    site's without its suffix, and without a leading "the" (`theguardian.com`, `The Guardian`)."""
    name = (source or "").strip().casefold()
    if "." in name and " " not in name and (site := domain_info(name)).suffix:
        name = site.name or name
    letters = "".join(char for char in name if char.isalnum())
    return letters.removeprefix("the") or letters


#: How a title ends with its publisher's name: "Storm hits coast - Reuters", "... | CNN".
_PUBLISHER_ENDINGS = (" - ", " | ", " – ", " — ")


def _headline(item: Merged) -> str:
    """`item`'s title without an ending that names its own publisher: engines that keep it
    would otherwise tell one story in other words, one per outlet."""
    publisher = _publisher(_source(item))
    for ending in _PUBLISHER_ENDINGS if publisher else ():
        head, found, name = item.title.rpartition(ending)
        if found and head.strip() and _publisher(name) == publisher:
            return head
    return item.title


def _fold_stories(scored: list[_Scored], settings: NewsSettings) -> list[_Scored]:
    """The news results with each story once: its best-ranked report, which lists the others
    in `also` (see `stories.py`)."""
    reports = [Report(_headline(r.item), r.item.snippet, r.item.published_at) for r in scored]
    heads = []
    for group in fold(reports, settings):
        head = scored[group[0]]
        if len(group) > 1:
            head.folded = tuple(scored[i].item for i in group[1:])
            head.also = _other_publishers(head.item, head.folded)
            linked = _publisher_link(head.item, head.folded)
            head.linked = frozenset(linked.ranks.keys() - head.item.ranks.keys())
            head.item = linked
        heads.append(head)
    return heads


#: Hosts whose news links are redirect pages to the publisher's article, not the article.
REDIRECT_HOSTS = frozenset({"news.google.com"})


def _publisher_link(lead: Merged, folded: Sequence[Merged]) -> Merged:
    """`lead`, showing its publisher's own link where its link is a redirect page and a report
    of the same publisher folded into it has one: the same article, that other engines found at
    its address. Those engines join the lead's."""
    source = _publisher(_source(lead))
    if not source or lead.host not in REDIRECT_HOSTS:
        return lead
    for other in folded:
        if other.host not in REDIRECT_HOSTS and _publisher(_source(other)) == source:
            added = [e for e in other.engines if e not in lead.hits]
            return replace(
                lead,
                url=other.url,
                hits={**lead.hits, **{e: other.hits[e] for e in added}},
                ranks=dict(sorted({**lead.ranks, **{e: other.ranks[e] for e in added}}.items())),
                engines=[*lead.engines, *added],
            )
    return lead


def _other_publishers(lead: Merged, folded: Sequence[Merged]) -> list[dict[str, str | None]]:
    """The reports folded into `lead`, one per publisher other than the lead's: a publisher's
    second copy of its report (at another URL) is no other report."""
    seen = {_publisher(_source(lead))} - {""}
    also = []
    for other in folded:
        source = _source(other)
        if (publisher := _publisher(source)) in seen:
            continue
        if publisher:
            seen.add(publisher)
        also.append(_report(source, other.url, other.published))
    return also


def _add_grouped(shown: list[_Scored], blocked: frozenset[str]) -> None:
    """Each shown news result's `also` gains the reports its engines grouped with it or with a
    result folded into it (SerpApi's stories), each once in the answer and none that is shown
    or listed already, none on a blocked site, and, as for the fold, none of a publisher it
    names already."""
    listed = {r.item.key for r in shown}
    listed.update(o.key for r in shown for o in r.folded)
    for r in shown:
        sources = (_source(r.item), *(o["source"] for o in r.also or ()))
        named = {_publisher(source) for source in sources} - {""}
        for item in (r.item, *r.folded):
            for other in (g for engine in item.engines for g in item.hits[engine].grouped):
                key, host, _ = canonicalize(other.url)
                if key in listed or _on_blocked_site(host, (other,), blocked):
                    continue
                listed.add(key)
                if (publisher := _publisher(other.source)) in named:
                    continue
                if publisher:
                    named.add(publisher)
                report = _report(other.source, other.url, other.published)
                r.also = [*(r.also or []), report]


def _on_blocked_site(host: str, hits: Iterable[Hit], blocked: frozenset[str]) -> bool:
    """Whether a result is on a blocked site: its link's, or its publisher's where an engine
    names that site beside a redirect link (Google News)."""
    if not blocked:
        return False
    return matches(host, blocked) or any(hit.site and matches(hit.site, blocked) for hit in hits)


def _retold(hit: Hit, blocked: frozenset[str], listed: Mapping[str, Hit]) -> Hit:
    """`hit`, or where it is on a blocked site and its engine grouped other reports of the
    story with it, the first of those on a site not blocked, leading the rest: a story stays
    when one of its publishers is blocked. A report its engine lists as an item of its own
    (`listed`, by URL) leads as that item, with the reports grouped with it too."""
    if not hit.grouped or not _on_blocked_site(canonicalize(hit.url).host, (hit,), blocked):
        return hit
    for n, report in enumerate(hit.grouped):
        if not _on_blocked_site(canonicalize(report.url).host, (report,), blocked):
            own = listed.get(report.url, report)
            # Google News dates the story, not the reports it groups with it.
            published = own.published or hit.published
            grouped = (*own.grouped, *hit.grouped[n + 1 :])
            return replace(
                own, rank=hit.rank, engine=hit.engine, published=published, grouped=grouped
            )
    return hit


def _retold_list(hits: Sequence[Hit], blocked: frozenset[str]) -> list[Hit]:
    """One engine's list, each story `_retold`."""
    listed = {hit.url: hit for hit in reversed(hits)}  # its first item of each URL
    return [_retold(hit, blocked, listed) for hit in hits]


def _report(source: str | None, url: str, published: str | None) -> dict[str, str | None]:
    """One entry of a news result's `also`."""
    return {"source": source, "url": url, "published": published}


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
    `domain_reason` when penalised, `similarity` after MMR, `linked` {engine: rank} for the
    engines a news story's publisher link added, which its score did not count).
    `weights` are per-engine weights (1.0 for a missing name); `families` name each engine's
    index family (engine -> family; a missing engine is a family of its own); `now` is for
    freshness; `prepared`, the hits read as their lists arrived (the result is the same)."""
    now = now or datetime.now(UTC)
    if now.tzinfo is None:
        now = now.replace(tzinfo=UTC)
    muted = {engine for engine in lists if weights.get(engine, 1.0) <= 0}
    blocked = domain_lists(search.ranking, search.block_domains).blocked
    if blocked:
        lists = {engine: _retold_list(hits, blocked) for engine, hits in lists.items()}
    merged = merge(lists, prepared.canonical if prepared else None, muted)
    items = [
        item for item in merged if not _on_blocked_site(item.host, item.hits.values(), blocked)
    ]
    # An engine that answered with no results (none but on blocked domains) has no vote:
    # counted, it would lower every score's share of the best possible and credit every result
    # as one it did not see.
    voting = {engine for item in items for engine in item.ranks}
    lists = {engine: hits for engine, hits in lists.items() if engine in voting}
    configured = None
    # A muted engine (weight 0) says nothing of how far the others agree.
    heard = {engine for engine in lists if weights.get(engine, 1.0) > 0}
    if search.ranking.agreement_weight > 0 and len(heard) > 2:
        configured = weights
        ranked = [{e: r for e, r in item.ranks.items() if e in heard} for item in items]
        weights = reliable_weights(ranked, weights, families or {}, search.ranking.agreement_weight)
    ctx = Context(lists, query, search, weights, families or {}, now, configured)
    texts = prepared.texts if prepared else None
    votes = [ctx.votes(item.ranks) for item in items]
    voted = [ctx.by_family(v) for v in votes]
    if search.ranking.coverage_weight > 0 and ctx.voters > 1:
        contained = containment(voted)
        if contained:
            ctx.unseen = Unseen(ctx.counted, contained)
    scored = [
        _score(item, vote, family, analyze_doc(item.title, item.snippet, item.key, texts), ctx)
        for item, vote, family in zip(items, votes, voted, strict=True)
    ]
    _best_first(scored)
    head: tuple[list[list[int]], list[int]] | None = None
    if search.ranking.neighbour_weight > 0 and len(scored) > 1:
        head = _regularise(scored, ctx)
    if ctx.news is not None and ctx.news.fold:  # before the threshold: copies rank low
        # Results only muted engines returned fold among themselves only: folded into a heard
        # story, they would relink it and join its `also`.
        voiced = _heard(scored)
        scored = [
            *_fold_stories(scored[:voiced], ctx.news),
            *_fold_stories(scored[voiced:], ctx.news),
        ]
    scored = scored[: kept_count([r.score for r in scored], search.relevance_threshold)]
    limit = max(0, query.max_results)
    if search.mmr.enabled and limit > 1:
        scored = _diversified(scored, ctx, search.mmr.lambda_, limit, head)
    shown = scored[:limit]
    if ctx.news is not None and ctx.news.fold:
        _add_grouped(shown, blocked)
    return [_result(r, ctx) for r in shown]
