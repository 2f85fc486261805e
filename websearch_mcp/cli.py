"""Command line: `websearch-mcp serve | stdio | search | fetch | status | check-config`."""

from __future__ import annotations

import argparse
import asyncio
import codecs
import io
import json
import os
import signal
import socket
import sys
import tempfile
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from websearch_mcp import __version__
from websearch_mcp.config import CONFIG_ENV, ENV_PREFIX, Settings
from websearch_mcp.config.loader import CONFIG_TEXT_ENV, TOKENS_ENV, env_path
from websearch_mcp.errors import ConfigError, FetchError, SearchFailed, ToolInputError
from websearch_mcp.fetch import DEFAULT_MAX_CHARS
from websearch_mcp.models import TIME_RANGES
from websearch_mcp.search.configuration import load_config
from websearch_mcp.search.service import SearchService
from websearch_mcp.server.argument_checks import NO_TIME_LIMIT
from websearch_mcp.server.arguments import MAX_READ, fetch_page_args, web_search_args
from websearch_mcp.server.rendering import page_text, printable, search_text


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="websearch-mcp", description=__doc__)
    parser.add_argument("--version", action="version", version=f"websearch-mcp {__version__}")
    sub = parser.add_subparsers(dest="command", required=True)

    serve = sub.add_parser("serve", help="serve MCP over streamable HTTP")
    serve.add_argument("--config", help="YAML config file (default: $WEBSEARCH_MCP_CONFIG)")
    serve.add_argument("--host", help="address to listen on (overrides server.host)")
    serve.add_argument("--port", type=_port_arg, help="port to listen on (overrides server.port)")
    serve.add_argument(
        "--workers",
        type=_workers_arg,
        help="server processes on the port: a number or auto (overrides server.workers)",
    )

    stdio = sub.add_parser("stdio", help="serve MCP over stdin/stdout (for desktop clients)")
    stdio.add_argument("--config", help="YAML config file (default: $WEBSEARCH_MCP_CONFIG)")

    _search_arguments(sub.add_parser("search", help="run one web search and print it"))

    fetch = sub.add_parser("fetch", help="read one page as clean text and print it")
    fetch.add_argument("url", type=_text_arg)
    fetch.add_argument("--config", help="YAML config file (default: $WEBSEARCH_MCP_CONFIG)")
    fetch.add_argument(
        "--max-chars",
        type=int,
        default=DEFAULT_MAX_CHARS,
        help=f"the longest window of text printed (default: {DEFAULT_MAX_CHARS})",
    )
    fetch.add_argument(
        "--start",
        type=int,
        default=0,
        help="where the window begins: the next_start of the previous window (default: 0)",
    )
    fetch.add_argument("--json", action="store_true", help="print the tool's structured JSON")

    status = sub.add_parser("status", help="print each engine's state and last hour")
    status.add_argument("--config", help="YAML config file (default: $WEBSEARCH_MCP_CONFIG)")
    status.add_argument(
        "--url",
        type=_text_arg,
        help="the server (default: http://<server.host>:<server.port>, 127.0.0.1 for 0.0.0.0);"
        " the token sent is the first"
        f" of server.auth_tokens (${TOKENS_ENV}, or the config file's)",
    )
    status.add_argument("--json", action="store_true", help="print /status.json as it is")

    check = sub.add_parser("check-config", help="validate a config file and print the result")
    check.add_argument("path", nargs="?", help="YAML config file (default: $WEBSEARCH_MCP_CONFIG)")
    return parser


