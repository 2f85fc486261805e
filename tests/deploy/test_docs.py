"""The documentation's shape: a short README whose test command is the one CI runs, a
benchmarks page of current figures, and every command, option, metric and answer field
documented."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from websearch_mcp.cli import main as cli_main
from websearch_mcp.search.answer import ResultOut
from websearch_mcp.server.metrics import Metrics

ROOT = Path(__file__).resolve().parents[2]
README = ROOT / "README.md"


def _quick_start_commands() -> list[str]:
    text = README.read_text(encoding="utf-8")
    section = text.split("## Quick start", 1)[1].split("\n## ", 1)[0]
    return re.findall(r"```sh\n(.*?)\n```", section, re.S)


def test_readme_is_short() -> None:
    assert len(README.read_text(encoding="utf-8").splitlines()) <= 250


def test_ci_runs_the_readme_test_command_verbatim() -> None:
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8").strip().splitlines()[-1]
    assert ci in _quick_start_commands()


def test_benchmarks_page_holds_current_figures_only() -> None:
    text = (ROOT / "docs" / "benchmarks.md").read_text(encoding="utf-8")
    assert len(text.splitlines()) <= 600
    assert "[fast]" not in text  # an extra that no longer exists
    assert not (ROOT / "BENCHMARKS.md").exists()


def _section(page: str, heading: str) -> str:
    text = (ROOT / "docs" / page).read_text(encoding="utf-8")
    return text.split(heading, 1)[1].split("\n## ", 1)[0]


def _help(capsys: pytest.CaptureFixture[str], *argv: str) -> str:
    with pytest.raises(SystemExit):
        cli_main([*argv, "--help"])
    return capsys.readouterr().out


def test_every_command_and_option_of_the_cli_is_documented(
    capsys: pytest.CaptureFixture[str],
) -> None:
    block = _section("tools.md", "## Command line").split("```", 2)[1]
    listed = re.search(r"\{([a-z,-]+)\}", _help(capsys))  # usage: {serve,stdio,...}
    assert listed
    for command in listed.group(1).split(","):
        assert f"websearch-mcp {command}" in block, command
        for option in set(re.findall(r"(--[a-z][a-z-]+)", _help(capsys, command))) - {"--help"}:
            assert option in block, f"{command} {option}"


#: A metric as the docs write it: `name{labels}`, or `prefix_{a,b}_suffix` for several.
_METRIC = re.compile(r"`(websearch_\w*?)(?:\{([\w,]+)\}(_\w+))?[{`]")


def _expanded(text: str) -> set[str]:
    """Every metric name the docs write, `prefix_{a,b}_suffix` as each of its names."""
    names = set()
    for prefix, choices, suffix in _METRIC.findall(text):
        parts = choices.split(",") if choices else [""]
        names |= {prefix + part + suffix for part in parts}
    return names


def test_every_metric_is_documented() -> None:
    metrics = Metrics()
    metrics.watch_cache(None)
    documented = _expanded(_section("operations.md", "## Metrics, health, logs"))
    for family in metrics.registry.collect():
        name = family.name + ("_total" if family.type == "counter" else "")
        assert name in documented, name


def test_every_field_of_a_web_search_result_is_documented() -> None:
    """The answer's field table in tools.md names each key a result may carry (news ones too)."""
    section = _section("tools.md", "## `web_search`")
    rows = [row for row in section.splitlines() if row.startswith("| `results[]")]
    documented = {name for row in rows for name in re.findall(r"`(?:results\[\])?\.(\w+)`", row)}
    fields = ResultOut.__required_keys__ | ResultOut.__optional_keys__
    assert fields - documented == set()
