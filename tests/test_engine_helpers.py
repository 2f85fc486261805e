"""The shared hit builder of the web engines' parsers."""

from __future__ import annotations

from websearch_mcp.engines.common import http_url, ranked_hits, web_hit


def test_a_result_without_a_url_makes_no_hit_and_leaves_no_gap_in_the_ranks() -> None:
    items = [
        {"url": "https://a.example/", "title": "<b>A</b> &amp; co"},
        {"url": "javascript:void(0)", "title": "not a link"},
        {"url": None, "title": "no link"},
        {"url": "//b.example/x", "title": ""},
    ]
    hits = ranked_hits(
        items,
        "e",
        lambda item, rank, engine: web_hit(http_url(item["url"]), item["title"], "", rank, engine),
    )
    assert [(h.url, h.title, h.rank) for h in hits] == [
        ("https://a.example/", "A & co", 1),
        ("https://b.example/x", "https://b.example/x", 2),  # no title: the URL stands for it
    ]
