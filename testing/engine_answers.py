"""Engine answers made by hand for the parser tests, parsing them the way the service does, and
the parameters of the engines' requests."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from websearch_mcp.engines.base import Engine
from websearch_mcp.models import Hit, HttpRequest, HttpResponse, Query


def resp(body: bytes | str, status: int = 200, url: str = "", **headers: str) -> HttpResponse:
    """An answer with `body`; header names as keywords, `_` for `-` (`retry_after=...`)."""
    content = body.encode() if isinstance(body, str) else body
    return HttpResponse(status, {k.replace("_", "-"): v for k, v in headers.items()}, content, url)


def params_of(request: HttpRequest) -> dict[str, Any]:
    """The query parameters of `request`, an engine's GET request (which always has them)."""
    assert request.params is not None, request
    return request.params


def parse(
    engine: Engine,
    body: bytes | str,
    status: int = 200,
    query: Query | None = None,
    **headers: str,
) -> list[Hit]:
    """`engine`'s hits from an answer with `body` to `query` (by default "test query"), their
    titles and snippets made plain as the service makes them."""
    return engine.hits(resp(body, status, **headers), query or Query("test query"))


def edited(body: bytes, path: Sequence[str | int], *value: Any) -> bytes:
    """A recorded JSON answer with the value at `path` replaced by `value`, or dropped when no
    value is given."""
    data = json.loads(body)
    parent = data
    for step in path[:-1]:
        parent = parent[step]
    if value:
        parent[path[-1]] = value[0]
    else:
        del parent[path[-1]]
    return json.dumps(data).encode()


def assert_read_as_missing(
    engine: Engine, body: bytes, path: Sequence[str | int], value: Any, query: Query
) -> None:
    """`engine` reads the answer with `value` at `path` as it reads it without that field: a
    value of a type the API does not document is no value, never its Python text."""
    odd = parse(engine, edited(body, path, value), query=query)
    missing = parse(engine, edited(body, path), query=query)
    assert odd == missing, (value, [hit for hit in odd if hit not in missing][:1])


def assert_clean(hits: list[Hit], engine: str | None = None) -> None:
    """What every parser promises: ranks 1..n, the engine's name, absolute URLs, a title, and
    plain text (no tags or entities, whitespace collapsed) in titles, snippets and venues."""
    assert [h.rank for h in hits] == list(range(1, len(hits) + 1))
    for hit in hits:
        assert engine is None or hit.engine == engine
        assert hit.url.startswith(("http://", "https://")), hit.url
        assert hit.title and hit.title == hit.title.strip()
        for text in (hit.title, hit.snippet, hit.venue or ""):
            assert "<" not in text.replace("<3", ""), text  # "<3级" is real text, not a tag
            assert "&quot;" not in text and "&amp;" not in text and "&#x27;" not in text, text
            assert "  " not in text and "\n" not in text, text
