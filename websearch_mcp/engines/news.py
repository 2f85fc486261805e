"""What the news engines share: a publication time read from whatever an engine prints, as UTC,
the publisher's name, and the news hit itself.

A time is written `YYYY-MM-DDTHH:MM:SSZ` when the engine gives one (an RFC 822 `pubDate`, an
ISO stamp, "10/07/2025, 01:25 PM, +0000 UTC", "3 hours ago" counted back from `now`), and
`YYYY-MM-DD` when it gives only a day ("June 3, 2024", "6/13/2023").
"""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta
from email.utils import parsedate_to_datetime
from typing import Any

from websearch_mcp.dates import human_date
from websearch_mcp.engines.common import web_hit
from websearch_mcp.engines.text import clean_text
from websearch_mcp.models import Hit

#: Query suffixes Google News reads as a time range ("when:1d").
GOOGLE_WHEN = {"day": "1d", "week": "7d", "month": "30d", "year": "1y"}

_UNITS = {
    "s": 1,
    "sec": 1,
    "second": 1,
    "m": 60,
    "min": 60,
    "minute": 60,
    "h": 3600,
    "hr": 3600,
    "hour": 3600,
    "d": 86_400,
    "day": 86_400,
    "w": 604_800,
    "wk": 604_800,
    "week": 604_800,
    "mo": 2_592_000,
    "month": 2_592_000,
    "y": 31_536_000,
    "yr": 31_536_000,
    "year": 31_536_000,
}
_AGO_RE = re.compile(r"^(\d+|an?|one)\s*([a-z]+?)s?\.?\s+ago$")
# SerpApi's Google News dates: "10/07/2025, 01:25 PM, +0000 UTC" (month first).
_MERIDIEM_RE = re.compile(r"\d\s*[AP]\.?M\b", re.I)
_CLOCK_RE = re.compile(r",?\s+(?:at\s+)?\d{1,2}:\d{2}.*$", re.I)
_US_STAMP_RE = re.compile(
    r"^(\d{1,2})/(\d{1,2})/(\d{4}),\s*(\d{1,2}):(\d{2})\s*([AP]M)(?:,\s*([+-]\d{4}))?", re.I
)


def stamp(moment: datetime) -> str:
    """`moment` in UTC as `YYYY-MM-DDTHH:MM:SSZ` (a naive one is taken as UTC)."""
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    # isoformat, not strftime: "%Y" does not pad a year before 1000 to four digits.
    return moment.astimezone(UTC).replace(tzinfo=None).isoformat(timespec="seconds") + "Z"


def relative_time(text: str, now: datetime) -> str | None:
    """ "3 hours ago", "5 mins ago", "an hour ago", "yesterday", "just now" counted back from
    `now`; None for anything else."""
    text = text.strip().lower()
    if text in ("just now", "now"):
        return stamp(now)
    if text == "yesterday":
        return stamp(now - timedelta(days=1))
    match = _AGO_RE.match(text)
    if not match or match[2] not in _UNITS:
        return None
    count = int(match[1]) if match[1].isdigit() else 1
    try:
        return stamp(now - timedelta(seconds=count * _UNITS[match[2]]))
    except OverflowError:  # before year 1
        return None


def _us_stamp(text: str) -> str | None:
    match = _US_STAMP_RE.match(text)
    if not match:
        return None
    month, day, year, hour, minute = (int(match[i]) for i in range(1, 6))
    hour = hour % 12 + (12 if match[6].upper() == "PM" else 0)
    offset = match[7] or "+0000"
    sign = -1 if offset[0] == "-" else 1
    shift = timedelta(hours=int(offset[1:3]), minutes=int(offset[3:5])) * sign
    try:
        local = datetime(year, month, day, hour, minute, tzinfo=UTC)
    except ValueError:
        return None
    return stamp(local - shift)


def news_time(value: Any, now: datetime) -> str | None:
    """A news item's publication time as UTC (see the module's doc), else None."""
    if not isinstance(value, str) or not value.strip():
        return None
    try:
        return _read_time(value.strip(), now)
    except OverflowError:  # a stamp before year 1 or after 9999 once in UTC
        return None


def _read_time(text: str, now: datetime) -> str | None:
    if found := relative_time(text, now) or _us_stamp(text):
        return found
    if text[:4].isdigit() and "T" in text:
        try:
            return stamp(datetime.fromisoformat(text.replace("Z", "+00:00")))
        except ValueError:
            return None
    if _MERIDIEM_RE.search(text):  # "Jun 3, 2024, 3:00 PM", in no time zone said: its day
        return human_date(_CLOCK_RE.sub("", text))
    if "," in text and ":" in text:  # RFC 822: "Tue, 14 Jul 2026 03:33:16 GMT"
        try:
            return stamp(parsedate_to_datetime(text))
        except (TypeError, ValueError, IndexError):
            return None
    return human_date(text)


def without_source(title: str, source: str | None) -> tuple[str, str | None]:
    """A Google News title without its " - Publisher" ending, and the publisher: `source` when
    given (the ending is removed only when it names it, which may hold " - " itself: "News of
    the United States - NOTUS"), else the text after the last " - "."""
    if source is not None:
        kept = title.rstrip()
        head = kept.removesuffix(f" - {source.strip()}")
        return (head.strip(), source) if head != kept and head.strip() else (title, source)
    head, dash, tail = title.rpartition(" - ")
    if not dash or not head.strip():
        return title, source
    return head.strip(), tail.strip() or None


def news_hit(
    url: str | None,
    title: str | None,
    snippet: str,
    rank: int,
    engine: str,
    *,
    published: str | None,
    source: Any,
) -> Hit | None:
    """A news result: a web hit with the publisher's name (cleaned; None when blank)."""
    hit = web_hit(url, title, snippet, rank, engine, published=published)
    if hit is not None and isinstance(source, str):
        # Some feeds end the name with a separator ("San Juan Record |").
        hit.source = clean_text(source, 100).strip(" |-·") or None
    return hit
