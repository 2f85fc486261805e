"""Small pure helpers for engines of either kind: JSON and XML bodies and their error texts, keyed
requests, hits, dates, clocks, markdown, and HTML result blocks."""

from __future__ import annotations

import contextlib
import json
import re
import unicodedata
import xml.etree.ElementTree as ET
from collections.abc import Callable, Iterable
from typing import Any, TypeVar
from urllib.parse import quote, urlsplit
from urllib.parse import unquote_plus as urllib_unquote_plus
from xml.parsers import expat

import orjson
from selectolax.lexbor import LexborHTMLParser, LexborNode

from websearch_mcp.engines.base import parse_retry_after
from websearch_mcp.engines.text import clean_text, collapse_spaces
from websearch_mcp.errors import EngineAuthError, EngineError, EngineParseError, EngineRateLimited
from websearch_mcp.models import Hit, HttpRequest, HttpResponse
from websearch_mcp.redaction import KEY_LIKE as _TOKEN_RE
from websearch_mcp.text_encoding import MARKDOWN_LINK, well_formed_data

_Item = TypeVar("_Item")

# --- JSON bodies and values ------------------------------------------------------------------


def _loads(content: bytes) -> Any:
    # orjson is faster; what it refuses (NaN, integers past 64 bits, UTF-16, an escaped
    # surrogate half) the json module may still read, so it decides those. A half it reads
    # would fail the answer that carries it: made whole, or U+FFFD.
    try:
        return orjson.loads(content)
    except orjson.JSONDecodeError:
        pass
    try:
        return well_formed_data(json.loads(content))
    except RecursionError:  # nested deeper than Python goes: no JSON the service can read
        raise ValueError("JSON nested too deep") from None


def json_body(response: HttpResponse) -> Any:
    """The decoded JSON body, or None when there is none (for error bodies, which are optional)."""
    try:
        return _loads(response.content)
    except (ValueError, UnicodeDecodeError):
        return None


def json_object(response: HttpResponse, what: str) -> dict[str, Any]:
    """The decoded body when it is a JSON object, else `EngineParseError` naming `what` (never
    quoting the body)."""
    try:
        data = _loads(response.content)
    except (ValueError, UnicodeDecodeError):
        raise EngineParseError(f"{what} answered with a body that is not JSON") from None
    if not isinstance(data, dict):
        raise EngineParseError(f"{what} answered with JSON that is not an object")
    return data


def result_list(container: Any, key: str, what: str) -> list[dict[str, Any]]:
    """`container[key]` as a list of objects (non-objects skipped), else `EngineParseError`."""
    items = container.get(key) if isinstance(container, dict) else None
    if not isinstance(items, list):
        raise EngineParseError(f"{what} answered without a {key!r} list")
    return [item for item in items if isinstance(item, dict)]


def object_list(value: Any, what: str, key: str) -> list[dict[str, Any]]:
    """The objects of a result list that an API leaves out when nothing matched (the caller
    passes `[]` for that); `EngineParseError` when `value` is not a list."""
    if not isinstance(value, list):
        raise EngineParseError(f"{what} answered with {key!r} that is not a list")
    return [item for item in value if isinstance(item, dict)]


#: How much of an XML answer expat reads at a time (a few milliseconds' work).
_XML_PIECE_BYTES = 64 * 1024


class _RootReached(Exception):
    """The root element has begun: the prolog, where entities are declared, is over."""


def xml_root(content: bytes) -> ET.Element:
    """The root element of an XML body; `ET.ParseError` when it is not XML or declares entities.

    Engines' feeds declare none, while expat lets declared entities grow a document many times
    over, past what `MAX_RESPONSE_BYTES` means to bound. The prolog is checked first, up to the
    root's start tag; ElementTree never fetches external entities. A declared encoding that
    Python cannot decode XML in (`WTF-8`, `rot13`, `utf-7`) makes no XML either.
    """

    def declared(*_: object) -> None:
        raise ET.ParseError("the XML declares entities")

    def root(*_: object) -> None:
        raise _RootReached

    prolog = expat.ParserCreate()
    prolog.EntityDeclHandler = declared
    prolog.StartElementHandler = root
    try:
        # A body that is not XML is ElementTree's to report.
        with contextlib.suppress(_RootReached, expat.ExpatError):
            prolog.Parse(content, True)
        parser = ET.XMLParser()
        # Fed a piece at a time: expat holds the GIL while it reads, and an engine's answer is
        # parsed in a thread that must let the event loop run while it reads a large feed.
        for start in range(0, len(content), _XML_PIECE_BYTES):
            parser.feed(content[start : start + _XML_PIECE_BYTES])
        return parser.close()
    except (LookupError, ValueError):  # expat's codec lookup, not a parse error of its own
        raise ET.ParseError("the XML declares an encoding it cannot be read in") from None


