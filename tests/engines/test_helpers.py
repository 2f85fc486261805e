"""The shared helpers of the web engines' parsers: the hit builder, text clean-up, links."""

from __future__ import annotations

import base64
import html
import json
import re
import time
from datetime import UTC, date, datetime
from typing import Any
from urllib.parse import parse_qs, quote, urlsplit
from urllib.parse import unquote_plus as urllib_unquote_plus

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from selectolax.lexbor import LexborHTMLParser

from websearch_mcp.dates import _partial_date, before_range, iso_date, publication_date
from websearch_mcp.engines.base import parse_retry_after
from websearch_mcp.engines.common import (
    _MD_EMPHASIS_RE,
    _MD_HEADING_RE,
    _MD_ITALIC_RE,
    ResultBlocks,
    api_error,
    first_text,
    http_url,
    json_body,
    link_parts,
    query_value,
    ranked_hits,
    strip_markdown,
    unquote_plus,
    web_hit,
)
from websearch_mcp.engines.text import (
    _INLINE_TAG_RE,
    _TAG_RE,
    clean_text,
    collapse_spaces,
    plain_hits,
)
from websearch_mcp.engines.web import bing, duckduckgo, google
from websearch_mcp.errors import EngineAuthError, EngineParseError, EngineRateLimited
from websearch_mcp.models import Hit, HttpResponse
from websearch_mcp.text_encoding import MARKDOWN_LINK


