"""The MCP server and its tools, each defined once: a name, a description, its arguments (from
`arguments.py`, schema and check together), its answer's type (from `search.answer`) and the
service call it wires to.

The tools live in the SDK's tool layer (`MCPServer.add_tool`, `call_tool`): it advertises them,
hands each call's arguments to the tool and checks every answer against the tool's output
schema. The server that speaks the protocol is the SDK's low-level `Server` with a handler for
`tools/list` and `tools/call` only, so that the handshake advertises tools and nothing else
(an `MCPServer` serves prompts and resources as well, and says so).

Each argument's check and error text are `arguments.py`'s, so the layer is given a signature
that takes every value as it was sent (a missing one as its default, None when it has none)
and the JSON Schema each tool is advertised under is set apart, from the same arguments.
"""

import inspect
import logging
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import Annotated, Any, Protocol

from mcp.server import CacheHint, Server, ServerRequestContext
from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.server.mcpserver.tools import Tool
from mcp.shared.exceptions import MCPError
from mcp.types import (
    CallToolRequestParams,
    CallToolResult,
    ListToolsResult,
    PaginatedRequestParams,
    TextContent,
    ToolAnnotations,
)
from pydantic import PlainValidator

from websearch_mcp import __version__
from websearch_mcp.errors import FetchError, SearchFailed, ToolInputError
from websearch_mcp.search.answer import PageOut, PapersOut, SearchOut, SummarizedSearchOut
from websearch_mcp.search.service import SearchService
from websearch_mcp.search.summary import ProgressFn
from websearch_mcp.server.arguments import (
    REQUIRED,
    Arg,
    Limits,
    academic_search_args,
    academic_search_params,
    fetch_page_args,
    fetch_page_params,
    given,
    input_schema,
    web_search_args,
    web_search_params,
)
from websearch_mcp.server.mcp_adapter import advertise, without_spans
from websearch_mcp.server.metrics import Metrics
from websearch_mcp.server.rendering import page_text, papers_text, search_text
from websearch_mcp.server.schemas import flat_schema

log = logging.getLogger("websearch_mcp.server.tools")

#: How long a client may keep `tools/list`: the tools change only with the configuration, which
#: takes a restart; every caller sees the same list.
TOOLS_CACHE = CacheHint(ttl_ms=3_600_000, scope="public")


def read_only(title: str) -> ToolAnnotations:
    """A tool that only reads the open web. Each hint is said outright: some clients read one
    without the others (an unset destructiveHint means true)."""
    return ToolAnnotations(
        title=title,
        readOnlyHint=True,
        destructiveHint=False,
        idempotentHint=True,
        openWorldHint=True,
    )


INSTRUCTIONS = (
    "web_search queries several search engines at once and returns one fused, "
    "de-duplicated list with the engines that found each result. academic_search does "
    "the same over scholarly indexes and returns papers. fetch_page reads one web page or "
    "PDF as clean text."
)
WEB_SEARCH_DOC = (
    "Search the web with several engines at once and get one fused, de-duplicated list.\n\n"
    "Each result names the engines that found it; a report per engine says how it fared.\n\n"
    "With read: N the pages of the top N results are read as well (as fetch_page reads them, "
    "within the search's time limit) and each of those results gains passages, the few short "
    "parts of its page that best answer the query, and page_status (ok, timeout, refused, "
    "blocked, error or unsupported).\n\n"
    "With category: news only the engines' news indexes are asked: results carry published "
    "(UTC) and source, newer ones rank higher, and one story reported by several publishers "
    "takes one place, listing the others in also."
)
WEB_SEARCH_SUMMARY_DOC = (
    f"{WEB_SEARCH_DOC}\n\n"
    "With intent (or summarize: true) a short summary of the results comes first, citing them "
    "as [n] with their URLs; the results are always returned too. When no summary could be "
    "made, summary_error says why."
)
ACADEMIC_SEARCH_DOC = (
    "Search scholarly literature in several indexes at once (arXiv, Crossref, OpenAlex, "
    "Semantic Scholar, PubMed, Europe PMC, dblp ...) and get one list of papers.\n\n"
    "The same paper from several indexes is one result (matched by DOI, arXiv id, PubMed id, "
    "link, or title and year), with authors, year, venue, DOI, citation count and a PDF link "
    "where known, and the indexes that found it."
)
FETCH_PAGE_DOC = (
    "Read a web page or PDF as clean Markdown text, in windows of max_chars characters.\n\n"
    "Navigation, ads and boilerplate are dropped. Pass next_start as start to read on. "
    "Private and internal addresses are refused."
)


