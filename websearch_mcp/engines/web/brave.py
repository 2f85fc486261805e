"""Brave Search API: `GET /res/v1/web/search`, the key in `X-Subscription-Token`."""

from __future__ import annotations

from datetime import datetime
from functools import partial
from typing import Any, ClassVar

from websearch_mcp.dates import human_date, iso_date
from websearch_mcp.engines.base import Engine
from websearch_mcp.engines.common import (
    api_error,
    as_dict,
    as_text,
    fitted,
    http_url,
    json_body,
    json_object,
    keyed_request,
    ranked_hits,
    result_list,
    web_hit,
)
from websearch_mcp.engines.news import news_hit, news_time
from websearch_mcp.errors import EngineParseError
from websearch_mcp.models import Hit, HttpRequest, HttpResponse, Query

_FRESHNESS = {"day": "pd", "week": "pw", "month": "pm", "year": "py"}

#: Brave's `search_lang` values: it answers any other with HTTP 422 ("Unable to validate
#: request parameter(s)"), which would cost the whole search.
_SEARCH_LANGS = frozenset({
    "ar", "eu", "bn", "bg", "ca", "zh-hans", "zh-hant", "hr", "cs", "da", "nl", "en", "en-gb",
    "et", "fi", "fr", "gl", "de", "el", "gu", "he", "hi", "hu", "is", "it", "jp", "kn", "ko",
    "lv", "lt", "ms", "ml", "mr", "nb", "pl", "pt-br", "pt-pt", "pa", "ro", "ru", "sr", "sk",
    "sl", "es", "sv", "ta", "te", "th", "tr", "uk", "vi",
})  # fmt: skip
#: Subtags that make Chinese the traditional script (a script or a region that writes it).
_TRADITIONAL = frozenset({"hant", "tw", "hk", "mo"})
# Language tags whose Brave code is not their primary subtag.
_LANGUAGES = {
    "ja": "jp",
    "zh": "zh-hans",
    "zh-cn": "zh-hans",
    "zh-sg": "zh-hans",
    "zh-hans": "zh-hans",
    "zh-tw": "zh-hant",
    "zh-hk": "zh-hant",
    "zh-hant": "zh-hant",
    "pt": "pt-pt",
    "pt-br": "pt-br",
    "en-gb": "en-gb",
    "no": "nb",
    "nn": "nb",
    "iw": "he",
}


def search_lang(language: str) -> str | None:
    """Brave's `search_lang` for a language tag such as `de`, `pt-BR` or `zh-CN`; None for a
    language Brave does not list (the search is then asked without one)."""
    tag = language.strip().lower().replace("_", "-")
    primary, *rest = tag.split("-")
    if primary == "zh" and _TRADITIONAL & set(rest):  # zh-Hant-TW, zh-HK: Brave's zh-hant
        return "zh-hant"
    code = _LANGUAGES.get(tag) or _LANGUAGES.get(primary) or primary
    return code if code in _SEARCH_LANGS else None


class Brave(Engine):
    """Brave web search. No score (rank is list order); `page_age` gives the date."""

    name = "brave"
    index = "brave"
    base_url = "https://api.search.brave.com"
    needs_key = True
    supports_time_range = True
    supports_language = True
    categories = frozenset({"general", "news"})

    max_count: ClassVar[int] = 20  # the API's maximum `count`
    max_offset: ClassVar[int] = 9  # the API's maximum page `offset`

    def request(self, query: Query, key: str | None) -> HttpRequest:
        """Query parameters: `q`, `count`, `offset` (page index), `freshness`, `search_lang`;
        a news search asks the news endpoint with the same parameters."""
        # Its documented bounds: "Maximum of 400 characters and 50 words".
        text = fitted(query.text, 400, 50)
        params: dict[str, Any] = {"q": text, "count": min(query.max_results, self.max_count)}
        if query.page > 1:
            params["offset"] = min(query.page - 1, self.max_offset)
        if query.time_range:
            params["freshness"] = _FRESHNESS[query.time_range]
        if query.language and (lang := search_lang(query.language)):
            params["search_lang"] = lang
        path = "/res/v1/news/search" if query.category == "news" else "/res/v1/web/search"
        return keyed_request("GET", path, key, key_header="X-Subscription-Token", params=params)

    def parse(self, response: HttpResponse, query: Query) -> list[Hit]:
        """`web.results[]` (or a news answer's top-level `results[]`) -> hits."""
        _check_error(response)
        self.check_status(response)
        data = json_object(response, "Brave")
        if "web" in data:
            section = data["web"]
        elif data.get("type") == "news":
            section = data
        elif data.get("type") == "search":
            return []  # Brave leaves the `web` section out when it found nothing
        else:
            raise EngineParseError("Brave answered without a 'web' section")
        items = result_list(section, "results", "Brave")
        if query.category == "news":
            return ranked_hits(items, self.name, partial(_news, now=self.now()))
        return ranked_hits(items, self.name, _hit)


def _check_error(response: HttpResponse) -> None:
    """Brave's error answer, `{"type": "ErrorResponse", "error": {"code", "detail"}}`, said by
    its words: a refused key is a 422 whose code is `SUBSCRIPTION_TOKEN_INVALID`."""
    if response.status < 300:
        return
    error = as_dict(as_dict(json_body(response)).get("error"))
    code, detail = as_text(error.get("code")), as_text(error.get("detail"))
    if code or detail:
        raise api_error(f"{detail} ({code})" if code and detail else code or detail, response)


def _hit(item: dict[str, Any], rank: int, engine: str) -> Hit | None:
    """A result; `page_age` is ISO, `age` a calendar date ("September 6, 2019") or "4 days ago"."""
    url = http_url(item.get("url"))
    published = iso_date(item.get("page_age")) or human_date(item.get("age"))
    snippet = item.get("description") or ""
    return web_hit(url, item.get("title"), snippet, rank, engine, published=published)


def _news(item: dict[str, Any], rank: int, engine: str, now: datetime) -> Hit | None:
    """A news result: `page_age` is an ISO stamp in UTC, `age` "48 minutes ago" or a date; the
    publisher is `source` where given, else the site's name."""
    site = as_dict(item.get("meta_url"))
    published = news_time(item.get("page_age"), now) or news_time(item.get("age"), now)
    source = item.get("source") or site.get("netloc") or site.get("hostname")
    snippet = as_text(item.get("description"))
    url = http_url(item.get("url"))
    return news_hit(
        url, item.get("title"), snippet, rank, engine, published=published, source=source
    )