def _search_arguments(search: argparse.ArgumentParser) -> None:
    search.add_argument("query", type=_text_arg)
    search.add_argument("--config", help="YAML config file (default: $WEBSEARCH_MCP_CONFIG)")
    search.add_argument(
        "--engines", type=_text_arg, help="comma-separated engine names (default: all enabled)"
    )
    search.add_argument(
        "--max-results", type=int, help="results to print (default: search.max_results)"
    )
    search.add_argument(
        "--time-range",
        choices=[*TIME_RANGES, NO_TIME_LIMIT],
        help=f"only recent results; {NO_TIME_LIMIT}: no limit, as left out",
    )
    search.add_argument("--language", type=_text_arg)
    search.add_argument(
        "--category", choices=["general", "news"], default="general", help="news: news indexes"
    )
    search.add_argument("--json", action="store_true", help="print the tool's structured JSON")
    search.add_argument("--explain", action="store_true", help="include every score's details")
    search.add_argument(
        "--read",
        type=int,
        default=0,
        metavar="N",
        help=f"also read the top N pages (0-{MAX_READ}) and show the passages answering the query",
    )
    search.add_argument(
        "--intent",
        type=_text_arg,
        help="summarise the results for research, code, news, howto or a short phrase of your"
        " own (needs a configured model: llm.base_url and llm.model)",
    )


