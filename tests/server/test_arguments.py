"""Tool argument validation: lenient coercion, strict limits, messages that say what is allowed."""

from __future__ import annotations

import json
from typing import Any

import pytest
from jsonschema import Draft202012Validator
from mcp.server.mcpserver import MCPServer

from websearch_mcp.errors import ToolInputError
from websearch_mcp.search.answer import PageOut
from websearch_mcp.server.argument_checks import long_numbers_as_text
from websearch_mcp.server.arguments import (
    REQUIRED,
    Arg,
    Limits,
    academic_search_args,
    academic_search_params,
    fetch_page_args,
    fetch_page_params,
    given,
    web_search_args,
    web_search_params,
)
from websearch_mcp.server.metrics import Metrics
from websearch_mcp.server.tools import ToolSpec, tool


def test_lenient_coercion() -> None:
    args = web_search_args(
        "  rust   async  ", max_results="5", explain="true", engines="bing, tavily"
    )
    assert args.query.text == "rust async"
    assert args.query.max_results == 5
    assert args.explain is True
    assert args.engines == ["bing", "tavily"]


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"query": ""}, "query must not be empty"),
        ({"query": "   "}, "query must not be empty"),
        ({"query": 42}, "query must be a string"),
        ({"query": "x" * 501}, "at most 500 characters"),
        ({"query": "q", "max_results": 0}, "max_results must be an integer from 1 to 50"),
        ({"query": "q", "max_results": 500}, "max_results must be an integer from 1 to 50"),
        ({"query": "q", "max_results": "ten"}, "max_results must be an integer"),
        ({"query": "q", "max_results": True}, "max_results must be an integer"),
        ({"query": "q", "max_results": 2.5}, "max_results must be an integer from 1 to 50"),
        (
            {"query": "q", "time_range": "decade"},
            "time_range must be one of day, week, month, year",
        ),
        ({"query": "q", "language": "english please"}, "language must be a language code"),
        ({"query": "q", "language": "en\n"}, "language must be a language code"),
        ({"query": "q", "language": "zh-CN\n"}, "language must be a language code"),
        ({"query": "q", "explain": "maybe"}, "explain must be true or false"),
        ({"query": "q", "explain": 2}, "explain must be true or false"),
        ({"query": "q", "engines": [1, 2]}, "engines must be a list of engine names"),
    ],
)
def test_invalid_arguments_say_what_is_allowed(kwargs: dict, message: str) -> None:
    with pytest.raises(ToolInputError, match=message):
        web_search_args(**kwargs)


def _all_params(limits: Limits) -> list[Arg]:
    return [
        *web_search_params(limits, summaries=True),
        *academic_search_params(limits),
        *fetch_page_params(),
    ]


@pytest.mark.parametrize("max_query_chars", [500, 120])
def test_every_advertised_bound_is_the_checked_bound(max_query_chars: int) -> None:
    """What a tool advertises and what it accepts are one: each bound in the schema is taken
    by the check and one step past it is refused, with the argument named."""
    bounded = 0
    for arg in _all_params(Limits(max_query_chars=max_query_chars)):
        schema = arg.schema
        if arg.default is not REQUIRED:
            assert arg.schema.get("default", arg.default) == arg.default, arg.name
        for key, step in (("minimum", -1), ("maximum", 1)):
            if key in schema:
                bounded += 1
                assert arg.check(schema[key]) == schema[key]
                with pytest.raises(ToolInputError, match=arg.name):
                    arg.check(schema[key] + step)
        if "maxLength" in schema:
            bounded += 1
            assert arg.check("x" * schema["maxLength"])
            with pytest.raises(ToolInputError, match=f"{arg.name} must be at most"):
                arg.check("x" * (schema["maxLength"] + 1))
    assert bounded >= 18  # every numeric and length bound of the three tools was tried


def test_every_number_the_schema_takes_the_check_takes() -> None:
    """The other way round: a client that checks its call against the advertised schema (as
    Gemini CLI does) never sends a number the tool then refuses."""
    tried = 0
    for arg in _all_params(Limits()):
        if arg.schema.get("type") != "integer":
            continue
        for value in (-1, 0, 1, 10**4, 2**31, 2**31 + 1, 10**15):
            if Draft202012Validator(arg.schema).is_valid(value):
                tried += 1
                assert arg.check(value) == value, arg.name
    assert tried >= 10


def test_a_lowered_query_limit_is_the_one_checked() -> None:
    assert web_search_args("x" * 120, max_query_chars=120).query.text == "x" * 120
    with pytest.raises(ToolInputError, match="query must be at most 120 characters \\(got 121\\)"):
        web_search_args("x" * 121, max_query_chars=120)
    with pytest.raises(ToolInputError, match="at most 120 characters"):
        academic_search_args("  ".join(["x" * 60] * 2) + "y", max_query_chars=120)


