"""A fetched page as text, and the window of it a caller asked for."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Extracted:
    """What an extractor found in a body."""

    content: str
    title: str | None = None
    published: str | None = None  # ISO date, when the page says
    capped: str | None = None  # which extraction limit cut the text, when one did


@dataclass(frozen=True)
class Document:
    """The whole extracted text of a page. `via` is "reader" when the reader API supplied it;
    `capped` says which extraction limit cut the text, when one did."""

    url: str
    final_url: str
    content_type: str
    content: str
    title: str | None = None
    published: str | None = None
    via: str | None = None
    capped: str | None = None

    def window(self, *, max_chars: int, start: int) -> dict[str, Any]:
        """The result for characters [start, start + max_chars) of the text.

        `next_start` is present while more text remains; a `start` past the end gives empty
        content, with `total_chars` saying where the text ends.
        """
        total = len(self.content)
        begin = min(start, total)
        end = min(start + max_chars, total)
        result: dict[str, Any] = {
            "url": self.url,
            "final_url": self.final_url,
            "title": self.title,
            "content": self.content[begin:end],
            "content_type": self.content_type,
            "total_chars": total,
            "start": start,
            "truncated": end < total,
        }
        if end < total:
            result["next_start"] = end
        if self.published:
            result["published"] = self.published
        if self.via:
            result["via"] = self.via
        if self.capped:
            result["capped"] = self.capped
        return result