def _text_arg(text: str) -> str:
    """Text sent on to the engines or a server. Bytes that the locale's encoding cannot read (a
    Latin-1 "café" in a UTF-8 terminal) reach Python as lone surrogates, which no request can
    carry: they are a usage error here rather than a crash later."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        encoding = sys.getfilesystemencoding()
        raise argparse.ArgumentTypeError(
            f"not valid text in this locale's encoding ({encoding})"
        ) from None
    return text


def _port_arg(text: str) -> int:
    """`--port`: a number from 1 to 65535, as `server.port`."""
    if text.isdecimal() and 1 <= int(text) <= 65535:
        return int(text)
    raise argparse.ArgumentTypeError(f"must be a number from 1 to 65535 (got {text!r})")


def _workers_arg(text: str) -> int | str:
    """`--workers`: a number from 1 to 64, or auto."""
    if text == "auto":
        return text
    if text.isdecimal() and 1 <= int(text) <= 64:
        return int(text)
    raise argparse.ArgumentTypeError(f"must be a number from 1 to 64 or auto (got {text!r})")


#: How long the server keeps an idle HTTP connection open. A balancer in front must let its idle
#: connections go sooner (deploy/nginx.conf's keepalive_timeout): one it reused just as the server
#: closed it would fail, and count against the replica.
IDLE_CONNECTION_SECONDS = 5

#: Exit statuses after Ctrl-C and after the reader of stdout went away (`| head`): 128 + the
#: signal's number, as a shell reports a command that SIGINT or SIGPIPE ended.
EXIT_INTERRUPTED = 130
EXIT_BROKEN_PIPE = 141

#: The most a configuration file may hold to reach the workers in a variable (Linux takes up to
#: 128 KiB in one).
MAX_VARIABLE_BYTES = 100_000


def _serve(settings: Settings, ns: argparse.Namespace) -> int:
    import uvicorn

    from websearch_mcp.server.middleware.exposure import check_exposure
    from websearch_mcp.server.middleware.slow_clients import header_deadline_protocol
    from websearch_mcp.server.observability import configure_logging
    from websearch_mcp.server.workers import listening_sockets, worker_count

    overrides = {"host": ns.host, "port": ns.port, "workers": ns.workers}
    server = settings.server.model_copy(
        update={k: v for k, v in overrides.items() if v is not None}
    )
    settings = settings.model_copy(update={"server": server})
    configure_logging(server.log_format, server.log_level, settings.secrets())
    # The app logs each request itself (with its request id) and reads X-Forwarded-For only
    # from `server.trusted_proxies`, so uvicorn's own access log and proxy handling stay off.
    options: dict[str, Any] = {
        "host": server.host,
        "port": server.port,
        "log_level": server.log_level,
        "log_config": None,
        "access_log": False,
        "proxy_headers": False,
        "server_header": False,
        "timeout_keep_alive": IDLE_CONNECTION_SECONDS,
    }
    check_exposure(server)  # before listening; once, rather than in every worker
    workers = worker_count(server.workers)
    if workers > 1 and sys.platform == "win32":
        # The workers share files under POSIX locks and watch each other by signal 0.
        print(
            "error: --workers needs Linux or macOS; on Windows serve one process", file=sys.stderr
        )
        return 1
    try:
        sockets = listening_sockets(server.host, server.port, workers)
    except OSError as err:  # in use, not an address of this machine, a name that does not resolve
        print(
            f"error: cannot listen on {server.host}:{server.port}: {err.strerror or err}",
            file=sys.stderr,
        )
        return 1
    if workers > 1:
        return _serve_workers(ns, workers, sockets, options)
    # One process: uvicorn binds the port itself (every address of a name, as asyncio does). The
    # socket above only found that it can; without it, a port in use showed in a log line once
    # the service had started, with uvicorn's status 3.
    sockets[0].close()
    from websearch_mcp.server.app import create_app

    # uvicorn stops on SIGTERM, then raises it again for the handler it found: Python's default
    # would end the process there (status 143) without its exit handlers, multiprocessing's
    # among them (they remove the extraction fork server's directory from TMPDIR).
    before = signal.signal(signal.SIGTERM, _exit_normally)
    try:
        uvicorn.run(
            create_app(settings, settle_gc=True),
            http=header_deadline_protocol(server.read_timeout_seconds),
            **options,
        )
    finally:
        signal.signal(signal.SIGTERM, before)
    return 0


def _exit_normally(signum: int, frame: object) -> None:
    raise SystemExit(0)


def _serve_workers(
    ns: argparse.Namespace,
    workers: int,
    sockets: list[socket.socket],
    options: dict[str, Any],
) -> int:
    """Serve with `workers` processes on `sockets`; each loads the configuration again, with
    the command line's overrides passed as environment overrides."""
    from websearch_mcp.runtime import shared_runtime
    from websearch_mcp.server.middleware.slow_clients import WORKER_PROTOCOL
    from websearch_mcp.server.workers import run_workers

    if ns.config:
        os.environ[CONFIG_ENV] = str(ns.config)
    if (path := os.environ.get(CONFIG_ENV)) and (text := _config_text(path)) is not None:
        os.environ[CONFIG_TEXT_ENV] = text
    # The resolved count, so that each worker's status page says how many there are.
    for key, value in (("host", ns.host), ("port", ns.port), ("workers", workers)):
        if value is not None:
            # In place of the user's own variable for the key, in whatever case it is written.
            for name in [name for name in os.environ if env_path(name) == ("server", key)]:
                del os.environ[name]
            os.environ[f"{ENV_PREFIX}SERVER__{key.upper()}"] = json.dumps(value)
    with shared_runtime():
        # Workers get the protocol by name (a class made at run time cannot be sent to them) and
        # set its deadline from their own configuration.
        return run_workers(
            "websearch_mcp.server.app:worker_app",
            workers,
            sockets,
            http=WORKER_PROTOCOL,
            **options,
        )


def _config_text(path: str) -> str | None:
    """The configuration file's text, for the workers to read rather than the file (None when
    it cannot be read, or is too long for a variable: they read the file then)."""
    try:
        text = Path(path).read_text(encoding="utf-8")
    except (OSError, UnicodeError):
        return None
    return text if len(text.encode()) < MAX_VARIABLE_BYTES else None


def _json_text(data: Any) -> str:
    """`data` as JSON for stdout: characters as they are where stdout is UTF-8, else escaped
    (`\\u86c7`), which keeps them and the JSON valid in any locale."""
    utf8 = codecs.lookup(sys.stdout.encoding or "utf-8").name == "utf-8"
    return json.dumps(data, ensure_ascii=not utf8, indent=2)


def _terminal_text(text: str) -> str:
    """A text rendering for stdout, often a terminal: its line breaks and tabs kept, and every
    other character a terminal would act on shown as `?`."""
    return printable(text, keep="\n\t")


