"""Merge the engines' lists by canonical URL, and weighted reciprocal rank fusion.

Engines are always visited in name order, so neither merging nor the floating-point sums
depend on the order the lists arrived in.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime

from websearch_mcp.dates import parse_date, period_end
from websearch_mcp.models import Hit
from websearch_mcp.ranking.urls import CanonicalURL, canonicalize, is_copy


@dataclass(slots=True)
class Merged:
    """Everything the engines said about one canonical URL."""

    key: str
    host: str
    path: str
    hits: dict[str, Hit]  # engine -> its best-ranked hit
    ranks: dict[str, int]  # engine -> that hit's rank, in engine-name order
    engines: list[str] = field(default_factory=list)  # best rank first (ties by name): `_fill`
    title: str = ""
    url: str = ""
    snippet: str = ""
    published: str | None = None
    _published_at: datetime | None = field(default=None, init=False, repr=False)
    _dated: bool = field(default=False, init=False, repr=False)  # `_published_at` read

    @property
    def published_at(self) -> datetime | None:
        """`published` as a datetime, read on first use: only freshness needs it, and only for
        queries asking for recent results."""
        if not self._dated:
            published = self.published
            self._published_at = parse_date(published) if published is not None else None
            self._dated = True
        return self._published_at


def _titled(hit: Hit) -> bool:
    """Whether `hit` has a title of its own: not a blank one, nor its URL, which stands for the
    title an engine did not give (`plain_hits`)."""
    return bool(hit.title.strip()) and hit.title != hit.url


def _replaces(text: str, date: datetime, kept_text: str, kept: datetime) -> bool:
    """Whether a date replaces the one kept so far: an earlier one, unless it only names a period
    (a day, a month, a year) holding the kept one; or a more precise one within the period the
    kept one names (the time one engine gave for the day another gives bare)."""
    end = period_end(text, date)
    if date < kept:
        return end is None or end <= kept
    kept_end = period_end(kept_text, kept)
    return (
        kept_end is not None and date < kept_end and (end is None or end - date < kept_end - kept)
    )


def _own_address(copy: str, urls: list[str]) -> str:
    """The page's own address among `urls` (best rank first) where one is not a mobile or AMP
    copy: https first, then the shortest, then the best rank; else `copy`."""
    own = [url for url in urls if not is_copy(url)]
    return min(own, key=lambda url: (not url.startswith("https:"), len(url))) if own else copy


def _fill(item: Merged, muted: Collection[str]) -> None:
    if len(item.hits) == 1:  # the common case, kept cheap
        ((engine, hit),) = item.hits.items()
        item.engines = [engine]
        # The same choices as below: a blank title is no title (shown as the URL).
        item.title = hit.title if hit.title.strip() else ""
        item.snippet, item.url = hit.snippet, hit.url
        item.published = hit.published or None
        return
    ranks, hits = item.ranks, item.hits
    # By rank, ties by name: `ranks` holds the engines in name order and the sort is stable.
    # Muted engines (weight 0) come last, and their words are the result's only when no other
    # engine returned it: they move nothing of a result another engine returned.
    engines = sorted(ranks, key=lambda e: (e in muted, ranks[e]))
    item.engines = engines
    heard = [e for e in engines if e not in muted] or engines
    # One pass, best rank first; each choice keeps the first hit that is best for it.
    first = hits[heard[0]]
    title = first.title if _titled(first) else ""
    snippet, url, published = first.snippet, first.url, first.published or None
    # An original URL: https first, then the shortest (no tracking extras), then the best rank;
    # the page's own before a mobile or AMP copy of it (after the loop).
    secure, length = url.startswith("https:"), len(url)
    # Dates are parsed only to choose between two different ones (most results have one date
    # string or none); `published_at` reads the one chosen when it is needed.
    earliest: datetime | None = None
    dated = False  # whether `earliest` is `published` read
    for engine in heard[1:]:
        hit = hits[engine]
        if not title and _titled(hit):
            title = hit.title
        if len(hit.snippet) > len(snippet):
            snippet = hit.snippet
        if (hit_secure := hit.url.startswith("https:")) > secure or (
            hit_secure == secure and len(hit.url) < length
        ):
            secure, length, url = hit_secure, len(hit.url), hit.url
        if hit.published and hit.published != published:
            if not dated:
                earliest = parse_date(published) if published is not None else None
                dated = True
            date = parse_date(hit.published)
            if date is not None and (
                earliest is None or _replaces(hit.published, date, published or "", earliest)
            ):
                earliest, published = date, hit.published
            elif earliest is None and not published:
                published = hit.published
    if not title:  # no engine gave one: the best-ranked URL standing for it, as for one hit
        title = next((hits[e].title for e in heard if hits[e].title.strip()), "")
    if is_copy(url):
        url = _own_address(url, [hits[e].url for e in heard])
    item.title, item.snippet, item.url = title, snippet, url
    item.published, item._published_at, item._dated = published, earliest, dated


def merge(
    lists: Mapping[str, Sequence[Hit]],
    canonical: Callable[[str], CanonicalURL] | None = None,
    muted: Collection[str] = (),
) -> list[Merged]:
    """Group hits by canonical URL (`canonical`: `canonicalize` unless given, a search's own
    table of it). Each engine counts once per URL, with its best rank; the merged result keeps
    the longest snippet, the best-ranked title an engine gave (not a blank one, nor the URL
    standing for none) and the earliest date (a date naming only the day, month or year of
    another is the less precise form of it), each from the engines not `muted` where one of
    them returned it. Returned in order of first appearance (engines by name); each result's
    `ranks` are in engine-name order."""
    merged: dict[str, Merged] = {}
    # Each link is read once per call: engines share most of their links.
    links: dict[str, CanonicalURL] = {}
    for engine in sorted(lists):
        for position, hit in enumerate(lists[engine], start=1):
            url = hit.url
            found = links.get(url)
            if found is None:
                found = links[url] = canonicalize(url) if canonical is None else canonical(url)
            key, host, path = found
            item = merged.get(key)
            rank = hit.rank if hit.rank >= 1 else position
            if item is None:
                merged[key] = Merged(key, host, path, {engine: hit}, {engine: rank})
                continue
            known = item.ranks.get(engine)
            if known is None or rank < known:
                item.ranks[engine] = rank
                item.hits[engine] = hit
    for item in merged.values():
        _fill(item, muted)
    return list(merged.values())


def rrf(ranks: Mapping[str, int], weights: Mapping[str, float], k: int) -> float:
    """Weighted reciprocal rank fusion: sum over engines of w_e / (k + rank_e)."""
    total = 0.0
    for engine in sorted(ranks):  # one order whatever the input order: identical sums
        total += max(0.0, weights.get(engine, 1.0)) / (k + ranks[engine])
    return total


def rrf_best(engines: Iterable[str], weights: Mapping[str, float], k: int) -> float:
    """The best possible RRF score: rank 1 in every answering engine."""
    return sum(max(0.0, weights.get(e, 1.0)) / (k + 1) for e in sorted(engines))


def normalised(total: float, best: float) -> float:
    """An RRF sum divided by the best possible one, so it is in [0, 1] (0 when no weight is
    left)."""
    return min(1.0, total / best) if best > 0 else 0.0


def normalised_rrf(
    ranks: Mapping[str, int], weights: Mapping[str, float], k: int, best: float
) -> float:
    """RRF divided by the best possible value, so it is in [0, 1] (0 when no weight is left)."""
    return normalised(rrf(ranks, weights, k), best)
