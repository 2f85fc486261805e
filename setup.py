"""Fusion compiled to C with mypyc when WEBSEARCH_MCP_COMPILE=1 (the Docker image sets it), and
three small C modules built beside it: the tokeniser's chunk table
(`websearch_mcp/ranking/chunk_table.c`), the terms shared by the head's texts
(`websearch_mcp/ranking/term_overlap.c`) and single-pass scans of text and URLs
(`websearch_mcp/text_scan.c`).

The modules `rank()` runs, and the parsers' shared helpers, are compiled from their own source:
the same code, a fifth fewer instructions per `rank()` call, the same output to the last bit
(tests/ranking/test_compiled.py builds them and runs the ranking and engine tests on the
build). Without the variable, and for editable installs, everything stays plain Python: a
compiled module would shadow later edits to its source. Everything else about the package is in
pyproject.toml.
"""

from __future__ import annotations

import os

from setuptools import Extension, setup

#: What `rank()` runs, all of it (a compiled module calling an interpreted one gains little),
#: the date readers, result helpers and text clean-up that every engine's parser calls, the
#: results' data classes (whose fields `rank()` reads) and the rounding of every shown score.
COMPILED = [
    "websearch_mcp/dates.py",
    "websearch_mcp/engines/common.py",
    "websearch_mcp/engines/text.py",
    "websearch_mcp/models.py",
    "websearch_mcp/rounding.py",
    *(
        f"websearch_mcp/ranking/{name}.py"
        for name in (
            "boosts",
            "context",
            "coverage",
            "domain",
            "families",
            "fusion",
            "lexical",
            "mmr",
            "neighbours",
            "pipeline",
            "positions",
            "prepared",
            "tokens",
            "urls",
        )
    ),
]


def _extensions() -> list:
    if os.environ.get("WEBSEARCH_MCP_COMPILE", "") != "1":
        return []
    # Imported only here: a plain install needs neither mypy nor a C compiler.
    from mypyc.build import mypycify

    # The modules they import are read for their types, not checked: only compiled code must
    # type-check.
    return [
        *mypycify(
            ["--follow-imports=silent", *COMPILED], opt_level="3", group_name="websearch_mcp"
        ),
        Extension("websearch_mcp.ranking.chunk_table", ["websearch_mcp/ranking/chunk_table.c"]),
        Extension("websearch_mcp.ranking.term_overlap", ["websearch_mcp/ranking/term_overlap.c"]),
        Extension("websearch_mcp.text_scan", ["websearch_mcp/text_scan.c"]),
    ]


# The build backend runs this file as `__main__`; tests import it for `COMPILED`.
if __name__ == "__main__":
    setup(ext_modules=_extensions())
