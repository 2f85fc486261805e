"""Text between bytes and characters: the encodings a declared charset may name, text that
UTF-8 can carry, and text an agent can see.

A charset is read only when it names an encoding of the WHATWG Encoding Standard, which browsers
read pages in, as Python's codecs. Python's codec registry holds more than encodings of text:
`punycode` takes time growing with the square of its input (a 10 MiB page would hold a thread
for hours), and `idna`, `utf-7`, `rot13` or `hz` are no page's encoding. A label outside the
standard's encodings counts as no label, as in a browser.

A half of a UTF-16 surrogate pair is no character, and neither UTF-8 nor JSON can carry one: an
answer holding one cannot be sent or cached. They come from JSON escapes (an API that cut a
string between the halves of an emoji: `"\\ud83d"`), broken PDF fonts and readers; they are made
whole.

Control and format characters show nothing, or something else than the text says: an escape
sequence clears a terminal, a right-to-left override shows "fdp.exe" as "exe.pdf", a zero-width
space splits a word unseen. Text shown to an agent keeps none of them.
"""

from __future__ import annotations

import codecs
import re
import unicodedata
from typing import Any

#: Python's names of the standard's encodings (UTF-32 comes only from a byte-order mark).
_WEB_CODECS = frozenset(
    {
        "utf-8",
        "utf-8-sig",
        "utf-16",
        "utf-16-le",
        "utf-16-be",
        "utf-32",
        "utf-32-le",
        "utf-32-be",
        "ascii",
        "cp866",
        "cp874",
        "tis-620",
        "koi8-r",
        "koi8-u",
        "mac-roman",
        "mac-cyrillic",
        "gbk",
        "gb2312",
        "gb18030",
        "big5",
        "big5hkscs",
        "euc_jp",
        "iso2022_jp",
        "shift_jis",
        "cp932",
        "euc_kr",
        "cp949",
        *(f"iso8859-{n}" for n in (1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 13, 14, 15, 16)),
        *(f"cp{n}" for n in range(1250, 1259)),
    }
)

#: The standard's labels that Python's codecs do not know by that name.
_WEB_LABELS = {
    "windows-874": "cp874",
    "dos-874": "cp874",
    "windows-31j": "cp932",
    "x-sjis": "cp932",
    "x-euc-jp": "euc_jp",
    "windows-949": "cp949",
    "x-gbk": "gbk",
    "x-x-big5": "big5hkscs",
    "cn-big5": "big5hkscs",
    "x-mac-cyrillic": "mac-cyrillic",
    "x-mac-ukrainian": "mac-cyrillic",
    "koi8-ru": "koi8-u",
    **{f"x-cp{n}": f"cp{n}" for n in range(1250, 1259)},
}

#: Encodings whose labels browsers read as a larger encoding: pages labelled Shift_JIS or
#: GB2312 are written in it, and the strict codec would turn common characters (①, 髙, 镕)
#: into replacement characters.
_AS_BROWSERS_READ = {
    "iso8859-1": "cp1252",
    "ascii": "cp1252",
    "iso8859-9": "cp1254",
    "tis-620": "cp874",
    "iso8859-11": "cp874",
    "shift_jis": "cp932",
    "gb2312": "gb18030",
    "gbk": "gb18030",
    "euc_kr": "cp949",
    "big5": "big5hkscs",
}


def web_codec(label: str) -> str | None:
    """The Python codec a browser reads text labelled `label` in, or None when the label names
    no encoding of the web (`punycode`, `rot13`, `no-such-codec`)."""
    name = label.strip().lower()
    try:
        found = codecs.lookup(_WEB_LABELS.get(name, name)).name
    except LookupError:
        return None
    return _AS_BROWSERS_READ.get(found, found) if found in _WEB_CODECS else None


def decode_text(body: bytes, label: str | None) -> str:
    """`body` read as text labelled `label`, as browsers read it: a label naming no encoding of
    the web reads as UTF-8, and a UTF-8 byte-order mark leads no text."""
    codec = web_codec(label) if label else None
    if codec is None or codec == "utf-8":
        codec = "utf-8-sig"
    return body.decode(codec, "replace")


_SURROGATE = re.compile("[\ud800-\udfff]")