def test_a_result_without_a_url_makes_no_hit_and_leaves_no_gap_in_the_ranks() -> None:
    items: list[dict[str, str | None]] = [
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
    plain_hits(hits, markup=True)
    assert [(h.url, h.title, h.rank) for h in hits] == [
        ("https://a.example/", "A & co", 1),
        ("https://b.example/x", "https://b.example/x", 2),  # no title: the URL stands for it
    ]


def _people_hit(item: dict[str, Any], rank: int, engine: str) -> Hit | None:
    authors = tuple(a["name"] for a in item.get("authors") or [])
    return web_hit(http_url(item["url"]), ", ".join(authors), "", rank, engine)


def test_a_result_of_an_unexpected_shape_is_skipped_and_only_such_results_are_an_error() -> None:
    good: dict[str, Any] = {"url": "https://a.example/", "authors": [{"name": "Ada"}]}
    odd: dict[str, Any] = {"url": "https://b.example/", "authors": 7}  # a list belongs here
    strings: dict[str, Any] = {"url": "https://c.example/", "authors": ["Bo"]}  # objects do
    hits = ranked_hits([odd, good, strings], "e", _people_hit)
    assert [(h.url, h.rank) for h in hits] == [("https://a.example/", 1)]
    with pytest.raises(EngineParseError, match="e answered with results of an unexpected shape"):
        ranked_hits([odd], "e", _people_hit)
    assert ranked_hits([], "e", _people_hit) == []


def test_a_result_that_is_no_object_or_holds_an_unreadable_value_is_skipped() -> None:
    def dated_hit(item: dict[str, Any], rank: int, engine: str) -> Hit | None:
        year = int(item.get("year") or 0)  # a year that is no number: ValueError
        return web_hit(http_url(item["url"]), str(year), "", rank, engine)

    good: dict[str, Any] = {"url": "https://a.example/", "year": "2024"}
    items: list[Any] = [["https://b.example/"], {"url": "https://c.example/", "year": "soon"}, good]
    assert [(h.url, h.rank) for h in ranked_hits(items, "e", dated_hit)] == [
        ("https://a.example/", 1)
    ]


def test_text_of_another_type_is_no_text_in_a_plain_text_engine_either() -> None:
    hit = web_hit("https://a.example/", 2024, ["a", "list"], 1, "e")  # type: ignore[arg-type]
    assert hit is not None
    plain_hits([hit], markup=False)
    assert (hit.title, hit.snippet) == ("https://a.example/", "")


def test_html_comments_and_processing_instructions_are_markup() -> None:
    assert clean_text("a <!-- note --> b <?xml version='1.0'?> c <!DOCTYPE html> d") == "a b c d"


def test_an_end_tag_whose_name_does_not_start_with_a_letter_is_markup_too() -> None:
    # HTML reads it as a comment: the control character, once dropped, left a tag's words
    # ("</pan>") in the text. "</3" in text already decoded stays text.
    assert clean_text("a</\x7fspan>b c</\x1bb>d") == "a b c d"
    assert clean_text("I </3 this > that") == "I </3 this > that"


def test_a_less_than_sign_in_marked_up_text_opens_no_tag() -> None:
    """An abstract's "p < 0.05 and n > 30" is text, not a tag to strip."""
    sent = "effect at p < 0.05 and n > 30 in <b>all</b> arms, 3<4"
    assert clean_text(sent) == "effect at p < 0.05 and n > 30 in all arms, 3<4"


def test_a_snippet_of_unclosed_tags_is_read_in_linear_time() -> None:
    # A "<" after the last ">" opens no tag: searching on from each to the end took seconds.
    text = "<b>pgvector</b> index " + "<a" * 100_000
    start = time.perf_counter()
    assert clean_text(text, 100).startswith("pgvector index <a<a")
    assert time.perf_counter() - start < 1.0


@pytest.mark.parametrize("value", [2024, 3.5, True, ["a", "list"], {"text": "an object"}])
def test_text_of_another_type_is_no_text(value: Any) -> None:
    hit = web_hit("https://a.example/", value, value, 1, "e")
    assert hit is not None
    plain_hits([hit], markup=True)
    assert (hit.title, hit.snippet) == ("https://a.example/", "")
    assert clean_text(value) == ""


_QUERY_PARTS = ["u", "uddg", "q", "=", "&", "+", "%75", "%2B", "%zz", "a1", "x", "é", "%C3%A9", ";"]
# Escapes that decode to broken UTF-8 on their own or next to others, and escapes cut short.
_ESCAPE_PARTS = [*_QUERY_PARTS, "%E4", "%b8", "%AD", "%F0%9F", "%98", "%", "%4", "%FF", "%00", "中"]


@settings(max_examples=1000)
@given(st.lists(st.sampled_from(_ESCAPE_PARTS), max_size=16).map("".join))
def test_unquote_plus_decodes_as_the_library_does(text: str) -> None:
    assert unquote_plus(text) == urllib_unquote_plus(text)


@settings(max_examples=500)
@given(st.lists(st.sampled_from(_QUERY_PARTS), max_size=14).map("".join))
def test_query_value_reads_a_parameter_as_parse_qs_does(query: str) -> None:
    parsed = parse_qs(query)
    for name in ("u", "uddg", "q", "x"):
        assert query_value(query, name) == parsed.get(name, [None])[0]


_LINK_STARTS = ["https://", "http://", "//", "/url?", "HTTPS://", " https://"]
_LINK_PARTS = [*"aZ09.-_:@[]%/?#&=+\t\n ", "é", "bing.com", "::1", "www.", "ck/a", "l/?uddg="]


@settings(max_examples=1000)
@given(st.sampled_from(_LINK_STARTS), st.lists(st.sampled_from(_LINK_PARTS), max_size=16))
def test_link_parts_reads_a_link_as_urlsplit_does(start: str, parts: list[str]) -> None:
    url = start + "".join(parts)
    try:
        split = urlsplit(url)
        expected = (split.hostname or "", split.path, split.query)
    except ValueError:  # a malformed bracketed host
        with pytest.raises(ValueError):
            link_parts(url)
        return
    assert link_parts(url) == expected


_TEXT_PARTS = [*"ab <>/&;#\t\n\xa0\u2003\x1c\x85", "<b>", "</b>", "&amp;", "&#32;", "&nbsp;"]
_SPACE = re.compile(r"\s+")


@settings(max_examples=500)
@given(st.lists(st.sampled_from([*_TEXT_PARTS, "<span class=x>"]), max_size=30).map("".join))
def test_clean_text_collapses_exactly_the_whitespace_a_regex_would(value: str) -> None:
    # The reference: tags out, entities unescaped, every run of `\s` one space, ends trimmed.
    tags_out = _TAG_RE.sub(" ", _INLINE_TAG_RE.sub("", value))
    assert clean_text(value, 10_000) == _SPACE.sub(" ", html.unescape(tags_out)).strip()


_SPACES = [chr(c) for c in range(0x110000) if chr(c).isspace()]


@settings(max_examples=500)
@given(st.text(st.one_of(st.characters(), st.sampled_from(_SPACES), st.just("a"))))
def test_collapse_spaces_is_splitting_and_joining(value: str) -> None:
    # Its shortcut (nothing to collapse) must never skip a text that splitting would change.
    assert collapse_spaces(value) == " ".join(value.split()) == _SPACE.sub(" ", value).strip()


@settings(max_examples=500)
@given(st.text(st.characters(max_codepoint=127)))
def test_collapse_spaces_is_splitting_and_joining_for_ascii(value: str) -> None:
    # ASCII text takes a shortcut of its own: every ASCII character, spaces and controls.
    assert collapse_spaces(value) == " ".join(value.split()) == _SPACE.sub(" ", value).strip()


def _element(tag: str, cls: str, children: list[str]) -> str:
    return f'<{tag} class="{cls}">{"".join(children)}</{tag}>'


# Pages of result blocks (`div.r`), some inside others, holding elements whose classes and tags
# the parts below look for; outside the blocks, only wrappers that no part names.
_INSIDE = st.recursive(
    st.builds(_element, st.sampled_from(["div", "a", "p", "h2", "li", "span"]),
              st.sampled_from(["x", "c", ""]), st.just([])),
    lambda children: st.one_of(
        st.builds(_element, st.sampled_from(["div", "a", "p", "h2", "li", "span"]),
                  st.sampled_from(["x", "c", ""]), st.lists(children, max_size=3)),
        st.builds(_element, st.just("div"), st.just("r"), st.lists(children, max_size=3)),
    ),
    max_leaves=12,
)  # fmt: skip
_BLOCK = st.builds(_element, st.just("div"), st.just("r"), st.lists(_INSIDE, max_size=3))
_PAGE = st.lists(
    st.recursive(
        _BLOCK,
        lambda children: st.builds(
            _element,
            st.sampled_from(["main", "section"]),
            st.just(""),
            st.lists(children, max_size=3),
        ),
        max_leaves=8,
    ),
    max_size=5,
).map("".join)


@settings(max_examples=300)
@given(_PAGE, st.sampled_from(["a.x", ".x", "p", "li", ".c a", "h2 a", "h2 > a", ".c .x p"]))
def test_result_blocks_find_what_css_first_finds_in_each_block(page: str, part: str) -> None:
    tree = LexborHTMLParser(f"<html><body>{page}</body></html>")
    blocks = ResultBlocks(tree, "div.r")
    expected = [block.css_first(part) for block in blocks.nodes]
    found = blocks.first(part)
    assert [n and n.mem_id for n in found] == [n and n.mem_id for n in expected]


_MARKDOWN_PARTS = [*"ab []()#*_!\n\t", "**", "__", "](", "## ", "[x](https://e.example/a)"]


@settings(max_examples=500)
@given(st.lists(st.sampled_from(_MARKDOWN_PARTS), max_size=20).map("".join))
def test_strip_markdown_does_what_its_four_substitutions_do(value: str) -> None:
    # The reference runs every substitution; the function skips those whose marker is absent.
    expected = MARKDOWN_LINK.sub(r"\1", value)
    expected = _MD_EMPHASIS_RE.sub("", _MD_HEADING_RE.sub(r"\1", expected))
    expected = _MD_ITALIC_RE.sub(r"\1", expected)
    assert strip_markdown(value) == expected


def test_strip_markdown_keeps_link_text_and_drops_headings_and_emphasis() -> None:
    text = "## Intro **bold** see [the docs](https://e.example/a_(b)) and __this__ #tag"
    assert strip_markdown(text) == " Intro bold see the docs and this #tag"
    # A link's text holds no "[": only the innermost bracket is the link's, as in CommonMark.
    assert strip_markdown("see [a [b](https://x.example) c") == "see [a b c"


@pytest.mark.parametrize(
    "body",
    [
        b'{"results": [{"title": "t", "score": 0.5}]}',
        b'{"score": NaN, "n": 123456789012345678901234567890}',  # the fast parser refuses these
        '{"title": "\u00e9"}'.encode("utf-16"),
    ],
)
def test_json_bodies_read_as_the_json_module_reads_them(body: bytes) -> None:
    response = HttpResponse(status=200, headers={}, content=body, url="")
    assert repr(json_body(response)) == repr(json.loads(body))


def test_a_body_that_is_not_json_is_none() -> None:
    assert json_body(HttpResponse(status=200, headers={}, content=b"<html>", url="")) is None


@pytest.mark.parametrize("engine", [bing, duckduckgo, google])
@pytest.mark.parametrize("href", [None, "", "javascript:void(0)", "/relative/path", "mailto:a@b"])
def test_result_links_that_are_not_web_addresses_make_no_url(engine: Any, href: str | None) -> None:
    assert engine.result_url(href) is None


def test_redirect_links_unwrap_to_their_target() -> None:
    target = "https://example.org/page?a=1&b=2"
    encoded = base64.urlsafe_b64encode(target.encode()).decode().rstrip("=")
    assert bing.result_url(f"https://www.bing.com/ck/a?!&&p=x&u=a1{encoded}&ntb=1") == target
    assert duckduckgo.result_url(f"//duckduckgo.com/l/?uddg={quote(target, safe='')}") == target
    assert duckduckgo.result_url("https://example.org/?ad_domain=x") is None
    assert google.result_url(f"/url?q={quote(target, safe='')}&sa=U") == target


@settings(max_examples=1000)
@given(
    st.integers(-1, 10_000),
    st.none() | st.integers(-1, 13),
    st.none() | st.integers(-1, 32),
)
def test_a_partial_date_prints_the_numbers_it_was_given(
    year: int, month: int | None, day: int | None
) -> None:
    try:
        date(year, 1 if month is None else month, 1 if day is None else day)
    except ValueError:  # a month or day of 0 too: "2019-00-00" is no date
        assert _partial_date(year, month, day) is None
        return
    expected = f"{year:04d}" + (f"-{month:02d}" if month is not None else "")
    expected += f"-{day:02d}" if month is not None and day is not None else ""
    assert _partial_date(year, month, day) == expected


@pytest.mark.parametrize(
    ("published", "time_range", "before"),
    [
        ("2026-06-12", "day", True),
        ("2026-06-13", "day", False),  # published late that day, perhaps
        ("2026-06-13T23:00:00Z", "day", False),
        ("2026-06-07", "week", False),
        ("2026-06-06", "week", True),
        ("2026-05-14", "month", False),
        ("2026-05-13", "month", True),
        ("2025-06-13", "year", False),  # 366 days back: a leap year's first day
        ("2025-06-12", "year", True),
        ("2025-06", "year", False),  # any day of that month may be in the year
        ("2025-05", "year", True),
        ("2025", "year", False),
        ("2024", "year", True),
        ("2062-01-01", "day", False),
    ],
)
def test_a_date_is_before_a_time_range_only_when_all_it_may_mean_is(
    published: str, time_range: str, before: bool
) -> None:
    assert before_range(published, time_range, date(2026, 6, 14)) is before


@pytest.mark.parametrize(
    "stamp",
    ["2024-05-07", "2024-05-07T23:30:00Z", "2024-05-07 23:30:00", "Tue, 07 May 2024 23:30:00 GMT"],
)
def test_an_engines_stamp_is_read_as_its_day(stamp: str) -> None:
    assert iso_date(stamp) == "2024-05-07"


@pytest.mark.parametrize(
    ("value", "url"),
    [
        (" https://example.org/a \n", "https://example.org/a"),
        ("https://example.org/a\tb", "https://example.org/ab"),
        ("https://example.org/a\rb", "https://example.org/ab"),
        ("//example.org/a", "https://example.org/a"),
        ("\thttp://[fe80::1/a", None),
        ("http://[::1]/a", "http://[::1]/a"),
        ("http://exa\uff03mple.org/a", None),  # the host reads "exa#mple.org" once normalised
        ("http://bücher.example/a", "http://bücher.example/a"),
        ("ftp://example.org/a", None),
    ],
)
def test_a_result_link_is_the_http_link_a_browser_opens(value: str, url: str | None) -> None:
    # Surrounding space, and tabs and line breaks anywhere, go as a browser drops them.
    assert http_url(value) == url


@pytest.mark.parametrize(
    ("header", "seconds"),
    [
        ("30", 30.0),
        (" 1.5 ", 1.5),
        ("-4", 0.0),
        ("inf", 86_400.0),
        ("1e400", 86_400.0),
        ("nan", None),
        ("Wed, 21 Oct 2026 07:28:00 GMT", 90.0),
        ("Wed, 21 Oct 2026 07:26:00 GMT", 0.0),
        ("Thu, 22 Oct 2026 07:26:31 GMT", 86_400.0),
        ("Wed, 21 Oct 2026 09:28:00 +0200", 90.0),
        ("Wed, 21 Oct 2026 07:28:00 -0000", 90.0),
        ("Wed, 32 Oct 2026 07:28:00 GMT", None),
        ("soon", None),
        ("", None),
        (None, None),
    ],
)
def test_retry_after_is_seconds_or_a_date_from_none_to_a_day(
    header: str | None, seconds: float | None
) -> None:
    now = datetime(2026, 10, 21, 7, 26, 30, tzinfo=UTC)
    assert parse_retry_after(header, now) == seconds


def test_markdown_italics_lose_their_stars_and_other_stars_stay() -> None:
    assert strip_markdown('an *emphasised* word, *"a quote."*.') == (
        'an emphasised word, "a quote.".'
    )
    for kept in ("2 * 3 * 4", "*nix and *BSD", "* item one\n* item two", "a*b*c"):
        assert strip_markdown(kept) == kept


def test_as_float_takes_only_finite_numbers() -> None:
    from websearch_mcp.engines.common import as_float

    assert as_float(3) == 3.0 and as_float(0.5) == 0.5
    for value in (float("inf"), float("-inf"), float("nan"), True, "1.0", None):
        assert as_float(value) is None, value


def test_a_429_is_rate_limited_whatever_words_the_api_explains_it_in() -> None:
    """A 429 is the engine asking to wait, in words the quota patterns need not know; a 401 or
    403 is a refused key, likewise."""
    waiting = HttpResponse(status=429, headers={"retry-after": "30"}, content=b"", url="")
    error = api_error("Please wait before sending more", waiting)
    assert type(error) is EngineRateLimited and error.retry_after == 30.0
    refused = HttpResponse(status=403, headers={}, content=b"", url="")
    assert type(api_error("Unknown client", refused)) is EngineAuthError


def test_the_first_selector_with_text_gives_it_an_empty_element_passed_over() -> None:
    """A block whose first snippet element is empty (an engine's layout variant) takes the
    text of the next selector that finds some."""
    tree = LexborHTMLParser(
        '<div class="g"><div class="VwiC3b"> </div><span class="st">The snippet.</span></div>'
    )
    block = tree.css_first("div.g")
    assert block is not None
    assert first_text(block, ("div.VwiC3b", "span.st")) == "The snippet."
    assert first_text(block, ("div.VwiC3b", "span.none")) == ""


def test_a_year_given_as_a_number_is_read_only_with_four_digits() -> None:
    assert publication_date(2004) == "2004"
    assert publication_date(5) is None and publication_date(999) is None
