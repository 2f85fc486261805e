"""The ranking pipeline: the engines' lists in, one fused, explained list out.

    merge by canonical URL -> weighted RRF, normalised to [0, 1] -> text signals (alignment,
    rare terms, phrase) -> domain quality -> consensus, authority, freshness -> threshold ->
    MMR -> truncate

RRF is the backbone; every other signal s in [0, 1] enters as a bounded factor
(1 + w * s) / (1 + w) in (0, 1], and the domain as 1 or 1 - domain_penalty. So the final score
stays in [0, 1], no signal can outweigh RRF's ordering by more than its factor's range, and a
weight of 0 switches a signal off exactly.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import UTC, datetime
from typing import Any

from websearch_mcp.config import RankingSettings, SearchSettings
from websearch_mcp.models import Hit, Query, RankedResult
from websearch_mcp.ranking.boosts import authority, consensus, freshness, wants_recent
from websearch_mcp.ranking.domain import (
    DomainVerdict,
    domain_info,
    domain_lists,
    domain_quality,
    is_error_code_query,
    matches,
)
from websearch_mcp.ranking.fusion import Merged, merge, normalised_rrf, rrf_best
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
from websearch_mcp.ranking.urls import key_path

MIN_KEPT = 2  # the threshold never leaves fewer results than this (when there are as many)


def factor(weight: float, signal: float | None) -> float:
    """A signal's multiplier: (1 + w * s) / (1 + w), or 1 when the signal does not apply."""
    if signal is None or weight <= 0.0:
        return 1.0
    return (1.0 + weight * signal) / (1.0 + weight)


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
        self.best = rrf_best(lists, weights, search.rrf_k)
        self.voters = sum(1 for e in lists if weights.get(e, 1.0) > 0)
        self.domains = domain_lists(self.settings, search.block_domains)
        self._verdicts: dict[str, DomainVerdict] = {}

    def verdict(self, host: str) -> DomainVerdict:
        """The domain factor of `host`, computed once per request."""
        found = self._verdicts.get(host)
        if found is None:
            found = self._verdicts[host] = domain_quality(
                host, self.terms, self.error_code, self.domains, self.settings.domain_penalty
            )
        return found


def _round(value: float | None) -> float | None:
    return None if value is None else round(value, 4)


def _score(item: Merged, doc: DocTerms, ctx: _Context) -> tuple[float, dict[str, Any]]:
    s = ctx.settings
    base = normalised_rrf(item.ranks, ctx.weights, ctx.search.rrf_k, ctx.best)
    align = alignment(ctx.terms, doc)
    rare = rare_share(ctx.terms, doc)
    phrase = phrase_share(ctx.terms, doc)
    verdict = ctx.verdict(item.host)
    agree = consensus(sum(1 for e in item.ranks if ctx.weights.get(e, 1.0) > 0), ctx.voters)
    auth = authority(domain_info(item.host), key_path(item.key), ctx.terms, ctx.domains)
    fresh = freshness(item.published_at, ctx.now, ctx.query.time_range, s) if ctx.recent else None
    final = (
        base
        * factor(s.alignment_weight, align)
        * factor(s.rare_term_weight, rare)
        * factor(s.phrase_weight, phrase)
        * verdict.factor
        * factor(s.consensus_weight, agree)
        * factor(s.authority_weight, auth)
        * factor(s.freshness_weight, fresh)
    )
    final = min(1.0, max(0.0, final))
    details: dict[str, Any] = {
        "rrf": _round(base),
        "alignment": _round(align),
        "rare": _round(rare),
        "phrase": _round(phrase),
        "domain": _round(verdict.factor),
        "consensus": _round(agree),
        "authority": _round(auth),
        "freshness": _round(fresh),
        "final": _round(final),
        "ranks": {e: item.ranks[e] for e in item.engines},
    }
    if verdict.reason:
        details["domain_reason"] = verdict.reason
    return final, details


def _result(item: Merged, score: float, details: dict[str, Any]) -> RankedResult:
    ordered = [item.hits[e] for e in item.engines]
    citations = [h.citations for h in ordered if h.citations is not None]
    return RankedResult(
        key=item.key,
        title=item.title,
        url=item.url,
        snippet=item.snippet,
        engines=item.engines,
        ranks=dict(details["ranks"]),
        score=score,
        published=item.published,
        engine_scores={
            e: h.score for e, h in zip(item.engines, ordered, strict=True) if h.score is not None
        },
        authors=next((h.authors for h in ordered if h.authors), ()),
        doi=next((h.doi for h in ordered if h.doi), None),
        venue=next((h.venue for h in ordered if h.venue), None),
        citations=max(citations) if citations else None,
        pdf_url=next((h.pdf_url for h in ordered if h.pdf_url), None),
        details=details,
    )


def rank(
    lists: Mapping[str, Sequence[Hit]],
    query: Query,
    search: SearchSettings,
    *,
    weights: Mapping[str, float],
    now: datetime | None = None,
) -> list[RankedResult]:
    """Fuse the engines' lists (engine name -> its hits in rank order, only engines that
    answered) into the final list: at most `query.max_results` results, best first, each with
    `details` filled (rrf, alignment, rare, phrase, domain, consensus, authority, freshness,
    final, and ranks {engine: rank}; `domain_reason` when penalised, `similarity` after MMR).
    `weights` are per-engine weights (1.0 for a missing name); `now` is for freshness."""
    now = now or datetime.now(UTC)
    if now.tzinfo is None:
        now = now.replace(tzinfo=UTC)
    ctx = _Context(lists, query, search, weights, now)
    items = [m for m in merge(lists) if not matches(m.host, ctx.domains.blocked)]
    scored = []
    for item in items:
        doc = analyze_doc(item.title, item.snippet, item.key)
        score, details = _score(item, doc, ctx)
        scored.append((score, item, doc, details))
    scored.sort(key=lambda t: (-t[0], t[1].key))
    query_terms = frozenset(ctx.terms.content)
    scored = scored[: kept_count([t[0] for t in scored], search.relevance_threshold)]
    limit = max(0, query.max_results)
    if search.mmr.enabled and len(scored) > 1:
        order, sims = mmr(
            [t[0] for t in scored],
            [t[2].text - query_terms for t in scored],
            search.mmr.lambda_,
            limit,
        )
        for index, sim in zip(order, sims, strict=True):
            scored[index][3]["similarity"] = round(sim, 4)
        scored = [scored[i] for i in order]
    return [_result(item, score, details) for score, item, _, details in scored[:limit]]