def well_formed(text: str) -> str:
    """`text` with surrogate halves made whole: a pair becomes its character, a half alone
    U+FFFD."""
    if _SURROGATE.search(text) is None:
        return text
    return text.encode("utf-16-le", "surrogatepass").decode("utf-16-le", "replace")


def well_formed_data(value: Any) -> Any:
    """Decoded JSON with every string, keys included, `well_formed`."""
    if isinstance(value, str):
        return well_formed(value)
    if isinstance(value, list):
        return [well_formed_data(item) for item in value]
    if isinstance(value, dict):
        return {well_formed(key): well_formed_data(item) for key, item in value.items()}
    return value


#: Joiners that shape some scripts and emoji (ZWNJ, ZWJ): kept between two characters.
_JOINERS = "\u200c\u200d"


def visible(text: str) -> str:
    """`text` without its control and format characters (Unicode Cc and Cf: escape sequences,
    bidirectional overrides, zero-width spaces, soft hyphens); whitespace stays, and a joiner
    between two characters that are not spaces."""
    if text.isprintable():  # False for every such character, and for whitespace but " "
        return text
    last = len(text) - 1
    return "".join(
        char
        for at, char in enumerate(text)
        if char.isspace() or _shown(char) or _joins(text, at, last)
    )


def _shown(char: str) -> bool:
    """Whether `char` is neither a control nor a format character."""
    return unicodedata.category(char) not in ("Cc", "Cf")


def _joins(text: str, at: int, last: int) -> bool:
    """Whether `text[at]` is a joiner between two characters that are shown, not spaces: one
    between characters dropped would be left alone, a text of nothing visible."""
    return (
        text[at] in _JOINERS
        and 0 < at < last
        and all(not c.isspace() and _shown(c) for c in (text[at - 1], text[at + 1]))
    )


def one_line(text: str) -> str | None:
    """A title as shown: its surrogate halves made whole, its characters visible, its
    whitespace one space (a line break would start a Markdown heading of its own where the
    title is printed as one); None when nothing is left."""
    return " ".join(visible(well_formed(text)).split()) or None


# `[words](target)` and `![words](image)`: the words may hold one level of brackets, the target
# one level of parentheses, `<...>` and a title ("t", 't' or (t)).
MARKDOWN_LINK = re.compile(
    r"!?\[((?:[^\[\]\n]|\[[^\[\]\n]*\])*)\]"
    r"\(\s*<?(?:[^()\s<>]|\([^()\s]*\))*>?(?:\s+(?:\"[^\"\n]*\"|'[^'\n]*'|\([^()\n]*\)))?\s*\)"
)
#: Links inside links' words read through (`[![badge](image)](link)` is two).
MAX_LINK_NESTING = 4
# A link's target, `](...)` with one level of parentheses inside.
_LINK_TARGET = re.compile(r"\]\((?:[^()\n]|\([^()\n]*\))*\)")
# `![words][ref]`, an image whose address a line of its own defines (`[ref]: url`).
_IMAGE_REFERENCE = re.compile(r"!\[((?:[^\[\]\n]|\[[^\[\]\n]*\])*)\]\[[^\[\]\n]*\]")
_LINK_DEFINITION = re.compile(r"^ {0,3}\[[^\]\n]+\]:[ \t]*\S+.*$", re.MULTILINE)


def markdown_words(text: str) -> str:
    """Markdown links and images reduced to their words, and link definitions left out: an
    image a client fetches when an agent quotes it can carry the conversation away."""
    # Again for what the words held (a linked image, `[![words](image)](link)`), a few levels
    # deep at most: hostile text nested thousands deep would cost a pass per level.
    for _ in range(MAX_LINK_NESTING if "](" in text else 0):
        text, found = MARKDOWN_LINK.subn(r"\1", text)
        if not found:
            break
    else:
        if "](" in text and MARKDOWN_LINK.search(text):
            # Nested deeper still: every target goes, and no image is left to fetch.
            text = _LINK_TARGET.sub("]", text).replace("![", "[")
    if "![" in text:
        text = _IMAGE_REFERENCE.sub(r"\1", text)
    if "]:" in text:
        text = _LINK_DEFINITION.sub("", text)
    return text
