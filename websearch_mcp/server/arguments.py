"""Every tool argument once: the JSON Schema it is advertised under beside the check its value
passes, and what the configuration narrows (a lowered `server.max_query_chars`, the engines
that can be named) applied to both.

Arguments are advertised strictly and checked leniently (a model may send "5" for 5); the checks
are in `argument_checks.py` and word the errors.
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from websearch_mcp.errors import ToolInputError
from websearch_mcp.fetch import DEFAULT_MAX_CHARS, MAX_CHARS_LIMIT, validate_fetch_args
from websearch_mcp.models import CATEGORIES, TIME_RANGES, AcademicSearchArgs, Query, WebSearchArgs
from websearch_mcp.server.argument_checks import (
    INTENTS,
    MAX_INTENT_CHARS,
    MAX_PAGE,
    MAX_QUERY_CHARS,
    MAX_READ,
    MAX_RESULTS_LIMIT,
    MIN_YEAR,
    NO_TIME_LIMIT,
    as_bool,
    as_category,
    as_engine_list,
    as_int,
    as_intent,
    as_language,
    as_query,
    as_time_range,
    as_year,
    check_unicode,
    max_year,
    missing,
)

__all__ = [
    "INTENTS",
    "MAX_INTENT_CHARS",
    "MAX_PAGE",
    "MAX_QUERY_CHARS",
    "MAX_READ",
    "MAX_RESULTS_LIMIT",
    "MIN_YEAR",
    "REQUIRED",
    "AcademicSearchArgs",
    "Arg",
    "Limits",
    "WebSearchArgs",
    "academic_search_args",
    "academic_search_params",
    "as_int",
    "as_intent",
    "checked",
    "fetch_page_args",
    "fetch_page_params",
    "given",
    "input_schema",
    "max_year",
    "web_search_args",
    "web_search_params",
]

#: The default of an argument that has none (it must be given).
REQUIRED: Any = inspect.Parameter.empty
#: The largest `start` of `fetch_page`.
MAX_START = 2**31


@dataclass(frozen=True, slots=True)
class Arg:
    """One tool argument: its advertised JSON Schema and the check of its value, side by side."""

    name: str
    schema: dict[str, Any]
    check: Callable[[Any], Any]
    default: Any = REQUIRED


@dataclass(frozen=True, slots=True)
class Limits:
    """What the configuration sets: the longest query, the engines that can be named and how
    many web results a search returns when the caller does not say (`search.max_results`)."""

    max_query_chars: int = MAX_QUERY_CHARS
    web_engines: Sequence[str] = ()
    academic_engines: Sequence[str] = ()
    default_results: int = 10


def checked(params: Sequence[Arg], raw: Mapping[str, Any]) -> dict[str, Any]:
    """Each argument's value after its check, in the order advertised; left out (or null, for
    an argument that may be left out): its default. Every argument that fails is named in one
    `ToolInputError`, so that one more call can put them all right."""
    values: dict[str, Any] = {}
    problems: list[str] = []
    for arg in params:
        try:
            values[arg.name] = arg.check(_value(arg, raw.get(arg.name)))
        except ToolInputError as err:
            problems.append(str(err))
    if problems:
        raise ToolInputError("; ".join(problems))
    return values


def _value(arg: Arg, value: Any) -> Any:
    return arg.default if value is None and arg.default is not REQUIRED else value


def given(
    params: Sequence[Arg], sent: Mapping[str, Any], unknown: Sequence[str] = ()
) -> dict[str, Any]:
    """A call's arguments as the tool layer hands them over, read for the tool's checks: names
    the tool does not take are dropped, and a required argument left out (or null) is a
    `ToolInputError` naming it, and the `unknown` names the call sent (the tool layer drops
    them before the tool sees the call)."""
    for arg in params:
        if arg.default is REQUIRED and sent.get(arg.name) is None:
            raise ToolInputError(missing(arg.name, [a.name for a in params], unknown))
    taken = {arg.name: sent[arg.name] for arg in params if arg.name in sent}
    for name, value in taken.items():
        check_unicode(name, value)
    return taken


def input_schema(tool: str, params: Sequence[Arg]) -> dict[str, Any]:
    """The JSON Schema `tool`'s arguments are advertised under: each argument's own, flat (no
    union, no reference: some clients refuse either), those without a default required. An
    optional argument is simply not required; null sent for it still means "not given"."""
    properties = {
        arg.name: {"title": arg.name.replace("_", " ").title(), **arg.schema} for arg in params
    }
    return {
        "type": "object",
        "title": f"{tool}Arguments",
        "properties": properties,
        "required": [arg.name for arg in params if arg.default is REQUIRED],
    }


def _by_name(
    params: Sequence[Arg], given: Sequence[Any], named: Mapping[str, Any]
) -> dict[str, Any]:
    """Arguments given in order and by name, as one mapping (a wrong call is a `TypeError`, as
    for any function)."""
    names = [arg.name for arg in params]
    if len(given) > len(names):
        raise TypeError(f"takes at most {len(names)} arguments: {', '.join(names)}")
    positional = dict(zip(names, given, strict=False))
    if wrong := sorted(set(named) - set(names)) + sorted(set(named) & set(positional)):
        raise TypeError(f"unknown or repeated argument {wrong[0]!r}: takes {', '.join(names)}")
    return {**positional, **named}


def _query(description: str, limit: int) -> Arg:
    schema = {"type": "string", "minLength": 1, "maxLength": limit, "description": description}
    return Arg("query", schema, lambda value: as_query(value, limit))


def _engines(names: Sequence[str], description: str) -> Arg:
    schema = {
        "type": "array",
        "items": {"type": "string", "enum": list(names)},
        "description": description,
    }
    # Unknown names are refused by the orchestrator, which knows which engines are enabled.
    return Arg("engines", schema, as_engine_list, None)


def _flag(name: str, description: str, default: bool | None = False) -> Arg:
    schema: dict[str, Any] = {"type": "boolean", "description": description}
    if default is None:  # left out: decided by another argument
        return Arg(name, schema, lambda v: None if v is None else as_bool(name, v), None)
    return Arg(name, {**schema, "default": default}, lambda v: as_bool(name, v), default)


def _optional(name: str, schema: dict[str, Any], description: str, check: Callable) -> Arg:
    """An argument that may be left out (or sent as null): not required, no default shown."""
    return Arg(name, {**schema, "description": description}, check, None)


def _year(name: str, description: str) -> Arg:
    schema = {"type": "integer", "minimum": MIN_YEAR, "maximum": max_year()}
    return _optional(name, schema, description, lambda v: as_year(name, v))


def _count(name: str, low: int, high: int, default: int, description: str) -> Arg:
    schema = {
        "type": "integer",
        "minimum": low,
        "maximum": high,
        "default": default,
        "description": description,
    }
    return Arg(name, schema, lambda v: as_int(name, v, low, high), default)


def _summary_params() -> tuple[Arg, ...]:
    """`intent` and `summarize`: offered only with a configured model."""
    intent = _optional(
        "intent",
        {"type": "string", "maxLength": MAX_INTENT_CHARS},
        "What the answer is for: research, code, news or howto, or a short phrase of your own. "
        "Shapes the summary and turns it on.",
        as_intent,
    )
    summarize = _flag(
        "summarize",
        "Add a short summary of the results that cites them as [n]; true by default when "
        "intent is given.",
        default=None,
    )
    return intent, summarize


def _category() -> Arg:
    schema = {
        "type": "string",
        "enum": list(CATEGORIES),
        "default": "general",
        "description": "general: the web. news: the engines' news indexes only (engines "
        "without one are skipped); each result has published (UTC) and source, newest "
        "relevant first, and one story from several publishers takes one place, the others "
        "listed in also.",
    }
    return Arg("category", schema, as_category, "general")


def web_search_params(limits: Limits, *, summaries: bool) -> tuple[Arg, ...]:
    """`web_search`'s arguments; `intent` and `summarize` only with `summaries`."""
    return (
        _query("What to search for, in plain words.", limits.max_query_chars),
        _count(
            "max_results",
            1,
            MAX_RESULTS_LIMIT,
            limits.default_results,
            "How many fused results to return.",
        ),
        _optional(
            "time_range",
            {"type": "string", "enum": [*TIME_RANGES, NO_TIME_LIMIT]},
            "Only results from the last day, week, month or year; any (as left out): no limit.",
            as_time_range,
        ),
        _engines(limits.web_engines, "Engines to ask; all enabled engines when left out."),
        _optional(
            "language",
            {"type": "string"},
            "Preferred result language, e.g. 'en' or 'zh-CN'; any when left out or empty.",
            as_language,
        ),
        _flag("explain", "Add score_details to each result: every signal and rank."),
        _count(
            "read",
            0,
            MAX_READ,
            0,
            "Also read the pages of this many top results and add passages that answer the "
            "query (costs up to the search's time limit; 0 reads none).",
        ),
        _category(),
        *(_summary_params() if summaries else ()),
    )


