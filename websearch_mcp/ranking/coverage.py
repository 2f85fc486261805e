"""Coverage: whether an engine that did not return a result even holds it in its index.

Engines crawl different parts of the web. When an engine leaves out a result that another
ranked high, either it ranks that result low (evidence against it) or it never indexed it
(no evidence at all). Plain RRF counts every absence as the first, so results that happen to
sit in several indexes outvote better ones that one index holds.

The lists themselves say which is likelier. Where engine m's list holds most of the best
results of engine s (containment: the share of s's first `HEAD` results that m returned too),
m indexes what s indexes, and m leaving a result out is a judgment. Where it holds few, m's
silence says little. Per result, each answering voter m that did not return it counts as
unseen with weight 1 - c^2, c the mean containment of the returning voters' heads in m's list
(squared: a half-shared head is more often disagreement than a missing page). The pipeline
credits a result's RRF with the unseen voters' share: they vote as its returning voters did
on average, as if they had seen it (`coverage_weight` scales the credit).

Voters are index families (`families`): every function here takes per-result ranks keyed by
voter.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

HEAD = 5  # an engine's best results: the ones another engine holding them would return too


def containment(ranked: Sequence[dict[str, int]], head: int = HEAD) -> dict[tuple[str, str], float]:
    """(m, s) -> the share of voter s's `head` best-ranked results that voter m returned too,
    for every ordered pair of voters in `ranked` (per result: voter -> its rank). Ties in rank
    are broken by the results' order in `ranked`."""
    # Voters are numbered as they first appear. placed[v]: rank * width + index of each of
    # voter v's results, integers that sort as the pairs (rank, index) do (every index is
    # below `width`) and faster; members[index]: the numbers of the voters that returned it.
    width = len(ranked)
    number: dict[str, int] = {}
    placed: list[list[int]] = []
    members: list[list[int]] = []
    for index, ranks in enumerate(ranked):
        mine = []
        for voter, rank in ranks.items():
            v = number.get(voter)
            if v is None:
                v = number[voter] = len(placed)
                placed.append([])
            placed[v].append(rank * width + index)
            mine.append(v)
        members.append(mine)
    voters = list(number)
    out: dict[tuple[str, str], float] = {}
    for s, places in enumerate(placed):
        best = sorted(places)[:head]
        # How many of them each voter returned, counted over those few results' voters.
        held = [0] * len(placed)
        for p in best:
            for m in members[p % width]:
                held[m] += 1
        for m, count in enumerate(held):
            if m != s:
                out[(voters[m], voters[s])] = count / len(best)
    return out


class Unseen:
    """The unseen weight of a result, for the results of one request: the answering `voters`
    (voter -> weight) and their containment table are read once, and each set of returning
    voters is computed once (many results share one)."""

    def __init__(
        self, voters: Mapping[str, float], contained: Mapping[tuple[str, str], float]
    ) -> None:
        # In name order: the order of the sums. Voters without weight count for nothing.
        self._voters = {v: voters[v] for v in sorted(voters) if voters[v] > 0}
        self._contained = contained
        self._memo: dict[frozenset[str], float] = {}

    def weight(self, ranks: Mapping[str, int]) -> float:
        """The weight of the answering voters that did not return this result (`ranks`:
        voter -> rank) and likely do not index it: sum over them of w * (1 - c^2), c the mean
        containment of the returning voters' heads in that voter's list."""
        returned = self._voters.keys() & ranks.keys()
        key = frozenset(returned)
        found = self._memo.get(key)
        if found is None:
            found = self._memo[key] = self._unseen(key)
        return found

    def _unseen(self, returned: frozenset[str]) -> float:
        present = [v for v in self._voters if v in returned]
        if not present:
            return 0.0
        total = 0.0
        for voter, weight in self._voters.items():
            if voter in returned:
                continue
            shared = sum(self._contained.get((voter, s), 0.0) for s in present) / len(present)
            total += weight * (1.0 - shared * shared)
        return total


def credited(
    rrf: float,
    ranks: Mapping[str, int],
    voters: Mapping[str, float],
    unseen_weight: float,
    weight: float,
) -> float:
    """`rrf` (normalised, in [0, 1]) with the unseen voters voting as the returning ones did on
    average, scaled by `weight` in [0, 1]: rrf * (1 + weight * unseen / returned weight),
    at most 1 (every voter at rank 1)."""
    cast = sum(voters.get(voter, 0.0) for voter in ranks)
    if cast <= 0 or weight <= 0:
        return rrf
    return min(1.0, rrf * (1.0 + weight * unseen_weight / cast))
