"""The MCP server and its tools, each defined once: a name, a description, its arguments (from
`arguments.py`, schema and check together), its answer's type (from `answer.py`) and the
service call it wires to.

The SDK reads a tool's arguments from its function's signature; each tool's function takes
`**arguments` and is given the signature its `Arg`s describe. It advertises the tools from
them (`tools/list`).

`tools/call` for these tools is served by a handler of the SDK's request kernel, not by its tool
layer. That layer checks a call's arguments against a model made from the signature, builds a
context object and checks the answer against the output schema: here every argument is checked
(and its error worded) by `arguments.py`, and every answer is built from `answer.py`'s types,
so those passes checked nothing twice over, and they were 18% of a cache hit's
instructions. (The official MCP client checks every answer it is given against the output
schema, and the tests call every tool through it.) The handler answers as the tool layer did:
the same result for an answer, the same error text for bad input or a failed search, a crash
as "Error executing tool NAME" only.

The handler gives the SDK each result in its wire form (a dict), which the SDK checks against
the protocol revision's schema as it serialises it. A `CallToolResult` model would first be
dumped to that form, a walk of the whole answer: 9% of a cache hit's instructions.
"""

import inspect
import logging
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import Annotated, Any, Protocol

from mcp.server import CacheHint, ServerRequestContext
from mcp.server._otel import OpenTelemetryMiddleware
from mcp.server.mcpserver import Context, MCPServer
from mcp.shared.exceptions import MCPError
from mcp.types import CallToolRequestParams, CallToolResult, ToolAnnotations
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
    given,
    web_search_args,
    web_search_params,
)
from websearch_mcp.errors import ToolInputError
from websearch_mcp.metrics import Metrics
from websearch_mcp.render import page_text, papers_text, search_text
from websearch_mcp.service import SearchFailed, SearchService
from websearch_mcp.summarize import ProgressFn

log = logging.getLogger("websearch_mcp.tools")

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


class Progress(Protocol):
    """Where a call's progress notifications go: the request's session (or the SDK's context)."""

    async def report_progress(
        self, progress: float, total: float | None = None, message: str | None = None
    ) -> None: ...


#: A tool's work: its arguments (known names only, as `arguments.given` reads them) and where
#: its progress goes in, an answer out.
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


def _offer_tools_only(mcp: MCPServer) -> None:
    """Drop the SDK's prompt and resource handlers, so that the handshake (which advertises
    every registered family) claims only tools. The SDK has no public way to unregister."""
    handlers = mcp._lowlevel_server._request_handlers
    for method in [m for m in handlers if m.startswith(NOT_OFFERED)]:
        del handlers[method]


def _without_spans(mcp: MCPServer) -> None:
    """Drop the SDK's OpenTelemetry middleware, as its documentation says to opt out: it opens a
    span for every message, a no-op without an exporter, and was 4% of a cache hit's
    instructions. `server.tracing: true` keeps it."""
    mcp.middleware[:] = [
        each for each in mcp.middleware if not isinstance(each, OpenTelemetryMiddleware)
    ]


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

    async def web_search(
        arguments: dict[str, Any], progress: Progress | None
    ) -> SummarizedSearchOut:
        args = web_search_args(**arguments, max_query_chars=limits.max_query_chars)
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


#: The fields a `CallToolResult` writes besides its content (`isError`, `resultType`), as the
#: model's defaults give them.
_RESULT_DEFAULTS = {
    name: value
    for name, value in CallToolResult(content=[])
    .model_dump(by_alias=True, mode="json", exclude_none=True)
    .items()
    if name != "content"
}


def _wire(text: str, answer: Any = None) -> dict[str, Any]:
    """A `CallToolResult` in its wire form, as the SDK's dump of the model gives it."""
    out = {**_RESULT_DEFAULTS, "content": [{"type": "text", "text": text}]}
    if answer is not None:
        out["structuredContent"] = answer
    return out


def _error(text: str) -> dict[str, Any]:
    return {**_wire(text), "isError": True}


async def answer_call(
    spec: ToolSpec, metrics: Metrics, sent: dict[str, Any], progress: Progress | None
) -> dict[str, Any]:
    """One call of `spec`'s tool, counted in `metrics`, as a `CallToolResult` in its wire form:
    the answer both structured and as text; bad input and all-failed searches are tool errors
    with the message as it is, anything unexpected a tool error that says no more than the
    tool's name (and is logged)."""
    try:
        with metrics.track(spec.name, "mcp") as record:
            record.answer = answer = await spec.work(given(spec.params, sent), progress)
    except (ToolInputError, SearchFailed) as err:
        log.info("tool %r failed: %r", spec.name, str(err))
        return _error(f"Error executing tool {spec.name}: {err}")
    except MCPError:
        raise  # a protocol error, answered as a JSON-RPC error
    except Exception:
        log.exception("tool %r raised an unexpected exception", spec.name)
        return _error(f"Error executing tool {spec.name}")
    return _wire(spec.render(answer), answer)


def add_tool(mcp: MCPServer, metrics: Metrics, spec: ToolSpec) -> None:
    """Advertise one tool. The SDK derives its schemas from this function's signature; the
    function answers as `serve_calls` does, for the SDK's own `MCPServer.call_tool`."""

    async def tool(ctx: Context | None = None, **arguments: Any) -> CallToolResult:
        return CallToolResult.model_validate(await answer_call(spec, metrics, arguments, ctx))

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


def serve_calls(mcp: MCPServer, metrics: Metrics, specs: Sequence[ToolSpec]) -> None:
    """Serve `tools/call` for `specs` in the SDK's request kernel (see the module's docstring);
    a call of any other name goes to the SDK's handler, which says the tool is unknown."""
    by_name = {spec.name: spec for spec in specs}
    server = mcp._lowlevel_server
    entry = server.get_request_handler("tools/call")
    if entry is None:
        raise RuntimeError("the SDK registered no tools/call handler")
    otherwise = entry.handler

    async def call_tool(ctx: ServerRequestContext, params: CallToolRequestParams) -> Any:
        spec = by_name.get(params.name)
        if spec is None:
            return await otherwise(ctx, params)
        return await answer_call(spec, metrics, params.arguments or {}, ctx.session)

    server.add_request_handler("tools/call", CallToolRequestParams, call_tool)


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
    if not service.settings.server.tracing:
        _without_spans(mcp)
    limits = Limits(
        service.settings.server.max_query_chars, web_engines, service.orchestrator.names("academic")
    )
    specs = tool_specs(service, limits)
    for spec in specs:
        add_tool(mcp, metrics, spec)
    serve_calls(mcp, metrics, specs)
    return mcp
