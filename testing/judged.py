"""The judged test collections (Cranfield 1400 and the JSON-lines ones), four simple retrieval
models over them, and nDCG.

Files (in `<shared>/eval/cranfield`): `cran.all.1400` (documents: `.I id`, `.T` title, `.A`,
`.B`, `.W` text, the text repeating the title first), `cran.qry` (225 queries whose `.I` labels
run 001..365 with gaps: the judgments number them 1..225 by position) and `cranqrel`
(`<query position> <doc id> <code>`, code 1 = complete answer .. 4 = minimal interest, -1 = no
judgment). The graded gain is `5 - code`.

The other collections (`cacm`, `med`, `npl`, `lisa`) share one layout: `docs.jsonl` (`{"id",
"title", "text"}`), `queries.jsonl` (`{"id", "text"}`) and `qrels.tsv` (`qid 0 docid rel`); only
judged queries are kept. A document without a title gets its first words as one, as every web
result has a title.

The models, each playing one search engine in the benchmark: BM25 on title + text, TF-IDF
cosine, query likelihood with Dirichlet smoothing, and BM25 on titles only. Plain Python: the
collection is small enough that a query takes about a millisecond.
"""

from __future__ import annotations

import itertools
import json
import math
import random
import re
from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from testing.shared import shared_dir
from websearch_mcp.engines.common import fitted

_FIELD = re.compile(r"^\.([A-Z])(?:\s+(\S+))?\s*$")
_WORD = re.compile(r"[a-z0-9]+")
STOP_WORDS = frozenset(
    {
        "a", "about", "above", "after", "again", "against", "all", "also", "an", "and", "any",
        "are", "as", "at", "be", "because", "been", "before", "being", "below", "between", "both",
        "but", "by", "can", "could", "did", "do", "does", "doing", "down", "during", "each", "few",
        "for", "from", "further", "had", "has", "have", "having", "here", "how", "i", "if", "in",
        "into", "is", "it", "its", "itself", "more", "most", "no", "nor", "not", "of", "off", "on",
        "once", "only", "or", "other", "our", "out", "over", "own", "same", "so", "some", "such",
        "than", "that", "the", "their", "them", "then", "there", "these", "they", "this", "those",
        "through", "to", "too", "under", "until", "up", "very", "was", "we", "were", "what", "when",
        "where", "which", "while", "who", "whom", "why", "will", "with", "would"
    }
)  # fmt: skip


def default_eval_dir() -> Path:
    """`eval/` in the shared folder (`$WEBSEARCH_SHARED`, else `shared/` next to the repository)."""
    return shared_dir() / "eval"


@dataclass(frozen=True, slots=True)
class Document:
    """One abstract: `text` as the file gives it (it starts with the title again)."""

    id: str
    title: str
    text: str

    def abstract(self) -> str:
        """The text without its leading copy of the title."""
        if self.title and self.text.startswith(self.title):
            return self.text[len(self.title) :].strip()
        return self.text


@dataclass(frozen=True, slots=True)
class Collection:
    """Documents by id, queries by judgment number ("1".."225") and graded judgments."""

    documents: dict[str, Document]
    queries: dict[str, str]
    qrels: dict[str, dict[str, int]]  # query -> doc id -> gain (1..4)


def _records(path: Path) -> list[dict[str, str]]:
    """The `.I`-separated records of a Cranfield file as {field letter: text}; `I` is the id."""
    records: list[dict[str, str]] = []
    field = ""
    for line in path.read_text(encoding="latin-1").splitlines():
        marker = _FIELD.match(line)
        if marker and marker.group(1) == "I":
            field = "I"
            records.append({"I": marker.group(2) or ""})
        elif marker:
            # A field marked again inside its record (documents 576 and 578: a second `.W`;
            # 240: `.A` and `.B` inside its text) goes on with the field being read.
            if marker.group(1) not in records[-1]:
                field = marker.group(1)
                records[-1][field] = ""
        elif records and field:
            records[-1][field] += line + " "
    return [{k: " ".join(v.split()) for k, v in r.items()} for r in records]


