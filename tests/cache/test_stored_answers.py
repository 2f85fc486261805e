"""A search's answer as the cache keeps it: the score details apart, as one JSON text."""

from __future__ import annotations

import json
from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from websearch_mcp.search import service as service_module
from websearch_mcp.search.answer import STORED_FORM, Answered, without_details
from websearch_mcp.search.configuration import parse_config
from websearch_mcp.search.service import SearchService

_SCALARS = st.none() | st.booleans() | st.integers(-(2**53), 2**53) | st.text(max_size=8)
_VALUES = st.recursive(
    _SCALARS | st.floats(allow_nan=False, allow_infinity=False),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner, max_size=3)
    ),
    max_leaves=10,
)
_RESULT = st.fixed_dictionaries(
    {"title": st.text(max_size=10), "url": st.text(max_size=10), "score": st.floats(0, 1)},
    optional={"published": st.text(max_size=10)},
).flatmap(
    lambda fields: st.dictionaries(st.text(max_size=6), _VALUES, max_size=4).map(
        lambda details: {**fields, "score_details": details}
    )
)
_ANSWER = st.fixed_dictionaries(
    {
        "query": st.text(max_size=10),
        "results": st.lists(_RESULT, max_size=5),
        "engines": st.just([]),
        "cached": st.just(False),
        "partial": st.booleans(),
    }
)


@given(_ANSWER)
def test_a_stored_answer_reads_back_as_it_was(answer: dict[str, Any]) -> None:
    # Through the cache's JSON, as the backends store it.
    stored = json.loads(json.dumps(Answered.of(answer).stored()))  # type: ignore[arg-type]
    assert isinstance(stored["details"], str)
    assert "score_details" not in json.dumps(stored["answer"])
    read = Answered.from_stored(stored)
    assert read is not None
    assert read.answer == without_details(answer)  # type: ignore[arg-type]
    # The same keys in the same order: an explained answer is the one that was stored.
    assert json.dumps(read.explained()) == json.dumps(answer)
    assert json.dumps(read.explained()) == json.dumps(answer)  # parsed once, read again


def test_a_value_of_another_shape_is_no_stored_answer() -> None:
    answer = {"query": "q", "results": [], "engines": [], "cached": False, "partial": False}
    assert Answered.from_stored(Answered.of(answer).stored()) is not None  # type: ignore[arg-type]
    for other in (
        answer,  # an answer stored whole, as before
        {"answer": answer},
        {"answer": answer, "details": []},
        {"answer": {"query": "q"}, "details": "[]"},
        {"answer": "text", "details": "[]"},
    ):
        assert Answered.from_stored(other) is None


def test_the_stored_form_is_part_of_every_search_key(monkeypatch: Any) -> None:
    settings = parse_config({"cache": {"backend": "none"}}, "test", environ={})
    before = SearchService(settings).fingerprint
    monkeypatch.setattr(service_module, "STORED_FORM", STORED_FORM + 1)
    assert SearchService(settings).fingerprint != before
