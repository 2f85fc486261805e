"""Fusion compiled with mypyc, as the Docker image builds it (`setup.py`,
WEBSEARCH_MCP_COMPILE=1): every listed module compiled, the ranking and engine tests passing on
the build, and `rank()`'s output the same as the interpreted code's to the last bit."""

from __future__ import annotations

import importlib.util
import os
import re
import shutil
import subprocess
import sys
import sysconfig
import tarfile
from pathlib import Path

import pytest

from testing.shared import REPO, SHARED_ENV, shared_dir

pytestmark = pytest.mark.timeout(600)

#: What the build needs besides the sources: the tests and what they import.
COPIED = (
    "websearch_mcp", "tests", "testing", "bench", "setup.py", "pyproject.toml", "README.md",
    "MANIFEST.in",
)  # fmt: skip


#: The modules written in C, built beside the compiled ones.
NATIVE_MODULES = (
    "websearch_mcp.ranking.chunk_table",
    "websearch_mcp.ranking.term_overlap",
    "websearch_mcp.text_scan",
)


def _compiled_modules() -> list[str]:
    """`setup.py`'s list, as module names (imported under another name: no build runs)."""
    spec = importlib.util.spec_from_file_location("websearch_setup", REPO / "setup.py")
    assert spec is not None and spec.loader is not None
    setup = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(setup)
    return [path.removesuffix(".py").replace("/", ".") for path in setup.COMPILED]


def _env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "WEBSEARCH_MCP_COMPILE")}
    # The copy is not next to shared/: name it, so the parsers are tested on the recordings.
    return {**env, SHARED_ENV: str(shared_dir()), "PYTHONHASHSEED": "0", **extra}


def _run(args: list[str], cwd: Path, **extra: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, *args], cwd=cwd, env=_env(**extra), capture_output=True, text=True,
        timeout=540, check=False,
    )  # fmt: skip


@pytest.fixture(scope="module")
def tree(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A copy of the sources with the listed modules compiled in place."""
    if importlib.util.find_spec("mypyc") is None:
        pytest.skip("mypy (mypyc) is not installed: the dev extra installs it")
    if shutil.which(sysconfig.get_config_var("CC").split()[0] or "cc") is None:
        pytest.skip("no C compiler to build the compiled modules with")
    root = tmp_path_factory.mktemp("compiled")
    skip = shutil.ignore_patterns("__pycache__", "*.so", ".hypothesis", ".pytest_cache")
    for name in COPIED:
        source = REPO / name
        if source.is_dir():
            shutil.copytree(source, root / name, ignore=skip)
        else:
            shutil.copy2(source, root / name)
    built = _run(["setup.py", "-q", "build_ext", "--inplace"], root, WEBSEARCH_MCP_COMPILE="1")
    assert built.returncode == 0, built.stdout[-3000:] + built.stderr[-3000:]
    return root


def test_every_listed_module_is_compiled_and_needs_no_build_tool(tree: Path) -> None:
    modules = [*_compiled_modules(), *NATIVE_MODULES]
    assert "websearch_mcp.ranking.pipeline" in modules and len(modules) >= 10
    probe = (
        "import importlib, sys\n"
        f"for name in {modules!r}:\n"
        "    print(name, importlib.import_module(name).__file__)\n"
        "from websearch_mcp.ranking import tokens\n"
        "assert tokens._TERMS.native is not None, 'tokens does not use the chunk table'\n"
        "from websearch_mcp.engines import common, text\n"
        "from websearch_mcp.ranking import neighbours, urls\n"
        "assert None not in (common.NATIVE_PLAIN_LINK, text.NATIVE_SINGLE_SPACED, "
        "urls.NATIVE_SIMPLE_URL, neighbours.NATIVE_OVERLAP), "
        "'a caller does not use a C module'\n"
        "print('build tools', sorted(m for m in sys.modules if m.split('.')[0] in "
        "('mypy', 'mypyc', 'librt')))\n"
    )
    found = _run(["-c", probe], tree)
    assert found.returncode == 0, found.stderr
    lines = found.stdout.splitlines()
    assert len(lines) == len(modules) + 1
    for line in lines[:-1]:
        path = line.split()[1]
        assert path.startswith(str(tree)) and path.endswith(".so"), line
    # The image's run stage has neither mypy nor its runtime library.
    assert lines[-1] == "build tools []"


def test_the_ranking_and_engine_tests_pass_on_the_compiled_modules(tree: Path) -> None:
    result = _run(
        ["-m", "pytest", "-q", "-p", "no:cacheprovider", "tests/ranking", "tests/engines",
         "--ignore=tests/ranking/test_compiled.py"],
        tree,
    )  # fmt: skip
    assert result.returncode == 0, result.stdout[-5000:] + result.stderr[-2000:]
    assert re.search(r"\d+ passed", result.stdout)


def test_compiled_fusion_gives_the_same_output_to_the_last_bit(tree: Path) -> None:
    """`bench.rank --digest`: one hash of every result and score detail under three settings."""
    digests = []
    for cwd in (tree, REPO):
        result = _run(["-m", "bench.rank", "--digest", "--queries", "40"], cwd)
        assert result.returncode == 0, result.stderr[-3000:]
        digests.append(result.stdout.split()[-1])
    assert re.fullmatch(r"[0-9a-f]{64}", digests[0])
    assert digests[0] == digests[1]


def test_a_source_distribution_carries_the_c_sources(tree: Path) -> None:
    """A build from the source distribution compiles the C modules too."""
    built = _run(["setup.py", "-q", "sdist", "-d", str(tree / "dist")], tree)
    assert built.returncode == 0, built.stdout[-3000:] + built.stderr[-3000:]
    (archive,) = (tree / "dist").glob("*.tar.gz")
    with tarfile.open(archive) as sdist:
        names = sdist.getnames()
    for module in NATIVE_MODULES:
        source = "/" + module.replace(".", "/") + ".c"
        assert any(name.endswith(source) for name in names), source
