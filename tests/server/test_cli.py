"""The command line's own options: `--version`, `python -m websearch_mcp` and `search --intent`
(summaries); and how a child process of it ends: a closed pipe, Ctrl-C, locales."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
import uvicorn
import yaml
from mcp import Client

from testing.config_files import write_config
from testing.fake_engines import FakeEngines, Fault
from testing.fake_llm import STREAMED, FakeLLM
from testing.fetch_helpers import LocalServer, page, send
from testing.redis_server import free_port
from testing.server_helpers import MCP_HEADERS, text_of, tool_call
from testing.serving import serve_app, wait_until_answering
from websearch_mcp import __version__
from websearch_mcp.cli import EXIT_BROKEN_PIPE, EXIT_INTERRUPTED, IDLE_CONNECTION_SECONDS, main
from websearch_mcp.search.configuration import load_config
from websearch_mcp.search.summary import INTENT_GUIDANCE
from websearch_mcp.server import observability
from websearch_mcp.server.app import create_app


def test_version(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as done:
        main(["--version"])
    assert done.value.code == 0
    assert capsys.readouterr().out.strip() == f"websearch-mcp {__version__}"


def test_the_package_runs_as_a_module() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "websearch_mcp", "--version"],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == f"websearch-mcp {__version__}"


@pytest.fixture
def with_model(engines_url: str, tmp_path: Path) -> Iterator[tuple[FakeLLM, Path]]:
    """A fake model served on 127.0.0.1, and a config file that uses it."""
    llm = FakeLLM()
    with serve_app(llm.app) as base:
        yield llm, write_config(tmp_path / "c.yaml", engines_url, f"{base}/v1")


def test_search_with_an_intent_prints_the_summary_first(
    with_model: tuple[FakeLLM, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    llm, config = with_model
    assert main(["search", "python asyncio", "--config", str(config), "--intent", "code"]) == 0
    out = capsys.readouterr().out
    assert out.startswith(STREAMED)
    assert "1. " in out and "docs.python.org" in out  # the results follow
    # The intent shaped the prompt the model was sent.
    prompt = llm.requests[0]["messages"][1]["content"]
    assert INTENT_GUIDANCE["code"] in prompt


def test_search_with_an_intent_needs_a_model(
    engines_url: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    config = write_config(tmp_path / "c.yaml", engines_url)
    assert main(["search", "python asyncio", "--config", str(config), "--intent", "code"]) == 1
    assert "--intent needs a model" in capsys.readouterr().err
    assert main(["search", "python asyncio", "--config", str(config)]) == 0  # fine without


def test_search_rejects_an_over_long_intent(
    with_model: tuple[FakeLLM, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    llm, config = with_model
    code = main(["search", "python asyncio", "--config", str(config), "--intent", "x" * 500])
    assert code == 1 and "intent" in capsys.readouterr().err
    assert not llm.requests
    # `server.log_level: error` quiets the warning of a summary the model did not give: the
    # answer says so already.
    llm.stream_mode = llm.plain_mode = "fail"
    data = yaml.safe_load(config.read_text(encoding="utf-8"))
    data["server"]["log_level"] = "error"
    config.write_text(yaml.safe_dump(data), encoding="utf-8")
    assert main(["search", "python asyncio", "--config", str(config), "--intent", "code"]) == 0
    out, err = capsys.readouterr()
    assert "no summary" in out and err == ""


def test_search_with_category_news_asks_only_the_news_engines(
    fake: FakeEngines, engines_url: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    config = write_config(tmp_path / "c.yaml", engines_url)
    assert main(["search", "python asyncio", "--config", str(config), "--category", "news"]) == 0
    out = capsys.readouterr().out
    assert "undated" in out  # the fake SearXNG prints no dates
    assert "tavily skipped (has no news search)" in out
    assert fake.counts["tavily"] == 0 and fake.last["searxng"].params["categories"] == "news"


def test_search_takes_any_time_range_as_leaving_it_out(
    fake: FakeEngines, engines_url: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    config = write_config(tmp_path / "c.yaml", engines_url)
    assert main(["search", "python asyncio", "--config", str(config), "--time-range", "any"]) == 0
    assert "python" in capsys.readouterr().out.lower()
    assert "time_range" not in fake.last["searxng"].params
    assert main(["search", "python asyncio", "--config", str(config), "--time-range", "week"]) == 0
    assert fake.last["searxng"].params["time_range"] == "week"


def test_search_returns_search_max_results_unless_told(
    engines_url: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    config = write_config(tmp_path / "c.yaml", engines_url)
    data = yaml.safe_load(config.read_text(encoding="utf-8"))
    data["search"]["max_results"] = 2
    config.write_text(yaml.safe_dump(data), encoding="utf-8")
    assert main(["search", "python asyncio", "--config", str(config), "--json"]) == 0
    assert len(json.loads(capsys.readouterr().out)["results"]) == 2
    told = ["search", "python asyncio", "--config", str(config), "--json", "--max-results", "3"]
    assert main(told) == 0
    assert len(json.loads(capsys.readouterr().out)["results"]) == 3


@pytest.mark.parametrize("port", ["70000", "65536", "0", "-1", "http", "²"])
def test_serve_refuses_a_port_out_of_range(
    port: str, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    # server.port is 1-65535 in a file or the environment; --port is held to the same.
    started: list[dict[str, Any]] = []
    monkeypatch.setattr(uvicorn, "run", lambda _app, **options: started.append(options))
    with pytest.raises(SystemExit) as done:
        main(["serve", "--port", port])
    assert done.value.code == 2 and started == []
    assert "--port: must be a number from 1 to 65535" in capsys.readouterr().err


def test_serve_lets_idle_connections_go_after_the_time_the_balancer_counts_on(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # deploy/nginx.conf drops its idle connections to a replica before this (test_deploy_files).
    started: list[dict[str, Any]] = []
    monkeypatch.setattr(uvicorn, "run", lambda _app, **options: started.append(options))
    monkeypatch.setattr(observability, "configure_logging", lambda *_args: None)
    monkeypatch.delenv("WEBSEARCH_MCP_CONFIG", raising=False)
    assert main(["serve", "--port", str(free_port()), "--workers", "1"]) == 0
    (options,) = started
    assert options["timeout_keep_alive"] == IDLE_CONNECTION_SECONDS


@pytest.mark.parametrize("host", ["127.0.0.1", "192.0.2.1"])  # in use; not this machine's
def test_serve_that_cannot_listen_says_so_in_one_line(tmp_path: Path, host: str) -> None:
    # One worker (the default) as with several (test_workers): one line and status 1, not
    # uvicorn's log lines and its status 3 once the service had started.
    config = write_config(tmp_path / "c.yaml", "http://127.0.0.1:9")
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        env = {**os.environ, "WEBSEARCH_MCP_TOKENS": "a-token-long-enough-1234"}
        serve = [sys.executable, "-m", "websearch_mcp", "serve", "--config", str(config)]
        done = subprocess.run(
            [*serve, "--host", host, "--port", str(port), "--workers", "1"],
            env=env,
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
        )
    assert done.returncode == 1, done.stderr
    assert done.stderr.startswith(f"error: cannot listen on {host}:{port}: "), done.stderr
    assert len(done.stderr.splitlines()) == 1, done.stderr


def test_serve_stopped_by_sigterm_exits_normally_and_leaves_no_files_behind(
    tmp_path: Path, engines_url: str
) -> None:
    # uvicorn raises SIGTERM again once it has stopped; with Python's default for it the process
    # ended there (status 143) and skipped its exit handlers, leaving the extraction fork
    # server's directory in TMPDIR.
    config = write_config(tmp_path / "c.yaml", engines_url)
    data = yaml.safe_load(config.read_text(encoding="utf-8"))
    temp = tmp_path / "tmp"
    temp.mkdir()
    with LocalServer() as site:
        site.routes["/doc"] = page("<html><body><article><p>Some words.</p></article></body>")
        data["fetch"] = {"allow_networks": ["127.0.0.0/8"], "allowed_ports": [site.port]}
        config.write_text(yaml.safe_dump(data), encoding="utf-8")
        port = free_port()
        child = _cli(
            "serve", "--config", str(config), "--port", str(port),
            env={**os.environ, "TMPDIR": str(temp)},
        )  # fmt: skip
        url = f"http://127.0.0.1:{port}"
        wait_until_answering(f"{url}/healthz", timeout=60)
        fetched = httpx.post(
            f"{url}/mcp",
            json=tool_call({"url": site.url("/doc")}, "fetch_page"),
            headers=MCP_HEADERS,
            timeout=60,
        ).json()["result"]
        assert "Some words." in fetched["structuredContent"]["content"]
        assert list(temp.iterdir())  # the fork server's directory, while it serves
        child.send_signal(signal.SIGTERM)
        _, err = child.communicate(timeout=60)
    assert child.returncode == 0, err.decode()
    assert list(temp.iterdir()) == []


def _cli(*args: str | bytes, env: dict[str, str] | None = None) -> subprocess.Popen[bytes]:
    """`python -m websearch_mcp ARGS` as a child process, its streams piped."""
    return subprocess.Popen(
        [sys.executable, "-m", "websearch_mcp", *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=env,
    )


def test_search_logs_its_warnings_in_the_configured_format_without_secrets(
    with_model: tuple[FakeLLM, Path], fake: FakeEngines
) -> None:
    llm, config = with_model
    llm.stream_mode = llm.plain_mode = "fail"
    key = "sk-model-key-0123456789"
    llm.echo = f"Bearer {key}"  # a server quoting the header it was sent
    data = yaml.safe_load(config.read_text(encoding="utf-8"))
    data["llm"]["api_key"] = key
    data["server"]["log_format"] = "json"  # and `log_level: debug`: below warning stays quiet
    config.write_text(yaml.safe_dump(data), encoding="utf-8")
    fake.faults["tavily"] = Fault(status=500)
    child = _cli("search", "python asyncio", "--config", str(config), "--intent", "code")
    out, err = child.communicate(timeout=60)
    assert child.returncode == 0, err.decode()
    records = [json.loads(line) for line in err.decode().splitlines()]
    assert [r["level"] for r in records] == ["warning"], records
    assert records[0]["message"].startswith("no summary from model fake-model: ")
    assert key not in err.decode() and key not in out.decode()


@pytest.mark.parametrize("unbuffered", ["1", ""])
def test_output_into_a_closed_pipe_ends_quietly(
    unbuffered: str, engines_url: str, tmp_path: Path
) -> None:
    # `websearch-mcp search ... | head -1`: the reader is gone before the results are written.
    config = write_config(tmp_path / "c.yaml", engines_url)
    env = {**os.environ, "PYTHONUNBUFFERED": unbuffered}
    for args in (
        ["search", "python asyncio", "--config", str(config)],
        ["check-config", str(config)],
    ):
        child = _cli(*args, env=env)
        assert child.stdout is not None and child.stderr is not None
        child.stdout.close()
        err = child.stderr.read().decode()
        assert child.wait(timeout=60) == EXIT_BROKEN_PIPE == 128 + signal.SIGPIPE, err
        assert err == ""


def test_ctrl_c_during_a_search_ends_it_quietly_with_status_130(
    fake: FakeEngines, engines_url: str, tmp_path: Path
) -> None:
    fake.faults["tavily"] = fake.faults["searxng"] = Fault(hang=True)
    config = write_config(tmp_path / "c.yaml", engines_url)
    # As from a terminal: a suite started in the background has SIGINT ignored, which a child
    # inherits (and then rightly goes on); a handler of this process's is reset in the child.
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        child = _cli("search", "python asyncio", "--config", str(config))
    finally:
        signal.signal(signal.SIGINT, previous)
    deadline = time.monotonic() + 30
    while fake.counts["tavily"] + fake.counts["searxng"] < 2 and time.monotonic() < deadline:
        time.sleep(0.05)
    child.send_signal(signal.SIGINT)
    out, err = child.communicate(timeout=10)
    assert child.returncode == EXIT_INTERRUPTED == 128 + signal.SIGINT, err.decode()
    assert out == b"" and b"Traceback" not in err


def test_a_query_the_locale_cannot_read_is_refused_as_a_usage_error(
    fake: FakeEngines, engines_url: str, tmp_path: Path
) -> None:
    # A Latin-1 "café" passed in a UTF-8 locale: Python hands it over with a lone surrogate
    # standing for the byte it could not read, which no request can carry.
    config = write_config(tmp_path / "c.yaml", engines_url)
    env = {**os.environ, "LC_ALL": "C.UTF-8"}
    children = [  # started together: each spends most of its time importing
        _cli(*args, b"--config", str(config).encode(), env=env)
        for args in (
            [b"search", b"caf\xe9"],
            [b"fetch", b"https://example.com/caf\xe9"],
            *([b"search", b"python", o, b"caf\xe9"] for o in (b"--engines", b"--language")),
            [b"search", b"python", b"--intent", b"caf\xe9"],
            [b"status", b"--url", b"http://127.0.0.1:9/caf\xe9"],
        )
    ]
    for child in children:
        out, err = child.communicate(timeout=60)
        assert child.returncode == 2, err.decode()
        assert (
            b"Traceback" not in err
            and b"not valid text in this locale's encoding" in err
            and out == b""
        )
    assert sum(fake.counts.values()) == 0


def test_fetch_reads_and_names_the_url_without_the_spaces_around_it(
    tmp_path: Path,
    engines_url: str,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    config = write_config(tmp_path / "c.yaml", engines_url)
    with LocalServer(
        routes={"/a": page("<html><head><title>Glaciers</title></head></html>")}
    ) as site:
        monkeypatch.setenv("WEBSEARCH_MCP_FETCH__ALLOW_NETWORKS", "['127.0.0.0/8']")
        monkeypatch.setenv("WEBSEARCH_MCP_FETCH__ALLOWED_PORTS", f"[{site.port}]")
        assert main(["fetch", f"  {site.url('/a')}\n", "--config", str(config), "--json"]) == 0
    answer = json.loads(capsys.readouterr().out)
    assert answer["url"] == site.url("/a") and answer["title"] == "Glaciers"


def test_results_in_emoji_and_cjk_print_in_an_ascii_locale(
    fake: FakeEngines, engines_url: str, tmp_path: Path
) -> None:
    title = "蛇 🐍 Python asyncio — 日本語"
    fake.results = lambda engine, query: [
        {"title": title, "url": "https://example.com/a", "snippet": "asyncio ñ", "score": 0.9}
    ]
    config = write_config(tmp_path / "c.yaml", engines_url)
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONIOENCODING", "LANG")}
    env |= {"LC_ALL": "C", "PYTHONUTF8": "0"}  # no UTF-8 mode: stdout is ASCII
    child = _cli("search", "python asyncio", "--config", str(config), "--json", env=env)
    out, err = child.communicate(timeout=60)
    assert child.returncode == 0, err.decode()
    assert json.loads(out)["results"][0]["title"] == title
    child = _cli("search", "python asyncio", "--config", str(config), env=env)
    out, err = child.communicate(timeout=60)
    assert child.returncode == 0, err.decode()
    assert out.startswith(b"1. ") and b"Python asyncio" in out
    # A page's text too; and where stdout is UTF-8 the characters are printed as they are.
    heading = "蛇 🐍 日本語 Python asyncio"
    with LocalServer(
        routes={"/a": page(f"<html><head><title>{heading}</title></head></html>")}
    ) as site:
        env |= {
            "WEBSEARCH_MCP_FETCH__ALLOW_NETWORKS": "['127.0.0.0/8']",
            "WEBSEARCH_MCP_FETCH__ALLOWED_PORTS": f"[{site.port}]",
        }
        child = _cli("fetch", site.url("/a"), "--config", str(config), "--json", env=env)
        out, err = child.communicate(timeout=60)
    assert child.returncode == 0, err.decode()
    assert json.loads(out)["title"] == heading
    utf8 = env | {"LC_ALL": "C.UTF-8"}
    child = _cli("search", "python asyncio", "--config", str(config), "--json", env=utf8)
    out, err = child.communicate(timeout=60)
    assert child.returncode == 0, err.decode()
    assert f'"title": "{title}"'.encode() in out


#: What a hostile result, engine or page could send a terminal: set the clipboard (OSC 52), clear
#: the screen, move the cursor up, a right-to-left override and a C1 control sequence.
TERMINAL_ACTIONS = "\x1b]52;c;cm0gLXJmIH4K\x07 \x1b[2J \x1b[1A \u202e \x9b31m"
SHOWN = "?]52;c;cm0gLXJmIH4K? ?[2J ?[1A ? ?31m"
#: The same in a result's title or snippet, whose control and format characters the service
#: removes before anything prints them.
CLEANED = "]52;c;cm0gLXJmIH4K [2J [1A 31m"


def test_search_and_fetch_print_no_character_a_terminal_would_act_on(
    fake: FakeEngines,
    engines_url: str,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    fake.results = lambda engine, query: [
        {
            "title": f"Python asyncio {TERMINAL_ACTIONS}",
            "url": "https://example.com/a",
            "snippet": f"asyncio {TERMINAL_ACTIONS}",
            "score": 0.9,
        }
    ]
    # A SearXNG instance naming its own engines that did not answer: the engine's error text.
    silent = {"results": [], "unresponsive_engines": [[f"google {TERMINAL_ACTIONS}", "timeout"]]}
    fake.faults["searxng"] = Fault(status=200, body=json.dumps(silent))
    config = write_config(tmp_path / "c.yaml", engines_url)
    assert main(["search", "python asyncio", "--config", str(config)]) == 0
    out = capsys.readouterr().out
    assert f"1. Python asyncio {CLEANED}\n   https://example.com/a\n   asyncio {CLEANED}\n" in out
    assert (
        f"searxng error (no results; the instance's engines did not answer: google {CLEANED}" in out
    )
    # And where no engine answered, the error on stderr names it the same way.
    fake.faults["tavily"] = Fault(status=500)
    assert main(["search", "python asyncio", "--config", str(config)]) == 1
    err = capsys.readouterr().err
    assert (
        f"searxng: error (no results; the instance's engines did not answer: google {CLEANED}"
        in err
    )
    assert err.endswith("\n") and err[:-1].isprintable(), repr(err)
    # A plain-text page is printed as it was sent, its line breaks and tabs kept.
    text = f"Glaciers\tmove.\r{TERMINAL_ACTIONS}\nThey carve valleys."
    with LocalServer(routes={"/a.txt": page(text, "text/plain; charset=utf-8")}) as site:
        monkeypatch.setenv("WEBSEARCH_MCP_FETCH__ALLOW_NETWORKS", "['127.0.0.0/8']")
        monkeypatch.setenv("WEBSEARCH_MCP_FETCH__ALLOWED_PORTS", f"[{site.port}]")
        assert main(["fetch", site.url("/a.txt"), "--config", str(config)]) == 0
    out = capsys.readouterr().out
    assert f"\nGlaciers\tmove.?{SHOWN}\nThey carve valleys.\n" in out
    assert all(c.isprintable() or c in "\n\t" for c in out), repr(out)


def test_search_prints_the_joiners_a_word_or_an_emoji_is_written_with(
    fake: FakeEngines, engines_url: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """ZWNJ (Persian) and ZWJ (emoji sequences), kept in results, were printed as "?"."""
    title = "می\u200cخواهم \U0001f468\u200d\U0001f469 family"
    fake.results = lambda engine, query: [
        {"title": title, "url": "https://example.com/a", "snippet": "A family.", "score": 0.9}
    ]
    assert (
        main(["search", "family", "--config", str(write_config(tmp_path / "c.yaml", engines_url))])
        == 0
    )
    assert f"1. {title}\n" in capsys.readouterr().out


def test_a_fetch_error_quoting_the_page_server_prints_no_terminal_action(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    # The error names the page's Content-Encoding as its server sent it.
    coding = "\x1b]52;c;cm0gLXJmIH4K\x07 \x1b[2J \x9b31m"

    def reply(handler: Any) -> None:
        send(handler, 200, b"text", "text/plain", {"Content-Encoding": coding})

    config = write_config(tmp_path / "c.yaml", "http://127.0.0.1:9")
    with LocalServer(routes={"/a.txt": reply}) as site:
        monkeypatch.setenv("WEBSEARCH_MCP_FETCH__ALLOW_NETWORKS", "['127.0.0.0/8']")
        monkeypatch.setenv("WEBSEARCH_MCP_FETCH__ALLOWED_PORTS", f"[{site.port}]")
        assert main(["fetch", site.url("/a.txt"), "--config", str(config)]) == 1
    err = capsys.readouterr().err
    assert "unsupported content encoding (?]52;c;cm0glxjmih4k? ?[2j ?31m)" in err
    assert err.endswith("\n") and err[:-1].isprintable(), repr(err)


def test_a_link_with_a_line_break_is_the_link_a_browser_opens(
    fake: FakeEngines, engines_url: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # Browsers and `urlsplit` drop tabs and line breaks from a URL: the link printed and
    # returned is the one they open, on one line, and it starts no line of its own.
    fake.results = lambda engine, query: [
        {
            "title": "Python asyncio",
            "url": "https://example.com/asyn\r\ncio\n2. Forged result\t",
            "snippet": "asyncio",
            "score": 0.9,
        }
    ]
    config = write_config(tmp_path / "c.yaml", engines_url)
    assert main(["search", "python asyncio", "--config", str(config), "--json"]) == 0
    url = json.loads(capsys.readouterr().out)["results"][0]["url"]
    assert url == "https://example.com/asyncio2.%20Forged%20result"
    assert main(["search", "python asyncio", "--config", str(config)]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[:2] == ["1. Python asyncio", "   https://example.com/asyncio2.%20Forged%20result"]


async def _tool_error(config: Path, name: str, arguments: dict[str, Any]) -> str:
    """The error the MCP tool `name` answers `arguments` with, served from `config`, without
    the tool layer's "Error executing tool NAME: " before it."""
    with serve_app(create_app(load_config(str(config)))) as url:
        async with Client(f"{url}/mcp", mode="legacy", cache=None) as client:
            result = await client.call_tool(name, arguments)
    assert result.is_error
    return text_of(result).removeprefix(f"Error executing tool {name}: ")


