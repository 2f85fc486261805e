"""Tool argument validation: lenient coercion, strict limits, messages that say what is allowed."""

from __future__ import annotations

import pytest

from websearch_mcp.arguments import web_search_args
from websearch_mcp.errors import ToolInputError


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
        (
            {"query": "q", "time_range": "decade"},
            "time_range must be one of day, week, month, year",
        ),
        ({"query": "q", "language": "english please"}, "language must be a language code"),
        ({"query": "q", "explain": "maybe"}, "explain must be true or false"),
        ({"query": "q", "engines": []}, "engines must name at least one engine"),
        ({"query": "q", "engines": [1, 2]}, "engines must be a list of engine names"),
    ],
)
def test_invalid_arguments_say_what_is_allowed(kwargs: dict, message: str) -> None:
    with pytest.raises(ToolInputError, match=message):
        web_search_args(**kwargs)
