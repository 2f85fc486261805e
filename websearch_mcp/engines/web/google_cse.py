"""Google Programmable Search (Custom Search JSON API): `GET /customsearch/v1`.

The API takes two values, the search engine id `cx` and the API key. Both live in the key
pool as one entry `"<cx>:<key>"` (`engines.google_cse.api_keys` or `GOOGLE_CSE_API_KEYS`), so
each key keeps the engine id it belongs to and rotation works as for any other provider.
Old-style cx ids contain a colon themselves; API keys never do, so the last colon splits.
"""

from __future__ import annotations

import re
from typing import Any, ClassVar

from websearch_mcp.dates import human_date, iso_date, split_date_prefix
from websearch_mcp.engines.base import Engine
from websearch_mcp.engines.common import (
    api_error,
    as_text,
    http_url,
    json_body,
    json_object,
    object_list,
    ranked_hits,
    web_hit,
)
from websearch_mcp.engines.text import collapse_spaces
from websearch_mcp.engines.web._google import language_params
from websearch_mcp.errors import EngineAuthError, EngineError
from websearch_mcp.models import Hit, HttpRequest, HttpResponse, Query

_DATE_RESTRICT = {"day": "d1", "week": "w1", "month": "m1", "year": "y1"}
_PAGEMAP_DATES = (
    ("metatags", ("article:published_time", "datepublished", "og:published_time")),
    ("videoobject", ("uploaddate",)),
    ("newsarticle", ("datepublished",)),
)
_MARKETING_REDIRECT = "https://www.google.com/appserve/mkt/"
_QUOTA_REASONS = {
    "dailyLimitExceeded",
    "rateLimitExceeded",
    "userRateLimitExceeded",
    "quotaExceeded",
}


# Programmable Search separates a snippet's leading date with an ellipsis: "May 5, 2018 ... ".
_ELLIPSIS_DATE_RE = re.compile(r"^([A-Za-z]{3,9}\.? \d{1,2}, \d{4}) (?:\.\.\.|…)\s*")
# A recent page's age, printed where an older page's date is ("3 days ago ... "): taken off,
# not dated (as Bing's "3 days ago · ").
_ELLIPSIS_AGE_RE = re.compile(r"^\d+ (?:minute|hour|day|week|month|year)s? ago (?:\.\.\.|…)\s*")


PAIR_FORM = "google_cse keys must be configured as '<cx>:<API key>' pairs"


def split_credential(entry: str) -> tuple[str, str]:
    """`(cx, key)` from a `"<cx>:<key>"` key-pool entry; the error text never shows the entry."""
    cx, _, key = entry.rpartition(":")
    if not cx.strip() or not key.strip():
        raise EngineAuthError(PAIR_FORM)
    return cx.strip(), key.strip()


def _pagemap_entry(item: dict[str, Any], group: str) -> dict[str, Any]:
    """The first entry of one group of the page's structured data (`pagemap`), or {}."""
    pagemap = item.get("pagemap")
    entries = pagemap.get(group) if isinstance(pagemap, dict) else None
    if isinstance(entries, list) and entries and isinstance(entries[0], dict):
        return entries[0]
    return {}


def _published(item: dict[str, Any]) -> str | None:
    """The first date the page's structured data declares."""
    for group, keys in _PAGEMAP_DATES:
        entry = _pagemap_entry(item, group)
        for key in keys:
            if found := iso_date(entry.get(key)):
                return found
    return None


def _url(item: dict[str, Any]) -> str | None:
    """The result's address: for Google's own marketing links (`/appserve/mkt/`, a redirect),
    the page they lead to, as the page declares it (`og:url`) where it does."""
    url = http_url(item.get("link"))
    if url and url.startswith(_MARKETING_REDIRECT):
        return http_url(_pagemap_entry(item, "metatags").get("og:url")) or url
    return url


def snippet_and_date(snippet: str) -> tuple[str, str | None]:
    """The snippet without its leading date, and that date as `YYYY-MM-DD`."""
    match = _ELLIPSIS_DATE_RE.match(snippet)
    if match and (published := human_date(match[1])):
        return snippet[match.end() :], published
    if age := _ELLIPSIS_AGE_RE.match(snippet):
        return snippet[age.end() :], None
    return split_date_prefix(snippet)


def _api_error(response: HttpResponse) -> EngineError | None:
    """Google's `{"error": {"code", "message", "status", "errors": [{"reason"}]}}`, typed."""
    data = json_body(response)
    error = data.get("error") if isinstance(data, dict) else None
    if not error:
        return None
    if not isinstance(error, dict):
        return api_error(error, response)
    message = str(error.get("message") or error.get("status") or f"HTTP {response.status}")
    reasons = {e.get("reason") for e in error.get("errors") or [] if isinstance(e, dict)}
    if error.get("status") == "RESOURCE_EXHAUSTED" or reasons & _QUOTA_REASONS:
        message = f"quota exceeded: {message}"
    return api_error(message, response)


class GoogleCSE(Engine):
    """Programmable Search: `items[]` with `title`, `link`, `snippet`; dates from `pagemap`
    metadata or a "May 5, 2018 ..." snippet prefix. `items` is absent when nothing matched."""

    name = "google_cse"
    markup = False
    index = "google"
    base_url = "https://www.googleapis.com"
    needs_key = True
    supports_time_range = True
    supports_language = True

    max_num: ClassVar[int] = 10  # the API's maximum per request

    @classmethod
    def key_problem(cls, entry: str) -> str | None:
        try:
            split_credential(entry)
        except EngineAuthError:
            return PAIR_FORM
        return None

    def request(self, query: Query, key: str | None) -> HttpRequest:
        """Parameters: `key`, `cx`, `q`, `num`, `start`, `dateRestrict` (d1..y1), `lr`, `hl`."""
        entry = key or ""
        cx, api_key = split_credential(entry)
        num = min(query.max_results, self.max_num)
        params: dict[str, Any] = {"key": api_key, "cx": cx, "q": query.text, "num": num}
        if query.page > 1:
            params["start"] = (query.page - 1) * num + 1
        if query.time_range:
            params["dateRestrict"] = _DATE_RESTRICT[query.time_range]
        params.update(language_params(query.language, restrict=True))
        return HttpRequest("GET", "/customsearch/v1", params=params, secrets=(api_key, cx, entry))

    def parse(self, response: HttpResponse, query: Query) -> list[Hit]:
        """`items[]` -> hits; an `error` object -> a typed error (quota -> rate-limited)."""
        if error := _api_error(response):
            raise error
        self.check_status(response)
        items = json_object(response, "Programmable Search").get("items", [])
        return ranked_hits(object_list(items, "Programmable Search", "items"), self.name, _hit)


def _hit(item: dict[str, Any], rank: int, engine: str) -> Hit | None:
    # Google wraps snippets with "\n" after a space, or inside a long word (a link): dropping
    # the line breaks keeps the one space and joins the word.
    text = as_text(item.get("snippet")).replace("\n", "")
    snippet, snippet_date = snippet_and_date(collapse_spaces(text))
    published = _published(item) or snippet_date
    return web_hit(_url(item), item.get("title"), snippet, rank, engine, published=published)
