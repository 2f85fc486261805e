"""Checks of tool argument values: lenient coercion ("5" -> 5), strict bounds, clear errors
that name the argument. `arguments.py` pairs each with the schema it is advertised under."""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Sequence
from datetime import UTC, datetime
from typing import Any

from websearch_mcp.errors import ToolInputError
from websearch_mcp.models import CATEGORIES, TIME_RANGES
from websearch_mcp.text_encoding import visible

MAX_QUERY_CHARS = 500
MAX_RESULTS_LIMIT = 50
MAX_PAGE = 50
MIN_YEAR = 1000
MAX_INTENT_CHARS = 200
#: How many of the top results' pages `web_search` may read in one call.
MAX_READ = 10
#: How many of the names a call sent that its tool does not take an error quotes.
MAX_UNKNOWN_SHOWN = 5
#: Intents with a prompt of their own; any other short phrase is passed on as the reader's aim.
INTENTS = ("research", "code", "news", "howto")
_LANGUAGE_RE = re.compile(r"^[A-Za-z]{2,3}(?:[-_][A-Za-z0-9]{2,8})*$")
_ENGINE_SPACING = re.compile(r"[\s-]+")
_TRUE = {"true", "1", "yes", "on"}
_FALSE = {"false", "0", "no", "off", ""}


#: Longest integer text read: more digits than any allowed value has, far fewer than Python's
#: 4300-digit conversion limit.
MAX_INT_DIGITS = 18


def as_int(name: str, value: Any, low: int, high: int) -> int:
    """An integer in [low, high]; numeric strings and integral floats are accepted.

    Text is checked for length and digits before it is converted, so a number of thousands of
    digits is refused with the same message as any other out-of-range value.
    """
    number: int | None = None
    if isinstance(value, bool):
        number = None
    elif isinstance(value, int):
        number = value
    elif isinstance(value, float) and value.is_integer():
        number = int(value)
    elif isinstance(value, str):
        text = value.strip()
        digits = text[1:] if text[:1] in "+-" else text
        if digits.isascii() and digits.isdigit() and len(digits) <= MAX_INT_DIGITS:
            number = int(text)
    if number is None or not low <= number <= high:
        raise ToolInputError(
            f"{name} must be an integer from {low} to {high} (got {_shown(value)})"
        )
    return number


_LONG_DIGITS = re.compile(rb"\d{%d}" % (MAX_INT_DIGITS + 1))


class _Digits(str):
    """An integer of more than `MAX_INT_DIGITS` digits, as the JSON text it was sent as."""


def _read_int(text: str) -> int | str:
    return int(text) if len(text.lstrip("-")) <= MAX_INT_DIGITS else _Digits(text)


def long_numbers_as_text(body: bytes) -> bytes:
    """A JSON-RPC `tools/call` body whose arguments hold integers of more than
    `MAX_INT_DIGITS` digits, with those sent as strings instead: the SDK's JSON parser refuses
    a number of thousands of digits outright ("number out of range", naming nothing), while
    the argument checks refuse its digits naming the argument and the allowed range. Nothing
    but the arguments changes (the id above all: JSON-RPC answers it as it was sent); any other
    body, or one with such a number elsewhere that Python cannot read, is returned as it is."""
    if not _LONG_DIGITS.search(body):
        return body
    try:
        message = json.loads(body, parse_int=_read_int)
    except (ValueError, RecursionError):
        return body
    if not isinstance(message, dict) or message.get("method") != "tools/call":
        return body
    params = message.get("params")
    if not isinstance(params, dict):
        return body
    arguments = params.get("arguments")
    try:
        if not isinstance(arguments, dict) or not _holds_digits(arguments):
            return body
        params["arguments"] = _mapped(arguments, str)
        message = _mapped(message, int)  # the id and the rest as they were sent
        return json.dumps(message).encode()
    except (ValueError, RecursionError):  # more digits than Python reads, or nested deeper
        return body  # than it goes: the SDK's to refuse


