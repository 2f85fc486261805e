"""How high the engines ranked a result, and the relevance scores they reported for it.

RRF with k = 60 is nearly a vote count: rank 1 earns 1/61 and rank 20 earns 1/80, so it says
how many engines returned a result and little about how high they put it. Two signals in
[0, 1] add that (the pipeline turns each into a bounded factor):

- position: the mean, over the engines that returned the result (weighted by engine weight),
  of `place(rank) = (k + 1) / (k + rank)` with a small k (`position_k`): 1 at rank 1, 1/2 at
  rank k + 2, falling fastest at the top, where engines' ranks say the most. RRF at k = 60
  times a heavily weighted mean of this is close to RRF with the small k, whose top ranks
  count; RRF's vote count stays in the product.
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


def place(rank: int, k: float) -> float:
    """A rank on the position scale: (k + 1) / (k + rank), 1 at rank 1 (and above), towards 0
    for deep ranks; k >= 0 sets how steeply it falls (k = 0: 1 / rank)."""
    return (k + 1.0) / (k + max(1, rank))


class EngineEvidence:
    """Per request: the answering engines' weights, list depths and score ranges."""

    __slots__ = ("_depths", "_k", "_places", "_ranges", "_weights")

    def __init__(
        self, lists: Mapping[str, Sequence[Hit]], weights: Mapping[str, float], k: float
    ) -> None:
        self._k = k
        self._places: dict[int, float] = {}  # rank -> place(rank, k), computed once
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
            self._depths[engine] = max(len(hits), max(hit.rank for hit in hits))
            scores = [h.score for h in hits if h.score is not None and math.isfinite(h.score)]
            if scores and min(scores) < max(scores):  # equal scores say nothing rank does not
                self._ranges[engine] = (min(scores), max(scores))

    def _place(self, rank: int) -> float:
        found = self._places.get(rank)
        if found is None:
            found = self._places[rank] = place(rank, self._k)
        return found

    def position(self, ranks: dict[str, int]) -> float | None:
        """The weighted mean position of a result (engine -> its rank, in engine-name order, as
        merging makes them: one order of the sums whatever the lists' order); None when no
        engine with a positive weight returned it."""
        total = weight = 0.0
        for engine, rank in ranks.items():
            engine_weight = self._weights.get(engine)
            if engine_weight is not None:
                total += engine_weight * self._place(rank)
                weight += engine_weight
        return total / weight if weight > 0 else None

    def rrf_and_position(self, ranks: dict[str, int], k: int) -> tuple[float, float | None]:
        """`fusion.rrf(ranks, weights, k)` and `position(ranks)` of a result, in one pass over
        its ranks (in engine-name order): the same floats, summed in the same order (an engine
        of weight 0 adds nothing to either)."""
        vote = total = weight = 0.0
        weights = self._weights
        for engine, rank in ranks.items():
            engine_weight = weights.get(engine)
            if engine_weight is not None:
                vote += engine_weight / (k + rank)
                total += engine_weight * self._place(rank)
                weight += engine_weight
        return vote, (total / weight if weight > 0 else None)

    def engine_score(self, hits: dict[str, Hit], ranks: dict[str, int]) -> float | None:
        """Like `position`, with each scoring engine's normalised score in place of the rank
        (engine -> its hit, engine -> that hit's rank); None when no engine of the request
        reported scores."""
        if not self._ranges:
            return None
        # The weighted mean of the values in the engines' name order, as `position` makes it.
        total = weight = 0.0
        weights = self._weights
        for engine, rank in ranks.items():
            engine_weight = weights.get(engine)
            if engine_weight is None:
                continue
            span = self._ranges.get(engine)
            score = hits[engine].score
            if span is None or score is None or not math.isfinite(score):
                value = self._place(rank)
            else:
                low, high = span
                share = min(1.0, max(0.0, (score - low) / (high - low)))
                floor = self._place(self._depths[engine])  # where this engine's last rank sits
                value = floor + (1.0 - floor) * share
            total += engine_weight * value
            weight += engine_weight
        return total / weight if weight > 0 else None
