"""Small pure helpers shared by the academic parsers: DOIs, titles and author names."""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any

from websearch_mcp.engines.text import clean_text

_DOI_PREFIX_RE = re.compile(r"^(?:https?://(?:dx\.)?doi\.org/|doi:\s*)", re.IGNORECASE)


def normalize_doi(value: Any) -> str | None:
    """A bare, lower-case DOI (`10.1000/xyz`) without `https://doi.org/` or `doi:`; the first
    of several (arXiv lists an article's DOI and then its erratum's: `10.1/a 10.1/b`)."""
    if not isinstance(value, str):
        return None
    words = _DOI_PREFIX_RE.sub("", value.strip()).split(maxsplit=1)
    doi = words[0].rstrip(",;").lower() if words else ""
    return doi if doi.startswith("10.") and "/" in doi else None


def title_text(value: Any) -> str:
    """A title as plain text, without the period that dblp and MEDLINE end every title with."""
    title = value.strip() if isinstance(value, str) else ""
    return title[:-1] if title.endswith(".") and not title.endswith("..") else title


def names(values: Iterable[Any]) -> tuple[str, ...]:
    """Author names: whitespace collapsed, empties, repeats and values that are no string
    dropped, order kept."""
    seen: dict[str, None] = {}
    for value in values:
        name = clean_text(value, 200)
        if name:
            seen.setdefault(name, None)
    return tuple(seen)


def author_names(authors: Any) -> tuple[str, ...]:
    """`names` of an `authors` list of `{"name": ...}` objects (CORE, PubMed, Semantic Scholar)."""
    return names(a.get("name") for a in authors or [] if isinstance(a, dict))
