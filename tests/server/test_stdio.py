"""`websearch-mcp stdio`: the service as a subprocess speaking MCP over stdin/stdout.

The server runs as a real child process (the way desktop clients start it) on fake engines on
127.0.0.1, driven by the official MCP client's stdio transport and by hand-written lines.
"""

from __future__ import annotations

import asyncio
import contextlib
import io
import json
import os
import shutil
import signal
import sqlite3
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from mcp import Client, StdioServerParameters

from testing.config_files import write_config
from testing.fake_engines import FakeEngines, Fault
from testing.fake_llm import STREAMED, FakeLLM
from testing.fetch_helpers import LocalServer, page
from testing.server_helpers import INITIALIZE, text_of, tool_call
from testing.serving import serve_app
from websearch_mcp.server import gc_settings
from websearch_mcp.server.stdio import client_lines, refusal, stdout_to_stderr, stop_signal


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


async def test_a_number_of_thousands_of_digits_is_refused_naming_the_argument(
    config_file: Path,
) -> None:
    """As over HTTP: the call is answered with the argument and its range, not dropped unread
    (the SDK's JSON parser refuses such a number), leaving the client waiting for ever."""
    huge = 10**4400 - 1  # 4400 nines: more than the SDK's parser reads
    exe, *args = command(config_file)
    async with Client(StdioServerParameters(command=exe, args=args), read_timeout_seconds=10) as (
        client
    ):
        refused = await client.call_tool("web_search", {"query": "asyncio", "max_results": huge})
        answer = await client.call_tool("web_search", {"query": "asyncio", "max_results": 3})
    text = text_of(refused)
    assert refused.is_error and "max_results must be an integer from 1 to 50" in text, text
    assert len(text) < 300  # the reason, not the digits
    assert not answer.is_error and len(answer.structured_content["results"]) == 3


def test_a_line_nested_deeper_than_python_goes_leaves_the_server_answering(
    config_file: Path,
) -> None:
    # A long integer makes the line looked into; its nesting is past Python's recursion limit.
    call = json.dumps(tool_call({"query": "asyncio", "deep": "<nested>", "max_results": 3}))
    line = call.replace('"<nested>"', "[" * 600 + "]" * 600).replace(": 3}", ": " + "9" * 30 + "}")
    process = _started(config_file)
    try:
        assert "result" in _ask(process, INITIALIZE)
        assert process.stdin is not None
        process.stdin.write(json.dumps({"jsonrpc": "2.0", "method": "notifications/initialized"}))
        process.stdin.write("\n" + line + "\n")
        refused = _ask(process, {"jsonrpc": "2.0", "id": 3, "method": "tools/list"})
        assert process.stdout is not None
        reply = json.loads(process.stdout.readline())
        if refused["id"] == 3:  # answered in either order
            refused, reply = reply, refused
        assert refused["id"] is None and refused["error"]["code"] == -32700, refused
        assert "recursion limit" in refused["error"]["message"]
        assert reply["id"] == 3 and reply["result"]["tools"], reply
    finally:
        process.kill()
        process.wait()


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
    assert reply["result"]["serverInfo"]["title"] == "Web search"  # what clients show people
    # Only tools are offered, and they never change while the server runs.
    assert reply["result"]["capabilities"] == {"tools": {"listChanged": False}}
    assert "serving MCP over stdio" in done.stderr  # the logs went to stderr


@pytest.mark.parametrize(
    "line",
    [
        '{"jsonrpc": "2.0", "id": true, "method": "ping", "params": 5}',  # true is no id
        '{"jsonrpc": "1.0", "id": 7}',  # no request: its id is no request's
    ],
)
def test_an_invalid_message_without_a_request_id_is_answered_without_one(line: str) -> None:
    error = refusal(line)
    assert error is not None and error.error.code == -32600 and error.id is None


