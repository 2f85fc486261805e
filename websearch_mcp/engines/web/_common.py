"""Small pure helpers shared by the web engine parsers: JSON loading, dates, URLs, markdown."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from datetime import UTC, date, datetime
from email.utils import parsedate_to_datetime
from typing import Any

from websearch_mcp.errors import EngineParseError
from websearch_mcp.models import HttpResponse

#: A function returning today's date in UTC; engines that compute date filters accept one.
Clock = Callable[[], date]


def utc_today() -> date:
    """Today in UTC: the one place where a request builder reads the clock."""
    return datetime.now(UTC).date()


def load_json(response: HttpResponse, what: str) -> Any:
    """The decoded JSON body; `EngineParseError` naming `what` (never quoting the body) if not."""
    try:
        return json.loads(response.content)
    except (ValueError, UnicodeDecodeError):
        raise EngineParseError(f"{what} answered with a body that is not JSON") from None


def json_object(response: HttpResponse, what: str) -> dict[str, Any]:
    """The decoded body when it is a JSON object, else `EngineParseError`."""
    data = load_json(response, what)
    if not isinstance(data, dict):
        raise EngineParseError(f"{what} answered with JSON that is not an object")
    return data


def result_list(container: Any, key: str, what: str) -> list[dict[str, Any]]:
    """`container[key]` as a list of objects (non-objects skipped), else `EngineParseError`."""
    items = container.get(key) if isinstance(container, dict) else None
    if not isinstance(items, list):
        raise EngineParseError(f"{what} answered without a {key!r} list")
    return [item for item in items if isinstance(item, dict)]


def http_url(value: Any) -> str | None:
    """`value` when it is an absolute http(s) URL (protocol-relative ones get https)."""
    if not isinstance(value, str):
        return None
    url = value.strip()
    if url.startswith("//"):
        url = "https:" + url
    return url if url.startswith(("http://", "https://")) else None


def as_float(value: Any) -> float | None:
    """A finite number as float, anything else None (booleans are not scores)."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    number = float(value)
    return number if number == number and abs(number) != float("inf") else None


_ISO_DATE_RE = re.compile(r"^(\d{4})-(\d{2})-(\d{2})(?:[T ]|$)")


def iso_date(value: Any) -> str | None:
    """`YYYY-MM-DD` from an ISO 8601 timestamp or an RFC 2822 date; None when unreadable."""
    if not isinstance(value, str) or not value.strip():
        return None
    text = value.strip()
    match = _ISO_DATE_RE.match(text)
    if match:
        return _checked(int(match[1]), int(match[2]), int(match[3]))
    try:
        parsed = parsedate_to_datetime(text)
    except (TypeError, ValueError, IndexError):
        return human_date(text)
    return parsed.date().isoformat()


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
_MONTH = r"(?P<month>[A-Za-z]{3,9})\.?"
_HUMAN_DATE_RES = (
    re.compile(rf"^{_MONTH}\s+(?P<day>\d{{1,2}}),?\s+(?P<year>\d{{4}})$"),  # Mar 3, 2020
    re.compile(rf"^(?P<day>\d{{1,2}})\.?\s+{_MONTH}\s+(?P<year>\d{{4}})$"),  # 3 Mar 2020
    re.compile(r"^(?P<month>\d{1,2})/(?P<day>\d{1,2})/(?P<year>\d{4})$"),  # 3/25/2013 (en-US)
    re.compile(r"^(?P<year>\d{4})-(?P<month>\d{2})-(?P<day>\d{2})$"),
)


def human_date(text: str) -> str | None:
    """`YYYY-MM-DD` from the dates result pages print ("Mar 3, 2020", "3/25/2013"), else None."""
    text = text.strip()
    for pattern in _HUMAN_DATE_RES:
        match = pattern.match(text)
        if not match:
            continue
        month_text = match["month"]
        month = int(month_text) if month_text.isdigit() else _MONTHS.get(month_text.lower())
        if month is None:
            return None
        return _checked(int(match["year"]), month, int(match["day"]))
    return None


_DATE_PREFIX_RE = re.compile(
    r"^(?:(?P<date>[A-Za-z]{3,9}\.? \d{1,2}, \d{4}"  # Mar 3, 2020
    r"|\d{1,2}\.? [A-Za-z]{3,9}\.? \d{4}"  # 3 Mar 2020
    r"|\d{1,2}/\d{1,2}/\d{4}"  # 3/25/2013
    r"|\d{4}-\d{2}-\d{2})"
    r"|(?P<ago>\d+ (?:minute|hour|day|week|month|year)s? ago))"  # stripped, not dated
    r"\s*[·\-–—]\s+"
)


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


def _checked(year: int, month: int, day: int) -> str | None:
    try:
        return date(year, month, day).isoformat()
    except ValueError:
        return None


_MD_LINK_RE = re.compile(r"\[([^\]]*)\]\((?:[^()\s]|\([^()\s]*\))*\)")
_MD_HEADING_RE = re.compile(r"(^|\s)#{1,6}(?=\s)")
_MD_EMPHASIS_RE = re.compile(r"\*\*|__")


def strip_markdown(text: str) -> str:
    """Markdown noise some APIs put in snippets removed: links keep their text, no `**`/`#`."""
    text = _MD_LINK_RE.sub(r"\1", text)
    text = _MD_HEADING_RE.sub(r"\1", text)
    return _MD_EMPHASIS_RE.sub("", text)