def as_float(value: Any) -> float | None:
    """A finite number as float, anything else None (booleans are not scores)."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    number = float(value)
    return number if number == number and abs(number) != float("inf") else None


def as_int(value: Any) -> int | None:
    """An integer from an int or a string of digits ("962"); None otherwise."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, str) and value.strip().isdigit():
        return int(value.strip())
    return None


def as_text(value: Any) -> str:
    """`value` when it is a string, else "": a list, an object or a number where an API
    documents text is no text (never its Python form, `['a', 'b']`, shown as text)."""
    return value if isinstance(value, str) else ""


def as_id(value: Any) -> str:
    """An identifier an API gives as a string or an integer (`"39709209"` or `39709209`),
    stripped; "" for anything else (a list, an object, a boolean, a fraction)."""
    if isinstance(value, int) and not isinstance(value, bool):
        return str(value)
    return as_text(value).strip()


def as_list(value: Any) -> list[Any]:
    """A list where an API sends either a list or, for a single element, the element alone."""
    if value is None:
        return []
    return value if isinstance(value, list) else [value]


def as_dict(value: Any) -> dict[str, Any]:
    """`value` when it is an object, else an empty one (for optional nested objects)."""
    return value if isinstance(value, dict) else {}


#: What browsers and `urlsplit` drop from anywhere in a URL.
_TAB_AND_LINE_BREAKS = str.maketrans("", "", "\t\r\n")


def http_url(value: Any) -> str | None:
    """`value` when it is an absolute http(s) URL with a host (protocol-relative ones get https)
    that URL parsers read: one with an unclosed `[` (`http://[fe80::1/`) is none, and would fail
    every client that splits it. Tabs and line breaks are dropped, as a browser drops them, and
    spaces escaped: the link is the page it opens, and is printed on one line. A link holding
    another control or format character (one that shows "gnp.exe" as "exe.png") is none, and
    one naming a user (`https://docs.python.org:x@evil.example/`, which reads as the first host)
    loses the user."""
    if not isinstance(value, str):
        return None
    url = value.strip()
    if "\n" in url or "\r" in url or "\t" in url:
        url = url.translate(_TAB_AND_LINE_BREAKS)
    if url.startswith("//"):
        url = "https:" + url
    if not url.startswith(("http://", "https://")):
        return None
    if " " in url:
        url = url.replace(" ", "%20")
    if not url.isprintable():
        visible_url = _visible_link(url)
        if visible_url is None:
            return None
        url = visible_url
    if match := _PLAIN_LINK.fullmatch(url):
        return url if match[1] else None
    try:
        parts = urlsplit(url)
        parts.port  # noqa: B018 - raises ValueError for a port that is no number
    except ValueError:
        return None
    if not parts.hostname:
        return None
    if "@" in parts.netloc:
        return parts._replace(netloc=parts.netloc.rpartition("@")[2]).geturl()
    return url


def _visible_link(url: str) -> str | None:
    """`url` with its other spaces escaped (a no-break space, an ideographic one), or None when
    it holds a control or format character; private-use and newer characters stay."""
    if any(unicodedata.category(char) in ("Cc", "Cf") for char in url):
        return None
    return "".join(quote(char) if char.isspace() else char for char in url)


# An http(s) link with a plain host (no user info, port or brackets) and nothing that `urlsplit`
# would strip (tabs, line breaks): nearly every result link, split without its general work.
_PLAIN_LINK = re.compile(r"https?://([A-Za-z0-9.-]*)([/?#][^\t\r\n]*)?")


def plain_link(url: str) -> tuple[str, str | None] | None:
    """The groups of `_PLAIN_LINK` matching all of `url` (host, the rest), or None."""
    match = _PLAIN_LINK.fullmatch(url)
    return None if match is None else (match[1], match[2])


def link_parts(url: str) -> tuple[str, str, str]:
    """A link's host (lower-case, "" when it has none), path and query, as `urlsplit` gives
    them (and a ValueError where it raises one)."""
    plain = plain_link(url)
    if plain is None:
        parts = urlsplit(url)
        return parts.hostname or "", parts.path, parts.query
    path, _, query = (plain[1] or "").split("#", 1)[0].partition("?")
    return plain[0].lower(), path, query


# Every escape's two hex digits, either case, and the byte they stand for (as `urllib.parse`).
_HEX_BYTES = {
    (a + b).encode(): bytes.fromhex(a + b)
    for a in "0123456789ABCDEFabcdef"
    for b in "0123456789ABCDEFabcdef"
}


