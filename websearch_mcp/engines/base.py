"""The engine contract: declarations, a pure request builder and a pure parser.

An engine never does I/O. The orchestrator sends what `request()` builds to the engine's
`base_url` (overridable in the config) and hands what came back to `parse()`.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from email.utils import parsedate_to_datetime
from typing import ClassVar, Literal

from websearch_mcp.dates import Clock, before_range, utc_today
from websearch_mcp.engines.text import plain_hits
from websearch_mcp.errors import EngineAuthError, EngineBlocked, EngineError, EngineRateLimited
from websearch_mcp.models import Hit, HttpRequest, HttpResponse, Query


def utc_now() -> datetime:
    """The current time in UTC: what a news engine's relative dates ("3 hours ago") count from."""
    return datetime.now(UTC)


#: The longest rest an engine's `Retry-After` can set: a key or a breaker resting longer (or for
#: ever, `inf`) would stay silent across restarts in a shared store, and its report unreadable.
RETRY_AFTER_MAX_SECONDS = 86_400.0


def parse_retry_after(value: str | None, now: datetime | None = None) -> float | None:
    """Seconds from a `Retry-After` header, given in seconds or as an HTTP date (the seconds
    from `now` until it), from 0 to a day; None when absent or neither (`nan`, a bad date)."""
    if not value:
        return None
    seconds: float | None
    try:
        seconds = float(value.strip())
    except ValueError:
        seconds = _seconds_until(value, now or utc_now())
    if seconds is None or math.isnan(seconds):
        return None
    return min(RETRY_AFTER_MAX_SECONDS, max(0.0, seconds))


def _seconds_until(date: str, now: datetime) -> float | None:
    """The seconds from `now` until an HTTP date (`Wed, 21 Oct 2026 07:28:00 GMT`), or None."""
    try:
        when = parsedate_to_datetime(date)
    except (TypeError, ValueError, IndexError):
        return None
    if when.tzinfo is None:  # "-0000": a time in UTC, its source unknown
        when = when.replace(tzinfo=UTC)
    return (when - now).total_seconds()


