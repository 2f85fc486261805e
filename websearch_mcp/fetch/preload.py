"""Imported once by the extraction workers' fork server: every worker forked from it starts with
the extractors imported and their first-use setup done, instead of paying for it per worker."""

from __future__ import annotations

import contextlib

from websearch_mcp.errors import FetchError
from websearch_mcp.fetch.job import Job
from websearch_mcp.fetch.worker import run_job

_PAGE = "<html><head><title>w</title></head><body><article><p>warm up</p></article></body></html>"

with contextlib.suppress(ImportError):
    import pypdf  # noqa: F401  (the pdf extra may be absent)

with contextlib.suppress(FetchError):
    run_job(Job("html", _PAGE, "http://localhost/", 1000, 1000, 1, 65536))
