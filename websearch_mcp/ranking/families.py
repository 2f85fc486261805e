"""Index families: engines that serve one upstream index count as one voter.

Serper, SerpAPI, Programmable Search and the Google scraper all return Google's results, and
DuckDuckGo's web results come largely from Bing. Two of them agreeing is one index agreeing
with itself, not two independent judgments, so fusion, consensus and coverage count families:
for each result, only the family member whose RRF vote for it is the largest votes.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping


def family_of(engine: str, families: Mapping[str, str]) -> str:
    """The engine's index family; an engine without one is a family of its own."""
    return families.get(engine) or engine


def family_weights(
    engines: Iterable[str], weights: Mapping[str, float], families: Mapping[str, str]
) -> dict[str, float]:
    """Family -> the largest weight among its `engines` (negative weights count as 0)."""
    out: dict[str, float] = {}
    for engine in sorted(engines):
        family = family_of(engine, families)
        out[family] = max(out.get(family, 0.0), max(0.0, weights.get(engine, 1.0)))
    return out


def shares_an_index(engines: Iterable[str], families: Mapping[str, str]) -> bool:
    """Whether two of `engines` belong to one family (else every engine votes on its own)."""
    seen: set[str] = set()
    for engine in engines:
        family = family_of(engine, families)
        if family in seen:
            return True
        seen.add(family)
    return False


def one_vote_per_family(
    ranks: Mapping[str, int], weights: Mapping[str, float], families: Mapping[str, str], k: int
) -> dict[str, int]:
    """`ranks` (engine -> rank) with one engine left per family, in the order of `ranks`: the
    one whose RRF vote w / (k + rank) is the largest (ties: the better rank, then the name)."""
    best: dict[str, str] = {}  # family -> its engine with the largest vote so far
    votes: dict[str, float] = {}
    for engine in sorted(ranks):
        rank = ranks[engine]
        vote = votes[engine] = max(0.0, weights.get(engine, 1.0)) / (k + rank)
        family = family_of(engine, families)
        current = best.get(family)
        if current is None or (
            vote > votes[current] or (vote == votes[current] and rank < ranks[current])
        ):
            best[family] = engine
    chosen = set(best.values())
    return {engine: rank for engine, rank in ranks.items() if engine in chosen}
