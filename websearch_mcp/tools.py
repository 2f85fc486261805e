"""The MCP server and its tools: argument schemas, output shapes, nothing else.

Arguments are typed loosely for the SDK (a model may send "5" for 5) and advertised strictly in the
JSON schema; `arguments.py` validates them and words the errors. Annotations are evaluated at
definition time (no `from __future__ import annotations`): the schemas close over local values.
"""

from typing import Annotated, Any

from mcp.server import CacheHint
from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.types import CallToolResult, TextContent, ToolAnnotations
from pydantic import BaseModel, ConfigDict, WithJsonSchema

from websearch_mcp import __version__
from websearch_mcp.arguments import (
    INTENTS,
    MAX_INTENT_CHARS,
    MAX_PAGE,
    MAX_QUERY_CHARS,
    MAX_READ,
    MAX_RESULTS_LIMIT,
    MIN_YEAR,
    academic_search_args,
    as_int,
    max_year,
    web_search_args,
)
from websearch_mcp.errors import ToolInputError
from websearch_mcp.fetch import DEFAULT_MAX_CHARS, MAX_CHARS_LIMIT, validate_fetch_args
from websearch_mcp.limits import check_query_length
from websearch_mcp.metrics import Metrics
from websearch_mcp.models import TIME_RANGES
from websearch_mcp.render import page_text, papers_text, search_text
from websearch_mcp.service import SearchFailed, SearchService
from websearch_mcp.summarize import ProgressFn

#: How long a client may keep `tools/list`: the tools change only with the configuration, which
#: takes a restart; every caller sees the same list.
TOOLS_CACHE = CacheHint(ttl_ms=3_600_000, scope="public")
#: Request families the SDK registers on every server; this one offers tools only.
NOT_OFFERED = ("prompts/", "resources/")
READ_ONLY = ToolAnnotations(readOnlyHint=True, openWorldHint=True, idempotentHint=True)
WEB_SEARCH_DOC = (
    "Search the web with several engines at once and get one fused, de-duplicated list.\n\n"
    "Each result names the engines that found it; a report per engine says how it fared.\n\n"
    "With read: N the pages of the top N results are read as well (as fetch_page reads them, "
    "within the search's time limit) and each of those results gains passages, the few short "
    "parts of its page that best answer the query, and page_status (ok, timeout, refused, "
    "blocked, error or unsupported)."
)
WEB_SEARCH_SUMMARY_DOC = (
    f"{WEB_SEARCH_DOC}\n\n"
    "With intent (or summarize: true) a short summary of the results comes first, citing them "
    "as [n] with their URLs; the results are always returned too. When no summary could be "
    "made, summary_error says why."
)


class EngineOut(BaseModel):
    model_config = ConfigDict(extra="allow")
    name: str
    status: str
    results: int = 0
    latency_ms: int | None = None
    error: str | None = None


class ResultOut(BaseModel):
    model_config = ConfigDict(extra="allow")
    title: str
    url: str
    snippet: str
    engines: list[str]
    score: float
    published: str | None = None
    score_details: dict[str, Any] | None = None
    passages: list[str] | None = None
    page_status: str | None = None
    page_error: str | None = None


class SearchOut(BaseModel):
    """The structured answer of a search tool."""

    model_config = ConfigDict(extra="allow")
    query: str
    results: list[ResultOut]
    engines: list[EngineOut]
    cached: bool
    partial: bool
    note: str | None = None


class SummarizedSearchOut(SearchOut):
    """The structured answer of `web_search` when a model is configured."""

    summary: str | None = None
    summary_error: str | None = None


class PaperOut(ResultOut):
    """One paper: a search result plus what the indexes know of the paper."""

    authors: list[str] | None = None
    venue: str | None = None
    doi: str | None = None
    citations: int | None = None
    pdf_url: str | None = None
    ids: dict[str, str] | None = None


class PapersOut(SearchOut):
    """The structured answer of `academic_search`."""

    results: list[PaperOut]  # type: ignore[assignment]
    page: int


class PageOut(BaseModel):
    """The structured answer of `fetch_page`."""

    model_config = ConfigDict(extra="allow")
    url: str
    final_url: str
    title: str | None = None
    content: str
    content_type: str
    published: str | None = None
    total_chars: int
    start: int
    next_start: int | None = None
    truncated: bool
    capped: str | None = None  # which extraction limit cut the text, when one did


def _schema(schema: dict[str, Any]) -> Any:
    return WithJsonSchema(schema)


def _progress_reporter(ctx: Context | None) -> ProgressFn | None:
    """Summary progress as MCP progress notifications: the characters so far as `progress`, the
    new text as `message`. The SDK sends them only when the client asked (a `progressToken`) and
    the response is a stream; with JSON responses they have no way to the client."""
    if ctx is None:
        return None

    async def report(size: int, delta: str) -> None:
        await ctx.report_progress(size, None, delta)

    return report


