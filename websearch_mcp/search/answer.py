"""The answer's shape, typed once: what the search tools, the SearXNG endpoint, the text
rendering and the cache all hold (plain dicts at run time, so JSON and the cache take them as
they are).

The same types are the tools' advertised output schemas (made flat by `server.schemas`, so their
names are titles only); a key marked `Hidden` is in answers but not advertised; a key with a
`Field` default is advertised as optional with that default.
"""

from __future__ import annotations

from typing import Annotated, Any, NotRequired

import orjson
from pydantic import ConfigDict, Field, with_config
from pydantic.json_schema import SkipJsonSchema as Hidden
from typing_extensions import TypedDict

#: Answers carry more keys than they advertise (and may gain some): clients must accept them.
_OPEN = ConfigDict(extra="allow")
_NONE = Field(default=None)


@with_config(_OPEN)
class EngineOut(TypedDict):
    # How one engine fared (`EngineReport.to_dict`). No docstring: it would be advertised.

    name: str
    status: str
    results: NotRequired[Annotated[int, Field(default=0)]]
    latency_ms: NotRequired[Annotated[int | None, _NONE]]
    error: NotRequired[Annotated[str | None, _NONE]]
    #: Engine-level list quality in [0, 1], where a strategy judged the list.
    quality: NotRequired[Hidden[float]]
    #: What each try did, when there was more than one.
    attempts: NotRequired[Hidden[list[str]]]


@with_config(_OPEN)
class ResultOut(TypedDict):
    # One fused result (`RankedResult.to_dict`), with passages when its page was read.

    title: str
    url: str
    snippet: str
    engines: list[str]
    score: float
    published: NotRequired[Annotated[str | None, _NONE]]
    #: A news result's publisher; `undated` when no engine dated it; `also`: the same story
    #: from other publishers (source, url, published).
    source: NotRequired[str]
    undated: NotRequired[bool]
    also: NotRequired[list[dict[str, Any]]]
    score_details: NotRequired[Annotated[dict[str, Any] | None, _NONE]]
    passages: NotRequired[Annotated[list[str] | None, _NONE]]
    page_status: NotRequired[Annotated[str | None, _NONE]]
    page_error: NotRequired[Annotated[str | None, _NONE]]


class PageReading(TypedDict):
    """What reading a result's page (`web_search` with `read`) adds to the result."""

    page_status: str
    passages: list[str]
    page_error: NotRequired[str]


@with_config(_OPEN)
class PaperOut(ResultOut):
    """One paper: a search result plus what the indexes know of the paper."""

    authors: NotRequired[Annotated[list[str] | None, _NONE]]
    venue: NotRequired[Annotated[str | None, _NONE]]
    doi: NotRequired[Annotated[str | None, _NONE]]
    citations: NotRequired[Annotated[int | None, _NONE]]
    pdf_url: NotRequired[Annotated[str | None, _NONE]]
    ids: NotRequired[Annotated[dict[str, str] | None, _NONE]]


@with_config(_OPEN)
class SearchOut(TypedDict):
    """The structured answer of a search tool."""

    query: str
    results: list[ResultOut]
    engines: list[EngineOut]
    cached: bool
    partial: bool
    note: NotRequired[Annotated[str | None, _NONE]]
    #: How long the fan-out and ranking took when the answer was made.
    took_ms: NotRequired[Hidden[int]]
    #: How old a cached answer is.
    cache_age_seconds: NotRequired[Hidden[int]]


@with_config(_OPEN)
class SummarizedSearchOut(SearchOut):
    """The structured answer of `web_search` when a model is configured."""

    summary: NotRequired[Annotated[str | None, _NONE]]
    summary_error: NotRequired[Annotated[str | None, _NONE]]


@with_config(_OPEN)
class PapersOut(SearchOut):
    """The structured answer of `academic_search`."""

    results: list[PaperOut]  # type: ignore[misc]
    page: int


@with_config(_OPEN)
class PageOut(TypedDict):
    """The structured answer of `fetch_page`."""

    url: str
    final_url: str
    title: NotRequired[Annotated[str | None, _NONE]]
    content: str
    content_type: str
    published: NotRequired[Annotated[str | None, _NONE]]
    total_chars: int
    start: int
    next_start: NotRequired[Annotated[int | None, _NONE]]
    truncated: bool
    #: Which extraction limit cut the text, when one did.
    capped: NotRequired[Annotated[str | None, _NONE]]
    #: The reader API that read the page, when direct fetching could not.
    via: NotRequired[Hidden[str]]
    #: The page's text came from the page cache.
    cached: NotRequired[Hidden[bool]]


def without_details(answer: SearchOut) -> SearchOut:
    """The answer without `score_details` (which only `explain` asks for)."""
    results = [{k: v for k, v in r.items() if k != "score_details"} for r in answer["results"]]
    return {**answer, "results": results}  # type: ignore[typeddict-item]


#: The shape of a stored answer (`Answered.stored`, and the `rest_seconds` the search service
#: adds); part of the cache key, so that a change of it never reads an entry of the old shape.
#: 3: an answer that left out a resting engine says when that rest ends; one of form 2 does not.
STORED_FORM = 3


class Answered:
    """A search's answer without its score details, and the details apart: most calls do not
    `explain`, and a cached answer is then read without parsing the details. `details` holds
    each result's, in order, or their JSON text as the cache keeps it (parsed on first use)."""

    __slots__ = ("answer", "details")

    def __init__(self, answer: SearchOut, details: list[Any] | str) -> None:
        self.answer = answer
        self.details = details

    @classmethod
    def of(cls, answer: SearchOut) -> Answered:
        """Split an answer whose results have their `score_details`."""
        return cls(without_details(answer), [r.get("score_details") for r in answer["results"]])

    @classmethod
    def from_stored(cls, stored: dict[str, Any]) -> Answered | None:
        """The answer as `stored()` kept it; None for a value of any other shape."""
        answer, details = stored.get("answer"), stored.get("details")
        if not (isinstance(answer, dict) and isinstance(answer.get("results"), list)):
            return None
        return cls(answer, details) if isinstance(details, str) else None  # type: ignore[arg-type]

    def stored(self) -> dict[str, Any]:
        """The answer as the cache keeps it: the details as one JSON text."""
        details = self.details
        if not isinstance(details, str):
            details = orjson.dumps(details).decode()
        return {"answer": self.answer, "details": details}

    def explained(self) -> SearchOut:
        """The answer with each result's `score_details` back, last as `explain` shows them."""
        if isinstance(self.details, str):
            self.details = orjson.loads(self.details)
        results = [
            {**r, "score_details": d}
            for r, d in zip(self.answer["results"], self.details, strict=True)
        ]
        return {**self.answer, "results": results}  # type: ignore[typeddict-item]