def unquote_plus(text: str) -> str:
    """`urllib.parse.unquote_plus(text)`, with ASCII text (nearly every result link's target)
    decoded in one split and join of its bytes, where the library walks it in Python. For
    ASCII text the library decodes the bytes the escapes stand for, with the other
    characters, as UTF-8."""
    text = text.replace("+", " ")
    if "%" not in text:
        return text
    if not text.isascii():
        return urllib_unquote_plus(text)
    pieces = text.encode("ascii").split(b"%")
    out = [pieces[0]]
    for piece in pieces[1:]:
        byte = _HEX_BYTES.get(piece[:2])
        if byte is None:  # not an escape: kept as it is
            out.append(b"%")
            out.append(piece)
        else:
            out.append(byte)
            out.append(piece[2:])
    return b"".join(out).decode("utf-8", "replace")


def query_value(query: str, name: str) -> str | None:
    """The first non-empty value of `name` in a URL's query string, decoded: what
    `parse_qs(query).get(name, [None])[0]` gives, without decoding every other parameter
    (result links carry long tracking parameters, and every result has one)."""
    for part in query.split("&"):
        key, eq, value = part.partition("=")
        if not eq or not value:
            continue  # parse_qs drops these without keep_blank_values
        if "%" in key or "+" in key:
            key = unquote_plus(key)
        if key == name:
            # What `unquote_plus` changes; most values (base64 link targets) have neither.
            return unquote_plus(value) if "%" in value or "+" in value else value
    return None


# --- API errors ------------------------------------------------------------------------------

_QUOTA_RE = re.compile(
    r"quota|credit|rate.?limit|too many requests|exhausted|run out of|limit.?exceeded"
    r"|insufficient balance|daily limit",
    re.IGNORECASE,
)
_AUTH_RE = re.compile(
    r"api.?key|unauthori[sz]ed|forbidden|authenticat|permission denied|token.?invalid"
    r"|invalid\W+(?:\w+\W+)?token",
    re.IGNORECASE,
)


def error_message(response: HttpResponse, *keys: str) -> str | None:
    """The API's own explanation in a JSON error body: the first of `keys` that is set."""
    data = json_body(response)
    if not isinstance(data, dict):
        return None
    for key in keys:
        value = data.get(key)
        if value:
            return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
    return None


def api_error(message: Any, response: HttpResponse) -> EngineError:
    """The typed error for an API's own error text: quota words, 402 or 429 mean rate-limited,
    key words or 401/403 mean the key was refused, anything else is a plain engine error.
    Key-like tokens in the text are masked: some APIs quote the key they refused."""
    text = _TOKEN_RE.sub("***", clean_text(str(message), 200)) or f"HTTP {response.status}"
    retry_after = parse_retry_after(response.headers.get("retry-after"))
    if response.status in (402, 429) or _QUOTA_RE.search(text):
        return EngineRateLimited(text, retry_after=retry_after)
    if response.status in (401, 403) or _AUTH_RE.search(text):
        return EngineAuthError(text, retry_after=retry_after)
    return EngineError(text, retry_after=retry_after)


def check_error_body(response: HttpResponse, *keys: str) -> None:
    """For a non-2xx answer whose JSON body explains itself under one of `keys`: raise the
    typed `api_error` for that text (a bare status says less, "Not enough credits" more)."""
    if response.status >= 300 and (message := error_message(response, *keys)):
        raise api_error(message, response)


# --- Requests and hits -----------------------------------------------------------------------


def fitted(text: str, max_chars: int, max_words: int | None = None) -> str:
    """`text` within an API's bounds on a query: its first words, as many as fit (a query past
    them is refused, failing the search there). Text that fits is sent as it is."""
    words = text.split()
    if len(text) <= max_chars and (max_words is None or len(words) <= max_words):
        return text
    kept: list[str] = []
    for word in words[:max_words]:
        if len(" ".join([*kept, word])) > max_chars:
            break
        kept.append(word)
    cut = " ".join(kept) or text[:max_chars]
    if cut.count('"') % 2 and text.count('"') > cut.count('"'):
        # Cut inside a quoted phrase: its open quote would make the rest one phrase.
        at = cut.rindex('"')
        cut = " ".join((cut[:at] + cut[at + 1 :]).split()) or cut
    return cut


def keyed_request(
    method: str,
    path: str,
    key: str | None,
    *,
    key_header: str | None = None,
    params: dict[str, Any] | None = None,
    body: dict[str, Any] | None = None,
    headers: dict[str, str] | None = None,
) -> HttpRequest:
    """A request to a JSON API that takes its key in a header: as a Bearer token, or as it is in
    `key_header` when the API names its own. The key is listed as a secret, never shown."""
    auth = {key_header: key or ""} if key_header else {"Authorization": f"Bearer {key or ''}"}
    return HttpRequest(
        method,
        path,
        params=params,
        json=body,
        headers={**auth, "Accept": "application/json", **(headers or {})},
        secrets=(key,) if key else (),
    )