def academic_search_params(limits: Limits) -> tuple[Arg, ...]:
    """`academic_search`'s arguments."""
    return (
        _query("The papers to find: a topic, title words or author names.", limits.max_query_chars),
        _count("max_results", 1, MAX_RESULTS_LIMIT, 10, "How many papers to return."),
        _engines(
            limits.academic_engines, "Indexes to ask; all enabled academic indexes when left out."
        ),
        _year("year_from", "Only papers published in or after this year."),
        _year("year_to", "Only papers published in or before this year."),
        _count("page", 1, MAX_PAGE, 1, "Which page of each index's results to fuse (1 first)."),
        _flag("explain", "Add score_details to each paper: every signal and rank."),
    )


def fetch_page_params() -> tuple[Arg, ...]:
    """`fetch_page`'s arguments (the URL is checked with the others, in `fetch_page_args`)."""
    # No `format: uri`: Gemini and OpenAI's strict mode refuse it, and with it every tool.
    url = {"type": "string", "description": "The http or https URL of the page to read."}
    return (
        Arg("url", url, lambda value: value),
        _count(
            "max_chars", 1, MAX_CHARS_LIMIT, DEFAULT_MAX_CHARS, "How many characters to return."
        ),
        _count("start", 0, MAX_START, 0, "Where to start: the next_start of the previous call."),
    )


