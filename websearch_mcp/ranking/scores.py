"""Engines' own relevance scores as one signal: CombSUM blended into the RRF backbone."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

from websearch_mcp.models import Hit

MODE = "C"
STANDIN = "linear"


class EngineScores:
    """Per request: each answering engine's weight, list depth and score range."""

    def __init__(self, lists: Mapping[str, Sequence[Hit]], weights: Mapping[str, float]) -> None:
        self.weight: dict[str, float] = {}
        self.depth: dict[str, int] = {}
        self.ranges: dict[str, tuple[float, float]] = {}
        for engine in sorted(lists):
            w = max(0.0, weights.get(engine, 1.0))
            if w <= 0:
                continue
            hits = lists[engine]
            self.weight[engine] = w
            self.depth[engine] = len(hits)
            scores = [h.score for h in hits if h.score is not None and math.isfinite(h.score)]
            if scores and max(scores) > min(scores):
                self.ranges[engine] = (min(scores), max(scores))
        self.total = sum(self.weight.values())
        self.scoring_total = sum(self.weight[e] for e in self.ranges)

    def standin(self, engine: str, rank: int) -> float:
        n = self.depth[engine]
        if n <= 1:
            return 1.0
        r = min(rank, n)
        if STANDIN == "linear":
            return (n - r) / (n - 1)
        return (1 / r - 1 / n) / (1 - 1 / n)

    def value(self, engine: str, hit: Hit, rank: int) -> float | None:
        span = self.ranges.get(engine)
        if span is None or hit.score is None or not math.isfinite(hit.score):
            return None
        lo, hi = span
        return min(1.0, max(0.0, (hit.score - lo) / (hi - lo)))

    def __call__(self, hits: Mapping[str, Hit], ranks: Mapping[str, int]) -> float | None:
        if not self.ranges:
            return None
        if MODE == "C":
            total = 0.0
            for e in sorted(hits):
                if e not in self.weight:
                    continue
                v = self.value(e, hits[e], ranks[e])
                if v is None:
                    v = self.standin(e, ranks[e])
                total += self.weight[e] * v
            return total / self.total
        if MODE == "B":
            total = 0.0
            for e in sorted(hits):
                if e in self.ranges:
                    v = self.value(e, hits[e], ranks[e])
                    total += self.weight[e] * (v if v is not None else self.standin(e, ranks[e]))
            return total / self.scoring_total
        if MODE == "Bp":
            vals = [
                (self.weight[e], v)
                for e in sorted(hits)
                if e in self.ranges and (v := self.value(e, hits[e], ranks[e])) is not None
            ]
            if not vals:
                return None
            return sum(w * v for w, v in vals) / sum(w for w, _ in vals)
        raise ValueError(MODE)
