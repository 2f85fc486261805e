"""Text as engines send it, made plain: tags stripped and entities unescaped where the engine
sends markup, whitespace collapsed, length bounded. `plain_hits` does it to every title and
snippet a parser returns, once, before anything reads them (`Engine.hits`): parsers hand over
the text as the engine sent it, markup or plain, as the engine declares."""

from __future__ import annotations

import html
import re
from collections.abc import Iterable

from websearch_mcp.models import Hit
from websearch_mcp.text_encoding import markdown_words, visible

SNIPPET_MAX_CHARS = 500
# Characters of scripts written without spaces between words: a text may break after any one.
_UNSPACED = re.compile(r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]")

# A tag opens with a letter, "/", "!" or "?" after the "<" (as HTML reads it): "p < 0.05 and
# n > 30" in an abstract is text, and so is "</3" in text already decoded. An end tag whose name
# a control character broke is markup (HTML reads it as a comment), not its words.
_TAG_RE = re.compile(r"<(?:/?[A-Za-z]|/[\x00-\x1f\x7f-\x9f]|[!?])[^>]*>")
# Highlighting tags sit inside words ("hello-<b>world</b>.com"): drop them without a space. So
# do JATS's inline tags, which Crossref's abstracts carry ("CO<jats:sub>2</jats:sub>").
_INLINE_TAG_RE = re.compile(
    r"</?(?:(?:jats:)?(?:a|abbr|b|bold|code|em|i|inf|inline-formula|italic|mark|monospace|q|s"
    r"|sc|scp|small|span|strong|sub|sup|u|underline)|mml:[\w.-]+|math)(?:\s[^>]*)?/?>",
    re.IGNORECASE,
)


def plain_hits(hits: Iterable[Hit], *, markup: bool) -> None:
    """Every hit's title and snippet made plain, in place (those of the reports grouped with it
    too): `clean_text` when the engine sends markup, else `plain_text` (a literal "<b>" in plain
    text is text), Markdown links and images reduced to their words (in the publisher, venue and
    author names too). A title that is empty then is the URL."""
    tidy = clean_text if markup else plain_text
    for hit in hits:
        hit.title = _words(tidy(hit.title)) or hit.url
        hit.snippet = _words(tidy(hit.snippet))
        # Shown beside them: a news result's publisher, a paper's venue and authors.
        hit.source = _words(hit.source) if hit.source else hit.source
        hit.venue = _words(hit.venue) if hit.venue else hit.venue
        hit.authors = tuple(name for a in hit.authors if (name := _words(a)))
        plain_hits(hit.grouped, markup=markup)


def _words(text: str) -> str:
    """`markdown_words`, its spaces collapsed again where a link went."""
    found = markdown_words(text)
    return text if found is text else collapse_spaces(found)


def clean_text(value: object, limit: int = SNIPPET_MAX_CHARS) -> str:
    """Markup made plain: HTML tags stripped, entities unescaped, whitespace collapsed, bounded
    length. Anything but a string (an engine's number or list where text belongs) is no text."""
    return plain_text(html_text(value), limit) if value and isinstance(value, str) else ""


def html_text(value: str) -> str:
    """An HTML fragment's text: tags stripped (highlighting inside a word without a space),
    entities unescaped once, so that a page's literal "&lt;b&gt;" stays "<b>"."""
    text = value
    if "<" in text:
        text = _sub_tags(_TAG_RE, " ", _sub_tags(_INLINE_TAG_RE, "", text))
    if "&" in text:  # what `html.unescape` first tests, without the call
        text = html.unescape(text)
    return text


def _sub_tags(pattern: re.Pattern[str], replacement: str, text: str) -> str:
    """`pattern.sub` on the text up to its last ">", where every tag ends: a "<" after it opens
    none, and the search would read on from each such "<" to the end (a time growing with the
    square of the text's length)."""
    end = text.rfind(">") + 1
    return pattern.sub(replacement, text[:end]) + text[end:]


def plain_text(value: object, limit: int = SNIPPET_MAX_CHARS) -> str:
    """Plain text with its whitespace collapsed, bounded length; anything but a string is no
    text."""
    if not value or not isinstance(value, str):
        return ""
    text = collapse_spaces(value)
    if not text.isprintable():  # control or format characters, whitespace collapsed already
        # Bounded first: a page of invisible characters is read once, not character by character.
        text = collapse_spaces(visible(text[: limit * 4]))
    if len(text) > limit:
        cut = text[: limit - 1]
        if not (text[limit - 1].isspace() or _UNSPACED.match(text, limit - 1)):
            # Inside a word: the words before it. Chinese or Japanese text breaks after any of
            # its characters, not only at a space.
            after = [m.end() for m in _UNSPACED.finditer(cut, limit // 2)]
            at = max(cut.rfind(" ", limit // 2), after[-1] if after else -1)
            if at >= limit // 2:
                cut = cut[:at]
        text = cut.rstrip() + "…"
    return text


def collapse_spaces(text: str) -> str:
    """Every run of whitespace one space, the ends trimmed. `split()` breaks on exactly what `\\s`
    matches and is faster than a substitution; most texts have nothing to collapse, and saying so
    (no whitespace but single inner spaces) is cheaper than splitting."""
    if text.isascii():
        # The ASCII whitespace `split()` breaks on, but " ": a few C-level searches, cheaper
        # than a look-up per character.
        other = (
            "\n" in text
            or "\t" in text
            or "\r" in text
            or "\x0b" in text
            or "\x0c" in text
            or "\x1c" in text
            or "\x1d" in text
            or "\x1e" in text
            or "\x1f" in text
        )
    else:
        other = not text.isprintable()  # False for every whitespace character but " "
    if not other and "  " not in text and text[:1] != " " and text[-1:] != " ":
        return text
    return " ".join(text.split())