#: The most authors a result names (the first ones).
MAX_AUTHORS = 50


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
    #: The categories of a web search the engine serves: `general` (its web index) and, where it
    #: has a news endpoint, `news`. A search of another category does not ask it.
    categories: ClassVar[frozenset[str]] = frozenset({"general"})
    default_enabled: ClassVar[bool] = True
    default_timeout: ClassVar[float] = 5.0
    rate_limit: ClassVar[float | None] = None  # requests per second, None = unlimited
    #: The upstream index the results come from ("google" for Serper, SerpAPI, Programmable
    #: Search and the scraper; "bing" for DuckDuckGo's web results). Engines of one index vote
    #: once in fusion; None: unknown, counted as an index of its own.
    index: ClassVar[str | None] = None
    #: The titles and snippets `parse()` returns are markup as the engine sent it (tags such as
    #: Brave's `<strong>`, entities): made plain by stripping and unescaping. False: plain text
    #: (an API's plain fields, a page's text read from its DOM), kept as it reads.
    markup: ClassVar[bool] = True
    #: The environment variable holding comma-separated keys: `<NAME>_API_KEYS` for an engine
    #: that needs a key (`TAVILY_API_KEYS`) unless it names its own, else None.
    key_env: ClassVar[str | None] = None
    #: The most results one request may ask for (the API's cap); None: as many as are wanted.
    max_rows: ClassVar[int | None] = None
    #: How deep the index pages: it serves only its first `max_depth` results of a query (a
    #: request reaching past them is an error there, or answers nothing). None: no page the
    #: tools accept reaches that deep.
    max_depth: ClassVar[int | None] = None

    def __init__(self, today: Clock = utc_today, now: Callable[[], datetime] = utc_now) -> None:
        # Engines that read relative dates ("3 days ago") or compute a time range need today's
        # date (news engines the time: "3 hours ago"); tests pin them.
        self.today = today
        self.now = now

    def __init_subclass__(cls, **kwargs: object) -> None:
        super().__init_subclass__(**kwargs)
        if cls.needs_key and "key_env" not in cls.__dict__:
            cls.key_env = f"{cls.name.upper()}_API_KEYS"

    def request(self, query: Query, key: str | None) -> HttpRequest:
        """Build the HTTP request for `query`; `key` is set when `needs_key`."""
        raise NotImplementedError

    def rows(self, query: Query) -> int:
        """How many results one page of `query` holds at this index."""
        return min(query.max_results, self.max_rows or query.max_results)

    def too_deep(self, query: Query) -> str | None:
        """Why the index is not asked for `query`'s page (it starts past `max_depth`), or None:
        asked, it would answer with an error that rests it for every search, or with nothing."""
        first = (query.page - 1) * self.rows(query)
        if self.max_depth is None or first < self.max_depth:
            return None
        return (
            f"the index serves only its first {self.max_depth:,} results;"
            f" page {query.page} starts at result {first + 1:,}"
        )

    def follow_up(
        self, response: HttpResponse, query: Query, key: str | None
    ) -> HttpRequest | None:
        """For two-step APIs (PubMed esearch then esummary): the next request, or None.

        The orchestrator sends what this returns and gives the last response to `parse`.
        """
        return None

    def parse(self, response: HttpResponse, query: Query) -> list[Hit]:
        """Turn a response into hits ranked 1..n, or raise a typed `EngineError`. Titles and
        snippets as the engine sent them (see `markup`): `hits` makes them plain."""
        raise NotImplementedError

    def hits(self, response: HttpResponse, query: Query) -> list[Hit]:
        """`parse`'s hits with every title and snippet made plain: what the service uses. An
        engine that cannot be asked for a time range keeps only the hits not dated before it."""
        found = self.parse(response, query)
        plain_hits(found, markup=self.markup)
        for hit in found:
            self._bounded(hit)
        if query.time_range and not self.supports_time_range:
            today = self.today()
            found = [
                h
                for h in found
                if not (h.published and before_range(h.published, query.time_range, today))
            ]
        return found

    def _bounded(self, hit: Hit) -> None:
        """`hit` within what a result can say, in place: no count below zero, at most
        `MAX_AUTHORS` authors (collaborations list thousands), and for a web page no publication
        date past tomorrow (a paper's issue may be dated ahead of its publication online)."""
        if hit.citations is not None and hit.citations < 0:
            hit.citations = None
        hit.authors = hit.authors[:MAX_AUTHORS]
        if self.kind == "web" and hit.published:
            ahead = (self.today() + timedelta(days=1)).isoformat()
            if hit.published[:10] > ahead[: len(hit.published[:10])]:
                hit.published = None
        for other in hit.grouped:
            self._bounded(other)

    @classmethod
    def key_problem(cls, entry: str) -> str | None:
        """What is wrong with the form of one configured key (never quoting it), or None.
        Checked when the configuration loads, so that a malformed key is not sent and then
        rested as refused."""
        return None

    @classmethod
    def check_status(cls, response: HttpResponse) -> None:
        """Raise the typed error that a non-2xx status means. Engines call this first in `parse`."""
        status = response.status
        if 200 <= status < 300:
            return
        retry_after = parse_retry_after(response.headers.get("retry-after"))
        if status == 429:
            raise EngineRateLimited("HTTP 429 Too Many Requests", retry_after=retry_after)
        if status == 402:  # the account behind the request has no credit left
            raise EngineRateLimited(
                "HTTP 402 Payment Required: the account's credit is used up",
                retry_after=retry_after,
            )
        if status in (401, 403) and cls.needs_key:
            raise EngineAuthError(
                f"HTTP {status}: the API key was refused", retry_after=retry_after
            )
        if status in (401, 403):
            raise EngineBlocked(f"HTTP {status}: access denied", retry_after=retry_after)
        raise EngineError(f"HTTP {status}", retry_after=retry_after)
