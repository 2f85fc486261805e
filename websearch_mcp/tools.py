"""The MCP server and its tools: argument schemas, output shapes, nothing else.

Arguments are typed loosely for the SDK (a model may send "5" for 5) and advertised strictly in the
JSON schema; `arguments.py` validates them and words the errors. Annotations are evaluated at
definition time (no `from __future__ import annotations`): the schemas close over local values.
"""

from typing import Annotated, Any

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.types import CallToolResult, TextContent, ToolAnnotations
from pydantic import BaseModel, ConfigDict, WithJsonSchema

from websearch_mcp import __version__
from websearch_mcp.arguments import MAX_QUERY_CHARS, MAX_RESULTS_LIMIT, as_int, web_search_args
from websearch_mcp.errors import ToolInputError
from websearch_mcp.fetch import DEFAULT_MAX_CHARS, MAX_CHARS_LIMIT, validate_fetch_args
from websearch_mcp.limits import check_query_length
from websearch_mcp.models import TIME_RANGES
from websearch_mcp.observability import Metrics
from websearch_mcp.render import page_text, search_text
from websearch_mcp.service import SearchFailed, SearchService

READ_ONLY = ToolAnnotations(readOnlyHint=True, openWorldHint=True, idempotentHint=True)


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


class SearchOut(BaseModel):
    """The structured answer of a search tool."""

    model_config = ConfigDict(extra="allow")
    query: str
    results: list[ResultOut]
    engines: list[EngineOut]
    cached: bool
    partial: bool


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


def _schema(schema: dict[str, Any]) -> Any:
    return WithJsonSchema(schema)


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
            "de-duplicated list with the engines that found each result."
        ),
    )

    @mcp.tool(annotations=READ_ONLY, structured_output=True)
    async def web_search(
        query: Annotated[
            Any,
            _schema(
                {
                    "type": "string",
                    "minLength": 1,
                    "maxLength": MAX_QUERY_CHARS,
                    "description": "What to search for, in plain words.",
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
                    "description": "How many fused results to return.",
                }
            ),
        ] = 10,
        time_range: Annotated[
            Any,
            _schema(
                {
                    "anyOf": [{"type": "string", "enum": list(TIME_RANGES)}, {"type": "null"}],
                    "default": None,
                    "description": "Only results from the last day, week, month or year.",
                }
            ),
        ] = None,
        engines: Annotated[
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
        ] = None,
        language: Annotated[
            Any,
            _schema(
                {
                    "anyOf": [{"type": "string"}, {"type": "null"}],
                    "default": None,
                    "description": "Preferred result language, e.g. 'en' or 'zh-CN'.",
                }
            ),
        ] = None,
        explain: Annotated[
            Any,
            _schema(
                {
                    "type": "boolean",
                    "default": False,
                    "description": "Add score_details to each result: every signal and rank.",
                }
            ),
        ] = False,
    ) -> Annotated[CallToolResult, SearchOut]:
        """Search the web with several engines at once and get one fused, de-duplicated list.

        Each result names the engines that found it; a report per engine says how it fared.
        """
        try:
            with metrics.search("web_search", "mcp") as record:
                args = web_search_args(query, max_results, time_range, engines, language, explain)
                check_query_length(args.query.text, max_query_chars)
                record.answer = answer = await service.web_search(args)
        except (ToolInputError, SearchFailed) as err:
            raise ToolError(str(err)) from None
        return CallToolResult(
            content=[TextContent(type="text", text=search_text(answer))],
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
            max_chars = as_int("max_chars", max_chars, 1, MAX_CHARS_LIMIT)
            start = as_int("start", start, 0, 2**31)
            validate_fetch_args(url, max_chars, start)
            page = await service.fetch_page(url.strip(), max_chars=max_chars, start=start)
        except ToolInputError as err:
            raise ToolError(str(err)) from None
        return CallToolResult(
            content=[TextContent(type="text", text=page_text(page))], structured_content=page
        )

    return mcp
