"""The OpenAI Agents SDK lists and calls the tools of a real server, with its strict-schema
conversion, through its own MCP server class: a schema change that breaks it fails here. No
model is asked: the tools are called as a model's strict tool call would call them."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest
from agents import Agent, FunctionTool, RunContextWrapper, set_tracing_disabled
from agents.mcp import MCPServerStreamableHttp
from agents.tool_context import ToolContext

from testing.fake_engines import FakeEngines
from testing.server_helpers import settings_for
from testing.serving import serve_app
from websearch_mcp.server.app import create_app

# Nothing is sent to OpenAI: no model is asked, and no trace is kept to be exported.
set_tracing_disabled(True)

#: What a strict model sends: every argument, none null.
STRICT_CALL = {
    "query": "python asyncio",
    "max_results": 3,
    "time_range": "year",
    "engines": ["searxng", "tavily"],
    "language": "en",
    "explain": False,
    "read": 0,
    "category": "general",
}


@pytest.fixture
def server(engines_url: str) -> Iterator[str]:
    with serve_app(create_app(settings_for(engines_url))) as url:
        yield url


async def strict_tools(url: str) -> tuple[dict[str, FunctionTool], MCPServerStreamableHttp]:
    """The tools as an agent with `convert_schemas_to_strict` sees them, and its server."""
    mcp = MCPServerStreamableHttp(
        {"url": f"{url}/mcp", "timeout": 10}, client_session_timeout_seconds=10
    )
    await mcp.connect()
    agent = Agent(
        name="researcher", mcp_servers=[mcp], mcp_config={"convert_schemas_to_strict": True}
    )
    tools = await agent.get_mcp_tools(RunContextWrapper(context=None))
    return {t.name: t for t in tools if isinstance(t, FunctionTool)}, mcp


async def invoke(tool: FunctionTool, arguments: dict[str, Any]) -> Any:
    text = json.dumps(arguments)
    context = ToolContext(None, tool_name=tool.name, tool_call_id="call-1", tool_arguments=text)
    return await tool.on_invoke_tool(context, text)


async def test_the_agents_sdk_takes_every_tool_strictly_and_calls_it(server: str) -> None:
    tools, mcp = await strict_tools(server)
    try:
        assert set(tools) == {"web_search", "academic_search", "fetch_page"}
        for tool in tools.values():
            # The conversion succeeded (it falls back to the loose schema when it cannot).
            assert tool.strict_json_schema is True, tool.name
            schema = tool.params_json_schema
            assert schema["additionalProperties"] is False
            assert sorted(schema["required"]) == sorted(schema["properties"])
        assert sorted(tools["web_search"].params_json_schema["properties"]) == sorted(STRICT_CALL)
        # The Agents SDK hands the model the text part of the answer.
        answer = await invoke(tools["web_search"], STRICT_CALL)
        text = answer if isinstance(answer, str) else json.dumps(answer)
        assert "https://docs.python.org/3/library/asyncio.html" in text
        assert "engines: " in text
        wrong = await invoke(tools["web_search"], {**STRICT_CALL, "time_range": "decade"})
        assert "time_range must be one of day, week, month, year" in str(wrong)
    finally:
        await mcp.cleanup()


async def test_its_server_class_calls_with_arguments_left_out(server: str) -> None:
    mcp = MCPServerStreamableHttp({"url": f"{server}/mcp", "timeout": 10})
    await mcp.connect()
    try:
        listed = {t.name for t in await mcp.list_tools()}
        assert listed == {"web_search", "academic_search", "fetch_page"}
        result = await mcp.call_tool("web_search", {"query": "python asyncio"})
        assert result.is_error is False
        assert result.structured_content["results"][0]["url"].startswith("https://")
    finally:
        await mcp.cleanup()


@pytest.mark.parametrize(("argument", "left_out"), [("language", ""), ("time_range", "any")])
async def test_a_strict_call_leaving_an_argument_out_is_taken(
    fake: FakeEngines, server: str, argument: str, left_out: str
) -> None:
    """Strict mode requires every property (OpenAI's Structured Outputs: "all fields must be
    required"): a model with no language to prefer sends "", and one with no time limit `any`
    (the enum held only limits, so every strict search was cut to a year at most); each means
    what leaving the argument out means."""
    tools, mcp = await strict_tools(server)
    try:
        schema = tools["web_search"].params_json_schema["properties"][argument]
        assert left_out in schema.get("enum", [left_out])
        answer = await invoke(tools["web_search"], {**STRICT_CALL, argument: left_out})
        text = answer if isinstance(answer, str) else json.dumps(answer)
        assert "https://docs.python.org/3/library/asyncio.html" in text
        assert argument not in fake.last["searxng"].params
    finally:
        await mcp.cleanup()
