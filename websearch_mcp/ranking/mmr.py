"""Maximal marginal relevance: diversify a ranked list without losing its best result.

Greedy: pick the candidate maximising `lambda * rel - (1 - lambda) * max_sim`, where `rel` is
the relevance min-max normalised to [0, 1] over the candidates (so it is on the same scale as
the similarity) and `max_sim` its highest token Jaccard similarity to an already chosen result.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from collections.abc import Set as AbstractSet
from dataclasses import dataclass


def jaccard(a: AbstractSet[str], b: AbstractSet[str]) -> float:
    """|a & b| / |a | b|; 0 for two empty sets."""
    if not a or not b:
        return 0.0
    common = len(a & b)
    return common / (len(a) + len(b) - common)


@dataclass(frozen=True, slots=True)
class Shared:
    """The terms pairs of candidates share, counted already for some of them (the neighbours'
    head): `rows[i]` is candidate i's row in `counts` (-1 for none), `sizes[r]` the number of
    terms of row r. A pair of them needs no set intersection."""

    counts: list[list[int]]
    sizes: list[int]
    rows: list[int]


def similarity(
    tokens: Sequence[AbstractSet[str]] | Mapping[int, AbstractSet[str]],
    shared: Shared | None,
    i: int,
    j: int,
) -> float:
    """`jaccard(tokens[i], tokens[j])`, from `shared`'s counts where it has both (the same
    float: the same integers divided)."""
    if shared is not None:
        a, b = shared.rows[i], shared.rows[j]
        if a >= 0 and b >= 0:
            common = shared.counts[a][b]
            return common / (shared.sizes[a] + shared.sizes[b] - common) if common else 0.0
    return jaccard(tokens[i], tokens[j])


def normalise(scores: list[float]) -> list[float]:
    """Min-max to [0, 1]; all 1.0 when the scores are equal."""
    if not scores:
        return []
    low, high = min(scores), max(scores)
    if high - low <= 1e-12:
        return [1.0] * len(scores)
    return [(s - low) / (high - low) for s in scores]


def mmr(
    relevance: list[float],
    tokens: Sequence[AbstractSet[str]] | Mapping[int, AbstractSet[str]],
    lambda_: float,
    limit: int,
    shared: Shared | None = None,
) -> tuple[list[int], list[float]]:
    """Indices of up to `limit` candidates in MMR order, and each one's maximum similarity to
    those chosen before it. Candidates must come sorted by relevance, best first: index 0 is
    always chosen first, ties keep the input order, and the scan of each round stops where
    even a candidate without any similarity could not win. `tokens[i]`, candidate i's terms,
    is read only for the candidates scanned (a mapping may make them on first use), and not for
    a pair whose shared terms `shared` counted already."""
    count = min(limit, len(relevance))
    if count <= 0:
        return [], []
    rel = normalise(relevance)
    keep, penalty = lambda_, 1.0 - lambda_
    max_sim = [0.0] * len(rel)
    compared = [0] * len(rel)  # how many of `order` each candidate has been compared with
    remaining = list(range(1, len(rel)))
    order, sims = [0], [0.0]
    while len(order) < count:
        best_pos, best_value = -1, float("-inf")
        for pos, i in enumerate(remaining):
            if keep * rel[i] < best_value:
                break  # sorted by relevance: no later candidate can do better
            for j in order[compared[i] :]:  # lazily: only the results chosen since last time
                sim = similarity(tokens, shared, i, j)
                if sim > max_sim[i]:
                    max_sim[i] = sim
            compared[i] = len(order)
            value = keep * rel[i] - penalty * max_sim[i]
            if value > best_value:
                best_pos, best_value = pos, value
        chosen = remaining.pop(best_pos)
        order.append(chosen)
        sims.append(max_sim[chosen])
    return order, sims
