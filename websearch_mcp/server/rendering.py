"""Compact text renderings of tool answers, for clients that read only text content."""

from __future__ import annotations

from typing import Any

import orjson

from websearch_mcp.search.answer import (
    EngineOut,
    PageOut,
    PaperOut,
    PapersOut,
    ResultOut,
    SearchOut,
    SummarizedSearchOut,
)
from websearch_mcp.server.argument_checks import MAX_PAGE

AUTHORS_SHOWN = 3  # more are summed up as "et al."


#: Format characters a terminal only joins letters or emoji with (ZWNJ, ZWJ), which words in
#: Persian or an emoji sequence are written with: printed as they are.
_JOINERS = "\u200c\u200d"


def printable(text: str, keep: str = "") -> str:
    """`text` with every character a terminal would act on (escape sequences, carriage returns,
    direction overrides) but those in `keep` shown as `?`: titles, snippets, links, error texts
    and pages come from servers the operator does not control."""
    if text.isprintable():
        return text
    kept = keep + _JOINERS
    return "".join(c if c.isprintable() or c in kept else "?" for c in text)


def engine_line(engines: list[EngineOut]) -> str:
    """`engines: bing ok 8 (412 ms), duckduckgo blocked (CAPTCHA page)`, and each try of an
    engine that needed several: `tavily ok 3 (812 ms) [attempts: key 1 of 2: HTTP 429; ...]`."""
    parts = []
    for e in engines:
        text = f"{e['name']} {e['status']}"
        if e.get("status") in ("ok", "irrelevant"):
            text += f" {e.get('results', 0)}"
        if e.get("error"):
            text += f" ({e['error']})"
        elif e.get("latency_ms") is not None:
            text += f" ({e['latency_ms']} ms)"
        if e.get("attempts"):
            text += f" [attempts: {'; '.join(e['attempts'])}]"
        parts.append(text)
    return "engines: " + ", ".join(parts)


def search_text(answer: SummarizedSearchOut) -> str:
    """Numbered results with URL, snippet, provenance, the score details asked for and, for
    pages read, their passages (or why the page was not read); then the note and one line of
    engine statuses."""
    lines: list[str] = []
    if summary := answer.get("summary"):
        lines += [summary, ""]
    elif error := answer.get("summary_error"):
        lines += [f"(no summary: {error})", ""]
    for i, result in enumerate(answer["results"], 1):
        lines.append(f"{i}. {result['title'] or result['url']}")
        lines.append(f"   {result['url']}")
        if result.get("snippet"):
            lines.append(f"   {result['snippet']}")
        meta = ", ".join(result["engines"])
        if result.get("source"):
            meta = f"{result['source']} via {meta}"
        if result.get("published"):
            meta += f"; {result['published']}"
        elif result.get("undated"):
            meta += "; undated"
        lines.append(f"   [{meta}; score {result['score']}]")
        if also := result.get("also"):
            lines.append(f"   also reported by: {', '.join(map(_report, also))}")
        lines += _page_lines(result) + _details_lines(result)
    if not answer["results"]:
        lines.append(f"No results for {answer['query']!r}.")
    return "\n".join(lines + _footer(answer))


def _report(other: dict[str, Any]) -> str:
    """Another report of a news story: `The Verge (https://..., 2026-12-01T08:00:00Z)`."""
    where = ", ".join(str(other[key]) for key in ("url", "published") if other.get(key))
    return f"{other['source']} ({where})" if other.get("source") else where


def _page_lines(result: ResultOut) -> list[str]:
    """The passages of a result whose page was read, each quoted; or why it was not read."""
    status = result.get("page_status")
    if status is None:
        return []
    if status != "ok":
        why = result.get("page_error")
        # Most errors name their status first ("refused: ...", "unsupported content ...").
        if why and not why.startswith(status):
            why = f"{status}: {why}"
        return [f"   (page not read: {why or status})"]
    passages = result.get("passages")
    if not passages:
        return ["   (page read: nothing in it matches the query)"]
    return [f"   > {passage}" for passage in passages]


