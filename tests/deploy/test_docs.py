"""The documentation's shape: a short README whose test command is the one CI runs, a
benchmarks page of current figures, every command, option, metric and answer field
documented, links that lead somewhere, no empty section, configuration snippets that load, a
code map naming every module and no other, and no document named in the code that is missing."""

from __future__ import annotations

import fnmatch
import re
from pathlib import Path
from typing import Any

import pytest

from websearch_mcp.cli import main as cli_main
from websearch_mcp.config.loader import read_config_file
from websearch_mcp.search.answer import ResultOut
from websearch_mcp.search.configuration import parse_config
from websearch_mcp.server.metrics import Metrics
from websearch_mcp.server.middleware.exposure import check_exposure

ROOT = Path(__file__).resolve().parents[2]
README = ROOT / "README.md"
PACKAGE = ROOT / "websearch_mcp"
#: The pages a reader follows: the README, the architecture and the manual.
PAGES = (README, ROOT / "ARCHITECTURE.md", ROOT / "SECURITY.md", *sorted(ROOT.glob("docs/*.md")))


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


def _code_map() -> dict[Path, set[str]]:
    """The files ARCHITECTURE.md's code map names (`x.py`, `web/*.py`), by the folder whose
    section names them (the package itself for the top files)."""
    text = (ROOT / "ARCHITECTURE.md").read_text(encoding="utf-8")
    sections = text.split("## Code map", 1)[1].split("\n## ", 1)[0].split("\n### ")[1:]
    named: dict[Path, set[str]] = {}
    for section in sections:
        heading = section.splitlines()[0]
        if heading.startswith("Outside"):
            continue
        folder = re.match(r"`(\w+)/`", heading)
        where = PACKAGE / folder.group(1) if folder else PACKAGE
        named[where] = set(re.findall(r"`([\w/*]+\.py)`", section))
    return named


def test_the_code_map_names_every_module_and_only_modules_that_exist() -> None:
    unnamed, missing = [], []
    for folder, names in _code_map().items():
        files = [p.relative_to(PACKAGE).as_posix() for p in sorted(folder.rglob("*.py"))]
        if folder == PACKAGE:
            files = [f for f in files if "/" not in f]

        def named(file: str, name: str) -> bool:
            return fnmatch.fnmatch(file, name) or fnmatch.fnmatch(file, f"*/{name}")

        missing += [f"{folder.name}: {n}" for n in names if not any(named(f, n) for f in files)]
        unnamed += [
            f
            for f in files
            if Path(f).name != "__init__.py" and not any(named(f, n) for n in names)
        ]
    assert (unnamed, missing) == ([], [])


def test_the_layers_table_lists_every_top_file() -> None:
    text = (ROOT / "ARCHITECTURE.md").read_text(encoding="utf-8")
    row = re.search(r"^\| the top files \((.*?)\) \|", text, re.M)
    assert row
    listed = set(re.findall(r"`(\w+)`", row.group(1)))
    entry = {"cli", "__main__"}  # a layer of their own, the table's last row
    assert listed == {p.stem for p in PACKAGE.glob("*.py")} - entry


#: Where the code may name a document outside the repository: the recorded fixtures' own notes.
SHARED_NOTES = {"SOURCES.md"}


def test_every_document_the_code_names_exists() -> None:
    """A comment or docstring pointing at a document (`README.md`, `DESIGN section 4`) points at
    one a reader of the repository has."""
    stale = []
    for top in ("websearch_mcp", "bench", "testing", "tests", "deploy"):
        for path in sorted((ROOT / top).rglob("*.py")):
            if path == Path(__file__).resolve():  # it names a removed page on purpose
                continue
            for name in re.findall(r"\b([A-Z][A-Z_]{3,})(?:\.md\b| section\b)", path.read_text()):
                if not (ROOT / f"{name}.md").exists() and f"{name}.md" not in SHARED_NOTES:
                    stale.append(f"{path.relative_to(ROOT)}: {name}")
    assert stale == []


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


def test_the_clients_page_says_how_long_each_tool_may_take() -> None:
    """Clients set their timeouts from clients.md: it states each tool's longest call as the sum
    of the bounds that apply, and its example waits longer than the longest under the defaults
    (a `fetch_page` with the reader fallback: twice `fetch.timeout_seconds` + 1 s)."""
    text = " ".join((ROOT / "docs" / "clients.md").read_text(encoding="utf-8").split())
    for bound in (
        "`search.deadline_seconds`",
        "`llm.timeout_seconds` but never more than the deadline",
        "`fetch.timeout_seconds` + 1 s",
        "twice `fetch.timeout_seconds` + 1 s",
    ):
        assert bound in text, bound
    defaults = parse_config({}, "defaults", environ={})
    deadline, fetch = defaults.search.deadline_seconds, defaults.fetch.timeout_seconds
    summarised = deadline + min(defaults.llm.timeout_seconds, deadline)
    waits = re.search(r"client_session_timeout_seconds=(\d+)", text)
    assert waits is not None and int(waits[1]) > max(summarised, 2 * fetch + 1)


def _prose(page: Path) -> str:
    """A page without its code blocks, whose `#` lines and brackets are not Markdown."""
    return re.sub(r"^ *```.*?^ *```", "", page.read_text(encoding="utf-8"), flags=re.M | re.S)


def _anchors(page: Path) -> set[str]:
    """The anchors of a page's headings, as GitHub makes them."""
    headings = re.findall(r"^#{1,6} (.+)$", _prose(page), re.M)
    return {re.sub(r"[^\w\- ]", "", h.strip().lower()).replace(" ", "-") for h in headings}


@pytest.mark.parametrize("page", PAGES, ids=lambda page: page.name)
def test_every_relative_link_leads_to_a_file_and_heading(page: Path) -> None:
    broken = []
    for link in re.findall(r"\]\(([^)\s]+)\)", _prose(page)):
        if re.match(r"[a-z]+:", link):
            continue
        path, _, anchor = link.partition("#")
        target = (page.parent / path).resolve() if path else page
        if not target.exists() or (anchor and anchor not in _anchors(target)):
            broken.append(link)
    assert broken == []


@pytest.mark.parametrize("page", PAGES, ids=lambda page: page.name)
def test_no_heading_is_left_without_text(page: Path) -> None:
    """A heading is followed by text, or by the subsections it opens."""
    text = _prose(page)
    headings = re.findall(r"^(#{1,6}) (.*)$", text, re.M)
    bodies = re.split(r"^#{1,6} .*$", text, flags=re.M)[1:]
    following = [*headings[1:], ("#", "")]  # the page's end closes every section
    empty = [
        title
        for (level, title), body, (next_level, _) in zip(headings, bodies, following, strict=True)
        if not body.strip() and len(next_level) <= len(level)
    ]
    assert empty == []


def _yaml_snippets() -> list[Any]:
    """Every ```yaml block of the pages, named by page and place."""
    return [
        pytest.param(snippet, id=f"{page.name}-{n}")
        for page in PAGES
        for n, snippet in enumerate(
            re.findall(r"^```yaml\n(.*?)^```", page.read_text(encoding="utf-8"), re.M | re.S)
        )
    ]


@pytest.mark.parametrize("snippet", _yaml_snippets())
def test_every_configuration_snippet_passes_check_config(snippet: str, tmp_path: Path) -> None:
    """What `websearch-mcp check-config` checks, without the environment of the test run."""
    path = tmp_path / "conf.yaml"
    path.write_text(snippet, encoding="utf-8")
    data, source = read_config_file(path)
    check_exposure(parse_config(data, source, environ={}).server)
