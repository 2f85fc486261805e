"""Score regularisation: a result shares the score of the top results whose words it shares.

Relevant pages resemble each other more than they resemble the rest (the cluster hypothesis);
Diaz, "Regularizing ad hoc retrieval scores" (CIKM 2005) smooths each result's score towards
its most similar results'. Where engines index different parts of the web this is what the
lists cannot say: a page only one index holds gets one vote, but if its title and snippet
read like the results several engines put first, it is likely as good as they are.

Only the head of the fused list takes part (`POOL` results): that is where the answer is
chosen, and it bounds the cost to POOL * (POOL - 1) / 2 set intersections. Each of them keeps
1 - weight of its own score and takes `weight` times the similarity-weighted mean score of its
`NEIGHBOURS` most similar results there (Jaccard of content terms, the query's own words left
out: every result shares those). A result sharing no words with any of them keeps its score.
Scores stay in [0, 1]: each new score is a convex combination of old ones.
"""

from __future__ import annotations

from collections.abc import Sequence
from collections.abc import Set as AbstractSet

#: Per text, its nearest others as (-similarity, index); and every pair's shared-term count.
Overlap = tuple[list[list[tuple[float, int]]], list[list[int]]]

POOL = 20  # the head of the fused list that takes part
NEIGHBOURS = 5  # a result's most similar results there whose scores it shares


def overlap(texts: Sequence[AbstractSet[str]], count: int = NEIGHBOURS) -> Overlap:
    """(rows, shared). Per text, its `count` (0 or more) most similar other texts as
    (-similarity, index), most similar first (ties: the lower index), leaving out those
    sharing no term; `shared[i][j]`, how many terms texts i and j share (0 where i == j).
    Similarity is Jaccard's: shared terms over all terms of the two."""
    sizes = [len(t) for t in texts]
    rows: list[list[tuple[float, int]]] = [[] for _ in texts]
    shared = [[0] * len(texts) for _ in texts]
    for i, mine in enumerate(texts):
        size, row = sizes[i], rows[i]
        for j in range(i + 1, len(texts)):
            if common := len(mine & texts[j]):
                shared[i][j] = shared[j][i] = common
                similarity = -common / (size + sizes[j] - common)
                row.append((similarity, j))
                rows[j].append((similarity, i))
    return [sorted(row)[:count] for row in rows], shared


def regularised(
    scores: Sequence[float], near: list[list[tuple[float, int]]], weight: float
) -> list[tuple[float, float | None]]:
    """Per result (`scores` of the results best first, `near` their rows of `overlap`), its
    regularised score and its neighbours' similarity-weighted mean score (None when it shares
    no term with any other result, and keeps its score)."""
    out: list[tuple[float, float | None]] = []
    for score, row in zip(scores, near, strict=True):
        if not row:
            out.append((score, None))
            continue
        # The similarities are stored negated (so that sorting puts the nearest first).
        weighted = total = 0.0
        for similarity, j in row:
            weighted += similarity * scores[j]
            total += similarity
        mean = weighted / total
        out.append(((1.0 - weight) * score + weight * mean, mean))
    return out