def test_a_line_that_is_no_message_is_answered_with_its_id_and_the_server_goes_on(
    config_file: Path,
) -> None:
    """The SDK's transport drops such a line without a word, and the client waited for ever
    for its request's answer. JSON-RPC answers it: a parse error when it is not JSON, an invalid
    request naming what is wrong otherwise, with the request's id when one reads."""
    lines = [
        json.dumps(INITIALIZE),
        '{"jsonrpc": "2.0", "method": "notifications/initialized"}',
        "hello, not JSON",
        '{"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": "web_search"}',
        '{"jsonrpc": "1.0", "id": "eight", "method": "ping"}',
        "",  # a blank line is skipped, as before
        '{"jsonrpc": "2.0", "id": 9, "method": "ping"}',
        '{"jsonrpc": "2.0", "id": 10, "method": "tools/list", "params": []}',
    ]
    with _started(config_file) as process:
        assert process.stdin is not None and process.stdout is not None
        process.stdin.write("\n".join([*lines, ""]))
        process.stdin.flush()
        replies = [json.loads(process.stdout.readline()) for _ in range(6)]
        process.stdin.close()
        _stderr_once_ended(process)
    by_id = {reply["id"]: reply for reply in replies}
    assert len(by_id) == 6, replies
    assert by_id[1]["result"]["serverInfo"]["name"] == "websearch-mcp"
    assert by_id[None]["error"]["code"] == -32700  # not JSON: no id to read
    assert by_id[None]["error"]["message"] == "Parse error: expected value at line 1 column 1"
    assert by_id[7]["error"] == {
        "code": -32600,
        "message": "Invalid Request: JSONRPCRequest.params: Input should be an object",
    }
    assert by_id["eight"]["error"]["code"] == -32600
    assert "jsonrpc" in by_id["eight"]["error"]["message"]
    assert by_id[9]["result"] == {}
    assert by_id[10]["error"]["code"] == -32600


def test_a_byte_order_mark_before_the_first_line_is_no_part_of_it(config_file: Path) -> None:
    """.NET's UTF-8 writers start a stream with one; the client's `initialize` is answered."""
    initialize = b"\xef\xbb\xbf" + json.dumps(INITIALIZE).encode() + b"\n"
    done = subprocess.run(command(config_file), input=initialize, capture_output=True, timeout=60)
    assert done.returncode == 0, done.stderr
    replies = [json.loads(line) for line in done.stdout.splitlines()]
    assert [reply["id"] for reply in replies] == [1], replies
    assert replies[0]["result"]["serverInfo"]["name"] == "websearch-mcp"


