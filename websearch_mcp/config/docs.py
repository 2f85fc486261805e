"""docs/configuration.md, generated from the settings models.

Every key, its type, default, limits and environment variable come from the pydantic models;
its description from the field's `description`, else from its comment in the annotated example
file (config/websearch-mcp.example.yaml, which a test keeps complete). Run
`python -m websearch_mcp.config.docs --write` after changing a setting; a test fails while the
file in the repository differs from what this prints.
"""

from __future__ import annotations

import argparse
import re
import sys
import types
from dataclasses import dataclass
from enum import Enum
from pathlib import Path
from typing import Annotated, Any, Literal, Union, get_args, get_origin

import annotated_types
from pydantic import BaseModel
from pydantic.fields import FieldInfo

from websearch_mcp.config.engines import EngineSettings
from websearch_mcp.config.loader import CONFIG_ENV, ENV_PREFIX, LLM_KEY_ENV, TOKENS_ENV
from websearch_mcp.config.settings import Settings
from websearch_mcp.config.types import default_data_dir

REPO = Path(__file__).resolve().parents[2]
EXAMPLE = REPO / "config" / "websearch-mcp.example.yaml"
OUTPUT = REPO / "docs" / "configuration.md"
COMMAND = "python -m websearch_mcp.config.docs --write"

_KEY_LINE = re.compile(
    r"^(?P<indent> *)(?P<key>[A-Za-z_][\w-]*):(?P<value>[^#]*)(?:#(?P<note>.*))?$"
)
_BOUNDS = (
    (annotated_types.Ge, "ge", ">= {}"),
    (annotated_types.Gt, "gt", "> {}"),
    (annotated_types.Le, "le", "<= {}"),
    (annotated_types.Lt, "lt", "< {}"),
    (annotated_types.MinLen, "min_length", "length >= {}"),
    (annotated_types.MaxLen, "max_length", "length <= {}"),
)


@dataclass(frozen=True)
class Key:
    """One setting as the document shows it."""

    path: str
    kind: str
    default: str
    limits: str
    description: str
    secret: bool
    aliases: tuple[str, ...]


def example_comments(text: str) -> tuple[dict[str, str], dict[str, list[str]]]:
    """Comments of the annotated example file: per dotted key its inline comment (with the
    comment lines that continue it), and per section the comment blocks written inside it or
    just above it. Keys under `engines.<name>` are filed as `engines.*`."""
    notes: dict[str, str] = {}
    blocks: dict[str, list[str]] = {}
    stack: list[tuple[int, str]] = []
    pending: list[str] = []
    last = ""
    for line in text.splitlines():
        stripped = line.strip()
        if not stripped:
            pending = []
            continue
        indent = len(line) - len(line.lstrip(" "))
        commented = stripped.startswith("#")
        if commented:
            body = stripped.lstrip("#").strip()
            if last and stack and indent > stack[-1][0]:
                notes[last] += " " + body
                continue
            # a key left commented out to show its default (`# path: ... # what it is`)
            match = _KEY_LINE.match(" " * indent + body)
            if not (match and match["note"]):
                pending.append(body)
                last = ""
                continue
        else:
            match = _KEY_LINE.match(line)
        if not match:
            continue
        while stack and stack[-1][0] >= indent:
            stack.pop()
        parts = [name for _, name in stack] + [match["key"]]
        if parts[0] == "engines" and len(parts) > 2:
            parts[1] = "*"
        path = ".".join(parts)
        section = not match["value"].strip()
        note = (match["note"] or "").strip()
        if pending and not (section or note):
            note = " ".join(pending)  # a comment block above a key that has none of its own
        elif pending:
            owner = path if section else ".".join(parts[:-1])
            blocks.setdefault(owner, []).append(" ".join(pending))
        pending = []
        if note:
            notes.setdefault(path, note)
        last = path if note and not commented else ""
        if not commented:
            stack.append((indent, match["key"]))
    return notes, blocks


def _show(value: Any) -> str:
    if isinstance(value, Path):
        try:
            return f"<data dir>/{value.relative_to(default_data_dir()).as_posix()}"
        except ValueError:
            return value.as_posix()
    if isinstance(value, Enum):
        value = value.value
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return value if value else '""'
    if isinstance(value, list):
        return "[" + ", ".join(_show(item) for item in value) + "]"
    if isinstance(value, dict):
        return "{}" if not value else str(value)
    return repr(value)