def _holds_digits(value: Any) -> bool:
    if isinstance(value, dict):
        return any(_holds_digits(item) for item in value.values())
    if isinstance(value, list):
        return any(_holds_digits(item) for item in value)
    return isinstance(value, _Digits)


def _mapped(value: Any, convert: Callable[[str], Any]) -> Any:
    """`value` (parsed JSON) with `convert` applied to every long integer's digits."""
    if isinstance(value, dict):
        return {key: _mapped(item, convert) for key, item in value.items()}
    if isinstance(value, list):
        return [_mapped(item, convert) for item in value]
    return convert(value) if isinstance(value, _Digits) else value


def _shown(value: Any) -> str:
    """A value for an error message as JSON spells it, as it was sent (`true`, `["a"]`, not
    Python's `True`, `['a']`), never thousands of characters (nor a huge int's digits)."""
    if isinstance(value, int) and not isinstance(value, bool) and value.bit_length() > 60:
        return f"a number of about {int(value.bit_length() * 0.30103) + 1} digits"
    text = json.dumps(value, ensure_ascii=False, default=repr)
    if len(text) <= 40:
        return text
    cut = _quoted_start(value) if isinstance(value, str) else text[:30]
    return f"{cut}... ({len(text)} characters)"


def missing(name: str, arguments: Sequence[str], unknown: Sequence[str]) -> str:
    """The error for a required argument left out: with the names the call sent that the tool
    does not take (a model's `q` for `query`), which the tool layer drops, said to be none of
    its arguments, and its arguments listed."""
    if not unknown:
        return f"{name} is required"
    shown = ", ".join(_shown(u) for u in unknown[:MAX_UNKNOWN_SHOWN])
    if len(unknown) > MAX_UNKNOWN_SHOWN:
        shown += f" and {len(unknown) - MAX_UNKNOWN_SHOWN} more"
    return f"{name} is required ({shown}: no such argument; the arguments: {', '.join(arguments)})"


def _quoted_start(text: str) -> str:
    """The start of `text`, quoted as JSON in at most 30 characters: cut before it is quoted,
    so that no escape (`\\u0001`) is cut in half."""
    size = 28
    while len(quoted := json.dumps(text[:size], ensure_ascii=False)) > 30:
        size -= 1
    return quoted


def as_bool(name: str, value: Any) -> bool:
    """A boolean; "true"/"false", "1"/"0", "yes"/"no" are accepted."""
    if isinstance(value, bool):
        return value
    if isinstance(value, int) and value in (0, 1):
        return bool(value)
    if isinstance(value, str) and value.strip().lower() in _TRUE | _FALSE:
        return value.strip().lower() in _TRUE
    raise ToolInputError(f"{name} must be true or false (got {_shown(value)})")


def as_query(value: Any, limit: int = MAX_QUERY_CHARS) -> str:
    """The query text, whitespace collapsed; non-empty and at most `limit` characters."""
    if not isinstance(value, str):
        raise ToolInputError(f"query must be a string (got {type(value).__name__})")
    # Control and format characters (NUL, zero-width spaces, bidirectional overrides) mean
    # nothing to an engine; a query of only those is empty.
    text = " ".join(visible(value).split())
    if not text:
        raise ToolInputError("query must not be empty")
    check_query_length(text, limit)
    return text


def check_unicode(name: str, value: Any) -> None:
    """Refuse a string (or one in a list) holding a lone surrogate: JSON can write one
    (`"\\ud800"`), and it is no character any text, key or URL can hold."""
    texts = value if isinstance(value, list) else [value]
    for text in texts:
        if isinstance(text, str) and not text.isascii():
            try:
                text.encode("utf-8")
            except UnicodeEncodeError as err:
                raise ToolInputError(
                    f"{name} must be Unicode text (got a lone surrogate at character {err.start})"
                ) from None


def check_query_length(text: str, limit: int) -> None:
    """Refuse a query longer than `limit` (`server.max_query_chars`; whitespace collapsed first)."""
    length = len(" ".join(text.split()))
    if length > limit:
        raise ToolInputError(f"query must be at most {limit} characters (got {length})")


