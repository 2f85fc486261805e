"""Realistic, reproducible search results for the latency benchmark.

Every query gets a pool of documents (title, URL on a real-looking site, a 150-300 character
snippet that mentions some of the query's words, a date for a third of them); each engine
answers with 20 of them in its own order, biased towards the pool's best, so that the lists
overlap as real engines' lists do (a few results found by most engines, a long tail found by
one). Some engines list a URL with `www.`, a tracking parameter or a trailing slash, so merging
does real canonicalisation work. Everything derives from the query text: the fake engine
process and the in-process fusion timing see the same lists.
"""

from __future__ import annotations

import hashlib
import random
from functools import lru_cache
from typing import Any

from testing.wire_formats import wikipedia_result

RESULTS_PER_ENGINE = 20
POOL_SIZE = 45

# Words of technical prose; queries take three of them, titles and snippets mix them freely.
_VOCABULARY = """
    access adapter algorithm allocation analysis api application architecture array async
    authentication backend backup balance batch benchmark binary buffer build cache callback
    certificate channel checkpoint cluster code column compiler compression concurrency config
    connection consensus container context coroutine cpu crash cursor daemon dashboard data
    database deadlock debug dependency deploy design device dictionary disk distributed dns docker
    driver encoding encryption endpoint engine error event exception export extension failover
    fault feature file filter firewall format framework function garbage gateway gpu graph handler
    hash header heap http image index input install instance integer interface iterator java
    javascript json kernel key kubernetes lambda latency layer library limit linux list load lock
    log loop memory message method metric migration model module monitor mutex network node
    object operator optimizer package page parser partition password patch path performance
    permission pipeline plugin pointer policy pool port postgres process profile protocol proxy
    python query queue race record redis reference regex release replica request resolver
    response rest retry router runtime rust scaling schema scheduler search security server
    service session shard signal socket sort sql stack storage stream string struct syntax
    table task template tensor test thread throughput timeout token trace transaction tree
    tuple type unicode update upload user validation value variable vector version virtual
    volume web worker workflow yaml
"""
VOCABULARY = tuple(_VOCABULARY.split())
_PROSE = """
    how to use the with for and in of a this guide explains shows why when your you can
    without best practices example examples tutorial reference documentation overview
    introduction step by common problems fix solved answer question detailed complete
    quick simple advanced understanding comparison between vs using configure
"""
PROSE = tuple(_PROSE.split())
SITES = (
    "docs.python.org", "stackoverflow.com", "github.com", "developer.mozilla.org",
    "medium.com", "dev.to", "realpython.com", "geeksforgeeks.org", "learn.microsoft.com",
    "kubernetes.io", "postgresql.org", "redis.io", "docs.rs", "blog.cloudflare.com",
    "engineering.fb.com", "martinfowler.com", "baeldung.com", "digitalocean.com",
    "freecodecamp.org", "towardsdatascience.com", "news.ycombinator.com", "reddit.com",
    "serverfault.com", "superuser.com", "askubuntu.com", "unix.stackexchange.com",
    "wiki.archlinux.org", "man7.org", "pkg.go.dev", "npmjs.com", "pypi.org", "infoq.com",
    "thenewstack.io", "hackernoon.com", "tutorialspoint.com", "w3schools.com",
    "cloud.google.com", "aws.amazon.com", "oracle.com", "ibm.com", "javatpoint.com",
    "programiz.com", "educative.io", "amazon.com", "quora.com",
)  # fmt: skip
# Engines and how their lists differ: whether URLs come as www./tracking/trailing-slash variants.
VARIANT_ENGINES = frozenset({"bing", "duckduckgo", "serper"})


def _rng(*parts: str) -> random.Random:
    seed = hashlib.blake2b("\x1f".join(parts).encode(), digest_size=8).digest()
    return random.Random(int.from_bytes(seed, "big"))


#: Each run's queries so far, and every query drawn in this process.
_QUERIES: dict[str, list[str]] = {}
_DRAWN: set[str] = set()