@pytest.mark.parametrize("blank", ["", "  "])
def test_a_blank_language_is_no_preference(blank: str) -> None:
    # How a client in strict mode, sending every argument, says "any language".
    assert web_search_args("q", language=blank).query.language is None


@pytest.mark.parametrize(
    ("given", "written"),
    [
        ("EN", "en"),
        ("en-us", "en-US"),
        ("zh_tw", "zh-TW"),
        ("ZH-HANT-tw", "zh-Hant-TW"),
        ("sr-LATN", "sr-Latn"),
        ("es-419", "es-419"),
        ("de-CH-1996", "de-CH-1996"),
    ],
)
def test_a_language_is_written_as_bcp_47_writes_it(given: str, written: str) -> None:
    # Codes are case-insensitive: one spelling per language, for the engines and the cache key.
    assert web_search_args("q", language=given).query.language == written


def test_arguments_in_order_or_by_name() -> None:
    by_order = web_search_args("q", 5, "week", ["bing"], "en", True)
    by_name = web_search_args(
        query="q", max_results=5, time_range="week", engines=["bing"], language="en", explain=True
    )
    assert by_order == by_name and by_order.query.time_range == "week"
    with pytest.raises(TypeError, match="'colour'"):
        web_search_args("q", colour="red")
    with pytest.raises(TypeError, match="'query'"):
        web_search_args("q", query="again")
    with pytest.raises(TypeError, match="at most"):
        academic_search_args(*range(8))


def _call(arguments: str, request_id: str = "7", elsewhere: str = "") -> bytes:
    return (
        f'{{"jsonrpc": "2.0", "id": {request_id}, "method": "tools/call", "params": '
        f'{{"name": "web_search", "arguments": {arguments}{elsewhere}}}}}'
    ).encode()


def test_long_integers_in_a_calls_arguments_become_text_and_nothing_else_changes() -> None:
    plain = _call('{"query": "x", "max_results": 5}')
    assert long_numbers_as_text(plain) is plain
    digits = "9" * 5000
    body = _call(
        f'{{"query": "{digits}", "max_results": {digits}, "n": [12, -{digits[:30]}]}}',
        request_id="-" + "1" * 25,
        elsewhere=', "_meta": {"progressToken": 12345678901234567890}',
    )
    message = json.loads(long_numbers_as_text(body))
    assert message["params"]["arguments"] == {
        "query": digits,
        "max_results": digits,
        "n": [12, "-" + digits[:30]],
    }
    assert message["id"] == -int("1" * 25)  # the id and the rest exactly as sent
    assert message["params"]["_meta"] == {"progressToken": 12345678901234567890}


@pytest.mark.parametrize(
    "body",
    [
        b'{"jsonrpc": "2.0", "id": 1000000000000000000000000, "method": "tools/list"}',
        _call('{"query": "x"}', request_id="12345678901234567890"),
        b'{"jsonrpc": "2.0", "id": 1, "method": "ping", "params": {"n": ' + b"9" * 40 + b"}}",
        _call('{"max_results": ' + "9" * 40 + "}", request_id="1" * 5000),  # the id: unreadable
        _call('{"max_results": ' + "9" * 40),  # not JSON: the SDK answers a parse error itself
        b"[" + _call('{"max_results": ' + "9" * 40 + "}") + b"]",  # a batch
    ],
)
def test_any_other_body_is_left_as_it_is(body: bytes) -> None:
    assert long_numbers_as_text(body) is body


def test_a_required_argument_left_out_or_null_is_named() -> None:
    params = web_search_params(Limits(web_engines=["bing"]), summaries=False)
    assert given(params, {"query": "q", "max_results": 5, "unknown": 1}) == {
        "query": "q",
        "max_results": 5,
    }
    with pytest.raises(ToolInputError, match=r"^query is required$"):
        given(params, {"engines": ["bing"]})
    with pytest.raises(ToolInputError, match=r"^query is required$"):
        given(params, {"query": None})
    with pytest.raises(ToolInputError, match=r"^url is required$"):
        given(fetch_page_params(), {"start": 0})
    with pytest.raises(ToolInputError) as named:
        given(params, {}, ["q", "a" * 100])
    assert str(named.value) == (
        'query is required ("q", "aaaaaaaaaaaaaaaaaaaaaaaaaaaa"... (102 characters): no such'
        " argument; the arguments: query, max_results, time_range, engines, language, explain,"
        " read, category)"
    )


