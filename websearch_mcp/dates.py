"""Dates: read from what engines, pages and readers print, and for ranking by freshness.

Readers give ISO 8601 text at the precision the source knows (`YYYY-MM-DD`, `YYYY-MM`, `YYYY`)
or None when a value is not a date; `parse_date` turns such text into an aware datetime. The
one place where a request builder reads the clock is `utc_today`.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from datetime import UTC, date, datetime, timedelta
from email.utils import parsedate_to_datetime
from functools import lru_cache
from typing import Any

#: A function returning today's date in UTC; engines that compute date filters accept one.
Clock = Callable[[], date]

_PARTIAL_DATE = re.compile(r"(\d{4})(?:-(\d{1,2}))?(?:-(\d{1,2}))?")
_NAIVE_MIN = datetime.min
_UTC_MIN = datetime.min.replace(tzinfo=UTC)


def utc_today() -> date:
    """Today in UTC: the one place where a request builder reads the clock."""
    return datetime.now(UTC).date()


#: How far back each `time_range` reaches, in days: the longest month and year, so that no day
#: an engine's own filter would count is left out.
RANGE_DAYS = {"day": 1, "week": 7, "month": 31, "year": 366}


def before_range(published: str, time_range: str, today: date) -> bool:
    """Whether an ISO date or stamp (`YYYY-MM-DD...`, `YYYY-MM`, `YYYY`) is wholly before the
    days `time_range` reaches back to from `today`, read at the precision it is given in."""
    start = (today - timedelta(days=RANGE_DAYS[time_range])).isoformat()
    day = published[:10]  # a stamp's day (UTC for news): ISO text sorts as the dates do
    return day < start[: len(day)]


def _partial_date(year: int, month: int | None = None, day: int | None = None) -> str | None:
    """`YYYY-MM-DD`, `YYYY-MM` or `YYYY`, whichever precision is known; None if impossible."""
    try:  # a month or day of 0 ("2019-00-00": metadata writing an unknown one) is no date
        known = date(year, 1 if month is None else month, 1 if day is None else day)
    except (ValueError, OverflowError):  # OverflowError: a part past what C reads (10**20)
        return None
    if month and day:  # most dates: the same digits, without formatting three numbers
        return known.isoformat()
    if month is None:
        return f"{year:04d}"
    return f"{year:04d}-{month:02d}" if day is None else f"{year:04d}-{month:02d}-{day:02d}"


_MONTHS = {
    name: number
    for number, names in enumerate(
        (
            ("jan", "january"),
            ("feb", "february"),
            ("mar", "march"),
            ("apr", "april"),
            ("may",),
            ("jun", "june"),
            ("jul", "july"),
            ("aug", "august"),
            ("sep", "sept", "september"),
            ("oct", "october"),
            ("nov", "november"),
            ("dec", "december"),
        ),
        start=1,
    )
    for name in names
}
_ISO_DATE_RE = re.compile(r"^(\d{4})-(\d{2})-(\d{2})(?:[T ]|$)")
_MONTH = r"(?P<month>[A-Za-z]{3,9})\.?"
_HUMAN_DATE_RES = (
    re.compile(rf"^{_MONTH}\s+(?P<day>\d{{1,2}}),?\s+(?P<year>\d{{4}})$"),  # Mar 3, 2020
    re.compile(rf"^(?P<day>\d{{1,2}})\.?\s+{_MONTH}\s+(?P<year>\d{{4}})$"),  # 3 Mar 2020
    re.compile(r"^(?P<month>\d{1,2})/(?P<day>\d{1,2})/(?P<year>\d{4})$"),  # 3/25/2013 (en-US)
    re.compile(r"^(?P<year>\d{4})-(?P<month>\d{2})-(?P<day>\d{2})$"),
)
_DATE_PREFIX_RE = re.compile(
    r"^(?:(?P<date>[A-Za-z]{3,9}\.? \d{1,2}, \d{4}"  # Mar 3, 2020
    r"|\d{1,2}\.? [A-Za-z]{3,9}\.? \d{4}"  # 3 Mar 2020
    r"|\d{1,2}/\d{1,2}/\d{4}"  # 3/25/2013
    r"|\d{4}-\d{2}-\d{2})"
    r"|(?P<ago>\d+ (?:minute|hour|day|week|month|year)s? ago))"  # stripped, not dated
    r"\s*[·\-–—]\s+"
)
# "2023年5月12日" (year, month, day) and the separator that follows it in a snippet.
_CJK_DATE_RE = re.compile(r"^\s*(\d{4})年(\d{1,2})月(\d{1,2})日\s*[-—·]?\s*")
# "3天前", "5小时前", "2年前", "刚刚", "今天 09:15", "昨天 14:20" (an age Baidu prints where a
# date would be), its separator.
_CJK_AGE_RE = re.compile(
    r"^\s*(?:\d+\s*(?:秒|分钟|小时|天|周|个月|年)前|刚刚|(?:今天|昨天|前天)(?:\s*\d{1,2}:\d{2})?)"
    r"(?:\s*[-—·]\s*|\s+)(?=\S)"
)
# "2004 Feb 15", "2004 Feb", "2004 Jan-Feb", "2004 Spring" (PubMed); month names by 3 letters.
_YEAR_MONTH_RE = re.compile(r"^(\d{4}) ([A-Za-z]{3})[A-Za-z]*\.?(?: (\d{1,2})\b)?")
# ISO dates and stamps at any precision: "2004", "2004-02", "2004/02/01 00:00", "...T15:05Z".
_NUMERIC_RE = re.compile(r"^(\d{4})(?:[-/](\d{1,2})(?:[-/](\d{1,2}))?)?(?:$|[T\s])")


def iso_date(value: Any) -> str | None:
    """`YYYY-MM-DD` from an ISO 8601 timestamp, an RFC 2822 date or a printed date
    (`human_date`); None when unreadable."""
    if not isinstance(value, str) or not value.strip():
        return None
    text = value.strip()
    match = _ISO_DATE_RE.match(text)
    if match:
        return _partial_date(int(match[1]), int(match[2]), int(match[3]))
    try:
        parsed = parsedate_to_datetime(text)
    except (TypeError, ValueError, IndexError):
        return human_date(text)
    return parsed.date().isoformat()


def human_date(value: Any) -> str | None:
    """`YYYY-MM-DD` from the dates result pages print ("Mar 3, 2020", "3/25/2013"), else None."""
    if not isinstance(value, str):
        return None
    text = value.strip()
    for pattern in _HUMAN_DATE_RES:
        match = pattern.match(text)
        if not match:
            continue
        month_text = match["month"]
        month = int(month_text) if month_text.isdigit() else _MONTHS.get(month_text.lower())
        if month is None:
            return None
        return _partial_date(int(match["year"]), month, int(match["day"]))
    return None


def split_date_prefix(snippet: str) -> tuple[str, str | None]:
    """A snippet without a leading "Mar 3, 2020 · " (Bing, Google) and that date as `YYYY-MM-DD`.

    Only real dates are taken off: "Python 3, 2020 - ..." stays as it is.
    """
    match = _DATE_PREFIX_RE.match(snippet)
    if not match:
        return snippet, None
    if match["ago"]:
        return snippet[match.end() :], None
    published = human_date(match["date"])
    return (snippet[match.end() :], published) if published else (snippet, None)


def split_cjk_date(text: str) -> tuple[str, str | None]:
    """Text without a leading "2023年5月12日 - " (Chinese pages) and that date as `YYYY-MM-DD`.

    A recent page's age printed there instead ("3天前 ", "昨天 14:20 - ") is taken off, not
    dated. Other text stays whole, dated when all of it is a date (`iso_date`).
    """
    match = _CJK_DATE_RE.match(text)
    if not match:
        if age := _CJK_AGE_RE.match(text):
            return text[age.end() :], None
        return text, iso_date(text)
    published = _partial_date(int(match[1]), int(match[2]), int(match[3]))
    return (text[match.end() :], published) if published else (text, None)


def publication_date(value: Any) -> str | None:
    """An ISO 8601 date at the precision the source knows: `2004-02-01`, `2004-02` or `2004`.

    Reads ISO dates and timestamps, `2004/02/01 00:00`, `2004 Feb 15`, `2004 Feb` and a bare
    year (int or string).
    """
    if isinstance(value, int) and not isinstance(value, bool):
        return _partial_date(value) if 1000 <= value <= 9999 else None
    if not isinstance(value, str):
        return None
    text = value.strip()
    match = _YEAR_MONTH_RE.match(text)
    if match and match[2].lower() in _MONTHS:
        return _partial_date(
            int(match[1]), _MONTHS[match[2].lower()], int(match[3]) if match[3] else None
        )
    match = _NUMERIC_RE.match(text)
    if match:
        month, day = (int(part) if part else None for part in (match[2], match[3]))
        return _partial_date(int(match[1]), month, day)
    return None


def date_from_parts(value: Any) -> str | None:
    """The date of a CSL `{"date-parts": [[y, m, d]]}` (Crossref), where any part may be missing."""
    try:
        parts = [int(p) for p in value["date-parts"][0] if p is not None]
    except (KeyError, IndexError, TypeError, ValueError, OverflowError):  # int(`1e400`)
        return None
    return _partial_date(*parts[:3]) if parts else None


@lru_cache(maxsize=4096)
def parse_date(value: str | None) -> datetime | None:
    """An ISO 8601 date or date-time (or a bare year / year-month) as an aware datetime."""
    if not value:
        return None
    text = value.strip()
    try:
        parsed = datetime.fromisoformat(text)
    except ValueError:
        match = _PARTIAL_DATE.match(text)
        if not match:
            return None
        try:
            day = date(int(match.group(1)), int(match.group(2) or 1), int(match.group(3) or 1))
        except ValueError:
            return None
        parsed = datetime(day.year, day.month, day.day)
    if parsed.tzinfo:
        return parsed
    # `parsed.replace(tzinfo=UTC)` as two exact operations on whole days, seconds and
    # microseconds: a keyword call to `replace`, or the constructor with the seven fields read
    # one by one, is the costliest step of reading a date. (Fold stays 0, as in `parsed`.)
    return _UTC_MIN + (parsed - _NAIVE_MIN)


def period_end(text: str, start: datetime) -> datetime | None:
    """The end of the period a date without a time names, read by `parse_date` as `start`: the
    year of `2024`, the month of `2024-03`, the day of `2024-03-05`; None for a time."""
    match = _PARTIAL_DATE.fullmatch(text.strip())
    if match is None:
        return None
    try:
        if match.group(3):
            return start + timedelta(days=1)
        if match.group(2):
            return start.replace(year=start.year + start.month // 12, month=start.month % 12 + 1)
        return start.replace(year=start.year + 1)
    except (OverflowError, ValueError):  # the last period of year 9999
        return None
