"""Flat output schemas accept exactly what the answer types accept."""

from __future__ import annotations

from typing import Any, NotRequired

import jsonschema
import pytest
from hypothesis import given
from hypothesis import strategies as st
from pydantic import TypeAdapter
from typing_extensions import TypedDict

from websearch_mcp.search.answer import PapersOut, SummarizedSearchOut
from websearch_mcp.server.schemas import flat_schema


class Inner(TypedDict):
    name: str
    count: int | None


class Outer(TypedDict):
    items: list[Inner]
    one: Inner | None
    tags: NotRequired[list[str] | None]
    extra: NotRequired[dict[str, Any] | None]
    loose: NotRequired[Any | None]
    by_name: NotRequired[dict[str, Inner]]


def test_references_are_inlined_and_null_unions_become_type_lists() -> None:
    flat = flat_schema(TypeAdapter(Outer).json_schema())
    inner = flat["properties"]["items"]["items"]
    assert inner["properties"]["count"]["type"] == ["integer", "null"]
    assert flat["properties"]["one"]["type"] == ["object", "null"]
    assert flat["properties"]["one"]["properties"] == inner["properties"]
    assert flat["properties"]["tags"]["type"] == ["array", "null"]
    # Anything or null is anything; a map's values are inlined like a list's items.
    assert flat["properties"]["loose"] == {"title": "Loose"}
    by_name = flat["properties"]["by_name"]["additionalProperties"]
    assert by_name["properties"] == inner["properties"]
    assert "$defs" not in flat and "anyOf" not in str(flat) and "$ref" not in str(flat)


@pytest.mark.parametrize(
    "schema",
    [
        {"anyOf": [{"type": "string"}, {"type": "integer"}]},
        {"anyOf": [{"type": "string"}, {"type": "integer"}, {"type": "null"}]},
        {"anyOf": [{"type": "string"}]},  # a union of one, which null does not satisfy
        {"oneOf": [{"type": "string"}]},
        {"properties": {"a": {"allOf": [{"type": "string"}]}}},
        {"$ref": "#/$defs/Missing", "$defs": {}},
    ],
)
def test_what_has_no_flat_form_is_refused(schema: dict[str, Any]) -> None:
    with pytest.raises(ValueError):
        flat_schema(schema)


_JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=3),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=3), inner),
    max_leaves=8,
)
_INNER = st.fixed_dictionaries({"name": _JSON, "count": _JSON})


@given(
    st.fixed_dictionaries(
        {"items": st.lists(_INNER, max_size=2) | _JSON, "one": _INNER | _JSON},
        optional={
            "tags": _JSON,
            "extra": _JSON,
            "loose": _JSON,
            "by_name": st.dictionaries(st.text(max_size=3), _INNER, max_size=2) | _JSON,
        },
    )
)
def test_the_flat_schema_accepts_what_the_original_accepts(value: dict[str, Any]) -> None:
    original = TypeAdapter(Outer).json_schema()
    flat = flat_schema(original)
    assert jsonschema.Draft202012Validator(flat).is_valid(value) == (
        jsonschema.Draft202012Validator(original).is_valid(value)
    )


@pytest.mark.parametrize("answer", [SummarizedSearchOut, PapersOut])
def test_the_answer_types_flatten(answer: type) -> None:
    flat = flat_schema(TypeAdapter(answer).json_schema())
    assert flat["properties"]["results"]["items"]["properties"]["url"] == {
        "title": "Url",
        "type": "string",
    }
