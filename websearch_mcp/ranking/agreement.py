"""Per-query engine reliability from agreement between the engines' lists.

An engine whose list agrees with the other engines' lists on this query is likelier to be
right about it than one whose list agrees with none: rank-biased overlap (Webber, Moffat and
Zobel, 2010) of each voter's list with every other voter's, averaged, says how much. Voters are
index families (one list each: a family's best rank for every result), so engines that serve
one index do not vouch for each other. Agreement is relative: each voter's is divided by the
largest of the request's, so the regime (how much the indexes overlap at all) does not matter,
only which lists stand apart from the rest in it.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping, Sequence

from websearch_mcp.ranking.families import family_of

PERSISTENCE = 0.9  # RBO's p: the first ten or so ranks carry most of the weight
DEPTH = 20  # ranks compared


def rbo(first: Sequence[int], second: Sequence[int], p: float = PERSISTENCE) -> float:
    """Rank-biased overlap of two lists of distinct items, truncated at `DEPTH` and divided by
    its largest value there: 1 for the same list, 0 for disjoint ones."""
    depth = min(DEPTH, max(len(first), len(second)))
    if depth == 0:
        return 0.0
    # An item in both lists counts from the depth where the later of its two ranks is reached.
    where = {item: k for k, item in enumerate(first[:depth])}
    joins = [0] * depth
    for k, item in enumerate(second[:depth]):
        j = where.get(item)
        if j is not None:
            joins[max(j, k)] += 1
    steps = _steps(p)
    shared = 0
    total = 0.0
    for k in range(depth):
        shared += joins[k]
        total += steps[k] * shared / (k + 1)
    return total / _weights(p)[depth - 1]


@functools.cache
def _steps(p: float) -> tuple[float, ...]:
    """p ** k for the ranks compared, each the previous times p."""
    steps = [1.0]
    for _ in range(DEPTH - 1):
        steps.append(steps[-1] * p)
    return tuple(steps)


@functools.cache
def _weights(p: float) -> tuple[float, ...]:
    """The sums of `_steps(p)` up to each depth, added in order."""
    sums = []
    total = 0.0
    for step in _steps(p):
        total += step
        sums.append(total)
    return tuple(sums)


def agreement(ranked: Sequence[Mapping[str, int]]) -> dict[str, float]:
    """Voter -> the mean RBO of its list with each other voter's, from per-result ranks
    (`ranked`: per result, voter -> its rank; ties by the results' order)."""
    lists: dict[str, list[tuple[int, int]]] = {}
    for index, ranks in enumerate(ranked):
        for voter, rank in ranks.items():
            lists.setdefault(voter, []).append((rank, index))
    ordered = {v: [i for _, i in sorted(pairs)] for v, pairs in sorted(lists.items())}
    voters = list(ordered)
    if len(voters) < 2:
        return dict.fromkeys(voters, 1.0)
    sums = dict.fromkeys(voters, 0.0)
    for i, a in enumerate(voters):
        for b in voters[i + 1 :]:
            overlap = rbo(ordered[a], ordered[b])
            sums[a] += overlap
            sums[b] += overlap
    return {v: s / (len(voters) - 1) for v, s in sums.items()}


def reliability(agreed: Mapping[str, float], weight: float) -> dict[str, float]:
    """Voter -> a multiplier of its weight in [1 - weight, 1]: 1 - weight + weight * a / top,
    `a` its agreement and `top` the largest; 1 for every voter when no two lists overlap."""
    top = max(agreed.values(), default=0.0)
    if top <= 0 or weight <= 0:
        return dict.fromkeys(agreed, 1.0)
    return {v: 1.0 - weight + weight * a / top for v, a in agreed.items()}


def reliable_weights(
    ranked: Sequence[Mapping[str, int]],
    weights: Mapping[str, float],
    families: Mapping[str, str],
    weight: float,
) -> dict[str, float]:
    """Each engine's weight (`weights`, 1.0 for a missing name) times its family's
    `reliability`, from per-result ranks keyed by engine (`ranked`)."""
    by_family: list[dict[str, int]] = []
    for ranks in ranked:
        voted: dict[str, int] = {}
        for engine, rank in ranks.items():
            family = family_of(engine, families)
            voted[family] = min(rank, voted.get(family, rank))
        by_family.append(voted)
    factors = reliability(agreement(by_family), weight)
    engines = {engine for ranks in ranked for engine in ranks}
    return {
        engine: weights.get(engine, 1.0) * factors.get(family_of(engine, families), 1.0)
        for engine in sorted(engines | set(weights))
    }
