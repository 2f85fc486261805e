"""The two server processes of the latency benchmark, each started as its own Python process.

    python -m bench.latency_server engines --delays '{"tavily": 0.4, ...}'
    python -m bench.latency_server service --config websearch-mcp.yaml [--workers N]

`engines` serves the fake engines (`testing.lean_engines`: real wire formats, on aiohttp) with a
fixed delay each, answering with `bench.synthetic` results. `service` runs the real app exactly as
`websearch-mcp serve` does (same uvicorn options), plus one tool that only the benchmark has:
`noop`, which answers "ok" at once, so its throughput is the floor set by HTTP, the middleware
and the MCP SDK alone. Each process prints `port <n>` on stdout once it is listening.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import signal
import sys
import threading
import time
from importlib.util import find_spec
from typing import Any

import uvicorn
from aiohttp import web
from starlette.types import ASGIApp

from bench.synthetic import results_for
from testing.lean_engines import engines_app
from websearch_mcp.runtime import shared_runtime
from websearch_mcp.search.configuration import load_config
from websearch_mcp.server.app import create_app
from websearch_mcp.server.observability import configure_logging
from websearch_mcp.server.tools import read_only
from websearch_mcp.server.workers import listening_sockets, run_workers


def _exit_with_parent() -> None:
    """Stop (as on SIGTERM) once the process that started this one is gone, so that a killed
    benchmark leaves no server behind."""
    parent = os.getppid()

    def watch() -> None:
        while os.getppid() == parent:
            time.sleep(0.5)
        os.kill(os.getpid(), signal.SIGTERM)

    threading.Thread(target=watch, daemon=True).start()


def _run(app: ASGIApp | str, **options: Any) -> None:
    _exit_with_parent()
    # Listening before uvicorn starts, as `serve` does: early connections wait in the backlog.
    sockets = listening_sockets("127.0.0.1", 0, options.get("workers", 1))
    # What uvicorn's "auto" picks: uvloop and httptools when installed, else asyncio and h11.
    loop = "uvloop" if find_spec("uvloop") else "asyncio"
    http = "httptools" if find_spec("httptools") else "h11"
    print(f"port {sockets[0].getsockname()[1]} loop {loop} http {http}", flush=True)
    if isinstance(app, str):
        # Several workers: the supervisor of `websearch-mcp serve --workers`.
        run_workers(app, sockets=sockets, log_config=None, access_log=False, **options)
        return
    config = uvicorn.Config(app, log_config=None, access_log=False, **options)
    uvicorn.Server(config).run(sockets=sockets)


def engines(delays: dict[str, float]) -> None:
    """Every fake engine, each answering after its delay (`testing.lean_engines`)."""
    _exit_with_parent()
    (sock,) = listening_sockets("127.0.0.1", 0, 1)
    print(f"port {sock.getsockname()[1]} server aiohttp", flush=True)

    async def serve() -> None:
        runner = web.AppRunner(engines_app(delays, results_for), access_log=None)
        await runner.setup()
        await web.SockSite(runner, sock, backlog=4096).start()
        stop = asyncio.Event()
        loop = asyncio.get_running_loop()
        loop.add_signal_handler(signal.SIGTERM, stop.set)
        loop.add_signal_handler(signal.SIGINT, stop.set)
        await stop.wait()
        await runner.cleanup()

    asyncio.run(serve())


#: Names the configuration file for `service_app` in each worker process.
CONFIG_ENV = "BENCH_SERVICE_CONFIG"


def service_app() -> ASGIApp:
    """The app as `websearch-mcp serve` builds it, with the benchmark's `noop` tool added."""
    settings = load_config(os.environ[CONFIG_ENV])
    server = settings.server
    configure_logging(server.log_format, server.log_level, settings.secrets())
    app = create_app(settings, settle_gc=True)

    @app.state.mcp.tool(title="No-op", annotations=read_only("No-op"))
    async def noop() -> str:
        """Do nothing: the protocol's own cost."""
        return "ok"

    return app


def service(config_path: str, workers: int) -> None:
    """`service_app` served as `websearch-mcp serve --workers <workers>` serves the real one."""
    os.environ[CONFIG_ENV] = config_path
    options = {"proxy_headers": False, "server_header": False, "backlog": 4096}
    level = load_config(config_path).server.log_level
    if workers == 1:
        _run(service_app(), log_level=level, **options)
        return
    with shared_runtime():
        _run("bench.latency_server:service_app", workers=workers, log_level=level, **options)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.latency_server")
    sub = parser.add_subparsers(dest="role", required=True)
    fake = sub.add_parser("engines")
    fake.add_argument("--delays", required=True, help="JSON: engine name -> delay in seconds")
    real = sub.add_parser("service")
    real.add_argument("--config", required=True)
    real.add_argument("--workers", type=int, default=1, help="server processes on the port")
    ns = parser.parse_args(argv)
    if ns.role == "engines":
        engines({name: float(d) for name, d in json.loads(ns.delays).items()})
    else:
        service(ns.config, ns.workers)
    return 0


if __name__ == "__main__":
    sys.exit(main())