def _tidy(text: str) -> str:
    """Undo the collection's spaced punctuation: "slipstream ." -> "slipstream."."""
    return re.sub(r"\s+([.,;:)])", r"\1", text).strip()


def load(eval_dir: Path | None = None) -> Collection:
    """Read the collection from `eval_dir` (default: `default_eval_dir()`)."""
    folder = (eval_dir or default_eval_dir()) / "cranfield"
    documents = {}
    for r in _records(folder / "cran.all.1400"):
        doc_id = str(int(r["I"]))
        documents[doc_id] = Document(doc_id, _tidy(r.get("T", "")), _tidy(r.get("W", "")))
    # The trap: judgments number queries by position in the file, not by their `.I` label.
    queries = {
        str(position): _tidy(r.get("W", ""))
        for position, r in enumerate(_records(folder / "cran.qry"), start=1)
    }
    qrels: dict[str, dict[str, int]] = {}
    for line in (folder / "cranqrel").read_text(encoding="latin-1").splitlines():
        parts = line.split()
        if len(parts) != 3 or int(parts[2]) < 1:
            continue  # -1: no judgment
        qrels.setdefault(parts[0], {})[str(int(parts[1]))] = 5 - int(parts[2])
    return Collection(documents, queries, qrels)


COLLECTIONS = ("cranfield", "cacm", "med", "npl", "lisa")
#: The longest query every engine of the line-ups takes as it is (Brave: 400 characters and 50
#: words; Tavily: 400 characters). A longer one would reach some engines cut and others whole,
#: and the fusions compared would no longer fuse the lists the service fused.
MAX_QUERY_CHARS = 400
MAX_QUERY_WORDS = 50
TITLE_WORDS = 10  # a title made of a document's first words, where the collection has none


def _json_lines(path: Path) -> list[dict[str, str]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line]


def _load_json_lines(folder: Path) -> Collection:
    qrels: dict[str, dict[str, int]] = {}
    for line in (folder / "qrels.tsv").read_text(encoding="utf-8").splitlines():
        parts = line.split()
        if len(parts) == 4 and int(parts[3]) > 0:
            qrels.setdefault(parts[0], {})[parts[2]] = int(parts[3])
    documents = {}
    for record in _json_lines(folder / "docs.jsonl"):
        text = record["text"]
        title = record["title"] or " ".join(text.split()[:TITLE_WORDS])
        documents[record["id"]] = Document(record["id"], title, text)
    queries = {r["id"]: r["text"] for r in _json_lines(folder / "queries.jsonl")}
    return Collection(documents, queries, qrels)


def _cut(text: str) -> str:
    """The query within `MAX_QUERY_CHARS` and `MAX_QUERY_WORDS`, its first words, as the
    engines that take less cut it."""
    return fitted(text, MAX_QUERY_CHARS, MAX_QUERY_WORDS)


def load_collection(name: str, eval_dir: Path | None = None) -> Collection:
    """One of `COLLECTIONS` from `eval_dir` (default: `default_eval_dir()`), with only the
    queries that have judgments, each cut to what every engine takes (`_cut`)."""
    if name not in COLLECTIONS:
        raise ValueError(f"unknown collection {name!r}, expected one of {', '.join(COLLECTIONS)}")
    eval_dir = eval_dir or default_eval_dir()
    loaded = load(eval_dir) if name == "cranfield" else _load_json_lines(eval_dir / name)
    judged = {q: _cut(text) for q, text in loaded.queries.items() if loaded.qrels.get(q)}
    return Collection(loaded.documents, judged, loaded.qrels)


def tokens(text: str) -> list[str]:
    """Lower-cased words without stop words, a plural `s` removed (a minimal stemmer)."""
    out = []
    for word in _WORD.findall(text.lower()):
        if word in STOP_WORDS or len(word) < 2:
            continue
        if len(word) > 3 and word.endswith("s") and not word.endswith(("ss", "us", "is")):
            word = word[:-1]
        out.append(word)
    return out


