"""The engine contract: declarations, a pure request builder and a pure parser.

An engine never does I/O. The orchestrator sends what `request()` builds to the engine's
`base_url` (overridable in the config) and hands what came back to `parse()`.
"""

from __future__ import annotations

import html
import re
from typing import ClassVar, Literal

from websearch_mcp.dates import Clock, utc_today
from websearch_mcp.errors import EngineAuthError, EngineBlocked, EngineError, EngineRateLimited
from websearch_mcp.models import Hit, HttpRequest, HttpResponse, Query

SNIPPET_MAX_CHARS = 500

_TAG_RE = re.compile(r"<[^>]+>")
# Highlighting tags sit inside words ("hello-<b>world</b>.com"): drop them without a space.
_INLINE_TAG_RE = re.compile(
    r"</?(?:a|abbr|b|code|em|i|mark|q|s|small|span|strong|sub|sup|u)(?:\s[^>]*)?>", re.IGNORECASE
)


def clean_text(value: str | None, limit: int = SNIPPET_MAX_CHARS) -> str:
    """HTML tags stripped, entities unescaped, whitespace collapsed, bounded length."""
    if not value:
        return ""
    text = value
    if "<" in text:
        text = _TAG_RE.sub(" ", _INLINE_TAG_RE.sub("", text))
    text = collapse_spaces(html.unescape(text))
    if len(text) > limit:
        text = text[: limit - 1].rstrip() + "…"
    return text


def collapse_spaces(text: str) -> str:
    """Every run of whitespace one space, the ends trimmed. `split()` breaks on exactly what `\\s`
    matches and is five times faster than a substitution; most texts have nothing to collapse,
    and saying so (no whitespace but single inner spaces) takes half the time of splitting."""
    if text.isascii():
        # The ASCII whitespace `split()` breaks on, but " ": nine C-level searches cost about
        # half of `isprintable()`'s look-up per character.
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


def parse_retry_after(value: str | None) -> float | None:
    """Seconds from a `Retry-After` header given in seconds; None when absent or a date."""
    if not value:
        return None
    try:
        return max(0.0, float(value.strip()))
    except ValueError:
        return None


class Engine:
    """Base class of every engine module. Subclasses set the declarations that differ from the
    defaults below (plain assignments: the types are declared here) and two methods."""

    name: ClassVar[str]
    kind: ClassVar[Literal["web", "academic"]] = "web"
    base_url: ClassVar[str]
    needs_key: ClassVar[bool] = False
    needs_proxy: ClassVar[bool] = False
    #: A results page made for browsers (not an API): sent with rotating browser User-Agents.
    scraped: ClassVar[bool] = False
    returns_score: ClassVar[bool] = False
    #: Neural retrieval: its results need not share a word with the query (never gated for it).
    semantic: ClassVar[bool] = False
    supports_time_range: ClassVar[bool] = False
    supports_language: ClassVar[bool] = False
    default_enabled: ClassVar[bool] = True
    default_timeout: ClassVar[float] = 5.0
    rate_limit: ClassVar[float | None] = None  # requests per second, None = unlimited
    #: The upstream index the results come from ("google" for Serper, SerpAPI, Programmable
    #: Search and the scraper; "bing" for DuckDuckGo's web results). Engines of one index vote
    #: once in fusion; None: unknown, counted as an index of its own.
    index: ClassVar[str | None] = None
    #: The environment variable holding comma-separated keys: `<NAME>_API_KEYS` for an engine
    #: that needs a key (`TAVILY_API_KEYS`) unless it names its own, else None.
    key_env: ClassVar[str | None] = None

    def __init__(self, today: Clock = utc_today) -> None:
        # Engines that read relative dates ("3 days ago") or compute a time range need today's
        # date; tests pin it.
        self.today = today

    def __init_subclass__(cls, **kwargs: object) -> None:
        super().__init_subclass__(**kwargs)
        if cls.needs_key and "key_env" not in cls.__dict__:
            cls.key_env = f"{cls.name.upper()}_API_KEYS"

    def request(self, query: Query, key: str | None) -> HttpRequest:
        """Build the HTTP request for `query`; `key` is set when `needs_key`."""
        raise NotImplementedError

    def follow_up(
        self, response: HttpResponse, query: Query, key: str | None
    ) -> HttpRequest | None:
        """For two-step APIs (PubMed esearch then esummary): the next request, or None.

        The orchestrator sends what this returns and gives the last response to `parse`.
        """
        return None

    def parse(self, response: HttpResponse, query: Query) -> list[Hit]:
        """Turn a response into hits ranked 1..n, or raise a typed `EngineError`."""
        raise NotImplementedError

    @classmethod
    def check_status(cls, response: HttpResponse) -> None:
        """Raise the typed error that a non-2xx status means. Engines call this first in `parse`."""
        status = response.status
        if 200 <= status < 300:
            return
        retry_after = parse_retry_after(response.headers.get("retry-after"))
        if status == 429:
            raise EngineRateLimited("HTTP 429 Too Many Requests", retry_after=retry_after)
        if status in (401, 403) and cls.needs_key:
            raise EngineAuthError(
                f"HTTP {status}: the API key was refused", retry_after=retry_after
            )
        if status in (401, 403):
            raise EngineBlocked(f"HTTP {status}: access denied", retry_after=retry_after)
        raise EngineError(f"HTTP {status}", retry_after=retry_after)
