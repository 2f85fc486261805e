"""What fusion reads from each hit on its own, worked out while slower engines are awaited.

Most of `rank()`'s work needs every list: votes, scores, the order. Two parts need only the hit:
its URL's canonical form and the words of its title and snippet. A search that is not sharing
the process with others waits idle for its slowest engine; reading each list as it arrives
takes those parts off the time between the last answer and the result. `rank()` computes
whatever was not read ahead (the slowest engine's list), with the same functions, so the
result is the same either way.
"""

from __future__ import annotations

from collections.abc import Sequence

from websearch_mcp.models import Hit
from websearch_mcp.ranking.tokens import Texts
from websearch_mcp.ranking.urls import CanonicalURL, canonicalize


class Preparation:
    """One search's hits read ahead: canonical URLs and tokenised titles and snippets."""

    __slots__ = ("texts", "urls")

    def __init__(self) -> None:
        self.texts = Texts()
        self.urls: dict[str, CanonicalURL] = {}

    def add(self, hits: Sequence[Hit]) -> None:
        """Read one engine's list."""
        texts, urls = self.texts, self.urls
        for hit in hits:
            if hit.url not in urls:
                urls[hit.url] = canonicalize(hit.url)
            # A lookup of a text not yet read tokenises and keeps it.
            texts[hit.title]
            texts[hit.snippet]

    def canonical(self, url: str) -> CanonicalURL:
        """`canonicalize(url)`, from the table when the URL was read ahead."""
        found = self.urls.get(url)
        return found if found is not None else canonicalize(url)
