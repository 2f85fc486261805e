"""Small pure helpers shared by the academic parsers: DOIs, titles and author names."""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any
from urllib.parse import unquote

from websearch_mcp.engines.text import clean_text
from websearch_mcp.models import Query

#: A heading that opens an abstract ("Abstract", "ABSTRACT:", "Summary."), not a first word of
#: its sentence ("Summary statistics are ...").
_ABSTRACT_LABEL_RE = re.compile(r"^\s*(?i:abstract|summary)(\s*[:.\u2013\u2014]|\s+-(?=\s))?(\s*)")


def without_abstract_label(text: str) -> str:
    """`text` without the "Abstract" or "Summary" heading publishers open an abstract with:
    before a colon or full stop, or a space and anything but a lower-case letter (any script:
    Cyrillic, Chinese, an accented capital, a quotation mark)."""
    match = _ABSTRACT_LABEL_RE.match(text) if text else None
    if match is None:
        return text
    rest = text[match.end() :]
    if match[1] or (match[2] and rest and not rest[0].islower()):
        return rest
    return text


_DOI_PREFIX_RE = re.compile(r"^(?:https?://(?:dx\.)?doi\.org/|doi:\s*)", re.IGNORECASE)


def normalize_doi(value: Any) -> str | None:
    """A bare, lower-case DOI (`10.1000/xyz`) without `https://doi.org/` (and the link's
    escapes) or `doi:`; the first of several (arXiv lists an article's DOI and then its
    erratum's: `10.1/a 10.1/b`)."""
    if not isinstance(value, str):
        return None
    bare = _DOI_PREFIX_RE.sub("", value.strip())
    if bare != value.strip() and value.lstrip()[:4].lower() == "http":
        bare = unquote(bare)  # a link's escapes (`%28`, `%3C`): the DOI as registered
    words = bare.split(maxsplit=1)
    doi = words[0].rstrip(",;").lower() if words else ""
    return doi if doi.startswith("10.") and "/" in doi else None


def title_text(value: Any) -> str:
    """A title as plain text, without the period that dblp and MEDLINE end every title with."""
    title = value.strip() if isinstance(value, str) else ""
    return title[:-1] if title.endswith(".") and not title.endswith("..") else title


#: The format tag Google Scholar puts before a title, which Semantic Scholar keeps in some.
_FORMAT_TAG_RE = re.compile(r"\A\[(?:PDF|HTML|BOOK|B|CITATION|C)\]\s*", re.IGNORECASE)


def without_format_tag(title: str) -> str:
    """`title` without a leading `[PDF]`, `[HTML]`, `[BOOK]` or `[CITATION]` tag."""
    return _FORMAT_TAG_RE.sub("", title, count=1) if title.startswith("[") else title


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


def in_asked_years(published: str | None, query: Query) -> bool:
    """Whether a date (`YYYY`, `YYYY-MM` or `YYYY-MM-DD`) lies in the query's years; no date
    does not."""
    year = int(published[:4]) if published else None
    return (
        year is not None
        and (query.year_from is None or year >= query.year_from)
        and (query.year_to is None or year <= query.year_to)
    )


def date_in_asked_years(first: str | None, matched: str | None, query: Query) -> str | None:
    """The date to show of a paper an index matched to the asked years on another date than its
    first one (PubMed on either its issue's or its electronic date, Europe PMC on its issue's
    year): `first`, unless only `matched` lies in the asked years. The fused list is checked
    again on the date shown, and would drop what the index chose."""
    if matched and not in_asked_years(first, query) and in_asked_years(matched, query):
        return matched
    return first