#: The `time_range` that sets no limit, as leaving it out does: a strict client's model must
#: send every argument, and an enum of limits alone gave it none to send.
NO_TIME_LIMIT = "any"


def as_time_range(value: Any) -> str | None:
    """One of `TIME_RANGES` (any case, as `category`), or None when left out, empty or `any`."""
    text = value.strip().lower() if isinstance(value, str) else value
    if text in (NO_TIME_LIMIT, ""):
        return None
    if text is not None and text not in TIME_RANGES:
        raise ToolInputError(
            f"time_range must be one of {', '.join(TIME_RANGES)}, {NO_TIME_LIMIT} or left out"
            f" (got {_shown(value)})"
        )
    return text


def as_category(value: Any) -> str:
    """One of `CATEGORIES` (any case); `general` when left out."""
    if value is None:
        return "general"
    text = value.strip().lower() if isinstance(value, str) else value
    if text not in CATEGORIES:
        raise ToolInputError(
            f"category must be one of {', '.join(CATEGORIES)} (got {_shown(value)})"
        )
    return str(text)


def as_language(value: Any) -> str | None:
    """A language code such as `en` or `zh-CN`, or None when left out ("" too: a client in
    strict mode must send every argument, and blank is how it says "any language")."""
    if value is None or (isinstance(value, str) and not value.strip()):
        return None
    if not isinstance(value, str) or not _LANGUAGE_RE.fullmatch(value):
        raise ToolInputError(
            f"language must be a language code such as en, de or zh-CN (got {_shown(value)})"
        )
    return _bcp47_case(value)


def _bcp47_case(code: str) -> str:
    """`zh_hant_tw` as BCP 47 writes it, `zh-Hant-TW`: codes are case-insensitive, and one
    spelling keeps one cache entry per language and what each engine is sent the same."""
    first, *rest = code.replace("_", "-").split("-")
    subtags = [first.lower()]
    for subtag in rest:
        if len(subtag) == 4 and subtag.isalpha():
            subtags.append(subtag.title())  # a script
        elif len(subtag) == 2 and subtag.isalpha():
            subtags.append(subtag.upper())  # a region
        else:
            subtags.append(subtag.lower())
    return "-".join(subtags)


def as_engine_list(value: Any) -> list[str] | None:
    """A list of names, from a list or a comma-separated string; None (every enabled engine)
    when left out or empty, as a strict client that must send a list says "all"."""
    if value is None:
        return None
    if isinstance(value, str):
        value = [part for part in value.split(",") if part.strip()]
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise ToolInputError('engines must be a list of engine names, e.g. ["bing", "tavily"]')
    names = list(dict.fromkeys(engine_name(v) for v in value))
    return [name for name in names if name] or None


def engine_name(text: str) -> str:
    """An engine's name as written here, from how a person or a model may write it: any case,
    spaces or hyphens for `_` ("Google News", "semantic-scholar")."""
    return _ENGINE_SPACING.sub("_", text.strip().lower())


def max_year() -> int:
    """The latest year a paper can carry: next year (journals date issues ahead)."""
    return datetime.now(UTC).year + 1


def as_year(name: str, value: Any) -> int | None:
    """A publication year from `MIN_YEAR` to next year, or None when left out ("" too)."""
    if value is None or (isinstance(value, str) and not value.strip()):
        return None
    return as_int(name, value, MIN_YEAR, max_year())


def as_intent(value: Any) -> str | None:
    """What the answer is for: one of `INTENTS` (any case) or free text of at most
    `MAX_INTENT_CHARS` characters; None (or blank) when left out."""
    if value is None:
        return None
    if not isinstance(value, str):
        raise ToolInputError(
            f"intent must be one of {', '.join(INTENTS)} or a short phrase (got {_shown(value)})"
        )
    text = " ".join(value.split())
    if len(text) > MAX_INTENT_CHARS:
        raise ToolInputError(
            f"intent must be at most {MAX_INTENT_CHARS} characters (got {len(text)})"
        )
    if text.lower() in INTENTS:
        return text.lower()
    return text or None
