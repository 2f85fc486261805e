"""Plain data shared by engines, the orchestrator, the ranking pipeline and the tools."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

from websearch_mcp.text_encoding import decode_text

TimeRange = Literal["day", "week", "month", "year"]
TIME_RANGES: tuple[str, ...] = ("day", "week", "month", "year")
#: What a web search searches: the engines' web indexes, or their news indexes.
Category = Literal["general", "news"]
CATEGORIES: tuple[str, ...] = ("general", "news")

EngineStatus = Literal[
    "ok", "empty", "error", "timeout", "blocked", "rate_limited", "irrelevant", "skipped"
]


@dataclass(frozen=True, slots=True)
class Query:
    """What the caller asked for, already validated."""

    text: str
    max_results: int = 10
    time_range: TimeRange | None = None
    language: str | None = None
    page: int = 1
    year_from: int | None = None
    year_to: int | None = None
    category: Category = "general"


@dataclass(slots=True)
class Hit:
    """One result as one engine returned it. `rank` is 1-based within that engine's list."""

    title: str
    url: str
    snippet: str
    rank: int
    engine: str
    score: float | None = None
    published: str | None = None
    authors: tuple[str, ...] = ()
    doi: str | None = None
    venue: str | None = None
    citations: int | None = None
    pdf_url: str | None = None
    #: Other identifiers of a paper than its DOI, where the index gives them:
    #: `{"arxiv": "1706.03762", "pmid": "14760269"}`.
    ids: dict[str, str] = field(default_factory=dict)
    #: The publisher's name, for a news result.
    source: str | None = None
    #: The publisher's site (a host name) where the engine names it beside a link to its own
    #: redirect page (Google News), so that `block_domains` reaches the publisher.
    site: str | None = None
    #: Other reports of the same news story, as the engine grouped them with this one.
    grouped: tuple[Hit, ...] = ()


@dataclass(frozen=True, slots=True)
class HttpRequest:
    """An engine's request, relative to its base URL. Built by pure code, sent by the orchestrator.

    `secrets` lists values (API keys) that must never be shown; `__repr__` hides headers and
    parameters so a request can be logged safely.
    """

    method: str
    path: str
    params: dict[str, Any] | None = None
    json: Any = None
    data: dict[str, Any] | None = None
    headers: dict[str, str] = field(default_factory=dict)
    secrets: tuple[str, ...] = ()

    def __repr__(self) -> str:
        return f"HttpRequest({self.method} {self.path})"


@dataclass(frozen=True, slots=True)
class HttpResponse:
    """What came back: enough for a pure parser to decide between results and a block."""

    status: int
    headers: dict[str, str]
    content: bytes
    url: str = ""

    @property
    def text(self) -> str:
        charset = None
        ctype = self.headers.get("content-type", "")
        if "charset=" in ctype:
            charset = ctype.split("charset=", 1)[1].split(";", 1)[0].strip().strip('"')
        return decode_text(self.content, charset)


@dataclass(slots=True)
class EngineReport:
    """How one engine fared for one request."""

    name: str
    status: EngineStatus
    results: int = 0
    latency_ms: int | None = None
    error: str | None = None
    #: Engine-level list quality in [0, 1], where a strategy judged the list.
    quality: float | None = None
    #: What each try did, when there was more than one (another key, a retry).
    attempts: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"name": self.name, "status": self.status, "results": self.results}
        if self.latency_ms is not None:
            out["latency_ms"] = self.latency_ms
        if self.error:
            out["error"] = self.error
        if self.quality is not None:
            out["quality"] = round(self.quality, 3)
        if self.attempts:
            out["attempts"] = list(self.attempts)
        return out


@dataclass(slots=True)
class RankedResult:
    """One fused result: merged from every engine that returned the same canonical URL."""

    key: str
    title: str
    url: str
    snippet: str
    engines: list[str]
    ranks: dict[str, int]
    score: float = 0.0
    published: str | None = None
    engine_scores: dict[str, float] = field(default_factory=dict)
    authors: tuple[str, ...] = ()
    doi: str | None = None
    venue: str | None = None
    citations: int | None = None
    pdf_url: str | None = None
    #: A paper's identifiers merged from every index that returned it (doi, arxiv, pmid).
    ids: dict[str, str] = field(default_factory=dict)
    details: dict[str, Any] = field(default_factory=dict)
    source: str | None = None
    #: A news result: the same story from other publishers (source, url, published), folded in.
    also: list[dict[str, str | None]] = field(default_factory=list)
    #: A news result whose date no engine gave.
    undated: bool = False
    #: A news story's reports folded into it (their keys), each publisher's copies included:
    #: `also` names one report per publisher. Not part of the answer.
    folded: tuple[str, ...] = field(default=(), compare=False, repr=False)

    def to_dict(self, explain: bool = False) -> dict[str, Any]:
        out: dict[str, Any] = {
            "title": self.title,
            "url": self.url,
            "snippet": self.snippet,
            "engines": list(self.engines),
            "score": round(self.score, 4),
        }
        if self.published:
            out["published"] = self.published
        for name in ("doi", "venue", "citations", "pdf_url"):
            value = getattr(self, name)
            if value is not None:
                out[name] = value
        if self.authors:
            out["authors"] = list(self.authors)
        if self.ids:
            out["ids"] = dict(self.ids)
        if self.source:
            out["source"] = self.source
        if self.undated:
            out["undated"] = True
        if self.also:
            out["also"] = [dict(other) for other in self.also]
        if explain:
            out["score_details"] = self.details
        return out


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


@dataclass(frozen=True, slots=True)
class AcademicSearchArgs:
    """`academic_search` arguments after validation."""

    query: Query
    engines: list[str] | None
    explain: bool
