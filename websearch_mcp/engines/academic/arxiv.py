"""arXiv API: GET /api/query?search_query=all:..&start=..&max_results=.. (Atom XML).

arXiv reports bad queries as an Atom `<entry>` titled "Error" whose id lies under
arxiv.org/api/errors, sometimes with HTTP 200; such an entry is an error, not a result.
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from typing import Any, ClassVar

from websearch_mcp.dates import publication_date
from websearch_mcp.engines.academic._common import names, normalize_doi
from websearch_mcp.engines.base import Engine
from websearch_mcp.engines.common import http_url, ranked_hits, xml_root
from websearch_mcp.engines.text import clean_text
from websearch_mcp.errors import EngineError, EngineParseError
from websearch_mcp.models import Hit, HttpRequest, HttpResponse, Query

_NS = {
    "atom": "http://www.w3.org/2005/Atom",
    "arxiv": "http://arxiv.org/schemas/atom",
}
_TERM_RE = re.compile(r"[\w][\w.+-]*")
# Words that an AND of `all:` terms would wrongly require.
_STOP = frozenset(
    {"a", "an", "and", "are", "as", "at", "by", "for", "from", "in", "into", "is", "of", "on"}
    | {"or", "the", "to", "with"}
)
_VERSION_RE = re.compile(r"v\d+$")


# A quoted phrase, an `OR` between words, or a word, `-` before it excluding it.
_OPERAND_RE = re.compile(
    r"(?<!\S)(?P<either>OR)(?!\S)|(?P<without>(?<!\S)-)?"
    r'(?:"(?P<phrase>[^"]*\w[^"]*)"|(?P<term>\w[\w.+-]*))'
)


def search_query(query: Query) -> str:
    """Every content word required in any field, plus the submission-year window if asked. The
    query's own operators keep their meaning: a quoted phrase is one (`all:"a b"`), `A OR B`
    asks for either, and `-word` excludes the word (`ANDNOT`) rather than requiring it."""
    groups: list[list[str]] = []  # each required, as one of its alternatives
    excluded: list[str] = []
    either = False
    for match in _OPERAND_RE.finditer(query.text):
        if match["either"]:
            either = bool(groups)
            continue
        phrase, term = match["phrase"], match["term"]
        if term and not either and term.lower() in _STOP:
            continue
        operand = f'all:"{" ".join(phrase.split())}"' if phrase else f"all:{term}"
        if match["without"]:
            excluded.append(operand)
        elif either:
            groups[-1].append(operand)
        else:
            groups.append([operand])
        either = False
    if not groups:  # nothing but stop words: every word not excluded, required
        found = [f"all:{term}" for term in _TERM_RE.findall(query.text)]
        kept = [operand for operand in found if operand not in excluded]
        groups, excluded = [[operand] for operand in kept or [f"all:{query.text.strip()}"]], []
    expr = " AND ".join(g[0] if len(g) == 1 else f"({' OR '.join(g)})" for g in groups)
    expr += "".join(f" ANDNOT {operand}" for operand in excluded)
    if query.year_from is not None or query.year_to is not None:
        start = query.year_from if query.year_from is not None else 1991  # arXiv's first year
        end = query.year_to if query.year_to is not None else 9999
        expr = f"{expr} AND submittedDate:[{start:04d}01010000 TO {end:04d}12312359]"
    return expr


def _text(entry: ET.Element, path: str) -> str:
    found = entry.find(path, _NS)
    return (found.text or "") if found is not None else ""


def _link(entry: ET.Element, **attrs: str) -> str | None:
    for link in entry.findall("atom:link", _NS):
        if all(link.get(name) == value for name, value in attrs.items()):
            return link.get("href")
    return None


def _abs_url(entry: ET.Element) -> str | None:
    """The abstract page without its version suffix, so that it matches other indexes' links;
    None when the entry names no http(s) page."""
    url = http_url(_link(entry, rel="alternate") or _text(entry, "atom:id"))
    if url is None:
        return None
    return _VERSION_RE.sub("", url.replace("http://arxiv.org/", "https://arxiv.org/"))


def _is_error(entry: ET.Element) -> bool:
    """arXiv's error entry; a paper that happens to be titled "Error" has an /abs/ id."""
    entry_id = _text(entry, "atom:id")
    if "arxiv.org/api/errors" in entry_id:
        return True
    return _text(entry, "atom:title").strip() == "Error" and "/abs/" not in entry_id


def _hit(entry: ET.Element, rank: int, engine: str) -> Hit | None:
    title = _text(entry, "atom:title").strip()
    url = _abs_url(entry)
    if not title or url is None:
        return None
    journal = clean_text(_text(entry, "arxiv:journal_ref"))
    return Hit(
        title=title,
        url=url,
        snippet=_text(entry, "atom:summary"),
        rank=rank,
        engine=engine,
        published=publication_date(_text(entry, "atom:published")),
        authors=names(_text(author, "atom:name") for author in entry.findall("atom:author", _NS)),
        doi=normalize_doi(_text(entry, "arxiv:doi")),
        venue=journal or None,
        pdf_url=http_url(_link(entry, title="pdf")),
    )


class ArXiv(Engine):
    """Atom entries with `title`, `summary`, `published`, `author/name`, `arxiv:doi`,
    `arxiv:journal_ref`, and a `link` titled "pdf"."""

    name = "arxiv"
    markup = False
    kind = "academic"
    base_url = "https://export.arxiv.org"
    default_timeout = 8.0
    rate_limit = 1 / 3  # arXiv's terms of use: one request every three seconds

    max_rows: ClassVar[int] = 100

    def request(self, query: Query, key: str | None) -> HttpRequest:
        """Parameters: `search_query()`, `start`, `max_results`, sorted by relevance."""
        rows = min(query.max_results, self.max_rows)
        params: dict[str, Any] = {
            "search_query": search_query(query),
            "start": (query.page - 1) * rows,
            "max_results": rows,
            "sortBy": "relevance",
            "sortOrder": "descending",
        }
        return HttpRequest("GET", "/api/query", params=params)

    def parse(self, response: HttpResponse, query: Query) -> list[Hit]:
        """Atom entries -> hits; an error entry raises `EngineError` even with HTTP 200."""
        try:
            feed = xml_root(response.content)
        except ET.ParseError:
            self.check_status(response)
            raise EngineParseError("arXiv answered with a body that is not XML") from None
        entries = feed.findall("atom:entry", _NS)
        for entry in entries:
            if _is_error(entry):
                detail = clean_text(_text(entry, "atom:summary"), 200) or "no detail"
                raise EngineError(f"arXiv API error: {detail}")
        self.check_status(response)
        if feed.tag != f"{{{_NS['atom']}}}feed":
            raise EngineParseError("arXiv answered with XML that is not an Atom feed")
        return ranked_hits(entries, self.name, _hit)
