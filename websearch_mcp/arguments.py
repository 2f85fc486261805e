"""Tool argument validation: lenient coercion ("5" -> 5), strict checks, clear errors."""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from websearch_mcp.errors import ToolInputError
from websearch_mcp.models import TIME_RANGES, Query

MAX_QUERY_CHARS = 500
MAX_RESULTS_LIMIT = 50
MAX_PAGE = 50
MIN_YEAR = 1000
MAX_INTENT_CHARS = 200
#: How many of the top results' pages `web_search` may read in one call.
MAX_READ = 10
#: Intents with a prompt of their own; any other short phrase is passed on as the reader's aim.
INTENTS = ("research", "code", "news", "howto")
_LANGUAGE_RE = re.compile(r"^[A-Za-z]{2,3}(?:[-_][A-Za-z0-9]{2,8})*$")
_TRUE = {"true", "1", "yes", "on"}
_FALSE = {"false", "0", "no", "off", ""}


def as_int(name: str, value: Any, low: int, high: int) -> int:
    """An integer in [low, high]; numeric strings and integral floats are accepted."""
    number: int | None = None
    if isinstance(value, bool):
        number = None
    elif isinstance(value, int):
        number = value
    elif isinstance(value, float) and value.is_integer():
        number = int(value)
    elif isinstance(value, str) and value.strip().lstrip("+-").isdigit():
        number = int(value.strip())
    if number is None or not low <= number <= high:
        raise ToolInputError(f"{name} must be an integer from {low} to {high} (got {value!r})")
    return number


def as_bool(name: str, value: Any) -> bool:
    """A boolean; "true"/"false", "1"/"0", "yes"/"no" are accepted."""
    if isinstance(value, bool):
        return value
    if isinstance(value, int) and value in (0, 1):
        return bool(value)
    if isinstance(value, str) and value.strip().lower() in _TRUE | _FALSE:
        return value.strip().lower() in _TRUE
    raise ToolInputError(f"{name} must be true or false (got {value!r})")


def as_query(value: Any) -> str:
    """The query text, stripped; non-empty and at most `MAX_QUERY_CHARS` characters."""
    if not isinstance(value, str):
        raise ToolInputError(f"query must be a string (got {type(value).__name__})")
    text = " ".join(value.split())
    if not text:
        raise ToolInputError("query must not be empty")
    if len(text) > MAX_QUERY_CHARS:
        raise ToolInputError(
            f"query must be at most {MAX_QUERY_CHARS} characters (got {len(text)})"
        )
    return text


def as_engine_list(value: Any) -> list[str] | None:
    """None, a list of names, or a comma-separated string of names."""
    if value is None:
        return None
    if isinstance(value, str):
        value = [part for part in value.split(",") if part.strip()]
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise ToolInputError('engines must be a list of engine names, e.g. ["bing", "tavily"]')
    names = list(dict.fromkeys(v.strip().lower() for v in value if v.strip()))
    if not names:
        raise ToolInputError("engines must name at least one engine, or be left out for all")
    return names


def as_intent(value: Any) -> str | None:
    """What the answer is for: one of `INTENTS` (any case) or free text of at most
    `MAX_INTENT_CHARS` characters; None (or blank) when left out."""
    if value is None:
        return None
    if not isinstance(value, str):
        raise ToolInputError(
            f"intent must be one of {', '.join(INTENTS)} or a short phrase (got {value!r})"
        )
    text = " ".join(value.split())
    if len(text) > MAX_INTENT_CHARS:
        raise ToolInputError(
            f"intent must be at most {MAX_INTENT_CHARS} characters (got {len(text)})"
        )
    if text.lower() in INTENTS:
        return text.lower()
    return text or None


@dataclass(frozen=True, slots=True)
class WebSearchArgs:
    """`web_search` arguments after validation. `summarize` asks for an LLM summary shaped by
    `intent` (both offered only when a model is configured). `read` is how many of the top
    results' pages to read for passages."""

    query: Query
    engines: list[str] | None
    explain: bool
    intent: str | None = None
    summarize: bool = False
    read: int = 0


def web_search_args(
    query: Any,
    max_results: Any = 10,
    time_range: Any = None,
    engines: Any = None,
    language: Any = None,
    explain: Any = False,
    intent: Any = None,
    summarize: Any = None,
    read: Any = 0,
) -> WebSearchArgs:
    """Validate `web_search` arguments; `ToolInputError` names the argument and what is allowed.

    `summarize` defaults to true when an intent is given, false otherwise.
    """
    if time_range is not None and time_range not in TIME_RANGES:
        raise ToolInputError(
            f"time_range must be one of {', '.join(TIME_RANGES)} or left out (got {time_range!r})"
        )
    if language is not None and (not isinstance(language, str) or not _LANGUAGE_RE.match(language)):
        raise ToolInputError(
            f"language must be a language code such as 'en', 'de' or 'zh-CN' (got {language!r})"
        )
    chosen = as_intent(intent)
    return WebSearchArgs(
        query=Query(
            text=as_query(query),
            max_results=as_int("max_results", max_results, 1, MAX_RESULTS_LIMIT),
            time_range=time_range,
            language=language,
        ),
        engines=as_engine_list(engines),
        explain=as_bool("explain", explain),
        intent=chosen,
        summarize=chosen is not None if summarize is None else as_bool("summarize", summarize),
        read=as_int("read", read, 0, MAX_READ),
    )


def max_year() -> int:
    """The latest year a paper can carry: next year (journals date issues ahead)."""
    return datetime.now(UTC).year + 1


def as_year(name: str, value: Any) -> int | None:
    """A publication year from `MIN_YEAR` to next year, or None when left out ("" too)."""
    if value is None or (isinstance(value, str) and not value.strip()):
        return None
    return as_int(name, value, MIN_YEAR, max_year())


@dataclass(frozen=True, slots=True)
class AcademicSearchArgs:
    """`academic_search` arguments after validation."""

    query: Query
    engines: list[str] | None
    explain: bool


def academic_search_args(
    query: Any,
    max_results: Any = 10,
    engines: Any = None,
    year_from: Any = None,
    year_to: Any = None,
    page: Any = 1,
    explain: Any = False,
) -> AcademicSearchArgs:
    """Validate `academic_search` arguments; `ToolInputError` names the argument and what is
    allowed."""
    start, end = as_year("year_from", year_from), as_year("year_to", year_to)
    if start is not None and end is not None and start > end:
        raise ToolInputError(
            f"year_from ({start}) must not be after year_to ({end}); swap them or leave one out"
        )
    return AcademicSearchArgs(
        query=Query(
            text=as_query(query),
            max_results=as_int("max_results", max_results, 1, MAX_RESULTS_LIMIT),
            page=as_int("page", page, 1, MAX_PAGE),
            year_from=start,
            year_to=end,
        ),
        engines=as_engine_list(engines),
        explain=as_bool("explain", explain),
    )
