"""Main text of an HTML page as Markdown, with trafilatura.

Headings, lists, tables, emphasis and links are kept; navigation, ads, footers and other
boilerplate are dropped. The title and publication date come from the page's metadata.
"""

from __future__ import annotations

import trafilatura
from selectolax.lexbor import LexborHTMLParser
from trafilatura.utils import load_html

from websearch_mcp.fetch.document import Extracted

_OPTIONS = {
    "output_format": "markdown",
    "include_links": True,
    "include_tables": True,
    "include_formatting": True,
    "include_comments": False,
}


def extract_html(html: str | bytes, url: str) -> Extracted:
    """The page's main content. `html` as bytes lets trafilatura detect the encoding itself.

    When the extractor finds no main block even with recall favoured (a bare page, an index), the
    page's visible text is returned instead, so a page with text never comes back empty.
    """
    tree = load_html(html)
    if tree is None:
        return Extracted(content=_visible_text(html), title=_title_tag(html))
    metadata = trafilatura.extract_metadata(tree, default_url=url)
    content = trafilatura.extract(tree, url=url, **_OPTIONS)
    if not content:
        content = trafilatura.extract(load_html(html), url=url, favor_recall=True, **_OPTIONS)
    title = (metadata.title if metadata else None) or _title_tag(html)
    published = metadata.date if metadata else None
    return Extracted(content=content or _visible_text(html), title=title, published=published)


def _parser(html: str | bytes) -> LexborHTMLParser:
    return LexborHTMLParser(html if isinstance(html, str) else html.decode("utf-8", "replace"))


def _title_tag(html: str | bytes) -> str | None:
    node = _parser(html).css_first("title")
    text = node.text(strip=True) if node else ""
    return text or None


def _visible_text(html: str | bytes) -> str:
    parser = _parser(html)
    parser.strip_tags(["script", "style", "noscript", "template", "svg"])
    root = parser.body or parser.root
    if root is None:
        return ""
    lines = (line.strip() for line in root.text(separator="\n").splitlines())
    return "\n".join(line for line in lines if line)
