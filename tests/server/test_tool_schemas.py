"""The advertised tools stay as they are: `tools/list` (names, descriptions, input and output
schemas, annotations) from a real server, via the official MCP client, against a snapshot.

Regenerate the snapshot only for an intended change of the public contract:
`python -m tests.server.test_tool_schemas` (writes tests/server/snapshots/tool_schemas.json).
"""

from __future__ import annotations

import asyncio
import json
import re
from pathlib import Path
from typing import Any

from mcp import Client

from testing.fake_engines import base_urls
from testing.serving import serve_app
from websearch_mcp.config import Settings
from websearch_mcp.engines.registry import ENGINES
from websearch_mcp.search.configuration import parse_config
from websearch_mcp.server.app import create_app
from websearch_mcp.server.arguments import max_year

SNAPSHOT = Path(__file__).parent / "snapshots" / "tool_schemas.json"
#: Where the latest accepted year stands in the snapshot: it moves every new year.
NEXT_YEAR = "<next year>"
#: Nothing listens here: listing tools asks no engine and no model.
UNUSED = "http://127.0.0.1:9"


def settings(*, llm: bool, server: dict[str, Any] | None = None) -> Settings:
    """Three web engines, the default academic indexes, a model when `llm`, else defaults."""
    urls = base_urls(UNUSED)
    engines: dict[str, Any] = {name: {"enabled": False} for name in ENGINES}
    engines["tavily"] = {"api_keys": ["tvly-test-key-1"], "base_url": urls["tavily"]}
    engines["brave"] = {"api_keys": ["brave-test-key-1"], "base_url": urls["brave"]}
    engines["searxng"] = {"enabled": True, "base_url": urls["searxng"]}
    data: dict[str, Any] = {"engines": engines, "cache": {"backend": "none"}}
    if server:
        data["server"] = server
    if llm:
        data["llm"] = {"base_url": f"{UNUSED}/v1", "model": "fake-model"}
    return parse_config(data, "test", environ={"LLM_API_KEY": "sk-test"})


async def listed(config: Settings) -> list[dict[str, Any]]:
    """`tools/list` as plain JSON, the moving year replaced by `NEXT_YEAR`."""
    with serve_app(create_app(config)) as url:
        async with Client(f"{url}/mcp", mode="legacy", cache=None) as client:
            tools = await client.list_tools()
    plain = [t.model_dump(mode="json", by_alias=True, exclude_none=True) for t in tools.tools]
    return json.loads(
        json.dumps(plain).replace(f'"maximum": {max_year()}', f'"maximum": "{NEXT_YEAR}"')
    )


async def current() -> dict[str, Any]:
    return {
        "without_model": await listed(settings(llm=False)),
        "with_model": await listed(settings(llm=True)),
    }


async def test_tools_list_matches_the_snapshot() -> None:
    assert await current() == json.loads(SNAPSHOT.read_text())


#: What some clients refuse or strip in a tool's schema.
NESTING = {"$ref", "$defs", "anyOf", "oneOf", "allOf"}


def nesting(node: Any, path: str = "") -> list[str]:
    """Where `node` holds a nesting keyword, at any depth, as `path/keyword`."""
    if isinstance(node, list):
        return [found for i, item in enumerate(node) for found in nesting(item, f"{path}/{i}")]
    if not isinstance(node, dict):
        return []
    here = [f"{path}/{key}" for key in node if key in NESTING]
    below = [found for key, value in node.items() for found in nesting(value, f"{path}/{key}")]
    return here + below


async def test_every_tool_has_a_title_plain_text_and_read_only_hints() -> None:
    # Clients show `title` (2025-06-18) or `annotations.title` (2025-03-26) to people; some read
    # `destructiveHint` alone; a description line indented four spaces is a Markdown code block.
    for tool in await listed(settings(llm=True)):
        assert tool["title"] and tool["annotations"]["title"] == tool["title"], tool["name"]
        hints = {key: value for key, value in tool["annotations"].items() if key != "title"}
        assert hints == {
            "readOnlyHint": True,
            "destructiveHint": False,
            "idempotentHint": True,
            "openWorldHint": True,
        }
        assert not re.search(r"^ {4}|^\t", tool["description"], re.MULTILINE), tool["name"]


def test_the_walk_finds_nesting_at_any_depth() -> None:
    deep = {"properties": {"a": {"items": [{"type": "string"}, {"anyOf": []}]}}}
    assert nesting(deep) == ["/properties/a/items/1/anyOf"]
    assert nesting({"$defs": {}, "x": {"allOf": [{"oneOf": []}]}}) == [
        "/$defs",
        "/x/allOf",
        "/x/allOf/0/oneOf",
    ]


async def test_every_schema_is_flat_with_and_without_a_model() -> None:
    for llm in (False, True):
        for tool in await listed(settings(llm=llm)):
            for part in ("inputSchema", "outputSchema"):
                assert nesting(tool[part]) == [], (llm, tool["name"], part)
            # An optional argument is simply not required: no null among its types.
            for name, schema in tool["inputSchema"]["properties"].items():
                assert "null" not in str(schema.get("type")), (tool["name"], name)


#: What a Gemini function declaration's parameters may hold (its OpenAPI `Schema`): any other
#: keyword is "Unknown name ... Cannot find field", and the request fails.
GEMINI_KEYWORDS = {
    "type", "format", "title", "description", "nullable", "enum", "items", "properties",
    "required", "minItems", "maxItems", "minProperties", "maxProperties", "minLength",
    "maxLength", "pattern", "example", "anyOf", "propertyOrdering", "default", "minimum",
    "maximum",
}  # fmt: skip
#: The string formats both Gemini ("enum", "date-time") and OpenAI's strict mode ("date-time",
#: "date", "email", "uuid", ...) take; any other fails the request that lists the tool.
STRING_FORMATS = {"date-time"}


def unsupported(node: dict[str, Any], path: str = "") -> list[str]:
    """Where `node`, an input schema, holds what Gemini or OpenAI's strict mode refuse."""
    found = [f"{path}/{key}" for key in node if key not in GEMINI_KEYWORDS]
    if "format" in node and node["format"] not in STRING_FORMATS:
        found.append(f"{path}/format: {node['format']}")
    for name, value in node.get("properties", {}).items():
        found += unsupported(value, f"{path}/{name}")
    if isinstance(node.get("items"), dict):
        found += unsupported(node["items"], f"{path}/items")
    return found


async def test_input_schemas_keep_to_what_gemini_and_strict_openai_accept() -> None:
    # A client that declares the tools to Gemini, or to OpenAI with strict schemas (the
    # Agents SDK's `convert_schemas_to_strict`), sends every tool at once: one keyword or
    # format they refuse fails every request, not just calls of that tool.
    for llm in (False, True):
        for tool in await listed(settings(llm=llm)):
            assert unsupported(tool["inputSchema"]) == [], (llm, tool["name"])


async def test_a_lowered_query_limit_is_advertised() -> None:
    tools = await listed(settings(llm=False, server={"max_query_chars": 120}))
    for tool in tools:
        if "query" in tool["inputSchema"]["properties"]:
            assert tool["inputSchema"]["properties"]["query"]["maxLength"] == 120, tool["name"]


if __name__ == "__main__":
    SNAPSHOT.write_text(json.dumps(asyncio.run(current()), indent=2, sort_keys=True) + "\n")
