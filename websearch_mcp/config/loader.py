"""Reading the configuration: the YAML file, environment overrides, secrets from the
environment, and error messages that name the key, the file and what is allowed.

This package knows no engine: the environment variables of the engines' keys are handed in, and
the engines the settings name are checked against the registry by the caller
(`search.configuration`).

Any setting can come from the environment as `WEBSEARCH_MCP_<SECTION>__<KEY>` (nested keys
joined by `__`, values parsed as YAML), engine keys from `<ENGINE>_API_KEYS=k1,k2`, bearer
tokens from `WEBSEARCH_MCP_TOKENS` and the summary model's key from `LLM_API_KEY`.
"""

from __future__ import annotations

import io
import os
from collections.abc import Hashable, Mapping
from pathlib import Path
from typing import Any

import yaml
from pydantic import BaseModel, TypeAdapter, ValidationError

from websearch_mcp.config.engines import EngineSettings
from websearch_mcp.config.settings import Settings
from websearch_mcp.config.types import ProxyUrl

ENV_PREFIX = "WEBSEARCH_MCP_"
CONFIG_ENV = "WEBSEARCH_MCP_CONFIG"
#: The configuration file's text as a multi-process server read it at start, for its workers:
#: a worker started later (a replacement) runs what the others run, whatever the file holds now.
CONFIG_TEXT_ENV = "WEBSEARCH_WORKER_CONFIG_TEXT"
#: Bearer tokens as `t1,t2`, the same as `server.auth_tokens`.
TOKENS_ENV = "WEBSEARCH_MCP_TOKENS"
#: The key of the summary model, the same as `llm.api_key`.
LLM_KEY_ENV = "LLM_API_KEY"
#: Keys whose values are never shown in an error (and everything below them). A base URL may
#: hold a password (a SearXNG behind basic authentication), as proxy and Redis URLs may.
SECRET_KEYS = frozenset(
    {
        "api_keys",
        "api_key",
        "reader_api_key",
        "auth_tokens",
        "redis_url",
        "url",
        "proxy",
        "base_url",
        "reader_base_url",
    }
)
#: The standard proxy variables, read when `proxy.url` is not set; of two spellings the lower
#: case one counts, as for curl.
PROXY_VARIABLES = ("http_proxy", "https_proxy", "all_proxy")
#: The longest value an error shows (a number of thousands of digits is cut).
MAX_SHOWN = 80
#: Errors of a value given where a section (a mapping) was expected.
SECTION_ERRORS = frozenset({"dict_type", "model_type", "model_attributes_type"})


def env_path(name: str) -> tuple[str, ...]:
    """The settings key `WEBSEARCH_MCP_<SECTION>__<KEY>` sets, or `()` for any other variable."""
    if not name.startswith(ENV_PREFIX) or name in (CONFIG_ENV, TOKENS_ENV):
        return ()
    return tuple(part.lower() for part in name[len(ENV_PREFIX) :].split("__") if part)


def _env_value(raw: str) -> Any:
    """A variable's value: YAML where it is quoted text, a `[...]` or `{...}` collection, a
    boolean or null; any other text whole, as written. The settings read a number from its text,
    and so a one-item list (one port, one all-digit token) and a key such as 0777 are not turned
    into a number; YAML would also cut `abc #def` at its comment and read `::` as a mapping."""
    text = raw.strip()
    if not text:
        return raw
    try:
        value = yaml.load(raw, Loader=_ConfigLoader)  # the file's safe loader: numbers as written
    except (yaml.YAMLError, ValueError):  # ValueError: a number of thousands of digits
        return text
    if (
        value is None
        or isinstance(value, bool)
        or (isinstance(value, list) and text.startswith("["))
        or (isinstance(value, dict) and text.startswith("{"))
        or (isinstance(value, str) and text[0] in "'\"")
    ):
        return value
    return text


#: Lists of secrets: an empty variable for one sets nothing, as `WEBSEARCH_MCP_TOKENS=` and
#: `<ENGINE>_API_KEYS=` do, where emptying the file's list would leave a server without
#: authentication, or an engine without its keys, by a variable left blank.
_SECRET_LISTS = frozenset({"auth_tokens", "api_keys"})


