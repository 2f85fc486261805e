"""Small pure helpers shared by the academic parsers: DOIs, publication dates, author names."""

from __future__ import annotations

import re
from collections.abc import Iterable
from datetime import date
from typing import Any

from websearch_mcp.engines.base import clean_text

_DOI_PREFIX_RE = re.compile(r"^(?:https?://(?:dx\.)?doi\.org/|doi:\s*)", re.IGNORECASE)


def normalize_doi(value: Any) -> str | None:
    """A bare, lower-case DOI (`10.1000/xyz`) without `https://doi.org/` or `doi:`."""
    if not isinstance(value, str):
        return None
    doi = _DOI_PREFIX_RE.sub("", value.strip()).strip().lower()
    return doi if doi.startswith("10.") and "/" in doi else None


_MONTHS = {
    month: number
    for number, month in enumerate(
        ("jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"),
        start=1,
    )
}
# "2004 Feb 15", "2004 Feb", "2004 Jan-Feb", "2004 Spring" (PubMed); month names by 3 letters.
_YEAR_MONTH_RE = re.compile(r"^(\d{4}) ([A-Za-z]{3})[A-Za-z]*\.?(?: (\d{1,2})\b)?")
# ISO dates and stamps at any precision: "2004", "2004-02", "2004/02/01 00:00", "...T15:05Z".
_NUMERIC_RE = re.compile(r"^(\d{4})(?:[-/](\d{1,2})(?:[-/](\d{1,2}))?)?(?:$|[T\s])")


def _iso(year: int, month: int | None = None, day: int | None = None) -> str | None:
    """`YYYY-MM-DD`, `YYYY-MM` or `YYYY`, whichever precision is known; None if impossible."""
    try:
        date(year, month or 1, day or 1)
    except ValueError:
        return None
    if month is None:
        return f"{year:04d}"
    return f"{year:04d}-{month:02d}" if day is None else f"{year:04d}-{month:02d}-{day:02d}"


def publication_date(value: Any) -> str | None:
    """An ISO 8601 date at the precision the source knows: `2004-02-01`, `2004-02` or `2004`.

    Reads ISO dates and timestamps, `2004/02/01 00:00`, `2004 Feb 15`, `2004 Feb` and a bare
    year (int or string).
    """
    if isinstance(value, int) and not isinstance(value, bool):
        return _iso(value) if 1000 <= value <= 9999 else None
    if not isinstance(value, str):
        return None
    text = value.strip()
    match = _YEAR_MONTH_RE.match(text)
    if match and match[2].lower() in _MONTHS:
        return _iso(int(match[1]), _MONTHS[match[2].lower()], int(match[3]) if match[3] else None)
    match = _NUMERIC_RE.match(text)
    if match:
        month, day = (int(part) if part else None for part in (match[2], match[3]))
        return _iso(int(match[1]), month, day)
    return None


def date_from_parts(value: Any) -> str | None:
    """The date of Crossref's `{"date-parts": [[y, m, d]]}`, where any part may be missing."""
    try:
        parts = [int(p) for p in value["date-parts"][0] if p is not None]
    except (KeyError, IndexError, TypeError, ValueError):
        return None
    return _iso(*parts[:3]) if parts else None


def title_text(value: Any) -> str:
    """A title as plain text, without the period that dblp and MEDLINE end every title with."""
    title = clean_text(value if isinstance(value, str) else "")
    return title[:-1] if title.endswith(".") and not title.endswith("..") else title


def names(values: Iterable[Any]) -> tuple[str, ...]:
    """Author names: whitespace collapsed, empties and repeats dropped, order kept."""
    seen: dict[str, None] = {}
    for value in values:
        name = clean_text(str(value or ""), 200)
        if name:
            seen.setdefault(name, None)
    return tuple(seen)


def as_list(value: Any) -> list[Any]:
    """A list where an API sends either a list or, for a single element, the element alone."""
    if value is None:
        return []
    return value if isinstance(value, list) else [value]


def as_int(value: Any) -> int | None:
    """An integer from an int or a string of digits ("962"); None otherwise."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, str) and value.strip().isdigit():
        return int(value.strip())
    return None


def as_dict(value: Any) -> dict[str, Any]:
    """`value` when it is an object, else an empty one (for optional nested objects)."""
    return value if isinstance(value, dict) else {}