class Index:
    """An inverted index: per term, {document position: term frequency}."""

    def __init__(self, ids: Sequence[str], texts: Iterable[str]) -> None:
        self.ids = list(ids)
        self.postings: dict[str, dict[int, int]] = {}
        self.lengths: list[int] = []
        for doc, text in enumerate(texts):
            words = tokens(text)
            self.lengths.append(len(words))
            for term, tf in Counter(words).items():
                self.postings.setdefault(term, {})[doc] = tf
        self.n = len(self.ids)
        self.total = sum(self.lengths)
        self.mean_length = self.total / self.n
        self.collection_tf = {t: sum(p.values()) for t, p in self.postings.items()}
        # Each document's length as a (1 + log tf) * idf vector, for the cosine.
        squares = [0.0] * self.n
        for term, posting in self.postings.items():
            idf = self.idf(term)
            for doc, tf in posting.items():
                squares[doc] += ((1 + math.log(tf)) * idf) ** 2
        self.norms = [math.sqrt(s) for s in squares]

    def idf(self, term: str) -> float:
        """log(N / df): the plain inverse document frequency."""
        return math.log(self.n / len(self.postings[term]))


#: A model: (index, query terms known to the index, with counts) -> score per matching document.
Scorer = Callable[[Index, Counter[str]], dict[int, float]]


def bm25(index: Index, query: Counter[str], k1: float = 1.2, b: float = 0.75) -> dict[int, float]:
    """Okapi BM25, Robertson-Sparck Jones idf kept positive (log(1 + ...))."""
    scores: dict[int, float] = {}
    for term, qtf in query.items():
        posting = index.postings[term]
        idf = math.log(1 + (index.n - len(posting) + 0.5) / (len(posting) + 0.5))
        for doc, tf in posting.items():
            norm = k1 * (1 - b + b * index.lengths[doc] / index.mean_length)
            scores[doc] = scores.get(doc, 0.0) + qtf * idf * tf * (k1 + 1) / (tf + norm)
    return scores


def tfidf_cosine(index: Index, query: Counter[str]) -> dict[int, float]:
    """Cosine between the (1 + log tf) * idf vectors of the query and of each document."""
    scores: dict[int, float] = {}
    query_norm = 0.0
    for term, qtf in query.items():
        idf = index.idf(term)
        weight = (1 + math.log(qtf)) * idf
        query_norm += weight * weight
        for doc, tf in index.postings[term].items():
            scores[doc] = scores.get(doc, 0.0) + weight * (1 + math.log(tf)) * idf
    query_norm = math.sqrt(query_norm)
    return {
        d: s / (index.norms[d] * query_norm) if index.norms[d] * query_norm > 0 else 0.0
        for d, s in scores.items()
    }


def query_likelihood(index: Index, query: Counter[str], mu: float = 300.0) -> dict[int, float]:
    """log P(query | document) with Dirichlet smoothing, in its rank-equivalent form
    sum qtf * log(1 + tf / (mu * p(t))) + |q| * log(mu / (|d| + mu)) (Zhai and Lafferty).
    mu = 300 is about three mean abstract lengths (the usual 2000 suits long web pages)."""
    scores: dict[int, float] = {}
    for term, qtf in query.items():
        background = mu * index.collection_tf[term] / index.total
        for doc, tf in index.postings[term].items():
            scores[doc] = scores.get(doc, 0.0) + qtf * math.log1p(tf / background)
    size = sum(query.values())
    return {d: s + size * math.log(mu / (index.lengths[d] + mu)) for d, s in scores.items()}


class Searcher(Protocol):
    """What plays an engine: a named model that returns its best documents for a text."""

    @property
    def name(self) -> str: ...

    def search(self, text: str, k: int = 20) -> list[tuple[str, float]]: ...


@dataclass(frozen=True, slots=True)
class Model:
    """A retrieval model over one index."""

    name: str
    index: Index
    scorer: Scorer

    def search(self, text: str, k: int = 20) -> list[tuple[str, float]]:
        """The `k` best documents holding at least one query term: (doc id, score), best
        first, ties by document id (so every run gives the same list)."""
        query = Counter(t for t in tokens(text) if t in self.index.postings)
        if not query:
            return []
        scores = self.scorer(self.index, query)
        best = sorted(scores.items(), key=lambda item: (-item[1], item[0]))[:k]
        return [(self.index.ids[doc], score) for doc, score in best]


