"""The configuration as the service runs it: read and validated by `config`, then the engines it
names checked against the registered ones (which `config` does not know)."""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Any

from websearch_mcp.config import Settings
from websearch_mcp.config.loader import invalid, origin, read_config, read_config_file
from websearch_mcp.engines.checks import engine_problems, key_variables
from websearch_mcp.errors import ConfigError


def parse_config(data: Any, source: str, environ: Mapping[str, str] | None = None) -> Settings:
    """Validate a parsed YAML document plus environment overrides into `Settings`, then check
    the engines it names against the registered ones."""
    variables = key_variables()
    try:
        settings = read_config(data, source, environ, variables)
    except ValueError as err:
        raise ConfigError(str(err)) from None
    if problems := engine_problems(settings):
        lines = [f"{key}: {text}{origin(key, environ, variables)}" for key, text in problems]
        raise ConfigError(invalid(source, lines))
    return settings


def load_config(path: str | os.PathLike[str] | None = None) -> Settings:
    """Load the YAML file at `path` (or `$WEBSEARCH_MCP_CONFIG`); the built-in defaults and the
    environment without one."""
    try:
        data, source = read_config_file(path)
    except ValueError as err:
        raise ConfigError(str(err)) from None
    return parse_config(data, source)