def web_hit(
    url: str | None,
    title: str | None,
    snippet: str,
    rank: int,
    engine: str,
    *,
    published: str | None = None,
    score: float | None = None,
) -> Hit | None:
    """A web result, its title and snippet as the engine sent them; None without a URL to open."""
    if not url:
        return None
    return Hit(
        title=title or "",
        url=url,
        snippet=snippet,
        rank=rank,
        engine=engine,
        score=score,
        published=published,
    )


def ranked_hits(
    items: Iterable[_Item], engine: str, hit: Callable[[_Item, int, str], Hit | None]
) -> list[Hit]:
    """`hit(item, rank, engine)` for each item; the items that make no hit (no URL, an ad) are
    skipped, so the hits are ranked 1..n without gaps.

    An item `hit` cannot read (a number or a list where the API documents objects) is skipped
    too: one odd result must not cost the engine its whole list. When no item could be read
    and some could not, the answer is an `EngineParseError`, not an empty list."""
    hits: list[Hit] = []
    unreadable = 0
    for item in items:
        try:
            found = hit(item, len(hits) + 1, engine)
        except (TypeError, AttributeError, ValueError):
            unreadable += 1
            continue
        if found:
            hits.append(found)
    if unreadable and not hits:
        raise EngineParseError(f"{engine} answered with results of an unexpected shape")
    return hits


# --- Text and HTML ---------------------------------------------------------------------------

# A link's text holds no "[" (as in CommonMark, "[a [b](u)" links "b"): so each "[" is read up
# to the next bracket only, not to the end of the text, in linear time.
_MD_HEADING_RE = re.compile(r"(^|\s)#{1,6}(?=\s)")
_MD_EMPHASIS_RE = re.compile(r"\*\*|__")
# `*italic*`: a star next to a word's first or last character, not one between words ("2 * 3").
_MD_ITALIC_RE = re.compile(r"(?<![\w*])\*(?=[^\s*])([^*\n]+?)(?<=[^\s*])\*(?![\w*])")


def strip_markdown(text: str) -> str:
    """Markdown noise some APIs put in snippets removed: links keep their text, no `**`/`#`."""
    # Each pattern needs its marker; most snippets have none, and a substring test is far
    # cheaper than a substitution that finds nothing.
    if "](" in text:
        text = MARKDOWN_LINK.sub(r"\1", text)
    if "#" in text:
        text = _MD_HEADING_RE.sub(r"\1", text)
    if "**" in text or "__" in text:
        text = _MD_EMPHASIS_RE.sub("", text)
    if "*" in text:
        text = _MD_ITALIC_RE.sub(r"\1", text)
    return text


def outermost(nodes: list[LexborNode]) -> list[LexborNode]:
    """HTML result blocks that nest (`div.result` holding a `div.c-container`): the outer ones,
    each once (a selector group returns a node once per selector it matches)."""
    ids = {node.mem_id for node in nodes}
    kept: dict[int, LexborNode] = {}
    for node in nodes:
        parent = node.parent
        while parent is not None and parent.mem_id not in ids:
            parent = parent.parent
        if parent is None:
            kept.setdefault(node.mem_id, node)
    return list(kept.values())


class ResultBlocks:
    """A results page's result blocks (the matches of `selector`, in page order) and, for each,
    its first element matching a part's selector: what `css_first` on every block gives, found
    in one query of the page. Lexbor parses a selector on every call, which costs more than
    matching it, so one query of the page costs less than `css_first` on every block.

    The one query finds the elements whose whole match lies inside a block: unlike `css_first`,
    it finds neither the block itself nor an element matched through the block or an ancestor
    outside it (`h2 a` with the `h2` above the block). Neither happens on a results page. Pages
    with blocks inside blocks are read block by block."""

    def __init__(self, tree: LexborHTMLParser, selector: str) -> None:
        self.nodes = tree.css(selector)
        self._tree = tree
        self._selector = selector
        self._ids = {node.mem_id for node in self.nodes}
        self._nested = bool(self.nodes) and tree.css_first(f"{selector} {selector}") is not None

    def first(self, part: str) -> list[LexborNode | None]:
        """Each block's first element matching `part` (a selector, not a group), or None."""
        if self._nested:
            return [node.css_first(part) for node in self.nodes]
        found: dict[int, LexborNode] = {}
        for node in self._tree.css(f"{self._selector} {part}"):
            parent = node.parent
            while parent is not None and parent.mem_id not in self._ids:
                parent = parent.parent
            if parent is not None:  # always: the query's match has a block above it
                found.setdefault(parent.mem_id, node)
        return [found.get(node.mem_id) for node in self.nodes]


def first_text(node: LexborNode, selectors: Iterable[str]) -> str:
    """The text of the first of `selectors` that finds a non-empty element in `node`, its
    whitespace collapsed."""
    for selector in selectors:
        found = node.css_first(selector)
        if found is not None and (text := collapse_spaces(found.text())):
            return text
    return ""
