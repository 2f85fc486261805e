"""Two more engines for the relevance benchmark: a semantic one and a weak one.

- `LSA`: latent semantic analysis. The (1 + log tf) * idf matrix of the documents, truncated to
  its first `DIMENSIONS` singular vectors (`scipy.sparse.linalg.svds`); a query is folded into
  the same space and documents are ranked by cosine. It returns documents that share no query
  word, as a neural engine does.
- `Weak`: BM25 over only the first `WEAK_WORDS` words of each document, its scores multiplied by
  log-normal noise (sigma `WEAK_SIGMA`) drawn with a seed and the query: an engine that saw little
  of each page and orders loosely.

Both have the interface of `testing.judged.Model`: `name` and `search(text, k)`.
"""

from __future__ import annotations

import math
import random
from collections import Counter
from collections.abc import Sequence

import numpy as np
from scipy.sparse import csr_matrix
from scipy.sparse.linalg import svds

from testing.judged import Document, Index, bm25, tokens

DIMENSIONS = 200
WEAK_WORDS = 12
WEAK_SIGMA = 0.8


def _best(ids: Sequence[str], scores: dict[int, float], k: int) -> list[tuple[str, float]]:
    """The `k` best (doc id, score), best first, ties by id (every run gives the same list)."""
    best = sorted(scores.items(), key=lambda item: (-item[1], ids[item[0]]))[:k]
    return [(ids[doc], score) for doc, score in best]


class LSA:
    """Cosine in the space of the first `DIMENSIONS` singular vectors of the TF-IDF matrix."""

    def __init__(self, name: str, documents: Sequence[Document], dimensions: int = DIMENSIONS):
        self.name = name
        self.ids = [d.id for d in documents]
        self.index = Index(self.ids, (f"{d.title} {d.text}" for d in documents))
        self.columns = {term: i for i, term in enumerate(sorted(self.index.postings))}
        rows: list[int] = []
        columns: list[int] = []
        values: list[float] = []
        for term, column in self.columns.items():
            idf = self.index.idf(term)
            for doc, tf in self.index.postings[term].items():
                rows.append(doc)
                columns.append(column)
                values.append((1 + math.log(tf)) * idf)
        matrix = csr_matrix((values, (rows, columns)), shape=(len(self.ids), len(self.columns)))
        rank = min(dimensions, min(matrix.shape) - 1)
        # A fixed starting vector: the same factors, so the same lists, on every run.
        start = np.ones(min(matrix.shape))
        u, s, vt = svds(matrix, k=rank, v0=start)
        docs = u * s
        norms = np.linalg.norm(docs, axis=1)
        self.docs = docs / np.where(norms > 0, norms, 1.0)[:, None]
        self.terms = vt  # dimensions x terms: folds a query vector in

    def search(self, text: str, k: int = 20) -> list[tuple[str, float]]:
        query = Counter(t for t in tokens(text) if t in self.columns)
        if not query:
            return []
        vector = np.zeros(len(self.columns))
        for term, qtf in query.items():
            vector[self.columns[term]] = (1 + math.log(qtf)) * self.index.idf(term)
        folded = self.terms @ vector
        norm = float(np.linalg.norm(folded))
        if norm == 0:
            return []
        cosines = self.docs @ (folded / norm)
        top = np.argpartition(-cosines, min(k, len(cosines) - 1))[: k * 2]
        return _best(self.ids, {int(d): float(cosines[d]) for d in top}, k)


class Weak:
    """BM25 over each document's first `WEAK_WORDS` words, times seeded log-normal noise."""

    def __init__(self, name: str, documents: Sequence[Document], seed: int) -> None:
        self.name = name
        self.seed = seed
        self.ids = [d.id for d in documents]
        heads = (" ".join(f"{d.title} {d.text}".split()[:WEAK_WORDS]) for d in documents)
        self.index = Index(self.ids, heads)

    def search(self, text: str, k: int = 20) -> list[tuple[str, float]]:
        query = Counter(t for t in tokens(text) if t in self.index.postings)
        if not query:
            return []
        scores = bm25(self.index, query)
        # One draw per matching document in index order, from the seed and the query: the same
        # list for the same query on every run.
        noise = random.Random(f"{self.seed}|{text}")
        noisy = {d: scores[d] * noise.lognormvariate(0.0, WEAK_SIGMA) for d in sorted(scores)}
        return _best(self.ids, noisy, k)