# A child whose service prints to stdout (Python and file descriptor 1) while it starts, while
# it serves a call and while it stops, as a chatty library would; and says how often the
# collector's young collections run.
CHATTY = """
import gc, os, sys
from websearch_mcp.search import service
from websearch_mcp.cli import main

def chatty(method):
    async def wrapped(self, *args, **kwargs):
        print("banner from", method.__name__, "young collections every", gc.get_threshold()[0])
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
    # Once started, the server tuned the collector, as every server process does.
    assert f"close young collections every {gc_settings.YOUNG_THRESHOLD}\n" in done.stderr


def test_a_bad_config_is_an_error_on_stderr_and_nothing_on_stdout(tmp_path: Path) -> None:
    bad = tmp_path / "bad.yaml"
    bad.write_text("server: {port: 0}\n", encoding="utf-8")
    done = subprocess.run(
        command(bad), input="", capture_output=True, text=True, timeout=60, check=False
    )
    assert done.returncode == 2 and done.stdout == ""
    assert "port" in done.stderr


def test_stdout_to_stderr_diverts_python_and_file_descriptor_writes(
    capfd: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    with stdout_to_stderr():
        print("from print")
        os.write(1, b"from fd 1\n")
    print("after")
    out, err = capfd.readouterr()
    assert out == "after\n"
    assert "from print" in err and "from fd 1" in err
    # What a library printed before and `sys.stdout` still held goes to stderr too, not into
    # the protocol's first message.
    held = io.TextIOWrapper(io.BufferedWriter(io.FileIO(1, "w", closefd=False), 1 << 16))
    monkeypatch.setattr(sys, "stdout", held)
    print("printed earlier")
    with stdout_to_stderr():
        pass
    held.flush()
    out, err = capfd.readouterr()
    assert out == "" and err == "printed earlier\n"


async def test_client_lines_leave_file_descriptor_0_nothing_of_the_clients_to_read() -> None:
    # The client's messages come through; fd 0 reads the null device meanwhile (no library or
    # child takes a message), and is the client's again afterwards. A byte not UTF-8 is no
    # crash; a line that is no message is kept back, its error to be answered.
    read_end, write_end = os.pipe()
    saved = os.dup(0)
    try:
        os.dup2(read_end, 0)
        os.write(write_end, b'{"jsonrpc": "2.0", "method": "caf\xe9"}\n{"q": 1}\n')
        os.close(write_end)
        with client_lines() as lines:
            assert os.read(0, 100) == b""
            got = [line async for line in lines]
        assert got == ['{"jsonrpc": "2.0", "method": "caf\ufffd"}\n']
        refused = lines.refusals.receive_nowait()
        assert refused.id is None and refused.error.code == -32600
        assert os.fstat(0).st_ino == os.fstat(read_end).st_ino
    finally:
        os.dup2(saved, 0)
        os.close(saved)
        os.close(read_end)


async def test_a_second_stop_signal_while_stopping_changes_nothing() -> None:
    """Ctrl-C pressed twice, or SIGTERM after it: the first one stops the server, and the
    second raises no error in the event loop while the service closes."""
    loop = asyncio.get_running_loop()
    errors: list[dict[str, Any]] = []
    loop.set_exception_handler(lambda _, context: errors.append(context))
    stopped = stop_signal()
    try:
        os.kill(os.getpid(), signal.SIGINT)
        os.kill(os.getpid(), signal.SIGTERM)
        assert await asyncio.wait_for(stopped, 5) == signal.SIGINT
        await asyncio.sleep(0.05)  # the second signal's handler has run
    finally:
        for signum in (signal.SIGTERM, signal.SIGINT):
            loop.remove_signal_handler(signum)
    assert errors == []


def _started(config: Path, env: dict[str, str] | None = None) -> subprocess.Popen[str]:
    return subprocess.Popen(
        command(config),
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
    )


def _stderr_once_ended(process: subprocess.Popen[str]) -> str:
    """What `process` wrote to stderr, once it has ended by itself (killed after 10 s)."""
    try:
        process.wait(timeout=10)
    finally:
        if process.poll() is None:
            process.kill()
    assert process.stderr is not None
    return process.stderr.read()


def _ask(process: subprocess.Popen[str], message: dict[str, Any]) -> dict[str, Any]:
    """Send `message` and read the reply line (the test's timeout bounds the wait)."""
    assert process.stdin is not None and process.stdout is not None
    process.stdin.write(json.dumps(message) + "\n")
    process.stdin.flush()
    reply: dict[str, Any] = json.loads(process.stdout.readline())
    return reply


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGINT])
def test_a_stop_signal_stops_it_cleanly_writing_what_the_cache_holds_back(
    config_file: Path, tmp_path: Path, signum: signal.Signals
) -> None:
    """A client stops a stdio server that does not exit with SIGTERM, a terminal's Ctrl-C sends
    SIGINT, stdin still open: it stops at once, closing the cache as when stdin closes (the
    sliding expiry of the last second's hits written, the WAL folded into the file), with no
    traceback and status 0."""
    config = yaml.safe_load(config_file.read_text(encoding="utf-8"))
    cache = tmp_path / "cache.sqlite3"
    config["cache"] = {"backend": "sqlite", "path": str(cache)}
    config["server"] = {"log_level": "warning"}
    config_file.write_text(yaml.safe_dump(config), encoding="utf-8")
    with _started(config_file) as process:
        _ask(process, INITIALIZE)
        search = tool_call({"query": "python asyncio"}, rid=2)
        assert not _ask(process, search)["result"]["isError"]
        # The hit's sliding expiry is held back for about a second: the signal comes first.
        assert _ask(process, search)["result"]["structuredContent"]["cached"]
        process.send_signal(signum)  # stdin stays open, as in a terminal
        stderr = _stderr_once_ended(process)
    assert process.returncode == 0, stderr
    assert "Traceback" not in stderr
    assert not Path(f"{cache}-wal").exists()  # closed: nothing left in the write-ahead log
    with contextlib.closing(sqlite3.connect(cache)) as db:
        ((stored_at, last_used),) = db.execute("SELECT stored_at, last_used FROM cache_entries")
    assert last_used > stored_at  # the hit was written


