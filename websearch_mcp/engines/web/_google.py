"""What Google and the APIs that serve Google results (Serper, SerpApi, Programmable Search)
share: the time-range and language parameters, and the organic result's fields."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from websearch_mcp.dates import iso_date
from websearch_mcp.engines.common import as_text, http_url, web_hit
from websearch_mcp.engines.news import news_hit, news_time
from websearch_mcp.models import Hit

#: `tbs` values for a time range.
QDR = {"day": "qdr:d", "week": "qdr:w", "month": "qdr:m", "year": "qdr:y"}

_TRADITIONAL = {"tw", "hk", "mo", "hant"}
#: Google's own codes for languages whose ISO 639-1 code it does not use (its `lr` list has
#: `lang_iw` and `lang_no`, and `lang_tl` for Filipino).
_GOOGLE_CODES = {"he": "iw", "nb": "no", "nn": "no", "fil": "tl"}


def google_language(language: str | None) -> tuple[str | None, str | None, str | None]:
    """`(hl, gl, lr)` from a language tag: `en` -> (en, None, lang_en), `en-US` -> (en, us,
    lang_en), `zh-TW` -> (zh-TW, tw, lang_zh-TW), `he` -> (iw, None, lang_iw). Google's `hl` and
    `lr` split Chinese by script (its interface languages are `zh-CN` and `zh-TW`, no `zh`)."""
    if not language:
        return None, None, None
    parts = language.strip().replace("_", "-").lower().split("-")
    lang = _GOOGLE_CODES.get(parts[0], parts[0])
    region = next((p for p in parts[1:] if len(p) == 2 and p.isalpha()), None)
    if lang == "zh":
        lang = "zh-TW" if _TRADITIONAL & set(parts[1:]) else "zh-CN"
    return lang, region, f"lang_{lang}"


def language_params(language: str | None, *, restrict: bool = False) -> dict[str, str]:
    """`hl` (interface language) and `gl` (country) for a language tag, or `hl` and `lr` (results
    only in that language) with `restrict`; the parts the tag does not give are left out."""
    hl, gl, lr = google_language(language)
    params = {"hl": hl, "lr": lr} if restrict else {"hl": hl, "gl": gl}
    return {name: value for name, value in params.items() if value}


def organic_hit(item: dict[str, Any], rank: int, engine: str) -> Hit | None:
    """An organic result as Serper and SerpApi relay it: `link`, `title`, `snippet`, `date`."""
    url = http_url(item.get("link"))
    snippet = item.get("snippet") or ""
    return web_hit(
        url, item.get("title"), snippet, rank, engine, published=iso_date(item.get("date"))
    )


def news_article_hit(
    item: dict[str, Any], rank: int, engine: str, now: datetime, source: Any
) -> Hit | None:
    """A Google News article as Serper and SerpApi relay it: `link`, `title`, `snippet` and a
    `date` ("5 mins ago", a stamp), published by `source`."""
    return news_hit(
        http_url(item.get("link")),
        item.get("title"),
        as_text(item.get("snippet")),
        rank,
        engine,
        published=news_time(item.get("date"), now),
        source=source,
    )