async def _search(settings: Settings, ns: argparse.Namespace) -> int:
    if ns.intent is not None and not settings.llm.enabled:
        print("error: --intent needs a model: set llm.base_url and llm.model", file=sys.stderr)
        return 1
    service = SearchService(settings)
    try:
        args = web_search_args(
            ns.query,
            settings.search.max_results if ns.max_results is None else ns.max_results,
            ns.time_range,
            ns.engines,
            ns.language,
            ns.explain,
            intent=ns.intent,
            read=ns.read,
            category=ns.category,
            max_query_chars=settings.server.max_query_chars,
        )
        answer = await service.web_search(args)
    except (ToolInputError, SearchFailed) as err:  # quoting the engines' error texts
        print(f"error: {printable(str(err))}", file=sys.stderr)
        return 1
    finally:
        await service.close()
    print(_json_text(answer) if ns.json else _terminal_text(search_text(answer)))
    return 0


async def _fetch(settings: Settings, ns: argparse.Namespace) -> int:
    service = SearchService(settings)
    try:
        # As the tool takes them: the same bounds, and the spaces or line end a pasted URL
        # brings are not part of it.
        url, max_chars, start = fetch_page_args(ns.url, ns.max_chars, ns.start)
        page = await service.fetch_page(url, max_chars=max_chars, start=start)
    except (ToolInputError, FetchError) as err:
        print(f"error: {printable(str(err))}", file=sys.stderr)
        return 1
    finally:
        await service.close()
    print(_json_text(page) if ns.json else _terminal_text(page_text(page)))
    return 0


def status_proxy(base: str, no_proxy: list[str], environ: Mapping[str, str]) -> str | None:
    """The proxy `status` asks the server at `base` through: the standard variables' (as the
    engines read them, `NO_PROXY` and `proxy.no_proxy` exempting), and none for a server on
    this machine, which a proxy cannot reach and would be handed the token."""
    from websearch_mcp.net.http import choose_proxy
    from websearch_mcp.server.middleware.exposure import is_loopback

    if is_loopback(urlsplit(base).hostname or ""):
        return None
    return choose_proxy(base, None, None, no_proxy, environ)


def status_target(
    url: str | None, settings: Settings, environ: Mapping[str, str]
) -> tuple[str, str | None]:
    """The server `status` asks, and the proxy it asks through. Without `url`, the server the
    configuration describes, on this machine: asked directly, at `server.host` (a wildcard
    address on loopback), as a proxy would be handed the token."""
    if url is not None:
        base = url.rstrip("/")
        return base, status_proxy(base, settings.proxy.no_proxy, environ)
    host = settings.server.host
    host = {"": "127.0.0.1", "0.0.0.0": "127.0.0.1", "::": "::1"}.get(host, host)
    named = f"[{host}]" if ":" in host else host
    return f"http://{named}:{settings.server.port}", None


def _status(settings: Settings, ns: argparse.Namespace) -> int:
    """Fetch `/status.json` and print it as a table (or as it is, with `--json`)."""
    import httpx

    from websearch_mcp.net.http import ssl_context
    from websearch_mcp.server.status.table import render_table

    base, proxy = status_target(ns.url, settings, os.environ)
    # The server's own tokens, wherever the configuration took them from ($WEBSEARCH_MCP_TOKENS
    # wins over the file, as it does for the server).
    tokens = settings.server.auth_tokens
    headers = {"Authorization": f"Bearer {tokens[0]}"} if tokens else {}
    try:
        response = httpx.get(
            f"{base}/status.json",
            headers=headers,
            timeout=10.0,
            proxy=proxy,
            trust_env=False,
            verify=ssl_context(),
        )
    except httpx.HTTPError as err:
        print(f"error: cannot reach {base}: {type(err).__name__}", file=sys.stderr)
        return 1
    if response.status_code != 200:
        hint = f" (set ${TOKENS_ENV} or server.auth_tokens)" if response.status_code == 401 else ""
        print(f"error: {base}/status.json answered {response.status_code}{hint}", file=sys.stderr)
        return 1
    try:
        report = response.json()
    except ValueError:
        report = None
    # Another service on that port, or a sign-in page in front of the server, also answers 200.
    if not (isinstance(report, dict) and isinstance(report.get("engines"), list)):
        print(f"error: {base}/status.json answered no status report", file=sys.stderr)
        return 1
    # ASCII JSON: an engine's error text may hold characters a terminal would act on.
    print(json.dumps(report, ensure_ascii=True) if ns.json else render_table(report))
    return 0