def test_a_stop_signal_after_a_page_was_read_leaves_nothing_in_tmpdir(config_file: Path) -> None:
    """Stopped by a signal, the server ends by `os._exit`, past multiprocessing's exit handlers,
    which remove the extraction fork server's directory from TMPDIR."""
    config = yaml.safe_load(config_file.read_text(encoding="utf-8"))
    temp = Path(tempfile.mkdtemp(prefix="wsm-"))  # short: the socket's path fits under it
    try:
        with LocalServer() as site:
            site.routes["/doc"] = page("<html><body><article><p>Some words.</p></article></body>")
            config["fetch"] = {"allow_networks": ["127.0.0.0/8"], "allowed_ports": [site.port]}
            config_file.write_text(yaml.safe_dump(config), encoding="utf-8")
            with _started(config_file, {**os.environ, "TMPDIR": str(temp)}) as process:
                _ask(process, INITIALIZE)
                read = _ask(process, tool_call({"url": site.url("/doc")}, "fetch_page", rid=2))
                assert "Some words." in read["result"]["structuredContent"]["content"]
                assert list(temp.iterdir())  # the fork server's directory
                process.send_signal(signal.SIGTERM)
                stderr = _stderr_once_ended(process)
        assert process.returncode == 0, stderr
        assert list(temp.iterdir()) == []
    finally:
        shutil.rmtree(temp)


def test_closing_stdin_mid_search_asks_no_engine_again_and_leaves_nothing_open(
    fake: FakeEngines, config_file: Path
) -> None:
    """The client went away: the search stops with the service, its engine requests are not
    sent again on new connections after the engines' pools closed."""
    with _searching(fake, config_file) as process:
        assert process.stdin is not None
        process.stdin.close()
        stderr = _stderr_once_ended(process)
    assert process.returncode == 0, stderr
    assert (fake.counts["tavily"], fake.counts["searxng"]) == (1, 1), stderr
    assert "Unclosed" not in stderr


@contextlib.contextmanager
def _searching(fake: FakeEngines, config_file: Path) -> Iterator[subprocess.Popen[str]]:
    """A started server with a search (id 2) in flight: its engines asked, slow to answer."""
    for engine in ("tavily", "searxng"):
        fake.faults[engine] = Fault(delay=5)
    with _started(config_file) as process:
        assert process.stdin is not None
        _ask(process, INITIALIZE)
        process.stdin.write(json.dumps(tool_call({"query": "python asyncio"}, rid=2)) + "\n")
        process.stdin.flush()
        deadline = time.monotonic() + 30
        while fake.counts["tavily"] + fake.counts["searxng"] < 2:
            assert time.monotonic() < deadline, "the engines were not asked"
            time.sleep(0.02)
        yield process


def test_a_client_that_exits_mid_search_ends_it_quietly_with_status_0(
    fake: FakeEngines, config_file: Path
) -> None:
    """The client quit (its ends of both pipes closed, as when it exits or is killed) while a
    search was in flight: nothing is left to answer, so the service stops as when stdin closes,
    rather than failing on the answer it can no longer write."""
    with _searching(fake, config_file) as process:
        assert process.stdin is not None and process.stdout is not None
        process.stdout.close()
        process.stdin.close()
        stderr = _stderr_once_ended(process)
    assert process.returncode == 0, stderr
    assert "Traceback" not in stderr and "BrokenPipeError" not in stderr, stderr


def test_a_search_the_client_cancels_is_not_answered_and_counts_as_cancelled(
    fake: FakeEngines, config_file: Path
) -> None:
    """`notifications/cancelled` for a search in flight: the call ends unanswered, the server
    goes on answering, and the call's line says it was cancelled, not that it failed."""
    with _searching(fake, config_file) as process:
        assert process.stdin is not None and process.stdout is not None
        cancel = {"requestId": 2, "reason": "the user stopped it"}
        process.stdin.write(
            json.dumps({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": cancel})
            + "\n"
        )
        assert _ask(process, {"jsonrpc": "2.0", "id": 3, "method": "ping"})["id"] == 3
        process.stdin.close()
        stderr = _stderr_once_ended(process)
        assert process.stdout.read() == ""  # the search was never answered
    assert "web_search via mcp: cancelled" in stderr, stderr