class Progress(Protocol):
    """Where a call's progress notifications go: the SDK's context of the call."""

    async def report_progress(
        self, progress: float, total: float | None = None, message: str | None = None
    ) -> None: ...


#: A tool's work: its arguments (as `arguments.given` reads them) and where its progress goes
#: in, an answer out.
Work = Callable[[dict[str, Any], Progress | None], Awaitable[Any]]


def _progress_reporter(progress: Progress | None) -> ProgressFn | None:
    """Summary progress as MCP progress notifications: the characters so far as `progress`, the
    new text as `message`. The SDK sends them only when the client asked (a `progressToken`) and
    the response is a stream; with JSON responses they have no way to the client."""
    if progress is None:
        return None

    async def report(size: int, delta: str) -> None:
        await progress.report_progress(size, None, delta)

    return report


@dataclass(frozen=True, slots=True)
class ToolSpec:
    """One tool: what it is advertised as, the service call it wires to, its text rendering."""

    name: str
    #: What a client shows people.
    title: str
    description: str
    params: Sequence[Arg]
    #: The answer's type (from `search.answer`): the advertised output schema.
    output: type
    work: Work
    render: Callable[[Any], str]


def tool_specs(service: SearchService, limits: Limits) -> list[ToolSpec]:
    """The three tools, wired to `service`."""

    async def web_search(
        arguments: dict[str, Any], progress: Progress | None
    ) -> SummarizedSearchOut:
        args = web_search_args(
            **arguments,
            max_query_chars=limits.max_query_chars,
            default_results=limits.default_results,
        )
        return await service.web_search(args, _progress_reporter(progress))

    async def academic_search(arguments: dict[str, Any], _: Progress | None) -> PapersOut:
        args = academic_search_args(**arguments, max_query_chars=limits.max_query_chars)
        return await service.academic_search(args)

    async def fetch_page(arguments: dict[str, Any], _: Progress | None) -> PageOut:
        url, max_chars, start = fetch_page_args(**arguments)
        return await service.fetch_page(url, max_chars=max_chars, start=start)

    # Only with a configured model does web_search take `intent` and `summarize`: clients
    # without one see no parameter that could not work.
    summaries = service.summarizer is not None
    return [
        ToolSpec(
            "web_search",
            "Web search",
            WEB_SEARCH_SUMMARY_DOC if summaries else WEB_SEARCH_DOC,
            web_search_params(limits, summaries=summaries),
            SummarizedSearchOut if summaries else SearchOut,
            web_search,
            search_text,
        ),
        ToolSpec(
            "academic_search",
            "Academic search",
            ACADEMIC_SEARCH_DOC,
            academic_search_params(limits),
            PapersOut,
            academic_search,
            papers_text,
        ),
        ToolSpec(
            "fetch_page",
            "Fetch page",
            FETCH_PAGE_DOC,
            fetch_page_params(),
            PageOut,
            fetch_page,
            page_text,
        ),
    ]


#: Takes a value as it was sent: the checks of `arguments.py` word what is wrong with it.
_AS_SENT = PlainValidator(lambda value: value)


def _signature(params: Sequence[Arg], output: type) -> inspect.Signature:
    """What the tool layer reads a tool's arguments and answer by: every argument taken as it
    was sent, a missing one as its default (None when it must be given), the context, and the
    answer's type (its output schema, which every answer is checked against). An argument
    advertised as plain text that cannot be left out (None) is typed `str`, which the layer
    does not read as JSON text (a query "[1, 2]" stays the query typed); any other may come as
    JSON text for the array, object or null it holds, which the layer reads (some clients send
    every argument as a string, "null" for one they leave out)."""
    keyword = inspect.Parameter.KEYWORD_ONLY
    arguments = [
        inspect.Parameter(
            a.name,
            keyword,
            default=None if a.default is REQUIRED else a.default,
            annotation=(
                Annotated[str, _AS_SENT]
                if a.schema.get("type") == "string" and a.default is REQUIRED
                else Any
            ),
        )
        for a in params
    ]
    context = inspect.Parameter("ctx", keyword, default=None, annotation=Context | None)
    return inspect.Signature(
        [*arguments, context], return_annotation=Annotated[CallToolResult, output]
    )