def _check(path: str | None) -> int:
    from websearch_mcp.cache import check_backend
    from websearch_mcp.server.middleware.exposure import check_exposure

    settings = load_config(path)
    check_exposure(settings.server)  # as `serve` does before it listens
    check_backend(settings.cache)  # as building the service does
    enabled = [
        name for name in sorted(settings.engines) if settings.engines[name].enabled is not False
    ]
    print(f"configuration OK: {path or os.environ.get(CONFIG_ENV) or 'built-in defaults'}")
    print(
        f"server: {settings.server.host}:{settings.server.port}; strategy: "
        f"{settings.search.strategy}; cache: {settings.cache.backend}"
    )
    if enabled:
        print(f"engines configured: {', '.join(enabled)}")
    if note := settings.llm.half_set():
        print(note)
    return 0


def _run(ns: argparse.Namespace) -> int:
    if ns.command == "check-config":
        return _check(ns.path)
    settings = load_config(ns.config)
    if ns.command == "serve":
        return _serve(settings, ns)
    if ns.command == "stdio":
        from websearch_mcp.server.stdio import serve_stdio

        asyncio.run(serve_stdio(settings))
        return 0
    if ns.command == "status":
        return _status(settings, ns)
    from websearch_mcp.server.observability import configure_logging

    # Warnings (a cache set aside, a summary that failed) in the configured format, secrets
    # redacted; what is below them the answer already says, and stderr is for what needs a look.
    level = "error" if settings.server.log_level == "error" else "warning"
    configure_logging(settings.server.log_format, level, settings.secrets())
    if ns.command == "fetch":
        return asyncio.run(_fetch(settings, ns))
    return asyncio.run(_search(settings, ns))


def main(argv: Sequence[str] | None = None) -> int:
    _standard_streams_open()
    ns = _parser().parse_args(argv)
    try:
        os.getcwd()
    except OSError:
        # Started in a folder since deleted (a desktop client's): the extraction workers'
        # start needs a working directory that exists.
        os.chdir(tempfile.gettempdir())
    if isinstance(sys.stdout, io.TextIOWrapper):
        # A terminal in an ASCII or Latin-1 locale cannot show every character of a title:
        # those become "?" rather than ending the command.
        sys.stdout.reconfigure(errors="replace")
    try:
        code = _run(ns)
        sys.stdout.flush()  # a reader that went away shows here, not in Python's flush at exit
    except ConfigError as err:
        print(f"error: {err}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:  # Ctrl-C: the command has stopped, a search closing its cache
        return EXIT_INTERRUPTED
    except BrokenPipeError:  # `| head`: the rest of the output goes nowhere, at exit too
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return EXIT_BROKEN_PIPE
    return code


def _standard_streams_open() -> None:
    """Started with stdin, stdout or stderr closed (some clients close stderr), the next file
    opened would take its number, and what is written there (stdio sends stray output to
    stderr) would go into that file: each missing one is opened on /dev/null."""
    for fd in (0, 1, 2):
        try:
            os.fstat(fd)
        except OSError:
            os.open(os.devnull, os.O_RDWR)  # the lowest free number: this one


if __name__ == "__main__":
    sys.exit(main())