def _offer_tools_only(mcp: MCPServer) -> None:
    """Drop the SDK's prompt and resource handlers, so that the handshake (which advertises
    every registered family) claims only tools. The SDK has no public way to unregister."""
    handlers = mcp._lowlevel_server._request_handlers
    for method in [m for m in handlers if m.startswith(NOT_OFFERED)]:
        del handlers[method]


def build_mcp(
    service: SearchService, web_engines: list[str], metrics: Metrics | None = None
) -> MCPServer:
    """An MCP server whose tools call `service`; every call is counted in `metrics`."""
    metrics = metrics or Metrics()
    max_query_chars = service.settings.server.max_query_chars
    mcp = MCPServer(
        "websearch-mcp",
        version=__version__,
        instructions=(
            "web_search queries several search engines at once and returns one fused, "
            "de-duplicated list with the engines that found each result. academic_search does "
            "the same over scholarly indexes and returns papers."
        ),
        cache_hints={"tools/list": TOOLS_CACHE},
        # No change notifications: the tools never change while the server runs.
        subscriptions=False,
    )
    _offer_tools_only(mcp)

    query_arg = Annotated[
        Any,
        _schema(
            {
                "type": "string",
                "minLength": 1,
                "maxLength": MAX_QUERY_CHARS,
                "description": "What to search for, in plain words.",
            }
        ),
    ]
    max_results_arg = Annotated[
        Any,
        _schema(
            {
                "type": "integer",
                "minimum": 1,
                "maximum": MAX_RESULTS_LIMIT,
                "default": 10,
                "description": "How many fused results to return.",
            }
        ),
    ]
    time_range_arg = Annotated[
        Any,
        _schema(
            {
                "anyOf": [{"type": "string", "enum": list(TIME_RANGES)}, {"type": "null"}],
                "default": None,
                "description": "Only results from the last day, week, month or year.",
            }
        ),
    ]
    engines_arg = Annotated[
        Any,
        _schema(
            {
                "anyOf": [
                    {"type": "array", "items": {"type": "string", "enum": web_engines}},
                    {"type": "null"},
                ],
                "default": None,
                "description": "Engines to ask; all enabled engines when left out.",
            }
        ),
    ]
    language_arg = Annotated[
        Any,
        _schema(
            {
                "anyOf": [{"type": "string"}, {"type": "null"}],
                "default": None,
                "description": "Preferred result language, e.g. 'en' or 'zh-CN'.",
            }
        ),
    ]
    explain_arg = Annotated[
        Any,
        _schema(
            {
                "type": "boolean",
                "default": False,
                "description": "Add score_details to each result: every signal and rank.",
            }
        ),
    ]

    read_arg = Annotated[
        Any,
        _schema(
            {
                "type": "integer",
                "minimum": 0,
                "maximum": MAX_READ,
                "default": 0,
                "description": (
                    "Also read the pages of this many top results and add passages that answer "
                    "the query (costs up to the search's time limit; 0 reads none)."
                ),
            }
        ),
    ]

    async def run_web_search(on_progress: ProgressFn | None, **arguments: Any) -> CallToolResult:
        try:
            with metrics.track("web_search", "mcp") as record:
                args = web_search_args(**arguments)
                check_query_length(args.query.text, max_query_chars)
                record.answer = answer = await service.web_search(args, on_progress)
        except (ToolInputError, SearchFailed) as err:
            raise ToolError(str(err)) from None
        return CallToolResult(
            content=[TextContent(type="text", text=search_text(answer))],
            structured_content=answer,
        )

    # Only with a configured model does the tool take `intent` and `summarize`: clients without
    # one see no parameter that could not work.
    if service.summarizer is not None:

        @mcp.tool(annotations=READ_ONLY, structured_output=True, description=WEB_SEARCH_SUMMARY_DOC)
        async def web_search(
            query: query_arg,
            max_results: max_results_arg = 10,
            time_range: time_range_arg = None,
            engines: engines_arg = None,
            language: language_arg = None,
            explain: explain_arg = False,
            read: read_arg = 0,
            intent: Annotated[
                Any,
                _schema(
                    {
                        "anyOf": [
                            {
                                "type": "string",
                                "maxLength": MAX_INTENT_CHARS,
                                "examples": list(INTENTS),
                            },
                            {"type": "null"},
                        ],
                        "default": None,
                        "description": (
                            "What the answer is for: research, code, news or howto, or a short "
                            "phrase of your own. Shapes the summary and turns it on."
                        ),
                    }
                ),
            ] = None,
            summarize: Annotated[
                Any,
                _schema(
                    {
                        "type": "boolean",
                        "description": (
                            "Add a short summary of the results that cites them as [n]; "
                            "true by default when intent is given."
                        ),
                    }
                ),
            ] = None,
            ctx: Context | None = None,
        ) -> Annotated[CallToolResult, SummarizedSearchOut]:
            return await run_web_search(
                _progress_reporter(ctx),
                query=query,
                max_results=max_results,
                time_range=time_range,
                engines=engines,
                language=language,
                explain=explain,
                read=read,
                intent=intent,
                summarize=summarize,
            )

    else:

        @mcp.tool(annotations=READ_ONLY, structured_output=True, description=WEB_SEARCH_DOC)
        async def web_search(
            query: query_arg,
            max_results: max_results_arg = 10,
            time_range: time_range_arg = None,
            engines: engines_arg = None,
            language: language_arg = None,
            explain: explain_arg = False,
            read: read_arg = 0,
        ) -> Annotated[CallToolResult, SearchOut]:
            return await run_web_search(
                None,
                query=query,
                max_results=max_results,
                time_range=time_range,
                engines=engines,
                language=language,
                explain=explain,
                read=read,
            )

    academic_engines = service.orchestrator.names("academic")
    year_schema = {
        "anyOf": [
            {"type": "integer", "minimum": MIN_YEAR, "maximum": max_year()},
            {"type": "null"},
        ],
        "default": None,
    }

    @mcp.tool(annotations=READ_ONLY, structured_output=True)
    async def academic_search(
        query: Annotated[
            Any,
            _schema(
                {
                    "type": "string",
                    "minLength": 1,
                    "maxLength": MAX_QUERY_CHARS,
                    "description": "The papers to find: a topic, title words or author names.",
                }
            ),
        ],
        max_results: Annotated[
            Any,
            _schema(
                {
                    "type": "integer",
                    "minimum": 1,
                    "maximum": MAX_RESULTS_LIMIT,
                    "default": 10,
                    "description": "How many papers to return.",
                }
            ),
        ] = 10,
        engines: Annotated[
            Any,
            _schema(
                {
                    "anyOf": [
                        {"type": "array", "items": {"type": "string", "enum": academic_engines}},
                        {"type": "null"},
                    ],
                    "default": None,
                    "description": "Indexes to ask; all enabled academic indexes when left out.",
                }
            ),
        ] = None,
        year_from: Annotated[
            Any,
            _schema({**year_schema, "description": "Only papers published in or after this year."}),
        ] = None,
        year_to: Annotated[
            Any,
            _schema(
                {**year_schema, "description": "Only papers published in or before this year."}
            ),
        ] = None,
        page: Annotated[
            Any,
            _schema(
                {
                    "type": "integer",
                    "minimum": 1,
                    "maximum": MAX_PAGE,
                    "default": 1,
                    "description": "Which page of each index's results to fuse (1 first).",
                }
            ),
        ] = 1,
        explain: Annotated[
            Any,
            _schema(
                {
                    "type": "boolean",
                    "default": False,
                    "description": "Add score_details to each paper: every signal and rank.",
                }
            ),
        ] = False,
    ) -> Annotated[CallToolResult, PapersOut]:
        """Search scholarly literature in several indexes at once (arXiv, Crossref, OpenAlex,
        Semantic Scholar, PubMed, Europe PMC, dblp ...) and get one list of papers.

        The same paper from several indexes is one result (matched by DOI, arXiv id, PubMed id
        or title and year), with authors, year, venue, DOI, citation count and a PDF link where
        known, and the indexes that found it.
        """
        try:
            with metrics.track("academic_search", "mcp") as record:
                args = academic_search_args(
                    query, max_results, engines, year_from, year_to, page, explain
                )
                check_query_length(args.query.text, max_query_chars)
                record.answer = answer = await service.academic_search(args)
        except (ToolInputError, SearchFailed) as err:
            raise ToolError(str(err)) from None
        return CallToolResult(
            content=[TextContent(type="text", text=papers_text(answer))],
            structured_content=answer,
        )

    @mcp.tool(annotations=READ_ONLY, structured_output=True)
    async def fetch_page(
        url: Annotated[
            Any,
            _schema(
                {
                    "type": "string",
                    "format": "uri",
                    "description": "The http or https URL of the page to read.",
                }
            ),
        ],
        max_chars: Annotated[
            Any,
            _schema(
                {
                    "type": "integer",
                    "minimum": 1,
                    "maximum": MAX_CHARS_LIMIT,
                    "default": DEFAULT_MAX_CHARS,
                    "description": "How many characters to return.",
                }
            ),
        ] = DEFAULT_MAX_CHARS,
        start: Annotated[
            Any,
            _schema(
                {
                    "type": "integer",
                    "minimum": 0,
                    "default": 0,
                    "description": "Where to start: the next_start of the previous call.",
                }
            ),
        ] = 0,
    ) -> Annotated[CallToolResult, PageOut]:
        """Read a web page or PDF as clean Markdown text, in windows of max_chars characters.

        Navigation, ads and boilerplate are dropped. Pass next_start as start to read on.
        Private and internal addresses are refused.
        """
        try:
            with metrics.track("fetch_page", "mcp") as record:
                max_chars = as_int("max_chars", max_chars, 1, MAX_CHARS_LIMIT)
                start = as_int("start", start, 0, 2**31)
                validate_fetch_args(url, max_chars, start)
                record.answer = page = await service.fetch_page(
                    url.strip(), max_chars=max_chars, start=start
                )
        except ToolInputError as err:
            raise ToolError(str(err)) from None
        return CallToolResult(
            content=[TextContent(type="text", text=page_text(page))], structured_content=page
        )

    return mcp