def _unknown_names(ctx: Context | None, params: Sequence[Arg]) -> list[str]:
    """The names of the arguments the client sent that the tool does not take, from the call as
    it came (the tool layer hands the tool only those it takes)."""
    try:
        request = ctx.request_context if ctx is not None else None
    except ValueError:  # a call made in-process, outside a request
        request = None
    sent = (request.params or {}).get("arguments") if request is not None else None
    if not isinstance(sent, dict):
        return []
    return sorted(set(sent) - {arg.name for arg in params})


def tool(spec: ToolSpec, metrics: Metrics) -> Tool:
    """`spec` as a tool of the SDK's tool layer, each call counted in `metrics`: the answer both
    structured and as text; bad input and all-failed searches are tool errors with the message
    as it is, anything unexpected a tool error that says no more than the tool's name (and is
    logged)."""

    async def call(ctx: Context | None = None, **arguments: Any) -> CallToolResult:
        try:
            with metrics.track(spec.name, "mcp") as record:
                taken = given(spec.params, arguments, _unknown_names(ctx, spec.params))
                record.answer = answer = await spec.work(taken, ctx)
        except SearchFailed as err:
            # Not logged here: its text quotes the engines' errors, which may quote the query.
            # The tool's line has each engine's status, the engine's line its error without it.
            raise ToolError(str(err)) from err
        except (ToolInputError, FetchError) as err:
            log.info("tool %r failed: %r", spec.name, str(err))
            raise ToolError(str(err)) from err
        except MCPError:
            raise  # a protocol error, answered as a JSON-RPC error
        except Exception:
            log.exception("tool %r raised an unexpected exception", spec.name)
            raise
        text = TextContent(type="text", text=spec.render(answer))
        return CallToolResult(content=[text], structured_content=answer)

    signature = _signature(spec.params, spec.output)
    call.__signature__ = signature  # type: ignore[attr-defined]
    call.__annotations__ = {
        **{p.name: p.annotation for p in signature.parameters.values()},
        "return": signature.return_annotation,
    }
    made = Tool.from_function(
        call,
        name=spec.name,
        title=spec.title,
        description=spec.description,
        annotations=read_only(spec.title),
        structured_output=True,
    )
    # Advertised flat; answers are still checked against the answer's type, which accepts
    # exactly what the flat schema does.
    advertise(made, input_schema(spec.name, spec.params), flat_schema)
    return made


@dataclass(frozen=True, slots=True)
class MCP:
    """The server that speaks the protocol, and the tool layer behind it (where tools are)."""

    server: Server
    tools: MCPServer


def build_mcp(
    service: SearchService, web_engines: list[str], metrics: Metrics | None = None
) -> MCP:
    """The MCP server of the tools calling `service`, each call counted in `metrics`:
    `tools/list` and `tools/call`, and nothing else to advertise. Without `server.tracing`, no
    OpenTelemetry span is opened per message (`mcp_adapter`)."""
    metrics = metrics or Metrics()
    limits = Limits(
        service.settings.server.max_query_chars,
        web_engines,
        service.orchestrator.names("academic"),
        service.settings.search.max_results,
    )
    made = [tool(spec, metrics) for spec in tool_specs(service, limits)]
    tools = MCPServer("websearch-mcp", version=__version__, tools=made)

    async def list_tools(
        ctx: ServerRequestContext, params: PaginatedRequestParams | None
    ) -> ListToolsResult:
        return ListToolsResult(tools=await tools.list_tools())

    async def call_tool(ctx: ServerRequestContext, params: CallToolRequestParams) -> Any:
        context = Context(request_context=ctx, mcp_server=tools)
        try:
            return await tools.call_tool(params.name, params.arguments or {}, context)
        except ToolError as err:  # as `MCPServer` answers one: a tool error with its text
            return CallToolResult(content=[TextContent(type="text", text=str(err))], is_error=True)

    server: Server = Server(
        "websearch-mcp",
        version=__version__,
        title="Web search",
        instructions=INSTRUCTIONS,
        cache_hints={"tools/list": TOOLS_CACHE},
        # The arguments' schemas by tool name, for the protocol's checks of a call's headers.
        get_tool_input_schema={t.name: t.parameters for t in made}.get,
        on_list_tools=list_tools,
        on_call_tool=call_tool,
    )
    if not service.settings.server.tracing:
        without_spans(server)
    return MCP(server, tools)