def test_a_required_argument_left_out_quotes_at_most_five_names_it_was_sent_instead() -> None:
    params = fetch_page_params()
    with pytest.raises(ToolInputError) as five:
        given(params, {}, ["a", "b", "c", "d", "e"])
    assert str(five.value).startswith('url is required ("a", "b", "c", "d", "e": no such')
    with pytest.raises(ToolInputError) as seven:
        given(params, {}, ["a", "b", "c", "d", "e", "f", "g"])
    assert str(seven.value).startswith(
        'url is required ("a", "b", "c", "d", "e" and 2 more: no such'
    )


@pytest.mark.parametrize(
    "query",
    ["\u200b", "\u200b \ufeff", "\x00", "\u202e\x1b", "\u200b\u200d\u200b", "\x00\u200c\x00"],
)
def test_a_query_of_nothing_visible_is_empty(query: str) -> None:
    """Zero-width spaces, a BOM, NUL are no whitespace to `str.split`: such a query was sent to
    every engine."""
    with pytest.raises(ToolInputError, match=r"^query must not be empty$"):
        web_search_args(query)
    assert web_search_args("\u200bpython\x00 asyncio\u202e").query.text == "python asyncio"


async def test_the_tool_layer_hands_a_tool_its_arguments_as_sent() -> None:
    """What the SDK's tool layer gives a tool, under the signature `tools.py` declares: text
    advertised as text as it is, JSON text for an array, object or null read (some clients send
    every argument as a string), other values and text left for the checks, unknown names
    dropped, a missing argument as its default."""
    received: list[dict[str, Any]] = []

    async def work(arguments: dict[str, Any], _: Any) -> dict[str, Any]:
        received.append(arguments)
        page = {"url": "u", "final_url": "u", "content": "", "content_type": "text/html"}
        return {**page, "total_chars": 0, "start": 0, "truncated": False}

    params = web_search_params(Limits(web_engines=["bing"]), summaries=False)
    spec = ToolSpec("echo", "Echo", "Echo.", params, PageOut, work, lambda answer: "ok")
    layer = MCPServer("test", tools=[tool(spec, Metrics())])
    deep = "[" * 100_000
    calls: list[dict[str, Any]] = [
        {
            "query": '["not", "a", "list"]',
            "engines": ' ["bing"]',
            "time_range": "null",
            "max_results": "5",
            "explain": "true",
            "language": "nl",
            "unknown": 1,
        },
        {"query": "q", "engines": deep, "language": "nan"},
        {"query": "q", "engines": "[bing", "time_range": 5},
    ]
    for sent in calls:
        await layer.call_tool("echo", sent)
    defaults = {a.name: a.default for a in params}
    assert received == [
        {
            **defaults,
            "query": '["not", "a", "list"]',
            "engines": ["bing"],
            "time_range": None,
            "max_results": "5",
            "explain": "true",
            "language": "nl",
        },
        {**defaults, "query": "q", "engines": deep, "language": "nan"},
        {**defaults, "query": "q", "engines": "[bing", "time_range": 5},
    ]


@pytest.mark.parametrize("empty", [[], [" "], "", " , "])
def test_an_empty_engine_list_is_every_enabled_engine(empty: object) -> None:
    # A strict client must send every argument; an empty list is how it says "all".
    assert web_search_args("q", engines=empty).engines is None
    assert web_search_args("q", engines=["Bing", "bing "]).engines == ["bing"]


def test_an_engine_may_be_named_as_it_is_written_for_people() -> None:
    named = ["Google News", "google-news", " Semantic  Scholar ", "semantic_scholar"]
    assert web_search_args("q", engines=named).engines == ["google_news", "semantic_scholar"]
    assert web_search_args("q", engines="Google News, Bing").engines == ["google_news", "bing"]


def test_an_error_spells_the_value_as_json_does() -> None:
    # The model sent JSON: Python's True and ['a'] would be values it never wrote.
    cases: list[tuple[dict[str, Any], str]] = [
        ({"max_results": True}, "(got true)"),
        ({"category": ["news"]}, '(got ["news"])'),
        ({"time_range": "décade"}, '(got "décade")'),
        ({"explain": None, "language": {"en": 1}}, '(got {"en": 1})'),
    ]
    for kwargs, shown in cases:
        with pytest.raises(ToolInputError) as refused:
            web_search_args("q", **kwargs)
        assert str(refused.value).endswith(shown), refused.value


def test_a_time_range_is_read_in_any_case_as_the_category_is() -> None:
    assert web_search_args("q", time_range=" Week ").query.time_range == "week"
    assert web_search_args("q", category="NEWS", time_range="DAY").query.time_range == "day"
    # Empty, as an empty `language` and /search's `time_range=`: not given.
    for none in ("", "  ", "any", "Any"):
        assert web_search_args("q", time_range=none).query.time_range is None