def _details_lines(result: ResultOut) -> list[str]:
    """With `explain`, the result's score details as one line of JSON."""
    if (details := result.get("score_details")) is None:
        return []
    return [f"   details: {orjson.dumps(details).decode()}"]


def _footer(answer: SearchOut | PapersOut) -> list[str]:
    """The note on the answer, when there is one, and the line of engine statuses."""
    note = [f"Note: {answer['note']}."] if answer.get("note") else []
    return [*note, status_line(answer)]


def status_line(answer: SearchOut | PapersOut) -> str:
    """The engine statuses, flagged `cached` and `partial` where that applies."""
    flags = []
    if answer.get("cached"):
        flags.append("cached")
    if answer.get("partial"):
        flags.append("partial: some engines did not answer")
    return engine_line(answer["engines"]) + (f" [{'; '.join(flags)}]" if flags else "")


def _byline(paper: PaperOut) -> str:
    """`A. Author, B. Author, C. Author et al. (2017). Venue. doi:10.x/y; cited by 12`; names
    an index writes family first (`Alben, Silas`) are joined by `; `, so that each reads as one."""
    authors = paper.get("authors") or []
    shown = authors[:AUTHORS_SHOWN]
    text = ("; " if any("," in a for a in shown) else ", ").join(shown) + (
        " et al." if len(authors) > AUTHORS_SHOWN else ""
    )
    if published := paper.get("published"):
        text += f" ({published[:4]})"
    text = text.strip()
    if venue := paper.get("venue"):
        text += (". " if text else "") + venue
    facts = []
    if paper.get("doi"):
        facts.append(f"doi:{paper['doi']}")
    if arxiv := (paper.get("ids") or {}).get("arxiv"):
        facts.append(f"arXiv:{arxiv}")
    if pmid := (paper.get("ids") or {}).get("pmid"):
        facts.append(f"PMID:{pmid}")
    if paper.get("citations") is not None:
        facts.append(f"cited by {paper['citations']}")
    return "; ".join(filter(None, [text, *facts]))


def papers_text(answer: PapersOut) -> str:
    """Numbered papers: title, link, authors (year), venue, DOI, citations, PDF and abstract,
    provenance, the score details asked for; then the note and one line of engine statuses."""
    lines: list[str] = []
    for i, paper in enumerate(answer["results"], 1):
        lines.append(f"{i}. {paper['title'] or paper['url']}")
        lines.append(f"   {paper['url']}")
        if byline := _byline(paper):
            lines.append(f"   {byline}")
        if paper.get("pdf_url"):
            lines.append(f"   PDF: {paper['pdf_url']}")
        if paper.get("snippet"):
            lines.append(f"   {paper['snippet']}")
        lines.append(f"   [{', '.join(paper['engines'])}; score {paper['score']}]")
        lines += _details_lines(paper)
    if not answer["results"]:
        lines.append(f"No papers for {answer['query']!r}.")
    elif answer["page"] < MAX_PAGE:
        lines.append(f"[page {answer['page']}; call again with a higher page for more]")
    else:
        lines.append(f"[page {answer['page']}, the last]")
    return "\n".join(lines + _footer(answer))


def page_text(page: PageOut) -> str:
    """Title, URL and date, the content window, where to read on, and the extraction limit
    that cut the text (which no window reads past)."""
    head = f"# {page['title']}\n" if page.get("title") else ""
    head += f"{page['final_url']}\n"
    if page.get("published"):
        head += f"published {page['published']}\n"
    notes = []
    if page.get("next_start") is not None:
        notes.append(
            f"[characters {page['start']}-{page['next_start']} of {page['total_chars']}; "
            f"call again with start={page['next_start']} to read on]"
        )
    elif not page["content"] and page["start"] > 0:
        notes.append(
            f"[nothing from start={page['start']}: the text has {page['total_chars']} characters]"
        )
    if page.get("capped"):
        notes.append(f"[capped: {page['capped']}]")
    return "\n\n".join([f"{head}\n{page['content']}", *notes])