def _unset_secrets(path: tuple[str, ...], raw: str) -> bool:
    """Whether a variable for `path` holding `raw` sets nothing: a list of secrets left blank."""
    return path[-1] in _SECRET_LISTS and not raw.strip()


def _env_overrides(environ: dict[str, str]) -> dict[str, Any]:
    """Nested dict from `WEBSEARCH_MCP_<SECTION>__<KEY>=value` variables (values parsed as YAML).
    A variable setting a whole section comes before those inside it, whatever their order in
    the environment: its keys are merged with theirs, and a value that is no mapping refused."""
    tree: dict[str, Any] = {}
    named: dict[tuple[str, ...], str] = {}
    for name in sorted(environ, key=lambda name: len(env_path(name))):
        path = env_path(name)
        if not path or _unset_secrets(path, environ[name]):
            continue
        if (other := named.setdefault(path, name)) != name:  # names are read case-blind
            raise ValueError(f"environment variables {other} and {name} both set {'.'.join(path)}")
        value = _env_value(environ[name])
        node = tree
        for part in path[:-1]:
            node = node.setdefault(part, {})
            if not isinstance(node, dict):
                raise ValueError(f"environment variable {name}: conflicts with another variable")
        node[path[-1]] = value
    return tree


def _secret_list(raw: str) -> Any:
    """A list of secrets from its own variable: `k1,k2` as written (split at the commas, and
    refused in quotes, by the settings), `[...]` a list as YAML reads it (`[]` empties it), as
    the `WEBSEARCH_MCP_*` variables read them."""
    text = raw.strip()
    if text.startswith("[") and text.endswith("]"):
        return _env_value(text)
    return raw


def _engine_keys(environ: dict[str, str], key_variables: Mapping[str, str]) -> dict[str, Any]:
    """`<ENGINE>_API_KEYS=k1,k2` for every engine in `key_variables` (name -> variable)."""
    found = {
        name: {"api_keys": _secret_list(environ[var])}
        for name, var in key_variables.items()
        if environ.get(var, "").strip()
    }
    return {"engines": found} if found else {}


def _secret_vars(environ: dict[str, str]) -> dict[str, Any]:
    """The bearer tokens and the summary model's key, given in variables of their own."""
    tree: dict[str, Any] = {}
    if environ.get(TOKENS_ENV, "").strip():
        tree["server"] = {"auth_tokens": _secret_list(environ[TOKENS_ENV])}
    if environ.get(LLM_KEY_ENV, "").strip():
        tree["llm"] = {"api_key": environ[LLM_KEY_ENV].strip()}
    return tree


def _variables(
    environ: dict[str, str], key_variables: Mapping[str, str]
) -> dict[tuple[str, ...], str]:
    """The variable each key taken from the environment came from, laid over each other as
    `read_config` lays them over the file (the later one wins)."""
    found: dict[tuple[str, ...], str] = {}
    for name in environ:
        if (path := env_path(name)) and not _unset_secrets(path, environ[name]):
            for key in _keys_set(path, _env_value(environ[name])):
                found[key] = name
    for engine, var in key_variables.items():
        if environ.get(var, "").strip():
            found["engines", engine, "api_keys"] = var
    for path, var in ((("server", "auth_tokens"), TOKENS_ENV), (("llm", "api_key"), LLM_KEY_ENV)):
        if environ.get(var, "").strip():
            found[path] = var
    return found


def _keys_set(path: tuple[str, ...], value: Any) -> list[tuple[str, ...]]:
    """The keys a variable for `path` sets: a mapping's own (`WEBSEARCH_MCP_SEARCH={strategy:
    pool}` sets `search.strategy`, not the whole section), else `path` itself."""
    if not isinstance(value, dict) or not value:
        return [path]
    return [key for item, inner in value.items() for key in _keys_set((*path, str(item)), inner)]


def _origin(
    loc: tuple[Any, ...], variables: Mapping[tuple[str, ...], str], *, inside: bool = False
) -> str:
    """`; from VARIABLE` when the value at `loc` came from the environment, else nothing: a
    value the file does not hold is looked for in vain there. `inside`: a variable setting a
    key within `loc` counts too (it made an unknown key or engine block exist)."""
    parts = tuple(str(part) for part in loc)
    for end in range(len(parts), 0, -1):
        if parts[:end] in variables:
            return f"; from {variables[parts[:end]]}"
    if inside:
        within = sorted(var for path, var in variables.items() if path[: len(parts)] == parts)
        if within:
            return f"; from {within[0]}"
    return ""