def _bounds(metadata: list[Any]) -> list[str]:
    found = []
    for item in metadata:
        if isinstance(item, FieldInfo):
            found += _bounds(item.metadata)
            continue
        # `AllowInfNan` from pydantic 2.14, a general metadata object before it.
        if getattr(item, "allow_inf_nan", None) is False:
            found.append("finite")
        for kind, attribute, form in _BOUNDS:
            if isinstance(item, kind):
                found.append(form.format(_show(getattr(item, attribute))))
    return found


def _kind(annotation: Any) -> tuple[str, list[str]]:
    """A readable type and the bounds found inside it (unions, Annotated, lists)."""
    origin = get_origin(annotation)
    args = get_args(annotation)
    if origin is Annotated:
        kind, bounds = _kind(args[0])
        return kind, _bounds(list(args[1:])) + bounds
    if origin in (Union, types.UnionType):
        parts = [_kind(arg) for arg in args if arg is not type(None)]
        kind = " or ".join(part[0] for part in parts)
        bounds = [bound for part in parts for bound in part[1]]
        return (kind + " or null" if type(None) in args else kind), bounds
    if origin is Literal:
        return " \\| ".join(f"`{_show(arg)}`" for arg in args), []
    if origin is list:
        kind, bounds = _kind(args[0])
        return f"list of {kind}", [f"each {bound}" for bound in bounds]
    if origin is dict:
        return "mapping", []
    names = {bool: "boolean", int: "integer", float: "number", str: "text", Path: "path"}
    return names.get(annotation, getattr(annotation, "__name__", str(annotation))), []


def _section_model(annotation: Any) -> type[BaseModel] | None:
    return (
        annotation if isinstance(annotation, type) and issubclass(annotation, BaseModel) else None
    )


def _aliases(name: str, field: FieldInfo) -> tuple[str, ...]:
    choices = getattr(field.validation_alias, "choices", ())
    shown = field.alias or name
    return tuple(str(choice) for choice in choices if choice not in (name, shown))


def _key(path: str, name: str, field: FieldInfo, notes: dict[str, str]) -> Key:
    kind, inner = _kind(field.annotation)
    default = field.get_default(call_default_factory=True)
    return Key(
        path=path,
        kind=kind,
        default=_show(default),
        limits=", ".join(_bounds(field.metadata) + inner),
        description=field.description or notes.get(path, ""),
        secret=not field.repr,
        aliases=_aliases(name, field),
    )


def collect(
    model: type[BaseModel], notes: dict[str, str], prefix: str = ""
) -> dict[str, list[Key]]:
    """Every key of `model` by the section it belongs to (its dotted parent; "" for the top)."""
    sections: dict[str, list[Key]] = {prefix.rstrip("."): []}
    for name, field in model.model_fields.items():
        key = field.alias or name
        nested = _section_model(field.annotation)
        if nested is not None:
            sections.update(collect(nested, notes, f"{prefix}{key}."))
        elif model is Settings and key == "engines":
            sections.update(collect(EngineSettings, notes, "engines.*."))
        else:
            sections[prefix.rstrip(".")].append(_key(prefix + key, name, field, notes))
    return sections


def env_name(path: str) -> str:
    """The environment variable that sets a key (`engines.*` as `<ENGINE>`)."""
    parts = ["<ENGINE>" if part == "*" else part.upper() for part in path.split(".")]
    return ENV_PREFIX + "__".join(parts)