def test_category_is_general_unless_news_is_asked() -> None:
    assert web_search_args("q").query.category == "general"
    assert web_search_args("q", category=None).query.category == "general"
    assert web_search_args("q", category=" News ").query.category == "news"
    for wrong in ("sports", 1, ["news"]):
        with pytest.raises(ToolInputError, match="category must be one of general, news"):
            web_search_args("q", category=wrong)
    (schema,) = [
        a.schema for a in web_search_params(Limits(), summaries=False) if a.name == "category"
    ]
    assert schema["enum"] == ["general", "news"] and schema["default"] == "general"
    assert "anyOf" not in schema


@pytest.mark.parametrize("text", ["\u00b2", "\u0661\u0662", "\uff11\uff12"])
def test_integers_take_only_ascii_digits(text: str) -> None:
    from websearch_mcp.server.argument_checks import as_int

    with pytest.raises(ToolInputError, match="max_results must be an integer from 1 to 50"):
        as_int("max_results", text, 1, 50)


def test_a_year_may_be_next_year_and_no_later() -> None:
    from datetime import UTC, datetime

    from websearch_mcp.server.argument_checks import as_year

    next_year = datetime.now(UTC).year + 1
    assert as_year("year_to", next_year) == next_year
    with pytest.raises(ToolInputError, match="year_to"):
        as_year("year_to", next_year + 1)


def test_a_blank_flag_is_false_and_numbers_may_come_as_text() -> None:
    # A strict client sends every argument, a blank for a flag it leaves as it is.
    assert web_search_args("q", explain="").explain is False
    assert web_search_args("q", explain=" Yes ").explain is True
    # Up to as many digits as any allowed value has.
    assert fetch_page_args("https://a.test/", "20000", " 4096 ") == ("https://a.test/", 20000, 4096)


def test_a_pasted_url_loses_the_spaces_and_line_end_it_brought() -> None:
    assert fetch_page_args("  https://a.test/page\n")[0] == "https://a.test/page"


@pytest.mark.parametrize(
    ("sent", "instead"),
    [
        ("<example.com/docs>", '; send "https://example.com/docs"'),
        ("[docs](example.com/docs)", '; send "https://example.com/docs"'),
        ("<https://example.com/docs>", '; send "https://example.com/docs"'),
        ("example.com/docs", '; send "https://example.com/docs"'),
        ("python asyncio docs", ""),
        ("example.com/python docs", ""),  # words around an address, not one
        ("<not an address>", ""),
        ("[docs](#section)", ""),
        ("mailto:someone@example.com", ""),
        ("<ftp://example.com/file>", ""),
        ("example.com:8080/docs", '; send "https://example.com:8080/docs"'),
    ],
)
def test_a_url_without_its_scheme_is_answered_with_an_address_that_is_one(
    sent: str, instead: str
) -> None:
    """The address suggested for a URL that is not http(s) is the one the brackets or the
    Markdown link hold, never the brackets themselves, and only one that has a host."""
    with pytest.raises(ToolInputError) as refused:
        fetch_page_args(sent)
    message = str(refused.value)
    assert message.startswith("url: only http and https URLs can be fetched")
    assert message.endswith(")" + instead), message


@pytest.mark.parametrize(
    "sent", ["`example.com/docs`", '"example.com/docs"', "'example.com/docs'", "(example.com/docs)"]
)
def test_a_url_without_its_scheme_in_quotes_is_never_answered_with_the_quotes(sent: str) -> None:
    """An address an agent sent as Markdown code or quoted: the suggestion is the address the
    quotes hold, or none, never `https://` before the quote (no host: "`example.com")."""
    with pytest.raises(ToolInputError) as refused:
        fetch_page_args(sent)
    suggested = str(refused.value).partition("; send ")[2]
    assert suggested in ("", '"https://example.com/docs"'), suggested


def test_an_intent_of_its_own_is_read_in_any_case_and_others_kept_as_written() -> None:
    assert web_search_args("q", intent=" Research ").intent == "research"
    assert web_search_args("q", intent="HowTo").intent == "howto"
    assert web_search_args("q", intent="compare  Prices").intent == "compare Prices"


def test_an_error_quotes_a_long_value_cut_short() -> None:
    with pytest.raises(ToolInputError) as refused:
        web_search_args("q", language="x" * 5000)
    message = str(refused.value)
    assert message.startswith("language must be a language code") and len(message) < 200
    assert "(5002 characters)" in message
    with pytest.raises(ToolInputError) as refused:
        web_search_args("q", language="ab" + "\x01" * 100)
    assert str(refused.value).endswith('(got "ab\\u0001\\u0001\\u0001\\u0001"... (604 characters))')
