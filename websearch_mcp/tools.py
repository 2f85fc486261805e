"""The MCP server and its tools, each defined once: a name, a description, its arguments (from
`arguments.py`, schema and check together), its answer's type (from `answer.py`) and the
service call it wires to.

The SDK reads a tool's arguments from its function's signature; each tool's function takes
`**arguments` and is given the signature its `Arg`s describe.
"""

import inspect
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import Annotated, Any

from mcp.server import CacheHint
from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.types import CallToolResult, TextContent, ToolAnnotations
from pydantic import WithJsonSchema

from websearch_mcp import __version__
from websearch_mcp.answer import PageOut, PapersOut, SearchOut, SummarizedSearchOut
from websearch_mcp.arguments import (
    Arg,
    Limits,
    academic_search_args,
    academic_search_params,
    fetch_page_args,
    fetch_page_params,
    web_search_args,
    web_search_params,
)
from websearch_mcp.errors import ToolInputError
from websearch_mcp.metrics import Metrics
from websearch_mcp.render import page_text, papers_text, search_text
from websearch_mcp.service import SearchFailed, SearchService
from websearch_mcp.summarize import ProgressFn

#: How long a client may keep `tools/list`: the tools change only with the configuration, which
#: takes a restart; every caller sees the same list.
TOOLS_CACHE = CacheHint(ttl_ms=3_600_000, scope="public")
#: Request families the SDK registers on every server; this one offers tools only.
NOT_OFFERED = ("prompts/", "resources/")
READ_ONLY = ToolAnnotations(readOnlyHint=True, openWorldHint=True, idempotentHint=True)
INSTRUCTIONS = (
    "web_search queries several search engines at once and returns one fused, "
    "de-duplicated list with the engines that found each result. academic_search does "
    "the same over scholarly indexes and returns papers."
)
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
# These two were docstrings once: clients have been shown their lines indented as in the source.
_INDENT = "\n        "
ACADEMIC_SEARCH_DOC = _INDENT.join(
    [
        "Search scholarly literature in several indexes at once (arXiv, Crossref, OpenAlex,",
        "Semantic Scholar, PubMed, Europe PMC, dblp ...) and get one list of papers.\n",
        "The same paper from several indexes is one result (matched by DOI, arXiv id, PubMed id",
        "or title and year), with authors, year, venue, DOI, citation count and a PDF link where",
        "known, and the indexes that found it.",
        "",
    ]
)
FETCH_PAGE_DOC = _INDENT.join(
    [
        "Read a web page or PDF as clean Markdown text, in windows of max_chars characters.\n",
        "Navigation, ads and boilerplate are dropped. Pass next_start as start to read on.",
        "Private and internal addresses are refused.",
        "",
    ]
)

#: A tool's work: its arguments as the client sent them and the request context in, an answer out.
Work = Callable[[dict[str, Any], Context | None], Awaitable[Any]]


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


def _signature(params: Sequence[Arg], output: type) -> inspect.Signature:
    """The signature the SDK derives a tool's schemas from: each argument advertised as its
    `Arg` says (typed loosely: the check coerces), the context, the answer's type."""
    keyword = inspect.Parameter.KEYWORD_ONLY
    arguments = [
        inspect.Parameter(a.name, keyword, default=a.default, annotation=_advertised(a))
        for a in params
    ]
    context = inspect.Parameter("ctx", keyword, default=None, annotation=Context | None)
    return inspect.Signature(
        [*arguments, context], return_annotation=Annotated[CallToolResult, output]
    )


def _advertised(arg: Arg) -> Any:
    return Annotated[Any, WithJsonSchema(arg.schema)]


@dataclass(frozen=True, slots=True)
class ToolSpec:
    """One tool: what it is advertised as, the service call it wires to, its text rendering."""

    name: str
    description: str
    params: Sequence[Arg]
    #: The answer's type (from `answer.py`): the advertised output schema.
    output: type
    work: Work
    render: Callable[[Any], str]


def tool_specs(service: SearchService, limits: Limits) -> list[ToolSpec]:
    """The three tools, wired to `service`."""

    async def web_search(arguments: dict[str, Any], ctx: Context | None) -> SummarizedSearchOut:
        args = web_search_args(**arguments, max_query_chars=limits.max_query_chars)
        return await service.web_search(args, _progress_reporter(ctx))

    async def academic_search(arguments: dict[str, Any], ctx: Context | None) -> PapersOut:
        args = academic_search_args(**arguments, max_query_chars=limits.max_query_chars)
        return await service.academic_search(args)

    async def fetch_page(arguments: dict[str, Any], ctx: Context | None) -> PageOut:
        url, max_chars, start = fetch_page_args(**arguments)
        return await service.fetch_page(url, max_chars=max_chars, start=start)

    # Only with a configured model does web_search take `intent` and `summarize`: clients
    # without one see no parameter that could not work.
    summaries = service.summarizer is not None
    return [
        ToolSpec(
            "web_search",
            WEB_SEARCH_SUMMARY_DOC if summaries else WEB_SEARCH_DOC,
            web_search_params(limits, summaries=summaries),
            SummarizedSearchOut if summaries else SearchOut,
            web_search,
            search_text,
        ),
        ToolSpec(
            "academic_search",
            ACADEMIC_SEARCH_DOC,
            academic_search_params(limits),
            PapersOut,
            academic_search,
            papers_text,
        ),
        ToolSpec(
            "fetch_page",
            FETCH_PAGE_DOC,
            fetch_page_params(),
            PageOut,
            fetch_page,
            page_text,
        ),
    ]


def add_tool(mcp: MCPServer, metrics: Metrics, spec: ToolSpec) -> None:
    """Register one tool: every call counted in `metrics`; bad input and all-failed searches
    are tool errors with the message as it is; the answer both structured and as text."""

    async def tool(ctx: Context | None = None, **arguments: Any) -> CallToolResult:
        try:
            with metrics.track(spec.name, "mcp") as record:
                record.answer = answer = await spec.work(arguments, ctx)
        except (ToolInputError, SearchFailed) as err:
            raise ToolError(str(err)) from None
        return CallToolResult(
            content=[TextContent(type="text", text=spec.render(answer))],
            structured_content=answer,
        )

    signature = _signature(spec.params, spec.output)
    tool.__signature__ = signature  # type: ignore[attr-defined]
    tool.__annotations__ = {
        **{p.name: p.annotation for p in signature.parameters.values()},
        "return": signature.return_annotation,
    }
    tool.__name__ = tool.__qualname__ = spec.name  # the SDK names the argument schema after it
    mcp.add_tool(
        tool,
        name=spec.name,
        description=spec.description,
        annotations=READ_ONLY,
        structured_output=True,
    )


def build_mcp(
    service: SearchService, web_engines: list[str], metrics: Metrics | None = None
) -> MCPServer:
    """An MCP server whose tools call `service`; every call is counted in `metrics`."""
    metrics = metrics or Metrics()
    mcp = MCPServer(
        "websearch-mcp",
        version=__version__,
        instructions=INSTRUCTIONS,
        cache_hints={"tools/list": TOOLS_CACHE},
        # No change notifications: the tools never change while the server runs.
        subscriptions=False,
    )
    _offer_tools_only(mcp)
    limits = Limits(
        service.settings.server.max_query_chars, web_engines, service.orchestrator.names("academic")
    )
    for spec in tool_specs(service, limits):
        add_tool(mcp, metrics, spec)
    return mcp