_HEADER = f"""# Configuration

<!-- Generated by `{COMMAND}` from the settings models in websearch_mcp/config/.
     Do not edit by hand: change the model (or its comment in
     config/websearch-mcp.example.yaml) and run the command again. -->

Every key is optional. The configuration is a YAML file given with `--config PATH` or
`${CONFIG_ENV}`; without one the built-in defaults serve the keyless engines on
`127.0.0.1:8338`, with the cache in the user's data directory (`<data dir>` below:
`$XDG_DATA_HOME/websearch-mcp`, else `~/.local/share/websearch-mcp`).
[`config/websearch-mcp.example.yaml`](../config/websearch-mcp.example.yaml) shows every key
with its default (its engine blocks are examples). A number in the file is read as written, as
in the environment: a key or token such as `0777`, `0x1F` or `1_000` is that text, not the
number YAML 1.1 makes of it. An unknown key, a key written twice in one mapping or a bad value
stops the service at start with a message naming the key, the file (and the environment
variable, when one set it) and what is allowed; `websearch-mcp check-config PATH` checks a file
without starting anything:

```
error: invalid configuration in conf.yaml:
  server.port: Input should be a valid integer, ... (got 'abc'); from {ENV_PREFIX}SERVER__PORT
  search.max_resluts: unknown key (allowed: block_domains, breaker, deadline_seconds, ...)
```

The environment wins over the file:

- **Any key**: `{ENV_PREFIX}<SECTION>__<KEY>`, nested keys joined by `__`
  (`{ENV_PREFIX}SERVER__PORT=9000`, `{ENV_PREFIX}SEARCH__MMR__LAMBDA=0.6`,
  `{ENV_PREFIX}ENGINES__TAVILY__WEIGHT=1.5`); the part after the prefix is read in any case.
- **Values** are taken whole, as written (`{ENV_PREFIX}SERVER__HOST=::`, a key with ` #` in it;
  a number stays as written where text is meant, such as an all-digit token), except quoted
  text, a `[...]` or `{{...}}` collection, a boolean and null, which are read as YAML.
- **Lists** may be written with commas (`{ENV_PREFIX}SEARCH__BLOCK_DOMAINS=a.com,b.com`, one
  item alone: `{ENV_PREFIX}FETCH__ALLOWED_PORTS=8443`) or in brackets (`[a.com, b.com]`;
  brackets YAML cannot read are an error); commas alone are an error, not an empty list.
- **Sections**: a variable may set one whole, as a mapping
  (`{ENV_PREFIX}SEARCH={{strategy: pool}}`); it is read before the variables inside that
  section, whose keys join it, whatever the order of the environment. Two variables naming one
  key (in different case) are refused.
- **Empty**: an empty variable empties its key, and unsets one that is unset by default
  (`{ENV_PREFIX}LLM__BASE_URL=` switches summaries off; so does a blank value in the file), but
  for a list of secrets (`auth_tokens`, `api_keys`), which it leaves as it was (`[]` empties it).
- **Secrets** have variables of their own, each winning over its `{ENV_PREFIX}*` form:
  `<ENGINE>_API_KEYS=k1,k2` for an engine's keys (`TAVILY_API_KEYS`, `BRAVE_API_KEYS`, ...; the
  engines and their variables are in [engines.md](engines.md)), `{TOKENS_ENV}=t1,t2` for
  `server.auth_tokens` and `{LLM_KEY_ENV}` for `llm.api_key`. Keys marked secret are never
  shown in messages, logs, results or metrics.
"""


def _cell(text: str) -> str:
    return text.replace("|", "\\|") if "\\|" not in text else text


def _sentence(text: str) -> str:
    return text if text.endswith((".", "!", "?")) else text + "."


def _row(key: Key) -> str:
    name = key.path.rsplit(".", 1)[-1]
    notes = [_sentence(key.description)] if key.description else []
    if key.aliases:
        where = (
            " in the file (a variable's name is read in lower case)"
            if any(alias != alias.lower() for alias in key.aliases)
            else ""
        )
        notes.append(
            "Also accepted as " + ", ".join(f"`{alias}`" for alias in key.aliases) + where + "."
        )
    if key.secret:
        notes.append("Secret: never shown.")
    cells = (
        f"`{name}`",
        _cell(key.kind),
        f"`{_cell(key.default)}`",
        _cell(key.limits),
        f"`{env_name(key.path)}`",
        _cell(" ".join(notes)),
    )
    return "| " + " | ".join(cells) + " |"


def render(example: str | None = None) -> str:
    """The whole of docs/configuration.md."""
    notes, blocks = example_comments(
        EXAMPLE.read_text(encoding="utf-8") if example is None else example
    )
    out = [_HEADER]
    for section, keys in collect(Settings, notes).items():
        if not keys:
            continue
        out.append(f"## `{section}`\n" if section else "## Top-level keys\n")
        written = section.removesuffix(".*")  # engines.* is written as `engines:`
        intro = [notes[written]] if written in notes else []
        intro += blocks.get(written, [])
        if intro:
            out.append(" ".join(_sentence(part) for part in intro) + "\n")
        out.append("| key | type | default | limits | environment | meaning |")
        out.append("|---|---|---|---|---|---|")
        out.extend(_row(key) for key in keys)
        out.append("")
    return "\n".join(out)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    action = parser.add_mutually_exclusive_group()
    action.add_argument("--write", action="store_true", help=f"write {OUTPUT.name}")
    action.add_argument("--check", action="store_true", help="exit 1 if it is out of date")
    args = parser.parse_args(argv)
    text = render()
    if args.write:
        OUTPUT.parent.mkdir(exist_ok=True)
        OUTPUT.write_text(text, encoding="utf-8")
    elif args.check:
        current = OUTPUT.read_text(encoding="utf-8") if OUTPUT.exists() else ""
        if current != text:
            print(f"{OUTPUT} is out of date: run `{COMMAND}`", file=sys.stderr)
            return 1
    else:
        sys.stdout.write(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
