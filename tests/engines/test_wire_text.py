"""Every engine's titles and snippets come out as a reader sees them, whatever markup the engine
sent: text with HTML-looking fragments and entities in it goes through each engine's wire format
(with highlighting tags and entity spellings of the engine's choosing where the format is HTML),
its parser and the merge, and comes out as the text that went in, whitespace collapsed."""

from __future__ import annotations

import html
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from testing.engine_answers import parse
from testing.wire_formats import RENDERERS, render, wikipedia_result
from websearch_mcp.engines.registry import ENGINES
from websearch_mcp.engines.text import SNIPPET_MAX_CHARS, clean_text, plain_hits, plain_text
from websearch_mcp.models import Hit, Query
from websearch_mcp.ranking.fusion import merge

URL = "https://docs.example.org/guide/page"
QUERY = Query("guide")
# What a reader may see in a title or snippet: text that looks like tags and entities included.
# No Markdown or date-prefix markers, which some parsers rightly take off.
FRAGMENTS = st.sampled_from(
    ["<b>", "</b>", "<br>", "a<i>b", "&amp;", "&lt;", "&#39;", "&", "<", ">", "x > y", "1 < 2"]
)
WORDS = st.lists(
    st.text(alphabet="abcXYZ019'\"/=;!é東", min_size=1, max_size=6) | FRAGMENTS,
    min_size=1,
    max_size=8,
)
SPACES = st.sampled_from([" ", "  ", "\n", "\t "])


@st.composite
def marked_up(draw: st.DrawFn, words: list[str]) -> tuple[str, str]:
    """The words as text a reader sees, and as HTML an engine may send for it: some words
    highlighted, characters escaped with named, decimal or hexadecimal entities."""
    text, markup = [], []
    for word in words:
        space = draw(SPACES)
        escaped = "".join(draw(_spellings(char)) for char in word)
        if draw(st.booleans()):
            escaped = f"<strong>{escaped}</strong>"
        text.append(word + space)
        markup.append(escaped + space)
    return "".join(text), "".join(markup)


def _spellings(char: str) -> st.SearchStrategy[str]:
    forms = {html.escape(char, quote=True), f"&#{ord(char)};", f"&#x{ord(char):x};"}
    if char not in "<>&\"'":
        forms.add(char)
    return st.sampled_from(sorted(forms))


def expected(text: str) -> str:
    return plain_text(text)


@settings(max_examples=60, deadline=None)
@given(st.data(), WORDS, WORDS)
def test_every_engine_hands_the_reader_the_text_it_shows(
    data: st.DataObject, title_words: list[str], snippet_words: list[str]
) -> None:
    title, title_html = data.draw(marked_up(title_words))
    snippet, snippet_html = data.draw(marked_up(snippet_words))
    result = {
        "url": URL,
        "title": title,
        "title_html": title_html,
        "snippet": snippet,
        "snippet_html": snippet_html,
    }
    lists: dict[str, list[Hit]] = {}
    for name in RENDERERS:
        if name == "wikipedia":  # titles are page names there: no markup, the URL made of it
            page = wikipedia_result("Guide page 1", snippet)
            given_result: dict[str, Any] = {**page, "snippet_html": snippet_html}
        else:
            given_result = result
        body, content_type = render(name, [given_result], QUERY.text)
        lists[name] = parse(ENGINES[name](), body, query=QUERY, content_type=content_type)
        assert len(lists[name]) == 1, name
        hit = lists[name][0]
        if name != "wikipedia":
            assert hit.title == expected(title), name
        assert hit.snippet == expected(snippet), name
    for item in merge(lists):
        assert item.snippet == expected(snippet)
        assert item.title == (expected(title) if item.url == URL else "Guide page 1")


def test_markup_is_made_plain_and_plain_text_kept() -> None:
    sent = "one  two <strong>three</strong> &lt;x&gt; &#x27;q&#x27;"
    marked = [Hit(sent, "https://a.example/", sent, 1, "brave")]
    plain = [Hit(sent, "https://a.example/", sent, 1, "tavily")]
    plain_hits(marked, markup=True)
    plain_hits(plain, markup=False)
    assert marked[0].title == marked[0].snippet == "one two three <x> 'q'"
    assert (
        plain[0].title
        == plain[0].snippet
        == "one two <strong>three</strong> &lt;x&gt; &#x27;q&#x27;"
    )


def test_a_title_left_empty_is_the_url_and_long_text_is_bounded() -> None:
    hits = [Hit("<b> </b>", "https://a.example/", "word " * SNIPPET_MAX_CHARS, 1, "e")]
    plain_hits(hits, markup=True)
    assert hits[0].title == "https://a.example/"
    assert len(hits[0].snippet) == SNIPPET_MAX_CHARS and hits[0].snippet.endswith("…")
    assert clean_text("a &amp;lt;b&amp;gt; c") == "a &lt;b&gt; c"  # unescaped once


def test_a_long_text_is_cut_to_the_limit_with_its_ellipsis() -> None:
    cut = plain_text("x" * (SNIPPET_MAX_CHARS + 100))
    assert len(cut) == SNIPPET_MAX_CHARS and cut == "x" * (SNIPPET_MAX_CHARS - 1) + "…"
    assert plain_text("x" * SNIPPET_MAX_CHARS) == "x" * SNIPPET_MAX_CHARS
    # One character over is cut too, and the ellipsis follows the last word, not a space.
    over = plain_text("x" * (SNIPPET_MAX_CHARS - 2) + " yy")
    assert over == "x" * (SNIPPET_MAX_CHARS - 2) + "…"


def test_a_long_chinese_text_with_one_latin_word_keeps_its_text_up_to_the_limit() -> None:
    # Chinese is cut between any two characters: the space before "iPhone 15" (a Baidu snippet's
    # model name) is no reason to drop the 200 characters of text after it.
    text = "苹果公司" * 70 + " iPhone 15 " + "发布会上介绍了新的摄像头系统和电池续航能力" * 20
    cut = plain_text(text)
    assert text.startswith(cut.removesuffix("…"))
    assert len(cut) > SNIPPET_MAX_CHARS - 10, (len(cut), cut[-20:])


def test_a_text_mixing_chinese_and_latin_words_is_cut_at_its_last_break() -> None:
    # A Latin word that ends where a Chinese character follows is whole: nothing to take back.
    ends_whole = "東" * 90 + " iPhone" + "東" * 50
    assert plain_text(ends_whole, 98) == "東" * 90 + " iPhone…"
    # Inside a Latin word: back to the last Chinese character, later than the last space.
    inside = "東" * 60 + " " + "東" * 30 + "x" * 20
    assert plain_text(inside, 100) == "東" * 60 + " " + "東" * 30 + "…"


@given(st.lists(st.text(alphabet="ab東", min_size=1, max_size=40), min_size=1, max_size=80))
def test_a_long_text_is_cut_after_a_whole_word_not_inside_one(words: list[str]) -> None:
    # As Crossref's abstracts and Google News's story lists came out: "...and gettin…",
    # "...reshape land m…". Passages are cut at words; a snippet should be too, unless its last
    # half holds no space (a long URL, text without spaces).
    text = " ".join(words)
    cut = plain_text(text, limit=100)
    if len(text) <= 100:
        assert cut == text
        return
    kept = cut.removesuffix("…")
    assert len(cut) <= 100 and kept and text.startswith(kept)
    # Chinese breaks after any of its characters, as at a space.
    whole = text[len(kept)] == " " or "東" in (text[len(kept)], kept[-1])
    assert whole or " " not in text[50:99], cut
