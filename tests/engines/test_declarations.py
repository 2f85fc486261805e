"""The engine contract's declarations: what the base derives, and the types every engine keeps."""

from __future__ import annotations

import json

import pytest

from testing.engine_answers import parse
from websearch_mcp.engines.base import Engine
from websearch_mcp.engines.registry import ENGINES
from websearch_mcp.errors import EngineRateLimited
from websearch_mcp.models import Query


def test_a_keyed_engine_reads_its_name_api_keys_unless_it_names_its_own() -> None:
    class Keyed(Engine):
        name = "some_api"
        needs_key = True

    class OwnVariable(Engine):
        name = "other_api"
        needs_key = True
        key_env = "OTHER_TOKENS"

    class Keyless(Engine):
        name = "open_api"

    assert Keyed.key_env == "SOME_API_API_KEYS"
    assert OwnVariable.key_env == "OTHER_TOKENS"
    assert Keyless.key_env is None
    assert Engine.key_env is None


_CHECKS = {
    "str": lambda v: isinstance(v, str),
    "str | None": lambda v: v is None or isinstance(v, str),
    "bool": lambda v: isinstance(v, bool),
    "int | None": lambda v: v is None or (isinstance(v, int) and v > 0),
    "float": lambda v: isinstance(v, int | float) and not isinstance(v, bool),
    "float | None": lambda v: v is None or (isinstance(v, int | float) and v > 0),
    "Literal['web', 'academic']": lambda v: v in ("web", "academic"),
    # The categories of a web search: a non-empty set of known ones.
    "frozenset[str]": lambda v: isinstance(v, frozenset) and v and v <= {"general", "news"},
}


@pytest.mark.parametrize("name", sorted(ENGINES))
def test_every_declaration_has_the_type_the_base_declares(name: str) -> None:
    cls = ENGINES[name]
    hints = Engine.__annotations__
    assert set(hints) >= {"name", "kind", "base_url", "needs_key", "index", "key_env"}
    for attribute, hint in hints.items():
        declared = hint.removeprefix("ClassVar[").removesuffix("]")
        value = getattr(cls, attribute)
        assert _CHECKS[declared](value), f"{name}.{attribute} = {value!r} is not {declared}"
    assert cls.name == name


@pytest.mark.parametrize("name", sorted(n for n, cls in ENGINES.items() if cls.kind == "web"))
def test_an_engine_sends_the_time_range_and_language_it_declares_it_supports(name: str) -> None:
    engine = ENGINES[name]()
    key = "cx-1:key-1" if engine.needs_key else None  # Programmable Search: a pair
    plain = engine.request(Query(text="rust async"), key)
    recent = engine.request(Query(text="rust async", time_range="week"), key)
    german = engine.request(Query(text="rust async", language="de"), key)
    assert (recent != plain) is engine.supports_time_range
    assert (german != plain) is engine.supports_language


# Each API's error field, all at once: every engine reads the one it knows.
PAYMENT_REQUIRED = json.dumps(
    {
        key: "Payment Required"
        for key in ("error", "message", "readableMessage", "errMsg", "detail", "title")
    }
)


@pytest.mark.parametrize("body", ["", PAYMENT_REQUIRED], ids=["bare", "explained"])
@pytest.mark.parametrize("name", sorted(ENGINES))
def test_every_engine_reads_payment_required_as_a_quota_answer(name: str, body: str) -> None:
    """402: the account behind the request has no credit left, in whatever words. A keyed
    provider's key rests and its next key is tried; a keyless engine rests as after a 429."""
    with pytest.raises(EngineRateLimited) as caught:
        parse(ENGINES[name](), body, 402)
    assert "402" in str(caught.value) or "Payment Required" in str(caught.value)
