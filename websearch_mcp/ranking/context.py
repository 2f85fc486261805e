"""What scoring one request's results needs, computed once per request: the query's terms,
the voters and their weights, the domain lists, each signal's factor, and each host's verdict.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from datetime import datetime

from websearch_mcp.config import RankingSettings, SearchSettings
from websearch_mcp.models import Hit, Query
from websearch_mcp.ranking.boosts import freshness, news_freshness, wants_recent
from websearch_mcp.ranking.coverage import Unseen
from websearch_mcp.ranking.domain import (
    DomainVerdict,
    domain_lists,
    host_facts,
    is_error_code_query,
)
from websearch_mcp.ranking.families import (
    family_of,
    family_weights,
    one_vote_per_family,
    shares_an_index,
)
from websearch_mcp.ranking.fusion import Merged
from websearch_mcp.ranking.lexical import QueryTerms, analyze_query
from websearch_mcp.ranking.positions import EngineEvidence


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


class Factors:
    def __init__(self, s: RankingSettings, freshness_weight: float | None = None) -> None:
        self.alignment = Factor(s.alignment_weight)
        self.rare = Factor(s.rare_term_weight)
        self.phrase = Factor(s.phrase_weight)
        self.consensus = Factor(s.consensus_weight)
        self.position = Factor(s.position_weight)
        self.engine_score = Factor(s.engine_score_weight)
        self.authority = Factor(s.authority_weight)
        self.freshness = Factor(
            s.freshness_weight if freshness_weight is None else freshness_weight
        )


class Context:
    """Per-request values every result's scoring needs, computed once."""

    def __init__(
        self,
        lists: Mapping[str, Sequence[Hit]],
        query: Query,
        search: SearchSettings,
        weights: Mapping[str, float],
        families: Mapping[str, str],
        now: datetime,
        configured: Mapping[str, float] | None = None,
    ) -> None:
        """`weights`: each engine's weight for this request; `configured`, the weights before
        the agreement between the lists changed them (default: `weights`)."""
        self.search = search
        self.settings: RankingSettings = search.ranking
        self.rrf_k = search.rrf_k
        self.coverage_weight = self.settings.coverage_weight
        self.weights = dict(weights)
        self.query = query
        self.terms: QueryTerms = analyze_query(query.text)
        self.error_code = is_error_code_query(query.text)
        #: A news search: freshness always on, in hours (`search.news`).
        self.news = search.news if query.category == "news" else None
        self.recent = self.news is not None or wants_recent(self.terms, query.time_range, now)
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
        # The coverage credit counts the unseen voters by their configured weights: a result's
        # credit then scales with its returning voters' own votes, not against them.
        self.counted = (
            self.family_weights
            if configured is None
            else family_weights(lists, configured, families)
        )
        self.best = sum(w / (search.rrf_k + 1) for w in self.family_weights.values())
        self.voters = sum(1 for w in self.family_weights.values() if w > 0)
        self.every_engine_votes = self.voters == len(lists)
        self.evidence = EngineEvidence(lists, weights, self.settings.position_k)
        self.unseen: Unseen | None = None  # with the coverage credit on
        self.domains = domain_lists(self.settings, search.block_domains)
        self.factors = Factors(
            self.settings, None if self.news is None else self.news.freshness_weight
        )
        self._hosts: dict[str, tuple[DomainVerdict, float]] = {}

    def site(self, host: str) -> tuple[DomainVerdict, float]:
        """The domain verdict and site authority of `host`, computed once per request."""
        found = self._hosts.get(host)
        if found is None:
            facts = host_facts(host, self.domains)
            found = self._hosts[host] = (
                facts.verdict(self.terms, self.error_code, self.settings.domain_penalty),
                facts.site_authority(self.terms),
            )
        return found

    def votes(self, ranks: dict[str, int]) -> dict[str, int]:
        """A result's ranks (in engine-name order, as merging makes them) with one engine per
        index family (all of them when no two of its engines share an index)."""
        if not self.shared_index or len(self.sharing.intersection(ranks)) < 2:
            return ranks
        return one_vote_per_family(ranks, self.weights, self.families, self.rrf_k)

    def by_family(self, votes: dict[str, int]) -> dict[str, int]:
        """`votes` keyed by index family."""
        if self.renamed.isdisjoint(votes):
            return votes
        return {self.families[e]: r for e, r in votes.items()}

    def engines_agreeing(self, votes: dict[str, int]) -> int:
        """How many index families with a positive weight returned the result."""
        if self.every_engine_votes:
            return len(votes)
        return sum(1 for e in votes if self.weights.get(e, 1.0) > 0)

    def freshness(self, item: Merged) -> float | None:
        """The result's freshness, when the query asks for recent results."""
        if not self.recent:
            return None
        if self.news is not None:
            return news_freshness(item.published_at, self.now, self.news)
        return freshness(item.published_at, self.now, self.query.time_range, self.settings)
