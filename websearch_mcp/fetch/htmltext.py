"""Main text of an HTML page as Markdown, with trafilatura.

Headings, lists, tables, emphasis and links are kept; navigation, ads, footers and other
boilerplate are dropped. The title and publication date come from the page's metadata. Pages
are parsed with lxml (as trafilatura does), which stops nesting at 256 levels, so deep pages
cost no more than flat ones.
"""

from __future__ import annotations

import functools
from typing import Any
from urllib.parse import urljoin, urlsplit

import trafilatura
from lxml import etree
from trafilatura.utils import load_html

from websearch_mcp.fetch.document import Extracted
from websearch_mcp.text_encoding import one_line

_OPTIONS: dict[str, Any] = {
    "output_format": "markdown",
    "include_links": True,
    "include_tables": True,
    "include_formatting": True,
    "include_comments": False,
}
_INVISIBLE = ("script", "style", "noscript", "svg")


def extract_html(
    html: str | bytes, url: str, *, max_nodes: int = 50_000, max_chars: int = 2_000_000
) -> Extracted:
    """The page's main content. `html` as bytes lets trafilatura detect the encoding itself.

    When the extractor finds no main block even with recall favoured (a bare page, an index), the
    page's visible text is returned instead, so a page with text never comes back empty. A page
    of more than `max_nodes` elements is not given to the extractor, whose cost grows faster
    than the page: its visible text is returned, and `capped` says so. At most `max_chars`
    characters come back.
    """
    tree = load_html(html)
    if tree is None:
        return Extracted(content="")
    if _count_nodes(tree, max_nodes) > max_nodes:
        found = Extracted(
            content=_visible_text(tree),
            title=_title_tag(tree),
            capped=f"more than {max_nodes} HTML elements (fetch.max_html_nodes): visible text only",
        )
    else:
        found = _main_content(html, url, tree)
    if len(found.content) > max_chars:
        cut = f"text cut at {max_chars} characters (fetch.max_text_chars)"
        capped = f"{found.capped}; {cut}" if found.capped else cut
        return Extracted(found.content[:max_chars], found.title, found.published, capped)
    return found


def _main_content(html: str | bytes, url: str, tree: Any) -> Extracted:
    title = _title_tag(tree)
    # Not `extensive`: its last resorts take a copyright year ("© 2019" as 2019-01-01) or any
    # date told in the text for the publication date. Metadata, <time>, bylines and the URL stay.
    metadata = trafilatura.extract_metadata(tree, default_url=url, extensive=False)
    content = trafilatura.extract(_readable(tree, url), url=url, **_OPTIONS)
    if not content:
        again = _readable(load_html(html), url)
        content = trafilatura.extract(again, url=url, favor_recall=True, **_OPTIONS)
    if not content:
        fresh = load_html(html)
        content = _visible_text(fresh) if fresh is not None else ""
    chosen = _page_title(tree, metadata.title if metadata else None, title)
    title = one_line(chosen) if chosen else None
    published = metadata.date if metadata else None
    return Extracted(content=content, title=title, published=published)


#: Elements a browser shows nothing of: the `hidden` attribute, `aria-hidden`, an inline
#: style of `display: none` or `visibility: hidden` / `collapse` in any case and spacing
#: (trafilatura drops only the lower-case ones), a `<template>` and a `<dialog>` not open. Text
#: a page hides so is no text of the page an agent should read. Not `opacity: 0` nor
#: `font-size: 0`: pages animate text in from the one, and a child sets its own size under the
#: other (the inline-block spacing trick), so either may be text the reader sees.
_HIDDEN = (
    '//*[@hidden or @aria-hidden="true" or contains({style}, "display:none")'
    ' or contains({style}, "visibility:hidden") or contains({style}, "visibility:collapse")]'
    " | //template[not(@shadowrootmode or @shadowroot)]"
    " | //dialog[not(@open)]"
).format(
    style='translate(translate(@style, " \t\n", ""), "ABCDEFGHIJKLMNOPQRSTUVWXYZ", '
    '"abcdefghijklmnopqrstuvwxyz")'
)


def _without_hidden(tree: Any) -> Any:
    """`tree` without the elements `_HIDDEN` finds (the text after each stays)."""
    for element in tree.xpath(_HIDDEN):
        parent = element.getparent()
        if parent is None:
            continue
        if element.tail:
            previous = element.getprevious()
            if previous is not None:
                previous.tail = (previous.tail or "") + element.tail
            else:
                parent.text = (parent.text or "") + element.tail
        parent.remove(element)
    return tree


def _readable(tree: Any, url: str) -> Any:
    """`tree` as it is read: without what a browser hides, its links absolute."""
    return _absolute_links(_without_hidden(tree), url) if tree is not None else None


def _absolute_links(tree: Any, url: str) -> Any:
    """`tree` with its links made absolute as a browser reads them: against the page's first
    `<base href>` (when it is an http(s) URL), else the page's own URL. trafilatura would join
    them to the host alone, so `setup.html` on `/docs/intro.html` would become `/setup.html`."""
    if tree is None:
        return None
    base = url
    found = tree.xpath("(//base[@href])[1]/@href")
    try:
        declared = urljoin(url, str(found[0]).strip()) if found else url
        if urlsplit(declared).scheme in ("http", "https"):
            base = declared
    except ValueError:  # a base no URL parser reads ("http://[x/") is ignored, as browsers do
        pass
    # Not `make_links_absolute`: it resolves against the last `<base>`, browsers the first.
    tree.rewrite_links(functools.partial(_joined, base), resolve_base_href=False)
    return tree


def _joined(base: str, href: str) -> str:
    try:
        return urljoin(base, href)
    except ValueError:  # a link no URL parser reads ("http://[x/") stays as written
        return href


def _count_nodes(tree: Any, limit: int) -> int:
    """The number of elements, counted up to just past `limit`."""
    count = 0
    for _ in tree.iter():
        count += 1
        if count > limit:
            break
    return count


#: Metadata that names a page's title in so many words (trafilatura reads it first).
_DECLARED_TITLE = (
    '//meta[@property="og:title" or @name="og:title" or @name="twitter:title"'
    ' or @property="twitter:title" or @name="title"]/@content'
)


def _page_title(tree: Any, chosen: str | None, tag: str | None) -> str | None:
    """trafilatura's title, unless it found none declared and took a heading that is no part of
    the page's `<title>`, or the `<title>`'s last part over a first part holding a dot: it takes
    a part with a dot for a domain name, so "What's new in Python 3.13" came out as the first h2,
    "Summary", and "Node.js 22 is out | Jane's blog" as "Jane's blog". A first part that is one
    word ("example.com - Garden tools") is a domain name and stays dropped."""
    if not chosen or not tag or tree.xpath(_DECLARED_TITLE):
        return chosen or tag
    if chosen not in tag:
        return tag
    before = tag[: -len(chosen)] if tag.endswith(chosen) else ""
    return tag if "." in before and len(before.split()) > 2 else chosen


def _title_tag(tree: Any) -> str | None:
    # The document's <title>, not an inline SVG's (an icon's tooltip: "Open menu").
    found = tree.xpath("//title[not(ancestor::svg)]")
    return one_line(found[0].text_content()) if found else None


def _visible_text(tree: Any) -> str:
    etree.strip_elements(tree, *_INVISIBLE, with_tail=False)
    _without_hidden(tree)
    body = tree.find(".//body")
    root = body if body is not None else tree
    lines = (line.strip() for line in "\n".join(root.itertext()).splitlines())
    return "\n".join(line for line in lines if line)