def origin(key: str, environ: Mapping[str, str] | None, key_variables: Mapping[str, str]) -> str:
    """`; from VARIABLE` when the environment set the dotted `key` or a key within it, for a
    problem found once the settings are read."""
    env = dict(os.environ if environ is None else environ)
    return _origin(tuple(key.split(".")), _variables(env, key_variables), inside=True)


def deep_merge(
    base: Mapping[str, Any], extra: Mapping[str, Any], *, keep_values: bool = False
) -> dict[str, Any]:
    """`base` with `extra` laid over it: nested mappings merged key by key, anything else
    replaced; with `keep_values`, a value of `base` that is not a mapping (a mistake, as
    `extra` has a mapping there) stays, for validation to report it."""
    out = dict(base)
    for key, value in extra.items():
        here = out.get(key)
        if isinstance(value, Mapping) and isinstance(here, Mapping):
            out[key] = deep_merge(here, value, keep_values=keep_values)
        elif not (keep_values and isinstance(value, Mapping) and here is not None):
            out[key] = value
    return out


def _allowed(loc: tuple[Any, ...]) -> list[str]:
    """The keys allowed where the unknown key at `loc` stands (for the error message)."""
    model: type[BaseModel] = Settings
    parts = list(loc[:-1])
    while parts:
        part = parts.pop(0)
        if model is Settings and part == "engines":
            if not parts:
                return []
            parts.pop(0)  # the engine's name
            model = EngineSettings
            continue
        field = model.model_fields.get(str(part))
        ann = field.annotation if field else None
        if not (isinstance(ann, type) and issubclass(ann, BaseModel)):
            return []
        model = ann
    return sorted(f.alias or name for name, f in model.model_fields.items())


def _error_lines(err: ValidationError, variables: Mapping[tuple[str, ...], str]) -> list[str]:
    lines = []
    for item in err.errors():
        loc = tuple(item["loc"])
        key = ".".join(str(p) for p in loc)
        if item["type"] == "extra_forbidden":
            allowed = _allowed(loc)
            hint = f" (allowed: {', '.join(allowed)})" if allowed else ""
            lines.append(f"{key}: unknown key{hint}{_origin(loc, variables, inside=True)}")
        else:
            got = item.get("input")
            # A value written where a section was expected may be anything (an engine's key
            # in place of its block): never shown either.
            secret = any(str(p) in SECRET_KEYS for p in loc) or item["type"] in SECTION_ERRORS
            text = repr(got)
            text = text if len(text) <= MAX_SHOWN else f"{text[: MAX_SHOWN - 3]}..."
            shown = "" if secret or isinstance(got, dict) else f" (got {text})"
            lines.append(f"{key}: {item['msg']}{shown}{_origin(loc, variables)}")
    return lines


def invalid(source: str, lines: list[str]) -> str:
    """The message for a configuration with these problems, one line each."""
    return f"invalid configuration in {source}:\n  " + "\n  ".join(lines)


def read_config(
    data: Any,
    source: str,
    environ: Mapping[str, str] | None = None,
    key_variables: Mapping[str, str] | None = None,
) -> Settings:
    """Validate a parsed YAML document plus environment overrides into `Settings`;
    `key_variables` names each engine's key variable (engine name -> variable)."""
    env = dict(os.environ if environ is None else environ)
    if data is None:
        data = {}
    if not isinstance(data, dict):
        raise ValueError(f"invalid configuration in {source}: the top level must be a mapping")
    # A secret's own variable wins over its `WEBSEARCH_MCP_*` form, as both win over the file.
    merged = deep_merge(data, _env_overrides(env))
    merged = deep_merge(merged, _engine_keys(env, key_variables or {}), keep_values=True)
    merged = deep_merge(merged, _secret_vars(env), keep_values=True)
    try:
        settings = Settings.model_validate(merged)
    except ValidationError as err:
        variables = _variables(env, key_variables or {})
        raise ValueError(invalid(source, _error_lines(err, variables))) from None
    if settings.proxy.url is None and (lines := _proxy_variable_lines(env)):
        raise ValueError(invalid(source, lines))
    return settings