MODEL_NAMES = ("bm25", "tfidf", "ql_dirichlet", "bm25_title")
#: With the semantic and the weak model of `testing.semantic`, seeded after the four.
EVERY_MODEL = (*MODEL_NAMES, "lsa", "weak")


def coverage_seeds(seed: int) -> dict[str, int]:
    """One seed per model for partial coverage: `seed`, `seed + 1`, ... in `EVERY_MODEL` order."""
    return {name: seed + i for i, name in enumerate(EVERY_MODEL)}


def shared_seed_error(seeds: Sequence[int]) -> str | None:
    """Why draws starting at `seeds` would give two models one seed (`coverage_seeds`), or
    None when they would not."""
    ordered = sorted(seeds)
    if all(b - a >= len(EVERY_MODEL) for a, b in itertools.pairwise(ordered)):
        return None
    return (
        f"--seed values must be at least {len(EVERY_MODEL)} apart (a draw gives its models"
        f" S, S + 1, ... S + {len(EVERY_MODEL) - 1}), got {list(seeds)}"
    )


def covered(collection: Collection, coverage: float, seed: int) -> list[Document]:
    """The documents one model indexes: all of them at coverage 1, else a random share
    `coverage` of them (at least one), drawn with `seed` from the documents in id order."""
    docs = sorted(collection.documents.values(), key=lambda d: int(d.id))
    if coverage >= 1.0:
        return docs
    count = max(1, round(coverage * len(docs)))
    chosen = random.Random(seed).sample(range(len(docs)), count)
    return [docs[i] for i in sorted(chosen)]


def models(
    collection: Collection, coverage: float = 1.0, seeds: Mapping[str, int] | None = None
) -> list[Model]:
    """The four models: BM25 (title + text), TF-IDF cosine and query likelihood on the same
    index, BM25 on titles only. Title + text is the record as given (the text repeats the
    title, so title words count twice, as in the classic runs on this collection).

    Below coverage 1 each model indexes its own random share of the documents, drawn with its
    seed (`seeds`, default `coverage_seeds(1)`), as engines crawling different parts of the web
    do: a document missing from a model's index is one it can never return."""
    if coverage >= 1.0:
        docs = list(collection.documents.values())
        ids = [d.id for d in docs]
        full = Index(ids, (f"{d.title} {d.text}" for d in docs))
        titles = Index(ids, (d.title for d in docs))
        return [
            Model("bm25", full, bm25),
            Model("tfidf", full, tfidf_cosine),
            Model("ql_dirichlet", full, query_likelihood),
            Model("bm25_title", titles, bm25),
        ]
    seeds = seeds or coverage_seeds(1)
    scorers: dict[str, tuple[Scorer, bool]] = {
        "bm25": (bm25, False),
        "tfidf": (tfidf_cosine, False),
        "ql_dirichlet": (query_likelihood, False),
        "bm25_title": (bm25, True),
    }
    out = []
    for name in MODEL_NAMES:
        scorer, titles_only = scorers[name]
        docs = covered(collection, coverage, seeds[name])
        texts = (d.title if titles_only else f"{d.title} {d.text}" for d in docs)
        out.append(Model(name, Index([d.id for d in docs], texts), scorer))
    return out


def ndcg(ranked: Sequence[str], gains: Mapping[str, int], k: int = 10) -> float:
    """nDCG@k with linear gains and a log2 discount (ranx's `ndcg`); 0 without judgments."""
    dcg = sum(gains.get(doc, 0) / math.log2(i + 2) for i, doc in enumerate(ranked[:k]))
    ideal = sorted(gains.values(), reverse=True)[:k]
    best = sum(g / math.log2(i + 2) for i, g in enumerate(ideal))
    return dcg / best if best > 0 else 0.0
