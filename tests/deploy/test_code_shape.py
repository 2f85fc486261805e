"""ARCHITECTURE.md's rules for the code's shape: no function over 80 lines, each layer imports only
the layers below it, and no import cycle at all. Every import counts: at module level, inside
functions and under `if TYPE_CHECKING:`."""

from __future__ import annotations

import ast
import re
import sys
import tomllib
from importlib import metadata
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = ROOT / "websearch_mcp"
MAX_FUNCTION_LINES = 80
CODE = ("websearch_mcp", "bench", "testing", "tests", "deploy")  # where the line limit holds
MAX_TOP_MODULES = 8

#: Each layer, and the layers its modules may import besides their own.
BELOW: dict[str, set[str]] = {
    "foundation": set(),
    "config": set(),
    "engines": {"foundation", "config"},
    "ranking": {"foundation", "config"},
    "stores": {"foundation", "config"},
    "search": {"foundation", "config", "engines", "ranking", "stores"},
    "server": {"foundation", "config", "engines", "ranking", "stores", "search"},
    "entry": {"foundation", "config", "engines", "ranking", "stores", "search", "server"},
}
#: The top-level modules and the layer of each.
TOP = {
    "websearch_mcp": "foundation",
    "websearch_mcp.models": "foundation",
    "websearch_mcp.errors": "foundation",
    "websearch_mcp.dates": "foundation",
    "websearch_mcp.redaction": "foundation",
    "websearch_mcp.runtime": "foundation",
    "websearch_mcp.text_encoding": "foundation",
    "websearch_mcp.cli": "entry",
    "websearch_mcp.__main__": "entry",
}
#: The packages and the layer of each.
PACKAGES = {
    "config": "config",
    "engines": "engines",
    "ranking": "ranking",
    "fetch": "stores",
    "net": "stores",
    "cache": "stores",
    "search": "search",
    "server": "server",
}


def _modules() -> dict[str, Path]:
    found = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        parts = path.relative_to(ROOT).with_suffix("").parts
        name = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
        found[name] = path
    return found


def _layer(name: str) -> str:
    if name in TOP:
        return TOP[name]
    return PACKAGES[name.split(".")[1]]


def _imports(name: str, path: Path, modules: dict[str, Path]) -> set[str]:
    """The package's modules that `name` (at `path`) imports anywhere in its text."""
    out: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            out.update(alias.name for alias in node.names if alias.name in modules)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""  # the package imports absolutely only
            for alias in node.names:
                target = f"{base}.{alias.name}"
                if target in modules:
                    out.add(target)
                elif base in modules:
                    out.add(base)
    return out - {name}


def _graph() -> dict[str, set[str]]:
    modules = _modules()
    return {name: _imports(name, path, modules) for name, path in modules.items()}


def test_every_module_has_a_layer_and_few_lie_at_the_top() -> None:
    modules = _modules()
    unplaced = [n for n in modules if n not in TOP and n.split(".")[1] not in PACKAGES]
    assert unplaced == []
    top = [n for n in modules if n.count(".") == 1 and n.split(".")[1] not in PACKAGES]
    assert len(top) <= MAX_TOP_MODULES, top


def test_each_layer_imports_only_the_layers_below_it() -> None:
    wrong = []
    for name, targets in _graph().items():
        layer = _layer(name)
        for target in sorted(targets):
            other = _layer(target)
            if other != layer and other not in BELOW[layer]:
                wrong.append(f"{name} ({layer}) imports {target} ({other})")
    assert wrong == []


def test_no_function_is_over_the_line_limit() -> None:
    long = {}
    for path in sorted(path for top in CODE for path in (ROOT / top).rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                count = (node.end_lineno or node.lineno) - node.lineno + 1
                if count > MAX_FUNCTION_LINES:
                    long[f"{path.relative_to(ROOT)}:{node.name}"] = count
    assert long == {}


def test_no_import_cycles() -> None:
    graph = _graph()
    cycles = []
    state: dict[str, int] = {}  # 1: on the current path, 2: done

    def visit(name: str, trail: list[str]) -> None:
        state[name] = 1
        for target in sorted(graph[name]):
            if state.get(target) == 1:
                cycles.append([*trail[trail.index(target) :], target])
            elif target not in state:
                visit(target, [*trail, target])
        state[name] = 2

    for name in sorted(graph):
        if name not in state:
            visit(name, [name])
    assert cycles == []


def test_the_rules_catch_a_cycle_and_a_layer_broken_by_a_lazy_import(tmp_path: Path) -> None:
    # The checks themselves: an import inside a function and one under TYPE_CHECKING both count.
    a = tmp_path / "a.py"
    a.write_text("def f():\n    from websearch_mcp.b import x\n")
    b = tmp_path / "b.py"
    b.write_text(
        "from typing import TYPE_CHECKING\n\nif TYPE_CHECKING:\n    from websearch_mcp.a import f\n"
    )
    modules = {"websearch_mcp.a": a, "websearch_mcp.b": b}
    assert _imports("websearch_mcp.a", a, modules) == {"websearch_mcp.b"}
    assert _imports("websearch_mcp.b", b, modules) == {"websearch_mcp.a"}


def _imported_tops(path: Path) -> set[str]:
    """The top-level names `path` imports from (`bench`, `tests`, `testing`, ...)."""
    tops: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            tops.update(alias.name.split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            tops.add(node.module.split(".")[0])
    return tops


def test_testing_bench_and_tests_import_each_other_as_documented() -> None:
    # ARCHITECTURE.md, "Outside the package": `testing/` imports neither of the others, `bench/`
    # never imports `tests/`, and `tests/` imports `bench/` only in the relevance harness' tests.
    wrong = []
    for top, barred in (
        ("testing", {"tests", "bench"}),
        ("bench", {"tests"}),
        ("tests", {"bench"}),
    ):
        for path in sorted((ROOT / top).rglob("*.py")):
            if top == "tests" and path.name.startswith("test_relevance_"):
                continue
            wrong += [
                f"{path.relative_to(ROOT)} imports {name}" for name in _imported_tops(path) & barred
            ]
    assert wrong == []


def test_every_package_the_code_imports_is_a_declared_dependency() -> None:
    # A package that only comes with another one may leave with its next release. (Extras
    # count: the code that imports one says what to install when it is missing.)
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    lines = [*project["dependencies"], *project["optional-dependencies"]["redis"]]
    lines += project["optional-dependencies"]["pdf"]
    declared = {
        re.split(r"[\s<>=!;\[~]", line, maxsplit=1)[0].lower().replace("_", "-") for line in lines
    }
    providers = metadata.packages_distributions()
    undeclared = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Import):
                tops = [alias.name.split(".")[0] for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
                tops = [node.module.split(".")[0]]
            else:
                continue
            for top in tops:
                names = {d.lower().replace("_", "-") for d in providers.get(top, [])}
                if top in sys.stdlib_module_names or top == "websearch_mcp":
                    continue
                if not names & declared:
                    undeclared[top] = str(path.relative_to(ROOT))
    assert undeclared == {}