def _proxy_variable_lines(environ: Mapping[str, str]) -> list[str]:
    """What is wrong with the proxy variables that engine requests would use, checked as
    `proxy.url` is, here rather than at every search; their values are never shown."""
    lines = []
    for name in PROXY_VARIABLES:
        variable = name if environ.get(name) else name.upper()
        value = environ.get(variable)
        if not value:
            continue
        if "://" not in value:
            value = f"http://{value}"  # `proxy.corp:3128` means an HTTP proxy
        try:
            TypeAdapter(ProxyUrl).validate_python(value)
        except ValidationError as err:
            lines.append(f"{variable}: {err.errors()[0]['msg']}")
    return lines


class _ConfigLoader(yaml.SafeLoader):
    """YAML as the settings read it. A number stays as written, as from the environment, for
    the settings to read: YAML 1.1 would turn a key or token such as 0777, 0x1F, 1_000 or 12:30
    into another number's text. A key written twice in one mapping is an error: PyYAML would
    keep the last and silently drop the first (a whole `engines` block)."""

    def construct_mapping(self, node: yaml.MappingNode, deep: bool = False) -> dict[Hashable, Any]:
        seen: dict[Hashable, yaml.Node] = {}
        pairs = node.value if isinstance(node, yaml.MappingNode) else []  # the base refuses others
        for key_node, _ in pairs:
            if key_node.tag == "tag:yaml.org,2002:merge":
                continue  # `<<: *base`: the keys written beside it override the merged ones
            key = self.construct_object(key_node)
            if isinstance(key, Hashable) and key in seen:
                problem = f"duplicate key {key!r} (first at line {seen[key].start_mark.line + 1})"
                raise yaml.constructor.ConstructorError(None, None, problem, key_node.start_mark)
            seen[key] = key_node
        return super().construct_mapping(node, deep)


#: YAML's spellings of the float specials, as the settings read them (and refuse them as not
#: finite, rather than as no number at all).
_FLOAT_SPECIALS = {".inf": "inf", "+.inf": "inf", "-.inf": "-inf", ".nan": "nan"}


def _as_written(loader: yaml.SafeLoader, node: yaml.ScalarNode) -> Any:
    text = loader.construct_scalar(node)
    return _FLOAT_SPECIALS.get(str(text).lower(), text)


_ConfigLoader.add_constructor("tag:yaml.org,2002:int", _as_written)
_ConfigLoader.add_constructor("tag:yaml.org,2002:float", _as_written)


def read_config_file(path: str | os.PathLike[str] | None = None) -> tuple[Any, str]:
    """The parsed YAML at `path` (or `$WEBSEARCH_MCP_CONFIG`) and its name for messages;
    `({}, "the environment (no file)")` without one: the built-in defaults are valid, so a
    mistake can only be a variable's."""
    chosen = path or os.environ.get(CONFIG_ENV)
    if not chosen:
        return {}, "the environment (no file)"
    file = Path(chosen)
    # A worker reads the server's file as the server read it; any other file is read as it is.
    text = os.environ.get(CONFIG_TEXT_ENV) if path is None else None
    try:
        text = file.read_text(encoding="utf-8") if text is None else text
    except OSError as err:
        raise ValueError(f"cannot read configuration file {file}: {err.strerror}") from None
    except UnicodeDecodeError:
        # Windows PowerShell 5.1 writes UTF-16 with `>` and `Out-File`.
        raise ValueError(
            f"configuration file {file} is not UTF-8 text (saved as UTF-16?): save it as UTF-8"
        ) from None
    # Read from a stream: PyYAML then marks an error by file, line and column only, without
    # quoting the line, which may hold a key or a token.
    stream = io.StringIO(text)
    stream.name = str(file)
    try:
        return yaml.load(stream, Loader=_ConfigLoader), str(file)  # a SafeLoader
    except (yaml.YAMLError, ValueError) as err:  # ValueError: a date that is none (2026-13-01)
        raise ValueError(f"invalid YAML in {file}: {err}") from None
