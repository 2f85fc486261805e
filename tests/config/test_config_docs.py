"""docs/configuration.md is generated from the settings models and kept up to date."""

from __future__ import annotations

from pathlib import Path

import pytest

from websearch_mcp.config import Settings, docs


def test_configuration_doc_is_up_to_date() -> None:
    written = docs.OUTPUT.read_text(encoding="utf-8") if docs.OUTPUT.exists() else ""
    assert written == docs.render(), (
        f"docs/configuration.md is out of date: run `{docs.COMMAND}` and commit the result"
    )


def test_every_key_is_documented_with_its_environment_variable() -> None:
    text = docs.render()
    sections = docs.collect(Settings, docs.example_comments(docs.EXAMPLE.read_text())[0])
    keys = [key for group in sections.values() for key in group]
    assert len(keys) > 100
    undescribed = [key.path for key in keys if not key.description]
    assert undescribed == [], "describe these in config/websearch-mcp.example.yaml"
    for key in keys:
        assert f"`{docs.env_name(key.path)}`" in text
    assert "`WEBSEARCH_MCP_SEARCH__MMR__LAMBDA`" in text  # the alias, not the field's name
    assert "`WEBSEARCH_MCP_ENGINES__<ENGINE>__WEIGHT`" in text


def test_defaults_limits_and_secrets_come_from_the_models() -> None:
    rows = {line.split(" | ")[0]: line for line in docs.render().splitlines()}
    assert "`8338` | >= 1, <= 65535 |" in rows["| `port`"]
    assert "`<data dir>/cache.sqlite3`" in rows["| `path`"]
    assert "Secret: never shown." in rows["| `auth_tokens`"]
    assert "Also accepted as `maxSize` in the file" in rows["| `max_size`"]
    assert "integer or `auto`" in rows["| `workers`"]


def test_example_comments_are_filed_by_dotted_key() -> None:
    example = (
        "# header, not filed\n"
        "\n"
        "server:\n"
        "  port: 1           # where it listens\n"
        "  hosts: []         # names allowed:\n"
        "                    #   a.example, b.example\n"
        "  # a block above a key without a comment of its own\n"
        "  bare: false\n"
        "  # path: /x        # left commented out\n"
        "# about every engine\n"
        "engines:\n"
        "  tavily:\n"
        "    weight: 1       # its share\n"
    )
    notes, blocks = docs.example_comments(example)
    assert notes == {
        "server.port": "where it listens",
        "server.hosts": "names allowed: a.example, b.example",
        "server.bare": "a block above a key without a comment of its own",
        "server.path": "left commented out",
        "engines.*.weight": "its share",
    }
    assert blocks == {"engines": ["about every engine"]}


def test_check_names_the_command_when_out_of_date(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    stale = tmp_path / "configuration.md"
    stale.write_text("# Configuration\n", encoding="utf-8")
    monkeypatch.setattr(docs, "OUTPUT", stale)
    assert docs.main(["--check"]) == 1
    assert docs.COMMAND in capsys.readouterr().err
    assert docs.main(["--write"]) == 0
    assert docs.main(["--check"]) == 0
    assert stale.read_text(encoding="utf-8") == docs.render()