def query_text(index: int, run: str = "") -> str:
    """The `index`-th distinct query of a run: three words, e.g. "redis cache latency". A
    draw that repeats a query drawn before in this process (of any run) is drawn again, so
    that a benchmark's new queries are never answered from the cache."""
    texts = _QUERIES.setdefault(run, [])
    while len(texts) <= index:
        attempt = 0
        while (text := _draw_query(len(texts), run, attempt)) in _DRAWN:
            attempt += 1
        texts.append(text)
        _DRAWN.add(text)
    return texts[index]


def _draw_query(index: int, run: str, attempt: int) -> str:
    rng = _rng("query", run, str(index), *((str(attempt),) if attempt else ()))
    words = rng.sample(VOCABULARY, 3)
    return " ".join(words) if rng.random() < 0.8 else f"{' '.join(words[:2])} {words[2]} example"


def _sentence(rng: random.Random, query_words: list[str], words: int) -> str:
    picked = []
    for _ in range(words):
        roll = rng.random()
        source: Any = query_words if roll < 0.2 else PROSE if roll < 0.55 else VOCABULARY
        picked.append(rng.choice(source))
    return " ".join(picked)


def _document(rng: random.Random, query_words: list[str], index: int) -> dict[str, Any]:
    site = rng.choice(SITES)
    title_words = rng.sample(query_words, k=rng.randint(1, len(query_words)))
    title = (
        f"{' '.join(title_words).capitalize()}: {_sentence(rng, query_words, rng.randint(3, 7))}"
    )
    snippet = ". ".join(
        _sentence(rng, query_words, rng.randint(8, 14)).capitalize() for _ in range(3)
    )
    slug = "-".join(rng.sample(query_words + list(rng.sample(VOCABULARY, 3)), 4))
    doc: dict[str, Any] = {
        "title": title,
        "url": f"https://{site}/{rng.choice(('docs', 'blog', 'questions', 'wiki', 'a'))}/"
        f"{index}/{slug}",
        "snippet": snippet[: rng.randint(150, 300)].rsplit(" ", 1)[0] + ".",
    }
    if rng.random() < 0.33:
        doc["published"] = (
            f"20{rng.randint(18, 26)}-{rng.randint(1, 12):02d}-{rng.randint(1, 28):02d}"
        )
    return doc


@lru_cache(maxsize=4096)
def document_pool(query: str) -> tuple[dict[str, Any], ...]:
    """The query's candidate documents, best first."""
    rng = _rng("pool", query)
    words = [w for w in query.split() if w != "example"] or ["search"]
    return tuple(_document(rng, words, i) for i in range(POOL_SIZE))


def _variant(url: str, rng: random.Random) -> str:
    roll = rng.random()
    if roll < 0.15:
        return url.replace("https://", "https://www.", 1)
    if roll < 0.25:
        return f"{url}?utm_source=search&utm_medium=organic"
    if roll < 0.35:
        return f"{url}/"
    return url


@lru_cache(maxsize=8192)
def _engine_results(engine: str, query: str) -> tuple[dict[str, Any], ...]:
    pool = document_pool(query)
    rng = _rng("engine", engine, query)
    # Biased sampling without replacement: a document's chance falls with its pool position.
    keyed = sorted(range(len(pool)), key=lambda i: rng.random() ** (1.0 / (1.0 + 8.0 / (i + 1))))
    chosen = sorted(keyed[-RESULTS_PER_ENGINE:], key=lambda i: i + rng.gauss(0, 4))
    out = []
    for i in chosen:
        doc = dict(pool[i])
        if engine == "wikipedia":
            doc = {**wikipedia_result(doc["title"], doc["snippet"]), "published": None}
        elif engine in VARIANT_ENGINES:
            doc["url"] = _variant(doc["url"], rng)
        out.append(doc)
    return tuple(out)


def results_for(engine: str, query: str) -> list[dict[str, Any]]:
    """What fake engine `engine` answers for `query`: 20 results in the generic shape of
    `testing.wire_formats.render`."""
    return list(_engine_results(engine, query))
