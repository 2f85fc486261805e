"""How high the engines ranked a result, and the relevance scores they reported for it.

RRF with k = 60 is nearly a vote count: rank 1 earns 1/61 and rank 20 earns 1/80, so it says
how many engines returned a result and little about how high they put it. Two signals in
[0, 1] add that (the pipeline turns each into a bounded factor):

- position: the mean, over the engines that returned the result (weighted by engine weight),
  of its rank on a linear scale from 1 at rank 1 to 0 at the deepest rank any engine returned
  for the request. A rank means the same in every engine, whatever the length of its list.
- engine_score: the same mean, except that an engine reporting relevance scores (Tavily,
  SearXNG) contributes the result's score instead of its rank: min-max normalised over that
  engine's answer, then spread over the part of the position scale its ranks cover. So scores
  only redistribute an engine's results within the range its ranks would give them, and an
  engine without scores contributes its position: it neither gains nor loses. None for every
  result when no engine reports two different scores, so score-less answers are left alone.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

from websearch_mcp.models import Hit


class EngineEvidence:
    """Per request: the answering engines' weights, list depths and score ranges."""

    __slots__ = ("_deepest", "_depths", "_ranges", "_weights")

    def __init__(self, lists: Mapping[str, Sequence[Hit]], weights: Mapping[str, float]) -> None:
        self._weights: dict[str, float] = {}
        self._depths: dict[str, int] = {}
        self._ranges: dict[str, tuple[float, float]] = {}
        for engine in sorted(lists):
            weight = max(0.0, weights.get(engine, 1.0))
            hits = lists[engine]
            if weight <= 0 or not hits:
                continue
            self._weights[engine] = weight
            # Ranks are 1..n; a hit without one is ranked by its position (as in merging).
            self._depths[engine] = max(len(hits), max(h.rank for h in hits))
            scores = [s for h in hits if (s := h.score) is not None and math.isfinite(s)]
            if scores and max(scores) > min(scores):  # equal scores say nothing rank does not
                self._ranges[engine] = (min(scores), max(scores))
        self._deepest = max(self._depths.values(), default=1)

    def _place(self, rank: int) -> float:
        """A rank on the position scale: 1 at rank 1, 0 at the deepest rank of the request."""
        if self._deepest <= 1:
            return 1.0
        return min(1.0, max(0.0, (self._deepest - rank) / (self._deepest - 1)))

    def _mean(self, values: Mapping[str, float]) -> float | None:
        total = weight = 0.0
        for engine in sorted(values):  # one order whatever the input order: identical sums
            total += self._weights[engine] * values[engine]
            weight += self._weights[engine]
        return total / weight if weight > 0 else None

    def position(self, ranks: Mapping[str, int]) -> float | None:
        """The weighted mean position of a result (engine -> its rank); None when no engine
        with a positive weight returned it."""
        return self._mean({e: self._place(r) for e, r in ranks.items() if e in self._weights})

    def engine_score(self, hits: Mapping[str, Hit], ranks: Mapping[str, int]) -> float | None:
        """Like `position`, with each scoring engine's normalised score in place of the rank
        (engine -> its hit, engine -> that hit's rank); None when no engine of the request
        reported scores."""
        if not self._ranges:
            return None
        values: dict[str, float] = {}
        for engine, rank in ranks.items():
            if engine not in self._weights:
                continue
            span = self._ranges.get(engine)
            score = hits[engine].score
            if span is None or score is None or not math.isfinite(score):
                values[engine] = self._place(rank)
                continue
            low, high = span
            share = min(1.0, max(0.0, (score - low) / (high - low)))
            floor = self._place(self._depths[engine])  # where this engine's last rank sits
            values[engine] = floor + (1.0 - floor) * share
        return self._mean(values)
