"""`websearch-mcp stdio`: the service as a subprocess speaking MCP over stdin/stdout.

The server runs as a real child process (the way desktop clients start it) on fake engines on
127.0.0.1, driven by the official MCP client's stdio transport and by hand-written lines.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from mcp import Client, StdioServerParameters

from testing.config_files import write_config
from testing.fake_llm import STREAMED, FakeLLM
from testing.server_helpers import INITIALIZE
from testing.serving import serve_app
from websearch_mcp.server.stdio import stdout_to_stderr


def initialize_alone(argv: list[str]) -> subprocess.CompletedProcess[str]:
    """`argv` run with one `initialize` line on stdin, then stdin closed."""
    return subprocess.run(
        argv,
        input=json.dumps(INITIALIZE) + "\n",
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


@pytest.fixture
def config_file(engines_url: str, tmp_path: Path) -> Path:
    return write_config(tmp_path / "websearch-mcp.yaml", engines_url)


def command(config: Path) -> list[str]:
    return [sys.executable, "-m", "websearch_mcp.cli", "stdio", "--config", str(config)]


async def test_official_client_lists_tools_and_searches(config_file: Path) -> None:
    exe, *args = command(config_file)
    # Debug logs and every warning on: all of it must go to stderr, or the transport breaks.
    params = StdioServerParameters(command=exe, args=args, env={"PYTHONWARNINGS": "always"})
    async with Client(params, read_timeout_seconds=30) as client:
        tools = await client.list_tools()
        result = await client.call_tool("web_search", {"query": "python asyncio"})
    assert {t.name for t in tools.tools} == {"web_search", "academic_search", "fetch_page"}
    assert not result.is_error
    answer = result.structured_content
    assert answer is not None and not answer["partial"]
    assert {e["name"]: e["status"] for e in answer["engines"]} == {
        "tavily": "ok",
        "searxng": "ok",
    }
    # Both engines found the asyncio docs: one fused result naming both, ranked first.
    top = answer["results"][0]
    assert top["url"] == "https://docs.python.org/3/library/asyncio.html"
    assert sorted(top["engines"]) == ["searxng", "tavily"]
    urls = [r["url"] for r in answer["results"]]
    assert len(urls) == len(set(urls)) == 4  # the realpython duplicate is merged


async def test_summaries_over_stdio_when_a_model_is_configured(
    engines_url: str, tmp_path: Path
) -> None:
    llm = FakeLLM()
    with serve_app(llm.app) as base:
        exe, *args = command(write_config(tmp_path / "c.yaml", engines_url, f"{base}/v1"))
        async with Client(StdioServerParameters(command=exe, args=args)) as client:
            tools = {t.name: t for t in (await client.list_tools()).tools}
            result = await client.call_tool(
                "web_search", {"query": "python asyncio", "intent": "code"}
            )
    assert "intent" in tools["web_search"].input_schema["properties"]
    assert not result.is_error
    answer = result.structured_content
    assert answer is not None and answer["summary"].startswith(STREAMED)
    assert answer["results"] and llm.requests


def test_a_bare_initialize_gets_exactly_one_line_and_stdin_closing_ends_it(
    config_file: Path,
) -> None:
    done = initialize_alone(command(config_file))
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert len(lines) == 1, done.stdout
    reply = json.loads(lines[0])
    assert reply["jsonrpc"] == "2.0" and reply["id"] == 1
    assert reply["result"]["serverInfo"]["name"] == "websearch-mcp"
    # Only tools are offered, and they never change while the server runs.
    assert reply["result"]["capabilities"] == {"tools": {"listChanged": False}}
    assert "serving MCP over stdio" in done.stderr  # the logs went to stderr


# A child whose service prints to stdout (Python and file descriptor 1) while it starts, while
# it serves a call and while it stops, as a chatty library would.
CHATTY = """
import os, sys
from websearch_mcp.search import service
from websearch_mcp.cli import main

def chatty(method):
    async def wrapped(self, *args, **kwargs):
        print("banner from", method.__name__)
        os.write(1, b"raw bytes on fd 1\\n")
        return await method(self, *args, **kwargs)
    return wrapped

for name in ("start", "close", "web_search"):
    setattr(service.SearchService, name, chatty(getattr(service.SearchService, name)))
sys.exit(main(sys.argv[1:]))
"""


async def test_stray_output_of_libraries_never_reaches_the_client(config_file: Path) -> None:
    args = ["-c", CHATTY, *command(config_file)[3:]]
    async with Client(StdioServerParameters(command=sys.executable, args=args)) as client:
        result = await client.call_tool("web_search", {"query": "python asyncio"})
    assert not result.is_error and result.structured_content["results"]
    done = initialize_alone([sys.executable, *args])
    assert done.returncode == 0, done.stderr
    assert [json.loads(line)["id"] for line in done.stdout.splitlines()] == [1]
    assert done.stderr.count("banner from") == 2 and "raw bytes on fd 1" in done.stderr


def test_a_bad_config_is_an_error_on_stderr_and_nothing_on_stdout(tmp_path: Path) -> None:
    bad = tmp_path / "bad.yaml"
    bad.write_text("server: {port: 0}\n", encoding="utf-8")
    done = subprocess.run(
        command(bad), input="", capture_output=True, text=True, timeout=60, check=False
    )
    assert done.returncode == 2 and done.stdout == ""
    assert "port" in done.stderr


def test_stdout_to_stderr_diverts_python_and_file_descriptor_writes(
    capfd: pytest.CaptureFixture[str],
) -> None:
    with stdout_to_stderr():
        print("from print")
        os.write(1, b"from fd 1\n")
    print("after")
    out, err = capfd.readouterr()
    assert out == "after\n"
    assert "from print" in err and "from fd 1" in err