async def test_search_holds_a_query_to_server_max_query_chars_as_the_tool_does(
    fake: FakeEngines, engines_url: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    config = write_config(tmp_path / "c.yaml", engines_url)
    data = yaml.safe_load(config.read_text(encoding="utf-8"))
    data["server"]["max_query_chars"] = 20
    config.write_text(yaml.safe_dump(data), encoding="utf-8")
    long_query = "python asyncio event loop tutorial"
    refused = await _tool_error(config, "web_search", {"query": long_query})
    assert refused == "query must be at most 20 characters (got 34)"
    assert await asyncio.to_thread(main, ["search", long_query, "--config", str(config)]) == 1
    assert capsys.readouterr().err == f"error: {refused}\n"
    assert sum(fake.counts.values()) == 0
    assert await asyncio.to_thread(main, ["search", "python asyncio", "--config", str(config)]) == 0


@pytest.mark.parametrize(
    ("option", "arguments"),
    [
        (["--max-chars", "0"], {"max_chars": 0}),
        (["--start", "-1"], {"start": -1}),
        (["--start", "3000000000"], {"start": 3000000000}),
    ],
)
async def test_fetch_refuses_a_window_in_the_words_of_fetch_page(
    option: list[str],
    arguments: dict[str, Any],
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    config = write_config(tmp_path / "c.yaml", "http://127.0.0.1:9")
    url = "https://example.com/"
    refused = await _tool_error(config, "fetch_page", {"url": url, **arguments})
    assert "must be an integer from" in refused
    assert await asyncio.to_thread(main, ["fetch", url, *option, "--config", str(config)]) == 1
    assert capsys.readouterr().err == f"error: {refused}\n"
