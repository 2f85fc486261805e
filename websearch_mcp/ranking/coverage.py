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
    voters is computed once (many results share one). `engines`: each answering engine's
    voter, by the engines' places in name order (as `merge` sets a result's `engine_bits`)."""

    __slots__ = ("_engine_bits", "_memo", "_rows", "_voters")

    def __init__(
        self,
        voters: Mapping[str, float],
        contained: Mapping[tuple[str, str], float],
        engines: Sequence[str],
    ) -> None:
        self._voters = [(v, voters[v]) for v in sorted(voters) if voters[v] > 0]
        order = {v: i for i, (v, _) in enumerate(self._voters)}
        # A set of returning voters as an integer, a bit per voter by its place: the memo's key
        # (the weight does not depend on the voters' order, nor on voters without weight).
        # Each engine's voter's bit, by the engine's place (0 for a voter without weight).
        self._engine_bits = [1 << order[v] if v in order else 0 for v in engines]
        # Row m, column s: the share of s's head in m's list, by the voters' places in
        # `_voters` (0.0 where the table has none), so the sums below read lists, not dicts.
        self._rows = [[0.0] * len(self._voters) for _ in self._voters]
        for (m, s), share in contained.items():
            if m in order and s in order:
                self._rows[order[m]][order[s]] = share
        self._memo: dict[int, float] = {}

    def weight(self, engines: int) -> float:
        """The weight of the answering voters that did not return this result (`engines`: the
        engines whose votes it has, as bits by their places) and likely do not index it: sum
        over them of w * (1 - c^2), c the mean containment of the returning voters' heads in
        that voter's list."""
        returned, at, table = 0, 0, self._engine_bits
        while engines:
            if engines & 1:
                returned |= table[at]
            engines >>= 1
            at += 1
        found = self._memo.get(returned)
        if found is None:
            found = self._memo[returned] = self._unseen(returned)
        return found

    def _unseen(self, returned: int) -> float:
        # The returning voters' places, in the voters' (sorted) order: the order of the sums.
        present = [i for i in range(len(self._voters)) if returned >> i & 1]
        if not present:
            return 0.0
        count = float(len(present))  # exact: the division is the one Python makes of an int
        total = 0.0
        for i, (_, weight) in enumerate(self._voters):
            if returned >> i & 1:
                continue
            # A loop, not sum(): compiled, it adds the floats natively, in the same order.
            row, shared = self._rows[i], 0.0
            for each in present:
                shared += row[each]
            shared /= count
            total += weight * (1.0 - shared * shared)
        return total


def credited(
    rrf: float,
    ranks: dict[str, int],
    voters: dict[str, float],  # a dict: compiled, each look-up is then a native one
    unseen_weight: float,
    weight: float,
) -> float:
    """`rrf` (normalised, in [0, 1]) with the unseen voters voting as the returning ones did on
    average, scaled by `weight` in [0, 1]: rrf * (1 + weight * unseen / returned weight),
    at most 1 (every voter at rank 1)."""
    cast = 0.0
    for voter in ranks:
        cast += voters.get(voter, 0.0)
    if cast <= 0 or weight <= 0:
        return rrf
    return min(1.0, rrf * (1.0 + weight * unseen_weight / cast))
