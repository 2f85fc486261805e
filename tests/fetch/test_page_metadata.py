"""fetch_page's title, published date and decoding on common page shapes."""

from __future__ import annotations

import json
from collections.abc import Iterator

import pytest

from testing.fetch_helpers import LocalServer, page, send, settings_for
from websearch_mcp.fetch import FetchError, fetch_page
from websearch_mcp.fetch.htmltext import extract_html

PARAGRAPH = (
    "<p>The northern rivers carry meltwater from the glaciers to the sea, and their flow has "
    "doubled over the last three decades according to the regional hydrology survey.</p>"
)


@pytest.fixture
def server() -> Iterator[LocalServer]:
    with LocalServer() as running:
        yield running


def test_a_copyright_year_is_not_a_publication_date() -> None:
    # Nearly every page has a "(c) <year>" footer; the page says nothing of when it was published.
    html = (
        "<html><head><title>Rivers</title></head><body><article><h1>Rivers</h1>"
        f"{PARAGRAPH}</article><footer><p>© 2019 Example News</p></footer></body></html>"
    )
    assert extract_html(html, "https://example.com/rivers").published is None


def test_a_date_told_in_the_article_is_not_its_publication_date() -> None:
    html = (
        "<html><head><title>Floods</title></head><body><article><h1>Floods</h1>"
        f"{PARAGRAPH}<p>The great flood of 12 June 2010 destroyed the bridge at Alta.</p>"
        "</article></body></html>"
    )
    assert extract_html(html, "https://example.com/floods").published is None


@pytest.mark.parametrize(
    ("head", "body", "url", "published"),
    [
        (
            '<meta property="article:published_time" content="2023-05-06T10:00:00Z">',
            "",
            "/a",
            "2023-05-06",
        ),
        (
            '<script type="application/ld+json">{"@type": "NewsArticle", "headline": "H",'
            ' "datePublished": "2022-02-03T08:00:00+01:00"}</script>',
            "",
            "/a",
            "2022-02-03",
        ),
        ("", '<time datetime="2021-07-08">July 8, 2021</time>', "/a", "2021-07-08"),
        ("", "<p class='byline'>Published March 5, 2023 by Jane</p>", "/a", "2023-03-05"),
        ("", "", "/2020/04/05/rivers", "2020-04-05"),
    ],
)
def test_dates_the_page_does_give_are_still_found(
    head: str, body: str, url: str, published: str
) -> None:
    html = (
        f"<html><head><title>Rivers</title>{head}</head><body><article>{body}{PARAGRAPH}"
        "</article><footer><p>© 2024 Example News</p></footer></body></html>"
    )
    assert extract_html(html, f"https://example.com{url}").published == published


def test_an_icon_title_is_not_the_page_title() -> None:
    # No <title>, no heading: an inline SVG icon's <title> (its tooltip) names no page.
    html = (
        "<html><head><meta charset='utf-8'></head><body><header><svg viewBox='0 0 8 8'>"
        "<title>Open menu</title><path d='M0 0h8'/></svg></header>"
        f"<article>{PARAGRAPH}</article></body></html>"
    )
    assert extract_html(html, "https://example.com/x").title is None


async def test_xml_is_read_in_the_encoding_its_declaration_names(server: LocalServer) -> None:
    feed = (
        '<?xml version="1.0" encoding="ISO-8859-1"?>\n'
        "<rss><channel><title>Café</title></channel></rss>"
    )
    server.routes["/feed"] = page(feed.encode("latin-1"), "application/rss+xml")
    result = await fetch_page(server.url("/feed"), settings=settings_for(server))
    assert result["content"] == feed


async def test_html_is_read_in_the_encoding_its_meta_tag_names(server: LocalServer) -> None:
    # The header names no charset: the page's own <meta charset> says how it is encoded.
    html = (
        "<html><head><meta charset='iso-8859-1'><title>Café</title></head><body><article>"
        + "<p>Le café crème est très bon à Paris, dit le guide de la ville.</p>" * 5
        + "</article></body></html>"
    )
    server.routes["/latin"] = page(html.encode("latin-1"), "text/html")
    result = await fetch_page(server.url("/latin"), settings=settings_for(server))
    assert "Le café crème est très bon à Paris" in result["content"]
    assert result["title"] == "Café"


async def test_text_with_a_byte_order_mark_is_read_in_its_encoding(server: LocalServer) -> None:
    server.routes["/notes"] = page("héllo wörld".encode("utf-16"), "text/plain")
    result = await fetch_page(server.url("/notes"), settings=settings_for(server))
    assert result["content"] == "héllo wörld"


async def test_text_from_the_reader_is_capped_like_extracted_text(server: LocalServer) -> None:
    server.routes["/blocked"] = lambda h: send(h, 403, b"denied", "text/html")
    big = "word " * 2000  # 10,000 characters
    server.routes["/reader/*"] = lambda h: send(
        h, 200, json.dumps({"data": {"content": big}}).encode(), "application/json"
    )
    settings = settings_for(
        server, reader_fallback=True, reader_base_url=server.url("/reader"), max_text_chars=1000
    )
    result = await fetch_page(server.url("/blocked"), settings=settings, max_chars=200_000)
    assert result["via"] == "reader"
    assert result["total_chars"] == 1000
    assert "max_text_chars" in result["capped"]
    # The reader's answer is held to fetch.max_bytes, as a page is.
    small = settings.model_copy(update={"max_bytes": 4096})
    with pytest.raises(FetchError, match="reader fallback failed too: too large"):
        await fetch_page(server.url("/blocked"), settings=small)


@pytest.mark.parametrize(
    ("head", "body", "title"),
    [
        # trafilatura passes over a <title> holding a dot and took the first h2, or first h1.
        (
            "<title>What's new in Python 3.13</title>",
            f"<article><h2>Summary</h2>{PARAGRAPH}<h2>New features</h2>{PARAGRAPH}</article>",
            "What's new in Python 3.13",
        ),
        (
            "<title>Upgrading to v2.0</title>",
            f"<header><h1>Example Blog</h1></header><article><h1>Upgrading to v2.0</h1>"
            f"{PARAGRAPH}</article>",
            "Upgrading to v2.0",
        ),
        # It kept the part after a separator when the part before held a dot; a site's bare
        # domain name before a separator is still dropped.
        (
            "<title>Node.js 22 is out | Jane's blog</title>",
            f"<article><h2>Summary</h2>{PARAGRAPH}</article>",
            "Node.js 22 is out | Jane's blog",
        ),
        (
            "<title>example.com - Garden tools</title>",
            f"<article>{PARAGRAPH}</article>",
            "Garden tools",
        ),
        # A title the page declares, and its one heading when <title> holds it, stay.
        (
            '<title>Rivers 2.0 | Site</title><meta property="og:title" content="Rivers, again">',
            f"<article><h2>Summary</h2>{PARAGRAPH}</article>",
            "Rivers, again",
        ),
        (
            "<title>Glaciers v1.2 - Example News</title>",
            f"<article><h1>Glaciers v1.2</h1>{PARAGRAPH}</article>",
            "Glaciers v1.2",
        ),
    ],
)
def test_a_title_holding_a_dot_is_still_the_pages_title(head: str, body: str, title: str) -> None:
    html = f"<html><head>{head}</head><body>{body}</body></html>"
    assert extract_html(html, "https://example.com/post").title == title