# Built once per limit: every call checks its arguments, and building the list (schemas and all)
# cost more than the checks. The checks read the clock themselves (`max_year`), so a list built
# last year checks this year's bounds.
@functools.lru_cache(maxsize=8)
def _web_search_checks(max_query_chars: int, default_results: int) -> tuple[Arg, ...]:
    limits = Limits(max_query_chars, default_results=default_results)
    return web_search_params(limits, summaries=True)


@functools.lru_cache(maxsize=8)
def _academic_search_checks(max_query_chars: int) -> tuple[Arg, ...]:
    return academic_search_params(Limits(max_query_chars))


def web_search_args(
    *given: Any,
    max_query_chars: int = MAX_QUERY_CHARS,
    default_results: int = 10,
    **named: Any,
) -> WebSearchArgs:
    """Validate `web_search` arguments (in `web_search_params` order, or by name; left out:
    their defaults, `default_results` for `max_results`); `ToolInputError` names the argument
    and what is allowed.

    `summarize` defaults to true when an intent is given, false otherwise.
    """
    params = _web_search_checks(max_query_chars, default_results)
    values = checked(params, _by_name(params, given, named))
    chosen = values["intent"]
    return WebSearchArgs(
        query=Query(
            text=values["query"],
            max_results=values["max_results"],
            time_range=values["time_range"],
            language=values["language"],
            category=values["category"],
        ),
        engines=values["engines"],
        explain=values["explain"],
        intent=chosen,
        summarize=chosen is not None if values["summarize"] is None else values["summarize"],
        read=values["read"],
    )


def academic_search_args(
    *given: Any, max_query_chars: int = MAX_QUERY_CHARS, **named: Any
) -> AcademicSearchArgs:
    """Validate `academic_search` arguments (in `academic_search_params` order, or by name);
    `ToolInputError` names the argument and what is allowed."""
    params = _academic_search_checks(max_query_chars)
    values = checked(params, _by_name(params, given, named))
    start, end = values["year_from"], values["year_to"]
    if start is not None and end is not None and start > end:
        raise ToolInputError(
            f"year_from ({start}) must not be after year_to ({end}); swap them or leave one out"
        )
    return AcademicSearchArgs(
        query=Query(
            text=values["query"],
            max_results=values["max_results"],
            page=values["page"],
            year_from=start,
            year_to=end,
        ),
        engines=values["engines"],
        explain=values["explain"],
    )


def fetch_page_args(
    url: Any, max_chars: Any = DEFAULT_MAX_CHARS, start: Any = 0
) -> tuple[str, int, int]:
    """Validate `fetch_page` arguments: the URL (stripped), the window's size and start."""
    values = checked(fetch_page_params(), {"url": url, "max_chars": max_chars, "start": start})
    validate_fetch_args(values["url"], values["max_chars"], values["start"])
    return values["url"].strip(), values["max_chars"], values["start"]
